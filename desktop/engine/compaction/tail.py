"""Choose what a summary replaces: everything before a verbatim tail of recent messages."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from desktop.engine.compaction._shared import Message, content_of, cut_points, has_real_text, is_plain_user
from desktop.engine.metering.tokens import estimate_message


class _Suffix:
    """Token sizes of ``messages[c:]``, estimated lazily from the newest message back (O(tail), not O(history))."""

    def __init__(self, messages: Sequence[Message], sizes: Sequence[int] | None = None):
        self._messages = messages
        self._sizes = sizes  # estimate_message of each message, when the caller keeps them
        self._totals = [0]  # _totals[k]: tokens of the newest k messages

    def size(self, i: int) -> int:
        """Tokens of message ``i``."""
        return self.tail(i) - self.tail(i + 1)

    def tail(self, c: int) -> int:
        """Tokens of ``messages[c:]``."""
        n = len(self._messages)
        while len(self._totals) <= n - c:
            k = len(self._totals)
            size = (
                self._sizes[n - k]
                if self._sizes is not None
                else estimate_message(content_of(self._messages[n - k]))
            )
            self._totals.append(self._totals[-1] + size)
        return self._totals[n - c]

    def within(self, c: int, limit: int | None) -> bool:
        """``tail(c) <= limit`` (None: no limit), estimating no further back than needed to tell."""
        if limit is None:
            return True
        n = len(self._messages)
        while len(self._totals) <= n - c and self._totals[-1] <= limit:
            self.tail(n - len(self._totals))
        return len(self._totals) > n - c and self._totals[n - c] <= limit


def split_tail(
    messages: Sequence[Message],
    window: int | None,
    *,
    min_tokens: int = 10_000,
    min_text_messages: int = 5,
    max_tokens: int = 40_000,
    max_fraction: float = 0.5,
    clean_max_tokens: int | None = None,
    level: int = 0,
    cuts: Sequence[int] | None = None,
    sizes: Sequence[int] | None = None,
) -> tuple[list[Message], list[Message]]:
    """Split post-boundary ``messages`` into (head to summarise, verbatim tail); ``head + tail == messages``.

    The tail grows from the newest message until it holds ``min_tokens`` and ``min_text_messages`` messages with
    real text, but stops before exceeding the cap, min(``max_tokens``, ``max_fraction`` × window). It then moves
    earlier to a *clean* cut, a typed user message (see ``cut_points``): whole exchanges stay together. That
    move may take the tail over the cap, up to ``clean_max_tokens`` (default: ``max_fraction`` × window; no
    limit without a window).

    When the clean cut does not work (it would leave the head empty while the tail is over the cap, or its tail
    is over ``clean_max_tokens``), the split cuts *inside* a turn, between two tool rounds: the nearest cut
    before the growth point whose tail is within the cap, else the nearest one after it, else the newest cut
    (one round over the cap cannot be split). Without this, a session made of one prompt and hundreds of tool
    round trips had no cut at all: an empty head, nothing to summarise, and a reactive retry that resent the
    same oversized request. The summary goes in front of the kept part, so it stays a valid request.

    ``level`` asks for a deeper split, for a caller whose compacted request was still too large (a reactive
    retry after an overflow must not resend the same request): each level keeps the largest tail within half of
    the previous level's tail and of the cap, at any cut (the minimums and the clean-cut preference no longer
    apply), so level ``k`` keeps at most cap / 2**k when the newest round allows it. Each level is strictly
    deeper than the one before while a later cut exists; once none does, the same split comes back (compare the
    head lengths to see that no progress is left). ``cut_points`` gives the cuts themselves to a caller that
    prefers to choose. An empty head means there is nothing to compact (at that level).

    ``cuts`` (``cut_points(messages)``) and ``sizes`` (``estimate_message`` of each message) may be given by a
    caller that keeps them as messages arrive: the split then reads only the tail.
    """
    if not messages:
        return [], []
    items = list(messages)
    cap = max_tokens if not window else min(max_tokens, int(window * max_fraction))
    if clean_max_tokens is None and window:
        clean_max_tokens = int(window * max_fraction)
    suffix = _Suffix(items, sizes)
    tokens = texts = 0
    start = len(items)
    for i in range(len(items) - 1, -1, -1):
        size = suffix.size(i)
        if start < len(items) and tokens + size > cap:
            break
        tokens += size
        texts += has_real_text(items[i])
        start = i
        if tokens >= min_tokens and texts >= min_text_messages:
            break
    cuts = list(cuts) if cuts is not None else cut_points(items)
    cut = _default_cut(items, cuts, start, cap, clean_max_tokens, suffix)
    for _ in range(max(0, level)):
        later = cuts[bisect.bisect_right(cuts, cut) :]
        if not later:
            break
        budget = min(cap, suffix.tail(cut)) // 2
        fitting = later[-1]  # the newest cut when even the last round is over budget
        for c in reversed(later):  # earliest cut within budget = the largest tail that fits
            if suffix.tail(c) > budget:
                break
            fitting = c
        cut = fitting
    return items[:cut], items[cut:]


def _default_cut(
    items: list[Message], cuts: list[int], start: int, cap: int, clean_max: int | None, sizes: _Suffix
) -> int:
    """The level-0 cut (0: empty head): see ``split_tail``."""
    clean = next((c for c in reversed(cuts) if c <= start and is_plain_user(items[c])), 0)
    if clean and sizes.within(clean, None if clean_max is None else max(cap, clean_max)):
        return clean
    if not clean and sizes.within(0, cap):
        return 0  # everything fits in the tail: nothing to compact yet
    below = next((c for c in reversed(cuts) if c <= start), None)
    if below is not None and sizes.within(below, cap):
        return below
    at = bisect.bisect_right(cuts, start)
    if at < len(cuts):
        return cuts[at]  # the nearest cut after the growth point
    return below if below is not None else clean
