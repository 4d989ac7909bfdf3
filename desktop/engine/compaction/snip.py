"""Last resort when no summary can be had: drop the oldest whole groups until the request fits."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from desktop.engine.compaction._shared import Message, group_starts


def snip_to_fit(messages: Sequence[Message], budget_tokens: int,
                estimate: Callable[[list[Message]], int]) -> tuple[list[Message], list[Message]]:
    """Return (kept, dropped): the fewest oldest groups dropped so ``estimate(kept) <= budget_tokens``.

    A group is a plain user message and everything until the next one, so no tool pair is split and ``kept``
    starts with a user message. The last group is always kept, even if it alone is over budget (check the
    estimate again). ``estimate`` must grow with the list (it may add fixed costs such as system and tools);
    it is called O(log groups) times.
    """
    items = list(messages)
    starts = group_starts(items)
    if len(starts) <= 1 or estimate(items) <= budget_tokens:
        return items, []
    lo, hi = 1, len(starts) - 1  # number of groups dropped; hi always keeps the last group
    while lo < hi:
        mid = (lo + hi) // 2
        if estimate(items[starts[mid]:]) <= budget_tokens:
            hi = mid
        else:
            lo = mid + 1
    cut = starts[lo]
    return items[cut:], items[:cut]
