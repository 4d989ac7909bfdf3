"""Microcompaction without an LLM: clear old tool results, truncate old long texts.

Both steps are driven by a *horizon*, a message id: everything with ``id <= horizon`` is compacted, the rest is
sent as is. A horizon only moves forward, and only in batches big enough to pay for re-writing the prompt cache
from that point on, so between batches the request prefix stays byte-identical turn after turn. The output is a
pure function of (messages, horizon): same input, same bytes.

Nothing is ever removed: every tool_use keeps its tool_result (``is_error`` kept), and no marker key is added to
blocks (the API rejects unknown keys). What changed is returned as a set of (message_id, block_index) so the view
can show a quiet marker.
"""

from __future__ import annotations

from collections.abc import Sequence

from desktop.engine.compaction._shared import (
    Message,
    content_of,
    head_tail,
    id_of,
    role_of,
    text_of,
    tool_names,
    tool_result_text,
    with_content,
)
from desktop.engine.metering.tokens import estimate_block, estimate_text
from desktop.engine.types import Block

KEEP_RECENT = 10  # the newest tool results left whole: the ten calls a summary also keeps verbatim
MIN_CLEAR_TOKENS = 20_000
EXCERPT_CHARS = 200

OLD_AFTER = 30  # messages counted from the newest
OLD_LIMIT = 1_000
RECENT_LIMIT = 5_000
MIN_TRUNCATE_TOKENS = 5_000

Changed = set[tuple[int, int]]

# Input keys that name what a tool worked on, most telling first.
_SUBJECT_KEYS = (
    "file_path",
    "path",
    "notebook_path",
    "command",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
)


def min_clear_for(window: int | None) -> int:
    """Batch size for clearing: 2 % of the window, at most 20K (a 200K window clears from 4K tokens)."""
    if not window:
        return MIN_CLEAR_TOKENS
    return max(1_000, min(MIN_CLEAR_TOKENS, window // 50))


def _mid(msg: Message) -> int:
    mid = id_of(msg)
    if mid is None:
        raise ValueError("microcompaction needs message ids (StoredMessage or dicts with an 'id')")
    return mid


# --- (a) old tool results ---------------------------------------------------------------------------------


def clear_target(messages: Sequence[Message], keep_recent: int = KEEP_RECENT) -> int | None:
    """The id through which tool results may be cleared so the newest ``keep_recent`` results stay intact."""
    positions = [i for i, m in enumerate(messages) for b in content_of(m) if b.get("type") == "tool_result"]
    if len(positions) <= keep_recent:
        return None
    oldest_kept = positions[-keep_recent] if keep_recent > 0 else len(messages)
    older = [i for i in positions if i < oldest_kept]
    return _mid(messages[older[-1]]) if older else None


def plan_clear(
    messages: Sequence[Message],
    horizon: int,
    keep_recent: int = KEEP_RECENT,
    min_clear_tokens: int = MIN_CLEAR_TOKENS,
) -> int:
    """New clearing horizon: ``horizon`` unless jumping to the target saves at least ``min_clear_tokens``."""
    target = clear_target(messages, keep_recent)
    if target is None or target <= horizon:
        return horizon
    calls = tool_names(messages)
    gain = 0
    for msg in messages:
        if horizon < _mid(msg) <= target:
            for block in content_of(msg):
                cleared = _cleared(block, calls) if block.get("type") == "tool_result" else None
                if cleared is not None:
                    gain += estimate_block(block) - estimate_block(cleared)
    return target if gain >= min_clear_tokens else horizon


def apply_clear(messages: Sequence[Message], horizon: int) -> tuple[list[Message], Changed]:
    """Replace tool results in messages with ``id <= horizon`` by a named excerpt."""
    calls = tool_names(messages)
    out: list[Message] = []
    changed: Changed = set()
    for msg in messages:
        mid = _mid(msg)
        if mid > horizon:
            out.append(msg)
            continue
        new, indices = clear_message(msg, calls)
        out.append(new)
        changed.update((mid, i) for i in indices)
    return out, changed


def clear_message(msg: Message, calls: dict[str, Block]) -> tuple[Message, list[int]]:
    """One message's tool results cleared (``calls``: every tool_use by id, for the labels), and the indices of
    the blocks that changed; the same object back when none did."""
    new_blocks: list[Block] = []
    indices: list[int] = []
    for index, block in enumerate(content_of(msg)):
        cleared = _cleared(block, calls) if block.get("type") == "tool_result" else None
        if cleared is None:
            new_blocks.append(block)
        else:
            new_blocks.append(cleared)
            indices.append(index)
    return (with_content(msg, new_blocks) if indices else msg), indices


def _cleared(block: Block, calls: dict[str, Block]) -> Block | None:
    """The cleared form of a tool_result, or None when clearing would not make it smaller."""
    text = tool_result_text(block)
    content = block.get("content")
    has_media = isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") in ("image", "document") for b in content
    )
    call = calls.get(str(block.get("tool_use_id", "")))
    label = _label(call)
    excerpt = text[:EXCERPT_CHARS]
    marker = f"[Old tool result cleared: {label} — first {len(excerpt)} of {len(text):,} characters…]"
    if has_media:
        marker += " [media removed]"
    new_text = f"{marker} {excerpt}" if excerpt else marker
    if not has_media and len(new_text) >= len(text):
        return None
    out: Block = {"type": "tool_result", "tool_use_id": block.get("tool_use_id"), "content": new_text}
    if "is_error" in block:
        out["is_error"] = block["is_error"]
    return out


def _label(call: Block | None) -> str:
    if call is None:
        return "tool"
    name = str(call.get("name") or "tool")
    data = call.get("input")
    subject = ""
    if isinstance(data, dict):
        for key in _SUBJECT_KEYS:
            if isinstance(data.get(key), str) and data[key].strip():
                subject = data[key]
                break
    subject = " ".join(subject.split())
    if len(subject) > 80:
        subject = subject[:79] + "…"
    return f"{name} {subject}" if subject else name


# --- (b) old long texts -----------------------------------------------------------------------------------


def truncate_target(messages: Sequence[Message], after: int) -> int | None:
    """Id of the newest message that is at least ``after`` messages older than the newest one."""
    index = len(messages) - 1 - after
    return _mid(messages[index]) if index >= 0 else None


def plan_truncate(
    messages: Sequence[Message],
    horizon: int,
    *,
    after: int = OLD_AFTER,
    limit: int = OLD_LIMIT,
    min_gain_tokens: int = MIN_TRUNCATE_TOKENS,
) -> int:
    """New truncation horizon for one tier (call it once per tier: old = 30/1,000, recent = 10/5,000).

    The gain is measured against the untruncated text, so it is an upper bound when a lower tier already cut.
    """
    target = truncate_target(messages, after)
    if target is None or target <= horizon:
        return horizon
    gain = 0
    for msg in messages:
        if horizon < _mid(msg) <= target:
            for block in content_of(msg):
                text = text_of(block) if block.get("type") == "text" else ""
                if len(text) > limit:
                    gain += estimate_text(text) - estimate_text(head_tail(text, limit))
    return target if gain >= min_gain_tokens else horizon


def apply_truncate(
    messages: Sequence[Message],
    horizon: int,
    *,
    recent_horizon: int = 0,
    old_limit: int = OLD_LIMIT,
    recent_limit: int = RECENT_LIMIT,
) -> tuple[list[Message], Changed]:
    """Cut text blocks of messages with ``id <= horizon`` to ``old_limit`` and of messages with
    ``id <= recent_horizon`` to ``recent_limit`` (70 % head + 30 % tail). Tool inputs and results are untouched.
    """
    out: list[Message] = []
    changed: Changed = set()
    for msg in messages:
        mid = _mid(msg)
        limit = old_limit if mid <= horizon else recent_limit if mid <= recent_horizon else None
        new, indices = truncate_message(msg, limit)
        out.append(new)
        changed.update((mid, i) for i in indices)
    return out, changed


def truncate_message(msg: Message, limit: int | None) -> tuple[Message, list[int]]:
    """One message's long texts cut to ``limit`` (None: left whole), and the indices of the blocks that changed;
    the same object back when none did."""
    if limit is None or role_of(msg) not in ("user", "assistant"):
        return msg, []
    new_blocks: list[Block] = []
    indices: list[int] = []
    for index, block in enumerate(content_of(msg)):
        text = text_of(block) if block.get("type") == "text" else ""
        cut = head_tail(text, limit)
        if cut is not text:
            new_blocks.append({**block, "text": cut})
            indices.append(index)
        else:
            new_blocks.append(block)
    return (with_content(msg, new_blocks) if indices else msg), indices
