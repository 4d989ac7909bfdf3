"""Typed events the engine emits. Views subscribe; they never call back with data (one-way flow)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from desktop.engine.types import StoredMessage, Usage


@dataclass(frozen=True, slots=True)
class EngineEvent:
    session_id: int


@dataclass(frozen=True, slots=True)
class MessageAdded(EngineEvent):
    """A row was committed (the user's message before the request, or a new assistant row)."""

    message: StoredMessage


@dataclass(frozen=True, slots=True)
class MessageUpdated(EngineEvent):
    """A committed row changed (status, content, meta) outside of streaming deltas."""

    message: StoredMessage


@dataclass(frozen=True, slots=True)
class MessageRemoved(EngineEvent):
    message_id: int


@dataclass(frozen=True, slots=True)
class TextDelta(EngineEvent):
    message_id: int
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta(EngineEvent):
    message_id: int
    text: str


@dataclass(frozen=True, slots=True)
class UsageUpdate(EngineEvent):
    message_id: int
    usage: Usage


@dataclass(frozen=True, slots=True)
class StatusChanged(EngineEvent):
    """Transient status line text ("Sending…", "Compressing context…"); empty string clears it."""

    text: str
    busy: bool = True


@dataclass(frozen=True, slots=True)
class TurnDone(EngineEvent):
    message: StoredMessage


@dataclass(frozen=True, slots=True)
class TurnError(EngineEvent):
    """A failed turn. The user's message is stored; ``retryable`` turns can be resent with retry()."""

    kind: str  # auth | rate_limit | overloaded | network | bad_request | overflow | server | unknown
    message: str
    retryable: bool
    actions: tuple[str, ...] = ("retry",)
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ContextChanged(EngineEvent):
    """The session's context measurement changed (see desktop.engine.context.ContextSnapshot)."""

    snapshot: Any


@dataclass(frozen=True, slots=True)
class CompactionChanged(EngineEvent):
    """A compaction was added or undone; views reload the compaction cards."""

    note: str = ""


@dataclass(frozen=True, slots=True)
class Notice(EngineEvent):
    """Something to tell the user once (toast); never stored in the transcript."""

    text: str
    level: str = "info"


@dataclass(frozen=True, slots=True)
class CommandOutput(EngineEvent):
    """Output of a slash command, shown as a card in the chat and never stored in the transcript."""

    title: str
    text: str
