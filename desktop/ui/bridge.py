"""The bridge: the widgets' only way to the engine, and the only ui module that imports it.

Engine events pass through unchanged on one signal (``engine_event``): adding an event means defining it in the
engine and handling it in a view. Reads (session list, pages) come back on their own signals. Widgets hold no
business rules: they call the bridge's slots and render what its signals carry. The data types the widgets
render are re-exported here, so widgets import nothing but ``desktop.ui``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal

from desktop.engine import events
from desktop.engine import importer as _importer
from desktop.engine import secrets as _secrets
from desktop.engine.chat import ChatEngine
from desktop.engine.compaction.media import prepare_attachment
from desktop.engine.context import CATEGORIES, LABELS, WARNING_RATIO, ContextSnapshot
from desktop.engine.importer import ImportFailed, ImportResult
from desktop.engine.session_lock import SessionBusy
from desktop.engine.settings import Settings
from desktop.engine.storage import Page, StorageError
from desktop.engine.tasks import Activity
from desktop.engine.types import Block, CompactionRecord, SessionInfo, StoredMessage

__all__ = [
    "CATEGORIES",
    "LABELS",
    "WARNING_RATIO",
    "Activity",
    "Block",
    "Bridge",
    "CompactionRecord",
    "ContextSnapshot",
    "ImportFailed",
    "ImportResult",
    "Page",
    "SessionInfo",
    "Settings",
    "StoredMessage",
    "events",
]

log = logging.getLogger(__name__)

PAGE_SIZE = 200  # newest messages shown when a session opens; older ones load on scroll


class ProviderChoice(Protocol):
    """What the settings form hands over."""

    @property
    def settings(self) -> Settings: ...
    @property
    def api_key(self) -> str: ...  # empty: keep whatever is stored
    @property
    def run_only(self) -> bool: ...  # keep the key in memory for this run instead of the keyring


class Bridge(QObject):
    engine_event = Signal(object)  # every engine event (desktop.engine.events), as the engine emitted it
    sessions_changed = Signal(object)  # list[SessionInfo]
    session_opened = Signal(object)  # Page: the newest page of a session
    older_loaded = Signal(int, object)  # session_id, Page of older messages
    notice = Signal(int, str, str)  # session_id, text, level: feedback on the bridge's own work (attachments)
    draft_taken = Signal(int)  # session_id: the composer's draft was committed (or ran as a command): clear it
    failed = Signal(str)  # an unexpected error in background work, in words for a toast

    def __init__(self, engine: ChatEngine, parent: QObject | None = None):
        super().__init__(parent)
        self._engine = engine
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False
        engine.subscribe(self._on_event)

    def _on_event(self, event: events.EngineEvent) -> None:
        self.engine_event.emit(event)
        if isinstance(event, events.MessageAdded) and event.message.role == "user" and any(
                b.get("type") != "tool_result" for b in event.message.content):
            self.draft_taken.emit(event.session_id)  # the typed message is committed
        if isinstance(event, events.TurnDone):
            self.spawn(self.refresh_sessions())  # titles and order change with a finished turn

    # --- running work ---------------------------------------------------------------------------------
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any] | None:
        """Fire and forget, keeping a strong reference (asyncio only keeps weak ones). Nothing after close()."""
        if self._closed:
            coro.close()
            return None
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled() or task.exception() is None:
            return
        exc = task.exception()
        if isinstance(exc, StorageError | SessionBusy):  # already one sentence for the user
            log.warning("%s", exc)
            self.failed.emit(str(exc))
            return
        log.error("background task failed", exc_info=exc)
        self.failed.emit(f"Something went wrong: {type(exc).__name__}: {exc}")

    async def close(self) -> None:
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # --- what widgets may read ------------------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        return self._engine.settings

    def busy(self, session_id: int) -> bool:
        return self._engine.busy(session_id)

    def activity(self, session_id: int) -> Activity:
        return self._engine.tasks.activity(session_id)

    @staticmethod
    def credentials_present() -> bool:
        return _secrets.load_credentials().present

    @staticmethod
    def credentials_source() -> str:
        return _secrets.load_credentials().source

    @staticmethod
    def keyring_status() -> str | None:
        """Why the keyring cannot store a key (None: it can)."""
        return _secrets.keyring_status()

    # --- reads ----------------------------------------------------------------------------------------
    async def refresh_sessions(self, title_filter: str = "") -> list[SessionInfo]:
        sessions = await self._engine.store.list_sessions(title_filter)
        self.sessions_changed.emit(sessions)
        return sessions

    async def open_session(self, session_id: int, originals: bool = False) -> None:
        """Show the newest page. Messages a summary replaced stay collapsed under its card unless ``originals``."""
        page = await self._engine.store.page(session_id, originals=originals, size=PAGE_SIZE)
        if page is None:
            return
        self.session_opened.emit(page)
        self._engine.session_changed(session_id)
        # Measuring a long session takes a moment: the window is usable meanwhile, the gauge fills in after.
        self.spawn(self._engine.publish_context(session_id))

    async def load_older(self, session_id: int, before_id: int, hidden_through: int = 0) -> None:
        page = await self._engine.store.page(session_id, before_id=before_id, hidden_through=hidden_through,
                                             size=PAGE_SIZE)
        if page is not None:
            self.older_loaded.emit(session_id, page)

    # --- sessions -------------------------------------------------------------------------------------
    async def new_session(self) -> int:
        session_id = await self._engine.new_session()
        await self.refresh_sessions()
        await self.open_session(session_id)
        return session_id

    async def import_claude_code(self, path: str, title: str | None = None) -> ImportResult:
        """Import a Claude Code transcript as a new session and open it. Raises ImportFailed (one line)."""
        result = await _importer.import_claude_code(self._engine.store, path, title)
        await self.refresh_sessions()
        await self.open_session(result.session_id)
        return result

    async def rename_session(self, session_id: int, title: str) -> None:
        await self._engine.store.update_session(session_id, title=title.strip() or "Untitled")
        await self.refresh_sessions()

    async def delete_session(self, session_id: int) -> list[SessionInfo]:
        """Delete a chat; returns the sessions left."""
        await self._engine.delete_session(session_id)
        return await self.refresh_sessions()

    # --- turns ----------------------------------------------------------------------------------------
    async def measure(self, session_id: int, draft: str) -> None:
        await self._engine.publish_draft(session_id, draft)

    async def send(self, session_id: int, text: str, files: list[str] | None = None) -> bool:
        """Run a command or send a message. False: refused before anything was stored (the draft stays)."""
        if text.startswith("/") and not files and await self._engine.command(session_id, text):
            self.draft_taken.emit(session_id)
            return True
        try:
            # Reading, checking and downscaling files is slow work: off the UI thread.
            blocks: list[Block] = await asyncio.to_thread(lambda: [prepare_attachment(p) for p in files or []])
        except (OSError, ValueError) as exc:
            self.notice.emit(session_id, f"Cannot attach: {exc}", "error")
            return False
        await self._engine.send(session_id, text, blocks)
        return True

    async def retry(self, session_id: int) -> None:
        await self._engine.retry(session_id)

    async def edit_and_resend(self, session_id: int, message_id: int, text: str) -> None:
        """Replace a user message and everything after it, then send; summaries that covered any of it go."""
        await self._engine.edit_and_resend(session_id, message_id, text)

    def stop(self, session_id: int) -> None:
        self._engine.stop(session_id)

    async def delete_message(self, session_id: int, message_id: int) -> None:
        await self._engine.delete_message(session_id, message_id)

    async def clear_history(self, session_id: int) -> None:
        await self._engine.clear_history(session_id)
        await self.open_session(session_id)

    # --- compaction -----------------------------------------------------------------------------------
    async def compact(self, session_id: int, focus: str | None = None) -> None:
        """The Compact now button: the same engine entry point as /compact and `precis compact`."""
        await self._engine.compact(session_id, "manual", focus)

    async def compact_and_retry(self, session_id: int) -> None:
        await self._engine.compact_and_retry(session_id)

    async def new_chat_from_summary(self, session_id: int) -> None:
        new_id = await self._engine.new_chat_from_summary(session_id)
        await self.refresh_sessions()
        await self.open_session(new_id)

    async def undo_compaction(self, session_id: int) -> None:
        await self._engine.undo_compaction(session_id)

    # --- settings -------------------------------------------------------------------------------------
    async def apply_provider_choice(self, choice: ProviderChoice) -> str | None:
        """Save settings (file) and the key (keyring, or memory for this run). Returns an error for the user."""
        loop = asyncio.get_running_loop()
        if choice.api_key:
            if choice.run_only:
                _secrets.use_for_this_run(choice.api_key)
            else:
                try:
                    await loop.run_in_executor(None, _secrets.save_api_key, choice.api_key)
                except _secrets.KeyringUnavailable as exc:
                    return str(exc)
        await loop.run_in_executor(None, choice.settings.save, self._engine.paths)
        await self._engine.reconfigure(choice.settings)
        return None
