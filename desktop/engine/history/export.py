"""Session export. Secrets never appear here: only the session, its messages and its compactions."""

from __future__ import annotations

import json
from typing import Any

from msgspec.structs import asdict

from desktop.engine.types import CompactionRecord, SessionInfo, StoredMessage


def export_json(
    session: SessionInfo, messages: list[StoredMessage], compactions: list[CompactionRecord]
) -> dict[str, Any]:
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
        text: str = block.get("text", "")
        return text
    if kind == "thinking":
        thinking: str = block.get("thinking", "")
        return "> *thinking:* " + thinking.replace("\n", "\n> ")
    if kind == "tool_use":
        return (
            f"**Tool call** `{block.get('name')}`\n\n```json\n{json.dumps(block.get('input'), indent=2)}\n```"
        )
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            content = "\n".join(_block_markdown(b) for b in content)
        return f"**Tool result**\n\n```\n{content or ''}\n```"
    return f"*[{kind}]*"


def _attachment_markdown(block: dict[str, Any], name: str) -> str:
    """An attached image or document by its file's name (a document carries its title; an image's name is kept
    with the message, see ``_file_names``)."""
    shown = str(block.get("title") or name or "")
    return f"*[{block.get('type')}: {shown}]*" if shown else f"*[{block.get('type')}]*"


def _file_names(m: StoredMessage) -> list[str]:
    """The attached files' names, in the order of the message's image and document blocks (the window keeps
    them in the message's meta: image blocks have no name field)."""
    files = m.meta.get("files") if isinstance(m.meta, dict) else None
    return [str(f) for f in files] if isinstance(files, list) else []


def _message_markdown(m: StoredMessage) -> str:
    names = iter(_file_names(m))
    return "\n\n".join(
        _attachment_markdown(b, next(names, ""))
        if b.get("type") in ("image", "document")
        else _block_markdown(b)
        for b in m.content
    )


def export_markdown(
    session: SessionInfo, messages: list[StoredMessage], compactions: list[CompactionRecord]
) -> str:
    out = [f"# {session.title}", ""]
    by_boundary = {c.covers_through_message_id: c for c in compactions}
    for m in messages:
        tag = "" if m.status == "complete" else f" *({m.status})*"
        out.append(f"## {m.role.capitalize()}{tag}")
        out.append("")
        out.append(_message_markdown(m))
        out.append("")
        if m.id in by_boundary:
            c = by_boundary[m.id]
            out += [
                f"---\n*Context compacted ({c.trigger}) through message {m.id}. Summary:*",
                "",
                c.summary,
                "---",
                "",
            ]
    return "\n".join(out).rstrip() + "\n"


def export_text(
    session: SessionInfo, messages: list[StoredMessage], compactions: list[CompactionRecord], fmt: str = "md"
) -> str:
    """The export as written: ``precis export`` and the window's Export chat… and Copy chat give these bytes."""
    if fmt == "json":
        return json.dumps(export_json(session, messages, compactions), ensure_ascii=False, indent=2)
    return export_markdown(session, messages, compactions)
