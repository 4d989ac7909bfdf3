"""Prompt-cache breakpoints and canonical request bytes.

The cache key is the exact bytes of the prefix (tools → system → messages), so everything here is deterministic:
keys are sorted recursively (tool_use input included), and intermediate breakpoints sit at fixed block counts from
the start of the conversation, so turn N+1 places them where turn N wrote them and reads those entries.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from desktop.engine.types import Block

MAX_BREAKPOINTS = 4
STRIDE = 15  # the API looks back 20 blocks from a breakpoint; one every 15 keeps a margin
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
# Text prefixes of the block(s) that carry an active summary and the pinned instructions.
SUMMARY_PREFIXES = ("<conversation-summary>", "User instructions so far (verbatim):")

_CACHEABLE = {"text", "image", "document", "tool_use", "tool_result", "search_result"}


def canonical(obj: Any) -> str:
    """Canonical JSON: sorted keys, no whitespace, UTF-8 kept (for comparing prefixes byte for byte)."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def strip_cache_control(obj: Any) -> Any:
    """A deep copy without any cache_control key."""
    if isinstance(obj, dict):
        return {k: strip_cache_control(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [strip_cache_control(v) for v in obj]
    return obj


def _sorted_without_cache_control(obj: Any) -> Any:
    """A deep copy without cache_control whose dicts insert keys in sorted order (the SDK serialises in insertion
    order, so equal requests give equal bytes). One pass: this copies the whole request every turn."""
    if isinstance(obj, dict):
        return {k: _sorted_without_cache_control(obj[k]) for k in sorted(obj) if k != "cache_control"}
    if isinstance(obj, list):
        return [_sorted_without_cache_control(v) for v in obj]
    return obj


def count_breakpoints(*parts: Any) -> int:
    """cache_control markers anywhere in ``parts`` (e.g. system, tools, messages)."""
    return sum(_count(p) for p in parts)


def _count(obj: Any) -> int:
    if isinstance(obj, dict):
        return ("cache_control" in obj) + sum(_count(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(_count(v) for v in obj)
    return 0


def cacheable(block: Block) -> bool:
    """cache_control is refused on thinking blocks and on empty text."""
    kind = block.get("type")
    if kind not in _CACHEABLE:
        return False
    return kind != "text" or bool(str(block.get("text", "")).strip())


def canonical_copy(obj: Any) -> Any:
    """The copy ``place_breakpoints`` starts from: no cache_control, keys in sorted order (see below)."""
    return _sorted_without_cache_control(obj)


def place_breakpoints(
    system: Sequence[Block],
    tools: Sequence[dict[str, Any]],
    messages: Sequence[dict[str, Any]],
    *,
    summary_present: bool,
    cache_control: dict[str, str] | None = None,
    stride: int = STRIDE,
    long_ttl: bool = False,
) -> tuple[list[Block], list[dict[str, Any]], list[dict[str, Any]]]:
    """New (system, tools, messages) with at most 4 breakpoints, in priority order:

    1. the static system block (system[0]; the last tool when there is no system) — caches tools + system;
    2. the last cacheable block of the conversation;
    3. the summary/pins block in the first message when a summary is active;
    4. intermediate ones at global block indices stride-1, 2·stride-1, … (newest first), so no run of more
       than ``stride`` blocks before the end lacks one while the budget lasts.

    Existing cache_control keys are removed first, so calling this again is harmless.

    ``long_ttl`` gives the stable part (system, summary, the oldest intermediate breakpoint) a 1-hour TTL: a 2x
    write instead of 1.25x, but it survives the 5-25 minute pauses of real sessions. Longer TTLs come first in
    the prefix, as the API requires.
    """
    return mark_breakpoints(
        _sorted_without_cache_control(list(system)),
        _sorted_without_cache_control(list(tools)),
        _sorted_without_cache_control(list(messages)),
        summary_present=summary_present,
        cache_control=cache_control,
        stride=stride,
        long_ttl=long_ttl,
    )


def mark_breakpoints(
    system: Sequence[Block],
    tools: Sequence[dict[str, Any]],
    messages: Sequence[dict[str, Any]],
    *,
    summary_present: bool,
    cache_control: dict[str, str] | None = None,
    stride: int = STRIDE,
    long_ttl: bool = False,
    block_counts: Sequence[int] | None = None,
) -> tuple[list[Block], list[dict[str, Any]], list[dict[str, Any]]]:
    """``place_breakpoints`` on parts already in their canonical copy (``canonical_copy``), which are never
    mutated: the few marked blocks and the messages holding them are copied, every other message is shared with
    the input. Only the blocks near the end (and the first message) are looked at, so a caller that keeps each
    message's canonical copy (and, in ``block_counts``, each message's block count) pays for the marks only."""
    mark = dict(cache_control or EPHEMERAL)
    long_mark = {**mark, "ttl": "1h"} if long_ttl else mark
    system_out, tools_out, messages_out = list(system), list(tools), list(messages)
    budget = MAX_BREAKPOINTS

    static = next((i for i, b in enumerate(system_out) if cacheable(b)), None)
    if static is not None:
        system_out[static] = {**system_out[static], "cache_control": dict(long_mark)}
        budget -= 1
    elif tools_out:
        tools_out[-1] = {**tools_out[-1], "cache_control": dict(long_mark)}
        budget -= 1

    counts = (
        list(block_counts)
        if block_counts is not None
        else [len(m.get("content") or []) if isinstance(m.get("content"), list) else 0 for m in messages_out]
    )
    flat = _Flat(messages_out, counts)
    chosen: list[int] = []

    def eligible_at_or_before(g: int, floor: int) -> int | None:
        while g > floor:
            if cacheable(flat.block(g)):
                return g
            g -= 1
        return None

    end = eligible_at_or_before(flat.total - 1, -1)
    if end is not None and budget > 0:
        chosen.append(end)
        budget -= 1
    floor = -1
    summary_pick: int | None = None
    if summary_present and budget > 0 and messages_out:
        first = list(range(counts[0]))  # the first message's blocks are global indices 0 .. n-1
        marked = [g for g in first if _is_summary(flat.block(g))]
        pick = marked[-1] if marked else eligible_at_or_before(first[-1], -1) if first else None
        if pick is not None and pick not in chosen:
            chosen.append(pick)
            summary_pick = pick
            budget -= 1
        floor = pick if pick is not None else -1
    anchor = ((end if end is not None else 0) // stride) * stride - 1
    while budget > 0 and anchor > floor:
        g = eligible_at_or_before(anchor, floor)
        if g is not None and g not in chosen and (end is None or g < end):
            chosen.append(g)
            budget -= 1
        anchor -= stride
    intermediate = [g for g in chosen if g != end and g != summary_pick]
    stable = {summary_pick, min(intermediate)} if intermediate else {summary_pick}
    copied: dict[int, dict[str, Any]] = {}
    for g in chosen:
        mi, bi = flat.where(g)
        msg = copied.get(mi)
        if msg is None:
            msg = copied[mi] = {**messages_out[mi], "content": list(messages_out[mi]["content"])}
            messages_out[mi] = msg
        msg["content"][bi] = {**msg["content"][bi], "cache_control": dict(long_mark if g in stable else mark)}
    return system_out, tools_out, messages_out


class _Flat:
    """Global block index <-> (message index, block index), found from the nearest end: the breakpoints sit at the
    end of the conversation and in its first message, so a long history is never walked."""

    def __init__(self, messages: Sequence[dict[str, Any]], counts: Sequence[int]):
        self._messages = messages
        self._counts = counts
        self.total = sum(counts)
        self._mi = len(counts)  # cursor: message self._mi starts at global index self._base
        self._base = self.total

    def where(self, g: int) -> tuple[int, int]:
        if g < self._counts[0] if self._counts else False:
            return 0, g
        while g < self._base:
            self._mi -= 1
            self._base -= self._counts[self._mi]
        while self._mi < len(self._counts) and g >= self._base + self._counts[self._mi]:
            self._base += self._counts[self._mi]
            self._mi += 1
        return self._mi, g - self._base

    def block(self, g: int) -> Block:
        mi, bi = self.where(g)
        block: Block = self._messages[mi]["content"][bi]
        return block


def _is_summary(block: Block) -> bool:
    return block.get("type") == "text" and str(block.get("text", "")).startswith(SUMMARY_PREFIXES)
