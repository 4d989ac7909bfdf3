"""Events of the tools package: a call started or finished, a permission is asked or settled, an MCP server
changed. They are engine events (they carry a session id) and reach the views the same way."""

from __future__ import annotations

import enum
from typing import Any

from msgspec import field

from desktop.engine.events import EngineEvent
from desktop.tools.mcp_host import ServerStatus
from desktop.tools.permissions import Answer, PermissionRequest


class ToolStatus(enum.StrEnum):
    """How a tool call ended."""

    OK = "ok"
    ERROR = "error"
    DENIED = "denied"
    CANCELLED = "cancelled"


class ToolCallStarted(EngineEvent, frozen=True):
    """A tool call began."""

    tool_use_id: str
    name: str
    server: str
    arguments: dict[str, Any] = field(default_factory=dict)


class ToolCallFinished(EngineEvent, frozen=True):
    """A tool call ended: its status, duration and an excerpt of its output."""

    tool_use_id: str
    name: str
    status: ToolStatus
    duration: float
    excerpt: str = ""


class PermissionAsked(EngineEvent, frozen=True):
    """A tool call waits for the user's permission."""

    request: PermissionRequest


class PermissionSettled(EngineEvent, frozen=True):
    """A permission request was answered, closed or timed out."""

    request_id: str
    answer: Answer | None  # None: the prompt was closed or timed out


class McpChanged(EngineEvent, frozen=True):
    """The MCP servers' states changed."""

    servers: tuple[ServerStatus, ...] = ()
