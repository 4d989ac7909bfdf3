"""Request assembly: stored history + active compaction -> an API-valid Messages request.

The system prompt is a static prefix (never changes: no dates, no ids, so the cached prefix holds) plus a short
dynamic suffix.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from desktop.engine.compaction.request_shape import signed
from desktop.engine.types import Block, CompactionRecord, StoredMessage

STATIC_SYSTEM = (
    "You are Claude, a helpful assistant talking with a software developer through Précis, a desktop chat "
    "client. Answer in the language the user writes in. Use Markdown; put code in fenced blocks with a "
    "language tag. When part of the conversation has been summarised, the summary and the user's earlier "
    "instructions appear at the start of the conversation: treat those instructions as still in force."
)

# Statuses whose content the model has seen or should see again. 'error' rows are partial replies of failed
# attempts: resending them would duplicate text on retry. 'streaming' rows belong to a live turn.
SENDABLE = {"complete", "interrupted"}


def system_blocks(today: _dt.date | None = None) -> list[Block]:
    today = today or _dt.date.today()
    return [
        {"type": "text", "text": STATIC_SYSTEM},
        {"type": "text", "text": f"Today's date is {today.isoformat()}."},
    ]


def summary_text(compaction: CompactionRecord) -> str:
    pins = compaction.stats.get("pins_text") or ""
    parts = [
        "<conversation-summary>\nThe earlier part of this conversation was summarised to save context. "
        "Summary:\n" + compaction.summary.strip() + "\n</conversation-summary>"
    ]
    if pins:
        parts.append(pins)
    return "\n\n".join(parts)


def _clean_block(block: Block) -> Block | None:
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return {"type": "text", "text": text} if isinstance(text, str) and text.strip() else None
    if kind == "thinking":
        # Thinking without a real signature is rejected by the API when sent back; it only mattered to that turn.
        if not signed(block):
            return None
        return {"type": "thinking", "thinking": block.get("thinking", ""), "signature": block["signature"]}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.get("data", "")}
    return {k: v for k, v in block.items() if not k.startswith("_")}


def history_to_api(history: list[StoredMessage]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for msg in history:
        if msg.status not in SENDABLE:
            continue
        blocks = [b for b in (_clean_block(b) for b in msg.content) if b]
        if blocks:
            out.append({"role": msg.role, "content": blocks})
    return out


def with_summary(messages: list[dict[str, Any]], compaction: CompactionRecord | None) -> list[dict[str, Any]]:
    """Put the active summary (and pinned instructions) in front, as the first user content."""
    if compaction is None:
        return messages
    block = {"type": "text", "text": summary_text(compaction)}
    if messages and messages[0]["role"] == "user":
        first = messages[0]
        return [{"role": "user", "content": [block, *first["content"]]}, *messages[1:]]
    return [{"role": "user", "content": [block]}, *messages]
