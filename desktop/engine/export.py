"""Session export. Secrets never appear here: only the session, its messages and its compactions."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from desktop.engine.types import CompactionRecord, SessionInfo, StoredMessage


def export_json(session: SessionInfo, messages: list[StoredMessage],
                compactions: list[CompactionRecord]) -> dict[str, Any]:
    return {
        "format": "precis-session/1",
        "session": {
            "id": session.id,
            "title": session.title,
            "model": session.model,
            "created_at": session.created_at,
            "updated_at": session.updated_at,
        },
        "messages": [
            {
                "id": m.id,
                "role": m.role,
                "content": m.content,
                "status": m.status,
                "usage": m.usage.to_json() if m.usage else None,
                "model": m.model,
                "meta": m.meta,
                "created_at": m.created_at,
            }
            for m in messages
        ],
        "compactions": [asdict(c) for c in compactions],
    }


def _block_markdown(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return block.get("text", "")
    if kind == "thinking":
        return "> *thinking:* " + block.get("thinking", "").replace("\n", "\n> ")
    if kind == "tool_use":
        return f"**Tool call** `{block.get('name')}`\n\n```json\n{json.dumps(block.get('input'), indent=2)}\n```"
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            content = "\n".join(_block_markdown(b) for b in content)
        return f"**Tool result**\n\n```\n{content or ''}\n```"
    if kind in ("image", "document"):
        return f"*[{kind}]*"
    return f"*[{kind}]*"


def export_markdown(session: SessionInfo, messages: list[StoredMessage],
                    compactions: list[CompactionRecord]) -> str:
    out = [f"# {session.title}", ""]
    by_boundary = {c.covers_through_message_id: c for c in compactions}
    for m in messages:
        tag = "" if m.status == "complete" else f" *({m.status})*"
        out.append(f"## {m.role.capitalize()}{tag}")
        out.append("")
        out.append("\n\n".join(_block_markdown(b) for b in m.content))
        out.append("")
        if m.id in by_boundary:
            c = by_boundary[m.id]
            out += [f"---\n*Context compacted ({c.trigger}) through message {m.id}. Summary:*", "", c.summary, "---", ""]
    return "\n".join(out).rstrip() + "\n"


def export_text(session: SessionInfo, messages: list[StoredMessage], compactions: list[CompactionRecord],
                fmt: str = "md") -> str:
    """The export as written: ``precis export`` and the window's Export chat… and Copy chat give these bytes."""
    if fmt == "json":
        return json.dumps(export_json(session, messages, compactions), ensure_ascii=False, indent=2)
    return export_markdown(session, messages, compactions)
