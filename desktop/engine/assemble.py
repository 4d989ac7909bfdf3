"""Request assembly: stored history + active compaction -> an API-valid Messages request.

The system prompt is a static prefix (never changes: no dates, no ids, so the cached prefix holds) plus a short
dynamic suffix.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from desktop.engine.types import Block, CompactionRecord, StoredMessage

STATIC_SYSTEM = (
    "You are Claude, a helpful assistant talking with a software developer through Précis, a desktop chat "
    "client. Answer in the language the user writes in. Use Markdown; put code in fenced blocks with a "
    "language tag. When part of the conversation has been summarised, the summary and the user's earlier "
    "instructions appear at the start of the conversation: treat those instructions as still in force."
)

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


def history_to_api(history: list[StoredMessage]) -> list[dict[str, Any]]:
    """Role and content of the rows requests carry; blocks are cleaned once, by ``request_shape.repair``."""
    return [{"role": m.role, "content": m.content} for m in history if m.sendable]


def with_summary(messages: list[dict[str, Any]], compaction: CompactionRecord | None) -> list[dict[str, Any]]:
    """Put the active summary (and pinned instructions) in front, as the first user content."""
    if compaction is None:
        return messages
    block = {"type": "text", "text": summary_text(compaction)}
    if messages and messages[0]["role"] == "user":
        first = messages[0]
        return [{"role": "user", "content": [block, *first["content"]]}, *messages[1:]]
    return [{"role": "user", "content": [block]}, *messages]
