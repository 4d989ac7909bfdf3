"""Helpers shared by the compaction modules: uniform access to StoredMessage rows and API dicts, grouping.

Every function here is pure. Messages are either ``StoredMessage`` (history) or ``{"role", "content"}`` dicts
(requests); content may be a plain string, which is read as one text block.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from msgspec import structs

from desktop.engine.types import Block, StoredMessage

Message = StoredMessage | dict[str, Any]


def role_of(msg: Message) -> str:
    return msg.role if isinstance(msg, StoredMessage) else str(msg.get("role", ""))


def text_of(block: Block) -> str:
    """A block's ``text`` as a string ("" when missing, None or not a string)."""
    text = block.get("text")
    return text if isinstance(text, str) else ""


def content_of(msg: Message) -> list[Block]:
    raw = msg.content if isinstance(msg, StoredMessage) else msg.get("content", [])
    if isinstance(raw, str):
        return [{"type": "text", "text": raw}]
    return list(raw or [])


def id_of(msg: Message) -> int | None:
    return msg.id if isinstance(msg, StoredMessage) else msg.get("id")


def meta_of(msg: Message) -> dict[str, Any]:
    return msg.meta if isinstance(msg, StoredMessage) else (msg.get("meta") or {})


def with_content(msg: Message, content: list[Block]) -> Message:
    """A copy of ``msg`` with new content (the input is left untouched)."""
    if isinstance(msg, StoredMessage):
        return structs.replace(msg, content=content)
    out = dict(msg)
    out["content"] = content
    return out


def tool_result_text(block: Block) -> str:
    """The text a tool_result carries (string content, or its text sub-blocks joined by newlines)."""
    content = block.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


def has_tool_result(msg: Message) -> bool:
    return any(b.get("type") == "tool_result" for b in content_of(msg))


def is_plain_user(msg: Message) -> bool:
    """A user message that starts a new exchange: it answers no tool call, so cutting before it splits no pair."""
    return role_of(msg) == "user" and not has_tool_result(msg)


def has_real_text(msg: Message) -> bool:
    return any(b.get("type") == "text" and str(b.get("text", "")).strip() for b in content_of(msg))


def group_starts(messages: Sequence[Message]) -> list[int]:
    """Start indices of message groups: a plain user message and everything until the next one.

    Anything before the first plain user message belongs to the first group, so dropping whole groups from the
    front never leaves an orphan tool_result and never separates a tool_use from its result.
    """
    if not messages:
        return []
    return [0] + [i for i in range(1, len(messages)) if is_plain_user(messages[i])]


def cut_points(messages: Sequence[Message]) -> list[int]:
    """Ascending indices ``c`` (``1 <= c < len``) where ``messages`` may be cut into a head ``messages[:c]``, which a
    summary (or a snip note) replaces, and a kept part ``messages[c:]``, sent after that summary.

    A cut is valid when no tool_result kept answers a tool_use of the head (no pair straddles the cut) and the
    first kept message can open a request once the summary block is in front (``assemble.with_summary``):

    - a plain user message (a typed prompt, no tool_result): the summary becomes its first block. These *clean*
      cuts keep whole exchanges together; ``is_plain_user(messages[c])`` tells them apart;
    - an assistant message right after a user message (tool results or a prompt): the summary becomes a user
      message of its own before it, so roles still alternate. These cuts fall between two tool rounds of one
      turn, the only cuts a long agentic turn (one prompt, then hundreds of tool round trips) has.

    Never between two consecutive assistant rows: a turn stored as several rows keeps its thinking in front of
    its tool_use. Tool_results with no earlier tool_use (orphans) constrain nothing; repair makes them text.
    """
    cuts: list[int] = []
    last_use: dict[Any, int] = {}
    for j in range(len(messages)):
        extend_cuts(cuts, last_use, messages, j)
    return cuts


def extend_cuts(cuts: list[int], last_use: dict[Any, int], messages: Sequence[Message], j: int) -> None:
    """``cut_points`` kept as messages arrive: ``cuts`` and ``last_use`` (tool_use id -> index) describe
    ``messages[:j]``; this adds ``messages[j]``. A result answering an earlier call blocks every cut from just after
    that call through ``j``; otherwise the cut before ``j`` is judged by the rules ``cut_points`` states."""
    msg = messages[j]
    answers = False
    blocked_from: int | None = None
    for block in content_of(msg):
        kind = block.get("type")
        if kind == "tool_result":
            answers = True
            i = last_use.get(_hashable(block.get("tool_use_id")))
            if i is not None and i < j:
                blocked_from = i + 1 if blocked_from is None else min(blocked_from, i + 1)
        elif kind == "tool_use" and block.get("id") is not None:
            last_use[_hashable(block["id"])] = j
    if blocked_from is not None:
        while cuts and cuts[-1] >= blocked_from:
            cuts.pop()
        return  # the cut before j is blocked too (i < j)
    if j < 1:
        return
    role, before = role_of(msg), role_of(messages[j - 1])
    if (role == "user" and not answers) or (role == "assistant" and before == "user"):
        cuts.append(j)


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def tool_names(messages: Sequence[Message]) -> dict[str, Block]:
    """tool_use id -> the tool_use block, over all messages (the first occurrence wins)."""
    out: dict[str, Block] = {}
    for msg in messages:
        for block in content_of(msg):
            if block.get("type") == "tool_use" and block.get("id") and block["id"] not in out:
                out[block["id"]] = block
    return out


def head_tail(text: str, limit: int, *, head_share: float = 0.7) -> str:
    """Keep ``limit`` characters: 70 % head and 30 % tail around "[… N characters omitted …]".

    A text only a little over ``limit`` is returned whole: cutting it would add more marker than it removes.
    """
    if len(text) <= limit:
        return text
    head = int(limit * head_share)
    tail = limit - head
    omitted = len(text) - head - tail
    end = text[len(text) - tail :] if tail else ""
    cut = f"{text[:head]}\n[… {omitted:,} characters omitted …]\n{end}"
    return cut if len(cut) < len(text) else text
