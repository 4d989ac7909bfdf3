"""The window's one way into the engine and the tools: every engine or tools name a widget uses, declared here.

Widgets import these names from this module alone (tests/test_window_api.py checks the list below and that no other
ui module but the bridge and the app's start-up imports ``desktop.engine`` or ``desktop.tools``). They call the
engine through ``Bridge.engine``, typed as ``Chats``: what the window may ask of a chat and of the library. The
bridge adds only what Qt needs on top (signals, background tasks, worker threads, the toolbox's absence).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from desktop.engine import events
from desktop.engine.compaction.citations import CITATION
from desktop.engine.compaction.threshold import CAP as THRESHOLD_CAP
from desktop.engine.compaction.threshold import CAP_RANGE as THRESHOLD_CAP_RANGE
from desktop.engine.compaction.threshold import PERCENT as THRESHOLD_PERCENT
from desktop.engine.compaction.threshold import PERCENT_RANGE as THRESHOLD_PERCENT_RANGE
from desktop.engine.compaction.threshold import percent as threshold_percent
from desktop.engine.compaction.user_pins import Pin
from desktop.engine.config import profiles as profile_list
from desktop.engine.config.profiles import (
    ANTHROPIC,
    AUTH_KINDS,
    AUTH_WORDS,
    CUSTOM,
    PRESETS,
    Draft,
    Profile,
    ProfileEdits,
    preset,
)
from desktop.engine.config.settings import Settings
from desktop.engine.history import display
from desktop.engine.history.attachments import AttachmentRefused, Checked
from desktop.engine.history.library import ChatLibrary
from desktop.engine.history.search import SearchHit
from desktop.engine.history.storage import Page, StorageError
from desktop.engine.metering.bill import Bill, Cold, TurnBill
from desktop.engine.metering.context import CATEGORIES, LABELS, WARNING_RATIO, ContextSnapshot
from desktop.engine.projects.context import ProjectContext
from desktop.engine.projects.library import Projects
from desktop.engine.projects.records import Knowledge, Project
from desktop.engine.providers.probe import ProbeResult
from desktop.engine.turn.tasks import Activity
from desktop.engine.turn.thinking import supports_thinking
from desktop.engine.types import (
    CUT_STOP_REASONS,
    Block,
    CompactionRecord,
    SessionInfo,
    StoredMessage,
    covered_through,
    one_line,
)
from desktop.tools import events as tool_events
from desktop.tools.mcp_config import McpServerConfig
from desktop.tools.mcp_host import ServerStatus
from desktop.tools.permissions import Answer, PermissionRequest, SavedApproval

if TYPE_CHECKING:
    from desktop.engine.compaction.compactor import Outcome, Plan
    from desktop.engine.compaction.planner import Trigger
    from desktop.engine.compaction.schedule import Verdict
    from desktop.engine.history.importer import ImportFailed, ImportResult

__all__ = [
    "ANTHROPIC",
    "AUTH_KINDS",
    "AUTH_WORDS",
    "CATEGORIES",
    "CITATION",
    "CUSTOM",
    "CUT_STOP_REASONS",
    "LABELS",
    "PRESETS",
    "THRESHOLD_CAP",
    "THRESHOLD_CAP_RANGE",
    "THRESHOLD_PERCENT",
    "THRESHOLD_PERCENT_RANGE",
    "WARNING_RATIO",
    "Activity",
    "Answer",
    "AttachmentRefused",
    "Bill",
    "Block",
    "ChatLibrary",
    "Chats",
    "Checked",
    "Cold",
    "CompactionRecord",
    "ContextSnapshot",
    "Draft",
    "ImportFailed",
    "ImportResult",
    "Knowledge",
    "McpServerConfig",
    "Page",
    "PermissionRequest",
    "Pin",
    "Plan",
    "ProbeResult",
    "Profile",
    "ProfileEdits",
    "Project",
    "ProjectContext",
    "Projects",
    "SavedApproval",
    "SearchHit",
    "ServerStatus",
    "SessionInfo",
    "Settings",
    "StorageError",
    "StoredMessage",
    "TurnBill",
    "Verdict",
    "covered_through",
    "display",
    "one_line",
    "events",
    "preset",
    "profile_list",
    "supports_thinking",
    "threshold_percent",
    "tool_events",
]

# Loaded when first asked for (PEP 562): the compaction policy and the Claude Code importer are not needed before
# the window's first paint.
_LATER = {
    "Plan": "desktop.engine.compaction.compactor",
    "Verdict": "desktop.engine.compaction.schedule",
    "ImportFailed": "desktop.engine.history.importer",
    "ImportResult": "desktop.engine.history.importer",
}


def __getattr__(name: str) -> object:
    if name not in _LATER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LATER[name]), name)
    globals()[name] = value
    return value


class Chats(Protocol):
    """What the window asks of the engine directly (``desktop.engine.turn.chat.ChatEngine`` is one). Every
    change it makes reaches the views as events (a new list of chats: ``events.SessionsChanged``; the projects:
    ``events.ProjectsChanged``)."""

    # The projects, their knowledge and what their chats' requests carry of them (an attribute of the engine).
    projects: Projects

    @property
    def settings(self) -> Settings: ...
    @property
    def library(self) -> ChatLibrary: ...
    def set_up_before(self) -> bool: ...
    def busy(self, session_id: int) -> bool: ...
    def activity(self, session_id: int) -> Activity: ...
    def stop(self, session_id: int) -> bool: ...
    async def retry(self, session_id: int) -> StoredMessage | None: ...
    async def edit_and_resend(self, session_id: int, message_id: int, text: str) -> StoredMessage | None: ...
    async def delete_message(self, session_id: int, message_id: int) -> None: ...
    async def delete_session(self, session_id: int) -> None: ...
    async def compact(
        self,
        session_id: int,
        trigger: Trigger = "manual",
        focus: str | None = None,
        *,
        target: int | None = None,
        before_message: int | None = None,
        exclude: Sequence[int] = (),
    ) -> Outcome: ...
    async def compact_and_retry(self, session_id: int) -> StoredMessage | None: ...
    async def plan_compaction(self, session_id: int, before_message: int | None = None) -> Plan: ...
    async def edit_summary(self, session_id: int, text: str) -> CompactionRecord | None: ...
    async def undo_compaction(self, session_id: int) -> bool: ...
    async def workspace(self, session_id: int) -> str: ...
    async def set_workspace(self, session_id: int, folder: str) -> None: ...
    async def instructions(self, session_id: int) -> str: ...
    async def set_instructions(self, session_id: int, text: str) -> None: ...
    async def thinking(self, session_id: int) -> bool: ...
    async def set_thinking(self, session_id: int, on: bool) -> None: ...
