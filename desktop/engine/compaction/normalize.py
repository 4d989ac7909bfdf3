"""Flatten history into text for the summariser.

Tool activity is rendered as escaped XML-ish markers (``<prior-tool-call …/>``), never as prose such as
"(used Read: …)": after a compaction, models copy such prose markers and write fake tool calls as text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from desktop.engine.compaction._shared import Message, content_of, role_of, tool_names, tool_result_text
from desktop.engine.compaction.citations import label as cite_label
from desktop.engine.types import Block

INPUT_CHARS = 80
RESULT_CHARS = 500

# Attachment metadata some importers keep in front of user text.
_FILES_META = re.compile(r"<!--files:.*?-->", re.DOTALL)


def escape_attr(text: str) -> str:
    """Escape for an XML attribute value; newlines become spaces so the marker stays on one line."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("\r", " ")
        .replace("\n", " ")
    )


def escape_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def compact_json(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def tool_call_marker(block: Block) -> str:
    name = str(block.get("name") or "unknown_tool")
    raw = compact_json(block.get("input", ""))
    return f'<prior-tool-call name="{escape_attr(name)}" input="{escape_attr(_cut(raw, INPUT_CHARS))}"/>'


def tool_result_marker(block: Block, name: str, limit: int = RESULT_CHARS) -> str:
    text = tool_result_text(block)
    media = _media_labels(block.get("content"))
    body = escape_text(_cut(text, limit))
    if media:
        body = (body + " " if body else "") + " ".join(media)
    error = ' is_error="true"' if block.get("is_error") else ""
    return (
        f'<prior-tool-result name="{escape_attr(name)}" chars="{len(text)}"{error}>{body}</prior-tool-result>'
    )


def _media_labels(content: Any) -> list[str]:
    if not isinstance(content, list):
        return []
    return [label for b in content if isinstance(b, dict) and (label := _media_label(b))]


def _media_label(block: Block) -> str:
    kind = block.get("type")
    if kind == "image":
        return "[image]"
    if kind == "document":
        name = block.get("title") or (block.get("source") or {}).get("media_type") or "file"
        return f"[document: {name}]"
    return ""


def message_parts(msg: Message, calls: dict[str, Block]) -> list[str]:
    parts: list[str] = []
    for block in content_of(msg):
        kind = block.get("type")
        if kind == "text":
            text = _FILES_META.sub("", str(block.get("text", ""))).strip()
            if text:
                parts.append(text)
        elif kind == "tool_use":
            parts.append(tool_call_marker(block))
        elif kind == "tool_result":
            call = calls.get(str(block.get("tool_use_id", "")))
            parts.append(
                tool_result_marker(block, str(call.get("name", "unknown_tool")) if call else "unknown_tool")
            )
        elif kind in ("thinking", "redacted_thinking"):
            parts.append("[thinking]")
        elif label := _media_label(block):
            parts.append(label)
    return parts


def flatten(messages: Sequence[Message], *, ids: bool = False) -> str:
    """Role-prefixed text ("User: …" / "Assistant: …"), one paragraph per message; meta is never included.
    ``ids``: each stored message's id after its role ("User [#12]: …"), for the summary to cite."""
    calls = tool_names(messages)
    out: list[str] = []
    for msg in messages:
        parts = message_parts(msg, calls)
        if not parts:
            continue
        label = "User" if role_of(msg) == "user" else "Assistant"
        if ids:
            label += cite_label(msg)
        out.append(f"{label}: " + "\n".join(parts))
    return "\n\n".join(out)
