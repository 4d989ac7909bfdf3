"""Plain data of the tools package: what a tool is, what a call returned."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from msgspec import Struct

from desktop.engine.types import Block

BUILTIN = "builtin"  # the server name of the built-in workspace tools


class ToolSpec(Struct, frozen=True):
    """One tool the model may call."""

    name: str  # the name the model calls (MCP tools: mcp__<server>__<tool>)
    server: str  # BUILTIN or the MCP server's name
    tool: str  # the tool's own name on its server
    definition: dict[str, Any]  # the API tool definition (name, description, input_schema)
    read_only: bool = False  # built-in read tools, or an MCP tool annotated read-only (a hint, not trust)
    origin: str = BUILTIN  # hash of the server's command or URL: saved approvals are bound to it
    digest: str = ""  # hash of the definition, made once with the spec: what its estimates are cached by


def definition_digest(definition: dict[str, Any]) -> str:
    text = json.dumps(definition, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


class ToolOutcome(Struct):
    """What one call produced: the tool_result content and whether it is an error."""

    content: str | list[Block]
    is_error: bool = False
    exit_code: int | None = None  # run: the command's exit status

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(str(b.get("text", f"[{b.get('type')}]")) for b in self.content)
