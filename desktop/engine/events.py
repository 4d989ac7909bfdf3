"""Typed events the engine emits. Views subscribe; they never call back with data (one-way flow)."""

from __future__ import annotations

from typing import Any, Literal

from msgspec import Struct, field

from desktop.engine.metering.context import ContextSnapshot
from desktop.engine.providers.errors import ErrorKind
from desktop.engine.turn.tasks import Activity
from desktop.engine.types import CompactionRecord, StoredMessage, Usage

NoticeLevel = Literal["info", "warning", "error"]
# What a failed turn offers: resend, compact then resend, or a new chat from the summary.
TurnAction = Literal["retry", "compact_retry", "new_chat_from_summary"]


class EngineEvent(Struct, frozen=True):
    """Something that happened in a chat, for the views."""

    session_id: int


class MessageAdded(EngineEvent, frozen=True):
    """A row was committed (the user's message before the request, or a new assistant row)."""

    message: StoredMessage


class MessageUpdated(EngineEvent, frozen=True):
    """A committed row changed (status, content, meta) outside of streaming deltas."""

    message: StoredMessage


class MessageRemoved(EngineEvent, frozen=True):
    """A row was deleted from the chat."""

    message_id: int


class TextDelta(EngineEvent, frozen=True):
    """More text of a streaming reply."""

    message_id: int
    text: str


class UsageUpdate(EngineEvent, frozen=True):
    """The provider's token counts for a reply."""

    message_id: int
    usage: Usage


class StatusChanged(EngineEvent, frozen=True):
    """What the session is doing now (views word the activity; they never read text). ``stopped``: it went
    idle because the user pressed Stop."""

    activity: Activity
    stopped: bool = False

    @property
    def busy(self) -> bool:
        return self.activity.busy


class TurnDone(EngineEvent, frozen=True):
    """A turn finished; its reply as stored."""

    message: StoredMessage


class SessionsChanged(EngineEvent, frozen=True):
    """The list of chats changed: one was made, deleted, renamed, pinned, moved to another profile or model, or
    finished a turn (its title and place change). ``session_id`` is that chat's (0: several, as after profile
    edits). The window lists the chats again on this event alone."""


class StorageWaiting(EngineEvent, frozen=True):
    """Another program (another Précis) holds the database: the work waits for it, and ``text`` says how long
    it will. ``session_id`` is 0: it concerns every chat."""

    text: str


class ProjectsChanged(EngineEvent, frozen=True):
    """A project was made, edited (its instructions, defaults or knowledge) or deleted: ``session_id`` is the
    project's id (0: several). The window lists the projects again."""


class TurnError(EngineEvent, frozen=True):
    """A failed turn. The user's message is stored; ``retryable`` turns can be resent with retry()."""

    kind: ErrorKind
    message: str
    retryable: bool
    actions: tuple[TurnAction, ...] = ("retry",)
    detail: dict[str, Any] = field(default_factory=dict)


class ContextChanged(EngineEvent, frozen=True):
    """The session's context measurement changed."""

    snapshot: ContextSnapshot


class CompactionChanged(EngineEvent, frozen=True):
    """The session's compactions changed (added, undone, dropped by an edit); ``records`` is the new list,
    oldest first, so views update without reading anything."""

    note: str = ""
    records: tuple[CompactionRecord, ...] = ()


class SummaryFailed(EngineEvent, frozen=True):
    """A summary the user asked for failed or was refused: nothing changed. The chat shows why and what the model
    wrote (a card with Retry), not only a passing notice."""

    reason: str
    rejected: str = ""


class Notice(EngineEvent, frozen=True):
    """Something to tell the user once (toast); never stored in the transcript."""

    text: str
    level: NoticeLevel = "info"


class CommandOutput(EngineEvent, frozen=True):
    """Output of a slash command, shown as a card in the chat and never stored in the transcript."""

    title: str
    text: str


class PathChanged(EngineEvent, frozen=True):
    """The chat shows another path through its versions (a regenerate, an edit, ‹ › switched): views read the
    page again."""
