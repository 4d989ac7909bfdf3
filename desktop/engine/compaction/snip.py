"""Last resort when no summary can be had: drop the oldest whole groups until the request fits."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from desktop.engine.compaction._shared import Message, cut_points, group_starts
from desktop.engine.types import StoredMessage

_NOTE = (
    "[{count} earlier messages were removed from the context without a summary, to keep the conversation "
    "going. They are still in the transcript.]"
)
_LAST_NOTE = re.compile(r"\s*" + re.escape(_NOTE).replace(re.escape("{count}"), r"(?P<count>\d+)") + r"\s*\Z")


def trimmed_summary(previous: str, dropped: int) -> str:
    """What the model reads after a trim: the previous summary and one note counting the messages trimmed
    since it (trims in a row add to that note: a run of notes says nothing more and reads as noise)."""
    previous = previous.strip()
    if (last := _LAST_NOTE.search(previous)) is not None:
        dropped += int(last.group("count"))
        previous = previous[: last.start()].strip()
    note = _NOTE.format(count=dropped)
    return f"{previous}\n\n{note}" if previous else note


def snip_to_fit(
    messages: Sequence[Message],
    budget_tokens: int,
    estimate: Callable[[list[Message]], int],
    *,
    in_turn: bool | None = None,
) -> tuple[list[Message], list[Message]]:
    """Return (kept, dropped), ``dropped + kept == messages``: the fewest oldest messages dropped so
    ``estimate(kept) <= budget_tokens``.

    Whole groups go first: a group is a plain user message and everything until the next one, so no tool pair
    is split and ``kept`` starts with a user message. ``estimate`` must grow with the list (it may add fixed
    costs such as system and tools); it is called O(log messages) times.

    When even the newest group alone is over budget, and ``in_turn`` allows it, the oldest tool rounds of that
    group (one long agentic turn: a prompt, then many tool round trips) are dropped too, at the cuts of
    ``cut_points``: ``kept`` then starts with an assistant message whose calls are all answered in ``kept``, and
    the newest rounds stay. That ``kept`` is only valid behind a summary or snip note (``assemble.with_summary``
    makes the note a user message of its own), so ``in_turn`` defaults to True for history rows
    (``StoredMessage``: a snip of history writes a compaction record whose note goes first) and to False for API
    message dicts (a request that must stand alone). Without it, a session of one prompt and many tool rounds
    could drop nothing at all.

    Rounds are only dropped when that makes the request fit: if even the newest round is over budget, the
    newest group is kept whole (dropping its older rounds would lose context and still not fit). Check the
    estimate again when it matters.
    """
    items = list(messages)
    if estimate(items) <= budget_tokens:
        return items, []
    starts = group_starts(items)
    cut = 0
    if len(starts) > 1:
        lo = _earliest_fit(
            starts, 1, items, estimate, budget_tokens
        )  # groups dropped; the last one always stays
        cut = starts[lo]
        if lo < len(starts) - 1 or estimate(items[cut:]) <= budget_tokens:
            return items[cut:], items[:cut]
    if in_turn is None:
        in_turn = all(isinstance(m, StoredMessage) for m in items)
    if in_turn and starts:
        inner = [c for c in cut_points(items) if c > starts[-1]]
        if inner and estimate(items[inner[-1] :]) <= budget_tokens:
            cut = inner[_earliest_fit(inner, 0, items, estimate, budget_tokens)]
    return items[cut:], items[:cut]


def _earliest_fit(
    cuts: Sequence[int],
    lo: int,
    items: list[Message],
    estimate: Callable[[list[Message]], int],
    budget_tokens: int,
) -> int:
    """Index in ``cuts`` (from ``lo``) of the earliest cut whose tail fits, by bisection: the tail shrinks as the
    cut moves later. The last cut is taken when none before it fits."""
    hi = len(cuts) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if estimate(items[cuts[mid] :]) <= budget_tokens:
            hi = mid
        else:
            lo = mid + 1
    return lo
