"""The engine's read API for the window: the chats as a library (list, pages, search, export, the database's
change counter) and the whole-chat edits that are not part of a turn (title, pin, drafts, an import).

The bridge goes through this and never through the store. Whole chats are made and deleted here; the rows inside
a chat (messages, summaries, versions, its state) are written by its conversation alone."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from desktop.engine.config.profiles import Profile, ProfileEdits
from desktop.engine.events import SessionsChanged
from desktop.engine.history.search import SearchHit
from desktop.engine.history.storage import Page, Storage
from desktop.engine.types import DEFAULT_TITLE, SessionInfo, one_line

if TYPE_CHECKING:  # the importer, export and profile edits load when first used, not before the first paint
    from desktop.engine.history.importer import ImportResult

DRAFTS_KEY = "drafts"  # every chat's unsent text and files, kept across restarts

Drafts = dict[int, tuple[str, list[str]]]  # session id -> (text, attached file paths)


class ChatLibrary:
    """``changed`` hears of every change to the list of chats made here (the engine's event bus)."""

    def __init__(
        self, store: Storage, changed: Callable[[SessionsChanged], None] = lambda _event: None
    ) -> None:
        self._store = store
        self._changed = changed

    # --- reads ------------------------------------------------------------------------------------------
    async def apply_profile_edits(self, edits: ProfileEdits, in_use: Profile) -> None:
        """Settings' profile edits: a deleted profile's chats move to ``in_use``, a renamed one's follow it, and
        keys go with them (KeyringUnavailable or OSError when a key could not be written)."""
        from desktop.engine.config import profile_edits

        try:
            await profile_edits.apply(self._store, edits, in_use)
        finally:  # some chats may have moved before a key failed to follow
            self._changed(SessionsChanged(0))

    async def sessions(self, title_filter: str = "") -> list[SessionInfo]:
        return await self._store.list_sessions(title_filter)

    async def session(self, session_id: int) -> SessionInfo | None:
        return await self._store.get_session(session_id)

    async def session_of_message(self, message_id: int) -> int | None:
        message = await self._store.get_message(message_id)
        return message.session_id if message is not None else None

    async def page(
        self,
        session_id: int,
        *,
        size: int,
        originals: bool = False,
        before_id: int | None = None,
        hidden_through: int | None = None,
    ) -> Page | None:
        return await self._store.page(
            session_id, originals=originals, before_id=before_id, hidden_through=hidden_through, size=size
        )

    async def data_version(self) -> int:
        """Changes when another process commits (cheap to poll: one PRAGMA)."""
        return await self._store.data_version()

    async def search(self, query: str, limit: int = 50) -> list[SearchHit]:
        return await self._store.search(query, limit)

    async def recall(self, session_id: int, query: str, limit: int = 30) -> list[SearchHit]:
        """One chat's own history, ranked (the recall tool's search), as hits the window can open."""
        return [
            SearchHit("message", session_id, "", h.message_id, None, h.role, h.snippet, h.created_at)
            for h in await self._store.recall(session_id, query, limit)
        ]

    async def export(self, session_id: int, fmt: str = "md") -> str:
        """The chat as `precis export ID --format md|json` writes it ("" when it is gone)."""
        from desktop.engine.history.export import export_text

        session = await self._store.get_session(session_id)
        if session is None:
            return ""
        return export_text(
            session, await self._store.messages(session_id), await self._store.compactions(session_id), fmt
        )

    async def load_drafts(self) -> Drafts:
        stored = await self._store.get_kv(DRAFTS_KEY, {})
        out: Drafts = {}
        for key, item in stored.items() if isinstance(stored, dict) else []:
            if isinstance(item, dict) and str(key).isdigit():
                files = [str(f) for f in item.get("files") or [] if isinstance(f, str)]
                out[int(key)] = (str(item.get("text") or ""), files)
        return out

    # --- whole chats: made and deleted here (the rows inside a chat are its conversation's) ---------------
    async def create(
        self, title: str, model: str | None, profile: str | None, project_id: int | None = None
    ) -> SessionInfo:
        session = await self._store.create_session(
            one_line(title) or DEFAULT_TITLE, model, profile, project_id
        )
        self._changed(SessionsChanged(session.id))
        return session

    async def delete(self, session_id: int) -> None:
        await self._store.delete_session(session_id)
        self._changed(SessionsChanged(session_id))

    # --- whole-chat edits -------------------------------------------------------------------------------
    async def save_drafts(self, drafts: Drafts) -> None:
        value = {str(sid): {"text": text, "files": files} for sid, (text, files) in drafts.items()}
        await self._store.set_kv(DRAFTS_KEY, value)

    async def rename(self, session_id: int, title: str) -> None:
        """A blank title is no title: the chat is named as a new one is."""
        await self._store.update_session(session_id, title=one_line(title) or DEFAULT_TITLE)
        self._changed(SessionsChanged(session_id))

    async def set_pinned(self, session_id: int, pinned: bool) -> None:
        await self._store.set_pinned(session_id, pinned)
        self._changed(SessionsChanged(session_id))

    async def import_claude_code(self, path: str | Path, title: str | None = None) -> ImportResult:
        from desktop.engine.history import importer

        result = await importer.import_claude_code(self._store, path, title)
        self._changed(SessionsChanged(result.session_id))
        return result
