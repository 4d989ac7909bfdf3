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
# The same prompt for a model that is not Claude (DeepSeek, GLM, a local model…): it is not told it is Claude.
NEUTRAL_OPENING = "You are a helpful assistant"
INSTRUCTIONS_OPEN = "<user-instructions>\n"
INSTRUCTIONS_CLOSE = "\n</user-instructions>"
PROJECT_OPEN = "<project name="  # see projects.context
PROJECT_CLOSE = "</project>"


def is_claude(model: str | None) -> bool:
    """Claude ids carry the name everywhere they are served ("claude-sonnet-4-6", "anthropic/claude-…")."""
    return model is None or "claude" in model.lower()


def instructions_text(default: str = "", chat: str = "") -> str:
    """The instructions a chat runs with: the default ones (Settings), then the chat's own."""
    return "\n\n".join(t.strip() for t in (default, chat) if t and t.strip())


def system_blocks(
    today: _dt.date | None = None,
    *,
    model: str | None = None,
    instructions: str = "",
    project: str = "",
    chat_instructions: str = "",
) -> list[Block]:
    """The static block (the role, then the user's instructions: both inside the cached prefix, since the first
    breakpoint goes on this block) and the date after it. ``model`` None: a Claude model.

    In a project's chat (``project``: its text, see ``projects.context``) the static block ends with the project
    instead, the same bytes in every chat of the project, and the chat's own instructions follow in a block of
    their own: the project's chats share the cached prefix up to the project's end."""
    today = today or _dt.date.today()
    static = (
        STATIC_SYSTEM
        if is_claude(model)
        else STATIC_SYSTEM.replace("You are Claude, a helpful assistant", NEUTRAL_OPENING, 1)
    )
    own = chat_instructions.strip()
    if project:
        instructions, own = instructions.strip(), own
    else:
        instructions, own = instructions_text(instructions, own), ""
    if instructions:
        static += "\n\n" + INSTRUCTIONS_OPEN + instructions + INSTRUCTIONS_CLOSE
    if project:
        static += "\n\n" + project
    blocks: list[Block] = [{"type": "text", "text": static}]
    if own:
        blocks.append({"type": "text", "text": INSTRUCTIONS_OPEN + own + INSTRUCTIONS_CLOSE})
    return [*blocks, {"type": "text", "text": f"Today's date is {today.isoformat()}."}]


def instructions_in(system: list[Block]) -> str:
    """The instructions parts of a system prompt built by ``system_blocks`` ('' when there is none)."""
    found = []
    for block in system:
        text = str(block.get("text", ""))
        start = text.find(INSTRUCTIONS_OPEN)
        end = text.find(INSTRUCTIONS_CLOSE, start)
        if start >= 0 and end >= 0:
            found.append(text[start : end + len(INSTRUCTIONS_CLOSE)])
    return "\n\n".join(found)


def project_in(system: list[Block]) -> str:
    """The project's part of a system prompt built by ``system_blocks`` ('' outside a project)."""
    for block in system:
        text = str(block.get("text", ""))
        start = text.find(PROJECT_OPEN)
        if start >= 0 and text.endswith(PROJECT_CLOSE):
            return text[start:]
    return ""


def pinned_text(compaction: CompactionRecord) -> str:
    """What travels verbatim beside the summary: the user's instructions (with the ledger), then the messages the
    user pinned that the summary covers (``compaction.user_pins``, set on the record requests see)."""
    return "\n\n".join(
        t for t in (compaction.stats.get("pins_text") or "", compaction.stats.get("user_pins") or "") if t
    )


def summary_text(compaction: CompactionRecord) -> str:
    pins = pinned_text(compaction)
    parts = [
        "<conversation-summary>\nThe earlier part of this conversation was summarised to save context. "
        "Summary:\n" + compaction.summary.strip() + "\n</conversation-summary>"
    ]
    if pins:
        parts.append(pins)
    return "\n\n".join(parts)


def history_to_api(history: list[StoredMessage]) -> list[dict[str, Any]]:
    """Role and content of the rows requests carry, and the model that wrote each reply (``request_shape.repair``
    drops another model's thinking and keeps only role and content); blocks are cleaned once, there."""
    return [
        {
            "role": m.role,
            "content": m.content,
            **({"model": m.model} if m.role == "assistant" and m.model else {}),
        }
        for m in history
        if m.sendable
    ]


def with_summary(messages: list[dict[str, Any]], compaction: CompactionRecord | None) -> list[dict[str, Any]]:
    """Put the active summary (and pinned instructions) in front, as the first user content."""
    if compaction is None:
        return messages
    block = {"type": "text", "text": summary_text(compaction)}
    if messages and messages[0]["role"] == "user":
        first = messages[0]
        return [{"role": "user", "content": [block, *first["content"]]}, *messages[1:]]
    return [{"role": "user", "content": [block]}, *messages]
