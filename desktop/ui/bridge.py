"""The bridge: Qt signals out of engine events, async slots into the engine and the store.

Widgets hold no business rules: they call the bridge's slots and render what its signals carry.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from PySide6.QtCore import QObject, Signal

from desktop.engine import events as ev
from desktop.engine import importer, secrets
from desktop.engine.chat import ChatEngine
from desktop.engine.compaction.media import prepare_attachment
from desktop.engine.importer import ImportResult

log = logging.getLogger(__name__)

PAGE_SIZE = 200  # newest messages shown when a session opens; older ones load on scroll


class Bridge(QObject):
    sessions_changed = Signal(object)  # list[SessionInfo]
    # SessionInfo, newest page (list[StoredMessage]), has_older, hidden_through (originals collapsed up to this id)
    session_opened = Signal(object, object, bool, int)
    older_loaded = Signal(int, object, bool)  # session_id, list[StoredMessage], has_older
    message_added = Signal(object)  # StoredMessage
    message_updated = Signal(object)  # StoredMessage
    text_delta = Signal(int, int, str)  # session_id, message_id, text
    thinking_delta = Signal(int, int, str)
    status_changed = Signal(int, str, bool)  # session_id, text, busy
    turn_done = Signal(object)  # StoredMessage
    turn_error = Signal(int, str, str, object)  # session_id, kind, message, actions
    context_changed = Signal(int, object)  # session_id, ContextSnapshot
    compactions_changed = Signal(int, object)  # session_id, list[CompactionRecord]
    notice = Signal(int, str, str)  # session_id, text, level
    busy_changed = Signal(int, bool)
    failed = Signal(str)  # an unexpected error in background work, in words for a toast
    message_removed = Signal(int, int)  # session_id, message_id
    command_output = Signal(int, str, str)  # session_id, title, text

    def __init__(self, engine: ChatEngine, parent: QObject | None = None):
        super().__init__(parent)
        self.engine = engine
        self.store = engine.store
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False
        engine.subscribe(self._on_event)

    # --- engine -> Qt ---------------------------------------------------------------------------------
    def _on_event(self, event: ev.EngineEvent) -> None:
        sid = event.session_id
        match event:
            case ev.MessageAdded(message=msg):
                self.message_added.emit(msg)
            case ev.MessageUpdated(message=msg):
                self.message_updated.emit(msg)
            case ev.MessageRemoved(message_id=mid):
                self.message_removed.emit(sid, mid)
            case ev.CommandOutput(title=title, text=text):
                self.command_output.emit(sid, title, text)
            case ev.TextDelta(message_id=mid, text=text):
                self.text_delta.emit(sid, mid, text)
            case ev.ThinkingDelta(message_id=mid, text=text):
                self.thinking_delta.emit(sid, mid, text)
            case ev.StatusChanged(text=text, busy=busy):
                self.status_changed.emit(sid, text, busy)
            case ev.TurnDone(message=msg):
                self.message_updated.emit(msg)
                self.turn_done.emit(msg)
                self.spawn(self.refresh_sessions())
            case ev.TurnError(kind=kind, message=message, actions=actions):
                self.turn_error.emit(sid, kind, message, actions)
            case ev.ContextChanged(snapshot=snap):
                self.context_changed.emit(sid, snap)
            case ev.CompactionChanged():
                self.spawn(self._emit_compactions(sid))
            case ev.Notice(text=text, level=level):
                self.notice.emit(sid, text, level)

    # --- Qt -> engine / store -------------------------------------------------------------------------
    def spawn(self, coro: Any) -> asyncio.Task[Any] | None:
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
        log.error("background task failed", exc_info=exc)
        self.failed.emit(f"Something went wrong: {type(exc).__name__}: {exc}")

    @contextlib.asynccontextmanager
    async def _busy(self, session_id: int) -> AsyncIterator[None]:
        """Send turns into Stop for as long as the engine works on this session."""
        self.busy_changed.emit(session_id, True)
        try:
            yield
        finally:
            self.busy_changed.emit(session_id, False)

    async def refresh_sessions(self, title_filter: str = "") -> None:
        self.sessions_changed.emit(await self.store.list_sessions(title_filter))

    async def open_session(self, session_id: int, originals: bool = False) -> None:
        """Show the newest page. Messages a summary replaced stay collapsed under its card unless ``originals``."""
        session = await self.store.get_session(session_id)
        if session is None:
            return
        active = await self.store.active_compaction(session_id)
        hidden = active.covers_through_message_id if active and not originals else 0
        page = await self.store.messages(session_id, after_id=hidden, newest=PAGE_SIZE)
        older = bool(page) and await self.store.count_messages(session_id, before_id=page[0].id,
                                                               after_id=hidden) > 0
        self.session_opened.emit(session, page, older, hidden)
        await self._emit_compactions(session_id)
        self.engine.session_changed(session_id)
        # Measuring a long session takes a moment: the window is usable meanwhile, the gauge fills in after.
        self.spawn(self.engine.publish_context(session_id))

    async def load_older(self, session_id: int, before_id: int, hidden_through: int = 0) -> None:
        page = await self.store.messages(session_id, after_id=hidden_through, before_id=before_id, newest=PAGE_SIZE)
        older = bool(page) and await self.store.count_messages(session_id, before_id=page[0].id,
                                                               after_id=hidden_through) > 0
        self.older_loaded.emit(session_id, page, older)

    async def _emit_compactions(self, session_id: int) -> None:
        self.compactions_changed.emit(session_id, await self.store.compactions(session_id))

    async def new_session(self) -> int:
        session = await self.store.create_session("New chat", self.engine.settings.model)
        await self.refresh_sessions()
        await self.open_session(session.id)
        return session.id

    async def import_claude_code(self, path: str, title: str | None = None) -> ImportResult:
        """Import a Claude Code transcript as a new session and open it. Raises ImportFailed (one line)."""
        result = await importer.import_claude_code(self.store, path, title)
        await self.refresh_sessions()
        await self.open_session(result.session_id)
        return result

    async def rename_session(self, session_id: int, title: str) -> None:
        await self.store.update_session(session_id, title=title.strip() or "Untitled")
        await self.refresh_sessions()

    async def delete_session(self, session_id: int) -> None:
        self.engine.stop(session_id)
        await self.store.delete_session(session_id)
        await self.refresh_sessions()

    async def measure(self, session_id: int, draft: str) -> None:
        await self.engine.publish_draft(session_id, draft)

    async def send(self, session_id: int, text: str, files: list[str] | None = None) -> None:
        if text.startswith("/") and not files and await self.engine.command(session_id, text):
            return
        try:
            # Reading, checking and downscaling files is slow work: off the UI thread.
            blocks = await asyncio.to_thread(lambda: [prepare_attachment(p) for p in files or []])
        except (OSError, ValueError) as exc:
            self.notice.emit(session_id, f"Cannot attach: {exc}", "error")
            return
        async with self._busy(session_id):
            await self.engine.send(session_id, text, blocks)

    async def compact_and_retry(self, session_id: int) -> None:
        async with self._busy(session_id):
            await self.engine.compact_and_retry(session_id)

    async def new_chat_from_summary(self, session_id: int) -> None:
        new_id = await self.engine.new_chat_from_summary(session_id)
        await self.refresh_sessions()
        await self.open_session(new_id)

    async def retry(self, session_id: int) -> None:
        async with self._busy(session_id):
            await self.engine.retry(session_id)

    async def compact(self, session_id: int, focus: str | None = None) -> None:
        """The Compact now button: the same engine entry point as /compact and `precis compact`."""
        async with self._busy(session_id):
            outcome = await self.engine.compact(session_id, "manual", focus)
        self.notice.emit(session_id, outcome.message, "info" if outcome.ok else "warning")

    async def delete_message(self, session_id: int, message_id: int) -> None:
        await self.engine.delete_message(session_id, message_id)

    async def edit_and_resend(self, session_id: int, message_id: int, text: str) -> None:
        """Replace a user message and everything after it, then send; summaries that covered any of it go."""
        async with self._busy(session_id):
            await self.engine.edit_and_resend(session_id, message_id, text)

    async def clear_history(self, session_id: int) -> None:
        await self.engine.clear_history(session_id)
        await self.open_session(session_id)

    async def undo_compaction(self, session_id: int) -> None:
        if await self.engine.undo_compaction(session_id):
            self.notice.emit(session_id, "Compaction undone: the next request is built from the originals.", "info")

    def stop(self, session_id: int) -> None:
        self.engine.stop(session_id)

    async def apply_provider_choice(self, choice: Any) -> str | None:
        """Save settings (file) and the key (keyring, or memory for this run). Returns an error for the user."""
        loop = asyncio.get_running_loop()
        if choice.api_key:
            if choice.run_only:
                secrets.use_for_this_run(choice.api_key)
            else:
                try:
                    await loop.run_in_executor(None, secrets.save_api_key, choice.api_key)
                except secrets.KeyringUnavailable as exc:
                    return str(exc)
        await loop.run_in_executor(None, choice.settings.save, self.engine.paths)
        await self.engine.reconfigure(choice.settings)
        return None

    async def close(self) -> None:
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
