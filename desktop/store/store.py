"""Async, typed access to the database: every method is one round trip to one dedicated database thread.

peewee keeps one connection per thread, so a single worker thread gives one connection, no lock fights, and
never a blocked UI thread. The methods mirror ``desktop.engine.history.storage.Storage``, which the engine depends on.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, ParamSpec, TypeVar

import peewee as pw

import desktop.store.errors as errors
import desktop.store.projects as projects
from desktop.engine.history.search import RecallHit, SearchHit
from desktop.engine.history.storage import (
    Fork,
    ImportPlan,
    Loaded,
    LockHolder,
    Overview,
    Page,
    Segment,
    Since,
    StorageError,
    StoredEstimate,
)
from desktop.engine.projects.records import Knowledge, KnowledgeKind, Project, ProjectHit
from desktop.engine.types import DEFAULT_TITLE, Block, CompactionRecord, SessionInfo, StoredMessage, Usage
from desktop.store.repo import Repo

log = logging.getLogger(__name__)

# What a database operation may raise that the user must read as one sentence (see errors.translate).
_FAILURES = (pw.PeeweeException, sqlite3.Error, OSError, OverflowError)


# Told once per operation that has waited this long for another program's lock (seconds): with SQLite's busy
# timeout per try at most a second (errors.DEFAULT_BUSY_TIMEOUT), the wait is said within 2 s.
LOCK_NOTICE_AFTER = 0.75


def guarded(path: Path, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run one database operation on the database thread (see ``retrying``; nobody is told of a wait)."""
    return retrying(path, None, fn, *args, **kwargs)


def retrying(
    path: Path, waiting: Callable[[float], None] | None, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs
) -> T:
    """Run one database operation on the database thread. While another program holds the write lock it is
    retried (every repo method is one transaction, so a failed try changed nothing) for up to
    ``errors.lock_wait()``, and ``waiting`` is called once (with the seconds waited) when the wait passes
    ``LOCK_NOTICE_AFTER``; any failure comes out as a ``StorageError`` sentence."""
    started = time.monotonic()
    pause = 0.05
    told = False
    while True:
        try:
            return fn(*args, **kwargs)
        except StorageError:
            raise
        except _FAILURES as exc:
            waited = time.monotonic() - started
            if errors.is_locked(exc) and waited < errors.lock_wait():
                if not told and waited >= LOCK_NOTICE_AFTER:
                    told = True
                    log.info("the database %s is locked by another program; waiting", path)
                    if waiting is not None:
                        waiting(waited)
                time.sleep(min(pause, max(0.0, errors.lock_wait() - waited)))
                pause = min(pause * 2, 0.5)
                continue
            log.debug("database operation %s failed", getattr(fn, "__name__", fn), exc_info=True)
            raise errors.translate(exc, path, waited=waited) from None


T = TypeVar("T")
P = ParamSpec("P")


class Store:
    def __init__(self, repo: Repo, executor: ThreadPoolExecutor):
        self._repo = repo
        self._executor = executor
        self.path = repo.path
        self.round_trips = 0  # calls that went to the database thread (the engine benchmark reads it)
        # Told, on the event loop, when an operation has waited LOCK_NOTICE_AFTER for another program's lock (once
        # per operation; the sentence says how long it keeps waiting). The operation goes on waiting, then lands
        # or fails with the DB_LOCKED sentence.
        self.on_lock_wait: Callable[[str], None] | None = None

    @classmethod
    async def open(
        cls, path: Path, *, readonly: bool = False, on_lock_wait: Callable[[str], None] | None = None
    ) -> Store:
        """Open (and upgrade) the database. ``readonly``: for commands that only read; opens without writing
        anything when the schema is current, so it works on a locked database and on read-only media.
        ``on_lock_wait``: told when a write waits for another program's lock, from the first one on."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="precis-db")
        loop = asyncio.get_running_loop()
        try:
            repo = await loop.run_in_executor(
                executor, functools.partial(guarded, Path(path), Repo, Path(path), readonly=readonly)
            )
        except BaseException:
            executor.shutdown(wait=False)
            raise
        store = cls(repo, executor)
        store.on_lock_wait = on_lock_wait
        await store.call(repo.sweep_streaming)
        return store

    @classmethod
    def open_sync(cls, path: Path, *, readonly: bool = False) -> Store:
        """For synchronous callers (tests): the same thread discipline."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="precis-db")
        try:
            repo = executor.submit(guarded, Path(path), Repo, Path(path), readonly=readonly).result()
        except BaseException:
            executor.shutdown(wait=False)
            raise
        store = cls(repo, executor)
        store.run(repo.sweep_streaming)
        return store

    @property
    def readonly(self) -> bool:
        return self._repo.readonly

    async def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        self.round_trips += 1
        loop = asyncio.get_running_loop()

        def waiting(_waited: float) -> None:  # on the database thread: the listener hears it on the loop
            if self.on_lock_wait is not None:
                loop.call_soon_threadsafe(self._told_waiting)

        return await loop.run_in_executor(
            self._executor, functools.partial(retrying, self.path, waiting, fn, *args, **kwargs)
        )

    def _told_waiting(self) -> None:
        if self.on_lock_wait is not None:
            self.on_lock_wait(errors.lock_waiting(self.path))

    def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Blocking call on the database thread (never from the UI thread)."""
        self.round_trips += 1
        return self._executor.submit(functools.partial(guarded, self.path, fn, *args, **kwargs)).result()

    @property
    def repo(self) -> Repo:
        """The synchronous repo, for code that is already on the database thread via run()/call()."""
        return self._repo

    async def close(self) -> None:
        await self.call(self._repo.close)
        self._executor.shutdown(wait=True)

    def close_sync(self) -> None:
        self.run(self._repo.close)
        self._executor.shutdown(wait=True)

    # --- sessions -------------------------------------------------------------------------------------
    async def create_session(
        self,
        title: str = DEFAULT_TITLE,
        model: str | None = None,
        profile: str | None = None,
        project_id: int | None = None,
    ) -> SessionInfo:
        return await self.call(self._repo.create_session, title, model, profile, project_id)

    # --- projects (store/projects.py) -------------------------------------------------------------------
    async def create_project(
        self,
        name: str,
        instructions: str = "",
        profile: str | None = None,
        model: str | None = None,
        workspace: str | None = None,
    ) -> Project:
        return await self.call(projects.create, self._repo.db, name, instructions, profile, model, workspace)

    async def get_project(self, project_id: int) -> Project | None:
        return await self.call(projects.get, self._repo.db, project_id)

    async def find_project(self, name: str) -> Project | None:
        return await self.call(projects.find, self._repo.db, name)

    async def projects(self) -> list[Project]:
        return await self.call(projects.listed, self._repo.db)

    async def update_project(self, project_id: int, changes: dict[str, str | bool | None]) -> None:
        await self.call(projects.update, self._repo.db, project_id, changes)

    async def delete_project(self, project_id: int, chats: Literal["keep", "delete"]) -> list[int]:
        return await self.call(projects.delete, self._repo.db, project_id, chats)

    async def add_knowledge(
        self, project_id: int, name: str, kind: KnowledgeKind, text: str, source: str = ""
    ) -> Knowledge:
        return await self.call(projects.add_knowledge, self._repo.db, project_id, name, kind, text, source)

    async def remove_knowledge(self, knowledge_id: int) -> bool:
        return await self.call(projects.remove_knowledge, self._repo.db, knowledge_id)

    async def knowledge(self, project_id: int) -> list[Knowledge]:
        return await self.call(projects.knowledge, self._repo.db, project_id)

    async def set_session_project(self, session_id: int, project_id: int | None) -> None:
        await self.call(projects.set_session_project, self._repo.db, session_id, project_id)

    async def search_project(
        self, project_id: int, query: str, limit: int = 10, besides: int | None = None
    ) -> list[ProjectHit]:
        return await self.call(projects.search, self._repo.db, project_id, query, limit, besides)

    async def data_version(self) -> int:
        return await self.call(self._repo.data_version)

    async def get_session(self, session_id: int) -> SessionInfo | None:
        return await self.call(self._repo.get_session, session_id)

    async def list_sessions(self, title_filter: str = "") -> list[SessionInfo]:
        return await self.call(self._repo.list_sessions, title_filter)

    async def update_session(
        self,
        session_id: int,
        *,
        title: str | None = None,
        model: str | None = None,
        profile: str | None = None,
    ) -> None:
        await self.call(self._repo.update_session, session_id, title=title, model=model, profile=profile)

    async def move_profile(self, old: str, new: str, model: str | None = None) -> int:
        return await self.call(self._repo.move_profile, old, new, model)

    async def set_pinned(self, session_id: int, pinned: bool) -> None:
        await self.call(self._repo.set_pinned, session_id, pinned)

    async def search(self, query: str, limit: int = 50) -> list[SearchHit]:
        """Full-text search across every chat (see store/search.py)."""
        import desktop.store.search as search

        return await self.call(search.search, self._repo, query, limit)

    async def recall(self, session_id: int, query: str, limit: int = 10) -> list[RecallHit]:
        """One chat's own messages matching ``query``, best first (see store/search.py)."""
        import desktop.store.search as search

        return await self.call(search.recall, self._repo, session_id, query, limit)

    async def recall_read(self, session_id: int, ids: list[int]) -> list[StoredMessage]:
        import desktop.store.search as search

        return await self.call(search.read, self._repo, session_id, ids)

    async def recall_range(self, session_id: int, first: int, last: int, limit: int) -> list[StoredMessage]:
        import desktop.store.search as search

        return await self.call(search.read_range, self._repo, session_id, first, last, limit)

    async def delete_session(self, session_id: int) -> None:
        await self.call(self._repo.delete_session, session_id)

    async def get_state(self, session_id: int) -> dict[str, Any]:
        return await self.call(self._repo.get_state, session_id)

    async def update_state(self, session_id: int, changes: dict[str, Any]) -> dict[str, Any]:
        return await self.call(self._repo.update_state, session_id, changes)

    # --- messages -------------------------------------------------------------------------------------
    async def add_user_message(
        self, session_id: int, content: list[Block], *, title: str = "", meta: dict[str, Any] | None = None
    ) -> StoredMessage:
        return await self.call(self._repo.add_user_message, session_id, content, title=title, meta=meta)

    async def add_message(
        self,
        session_id: int,
        role: str,
        content: list[Block],
        *,
        status: str = "complete",
        model: str | None = None,
        meta: dict[str, Any] | None = None,
        usage: Usage | None = None,
    ) -> StoredMessage:
        return await self.call(
            self._repo.add_message,
            session_id,
            role,
            content,
            status=status,
            model=model,
            meta=meta,
            usage=usage,
        )

    async def add_messages(self, session_id: int, rows: list[dict[str, Any]]) -> int:
        return await self.call(self._repo.add_messages, session_id, rows)

    async def update_message(
        self,
        message_id: int,
        *,
        content: list[Block] | None = None,
        status: str | None = None,
        usage: Usage | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        await self.call(
            self._repo.update_message, message_id, content=content, status=status, usage=usage, meta=meta
        )

    async def get_message(self, message_id: int) -> StoredMessage | None:
        return await self.call(self._repo.get_message, message_id)

    async def messages(
        self, session_id: int, after_id: int = 0, before_id: int | None = None, newest: int | None = None
    ) -> list[StoredMessage]:
        return await self.call(self._repo.messages, session_id, after_id, before_id, newest)

    async def user_messages(self, session_id: int, through_id: int) -> list[StoredMessage]:
        return await self.call(self._repo.user_messages, session_id, through_id)

    async def delete_message(self, message_id: int) -> None:
        await self.call(self._repo.delete_message, message_id)

    async def truncate_from(self, session_id: int, from_id: int) -> list[int]:
        return await self.call(self._repo.truncate_from, session_id, from_id)

    async def clear_history(self, session_id: int) -> None:
        await self.call(self._repo.clear_history, session_id)

    # --- versions -------------------------------------------------------------------------------------
    async def branch_at(self, session_id: int, message_id: int) -> Fork:
        return await self.call(self._repo.branch_at, session_id, message_id)

    async def restore_branch(self, session_id: int, fork: Fork) -> list[int]:
        return await self.call(self._repo.restore_branch, session_id, fork)

    async def switch_version(self, session_id: int, message_id: int, delta: int) -> bool:
        return await self.call(self._repo.switch_version, session_id, message_id, delta)

    # --- one-trip reads -------------------------------------------------------------------------------
    async def load(self, session_id: int) -> Loaded | None:
        return await self.call(self._repo.load, session_id)

    async def since(
        self, session_id: int, after_id: int, estimates: list[StoredEstimate] | None = None
    ) -> Since | None:
        return await self.call(self._repo.since, session_id, after_id, estimates)

    async def overview(self, session_id: int, segments: list[Segment], newest: int) -> Overview | None:
        return await self.call(self._repo.overview, session_id, segments, newest)

    async def set_estimates(self, estimates: list[StoredEstimate]) -> None:
        await self.call(self._repo.set_estimates, estimates)

    async def page(
        self,
        session_id: int,
        *,
        originals: bool = False,
        before_id: int | None = None,
        hidden_through: int | None = None,
        size: int = 200,
    ) -> Page | None:
        return await self.call(
            self._repo.page,
            session_id,
            originals=originals,
            before_id=before_id,
            hidden_through=hidden_through,
            size=size,
        )

    # --- compactions ----------------------------------------------------------------------------------
    async def add_compaction(
        self,
        session_id: int,
        summary: str,
        covers_through_message_id: int,
        trigger: str,
        stats: dict[str, Any],
        *,
        expected_active: int | None = None,
        state_changes: dict[str, Any] | None = None,
    ) -> CompactionRecord:
        return await self.call(
            self._repo.add_compaction,
            session_id,
            summary,
            covers_through_message_id,
            trigger,
            stats,
            expected_active=expected_active,
            state_changes=state_changes,
        )

    async def active_compaction(self, session_id: int) -> CompactionRecord | None:
        return await self.call(self._repo.active_compaction, session_id)

    async def compactions(self, session_id: int) -> list[CompactionRecord]:
        return await self.call(self._repo.compactions, session_id)

    async def add_spend(self, session_id: int, kind: str, requests: list[tuple[str, Usage]]) -> None:
        await self.call(self._repo.add_spend, session_id, kind, requests)

    async def delete_compaction(self, compaction_id: int) -> None:
        await self.call(self._repo.delete_compaction, compaction_id)

    # --- imports and learned facts --------------------------------------------------------------------
    async def import_session(self, plan: ImportPlan) -> tuple[SessionInfo, CompactionRecord | None]:
        return await self.call(self._repo.import_session, plan)

    async def get_kv(self, key: str, default: Any = None) -> Any:
        return await self.call(self._repo.get_kv, key, default)

    async def set_kv(self, key: str, value: Any) -> None:
        await self.call(self._repo.set_kv, key, value)

    # --- the per-session lock of a running turn -----------------------------------------------------
    async def claim_session(
        self, session_id: int, pid: int, host: str, stale_after: float
    ) -> LockHolder | None:
        return await self.call(self._repo.claim_session, session_id, pid, host, stale_after)

    async def beat_session(self, session_id: int, pid: int) -> None:
        await self.call(self._repo.beat_session, session_id, pid)

    async def release_session(self, session_id: int, pid: int) -> None:
        await self.call(self._repo.release_session, session_id, pid)

    async def integrity_check(self) -> str:
        return await self.call(self._repo.integrity_check)
