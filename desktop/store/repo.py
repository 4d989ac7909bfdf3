"""Blocking database operations. Called only on the store's single database thread (see store.py)."""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
import time
import urllib.parse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import peewee as pw
from msgspec import Struct

import desktop.store.errors as errors
import desktop.store.migrations as migrations
import desktop.store.versions as versions
from desktop.engine.history.storage import (
    Fork,
    ImportPlan,
    Loaded,
    LockHolder,
    Overview,
    Page,
    Segment,
    Since,
    StaleBoundary,
    StorageUnusable,
    StoredEstimate,
)
from desktop.engine.types import (
    DEFAULT_TITLE,
    SENDABLE,
    CompactionRecord,
    SessionInfo,
    StoredMessage,
    Usage,
    covered_through,
)
from desktop.store.schema import PROMPT_BAND, Database, build_models, prompt_band, stored_usage

log = logging.getLogger(__name__)

__all__ = ["Repo", "StaleBoundary"]

PRAGMAS = {
    "journal_mode": "wal",
    "foreign_keys": 1,
    "busy_timeout": 5000,
    "synchronous": "normal",
    "cache_size": -32000,
}


def _read_pragmas() -> dict[str, Any]:
    # No journal_mode or synchronous: setting them can write; a read needs neither.
    return {
        "foreign_keys": 1,
        "busy_timeout": int(errors.busy_timeout() * 1000),
        "cache_size": -32000,
        "query_only": 1,
    }


# A turn's session lock is stale when nothing refreshed it for this long (or its process is gone).
LOCK_STALE_AFTER = 60.0
HOST = socket.gethostname()


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    except OSError:
        return False
    return True


def _live(pid: int, host: str, heartbeat: float, now: float, stale_after: float) -> bool:
    """Whether a session lock's holder may still be running its turn."""
    if now - heartbeat > stale_after:
        return False
    return host != HOST or pid_alive(pid)


def _sweep(con: sqlite3.Connection | Database, now: float) -> int:
    """Rows left 'streaming' become 'interrupted', except in sessions whose turn still runs in another process.
    ``con`` is a DB-API connection or the peewee database."""
    run = con.execute_sql if isinstance(con, Database) else con.execute
    has_locks = run("SELECT 1 FROM sqlite_master WHERE type='table' AND name='session_locks'").fetchone()
    busy: list[int] = []
    if has_locks:
        busy = [
            sid
            for sid, pid, host, beat in run("SELECT session_id, pid, host, heartbeat FROM session_locks")
            if pid != os.getpid() and _live(pid, host, beat, now, LOCK_STALE_AFTER)
        ]
    marks = ",".join("?" * len(busy))
    where = f" AND session_id NOT IN ({marks})" if busy else ""
    return run(f"UPDATE messages SET status='interrupted' WHERE status='streaming'{where}", busy).rowcount


class _Facts(Struct, frozen=True):
    """What a look at an existing database file found, without writing to it."""

    uri: str  # the file's URI, without parameters
    version: int
    tables: frozenset[str]
    orphans: bool  # rows a crash left 'streaming'

    def refuse_foreign_or_newer(self, path: Path) -> None:
        if self.tables and "sessions" not in self.tables:
            raise errors.damaged(path, "is another program's SQLite database (it has no Précis tables)")
        if self.version < 0:  # no Précis writes one: set by hand or by another program
            raise errors.damaged(path, f"has schema version {self.version}, which no Précis writes")
        if self.version > migrations.CURRENT_VERSION:
            raise StorageUnusable(
                f"The database {path} was written by a newer Précis (schema {self.version}; this one knows "
                f"{migrations.CURRENT_VERSION}); it was left untouched. Use the newer Précis, or to start fresh "
                f"move it aside (for example rename it to {path.name}.newer)."
            )


def _probe(path: Path) -> _Facts | None:
    """Open an existing, non-empty database read-only and read its schema version and tables (None: no file)."""
    try:
        if path.stat().st_size == 0:
            return None
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise errors.from_os_error(exc, path) from None
    base = "file:" + urllib.parse.quote(str(path.resolve()))
    last: Exception | None = None
    # Without a -wal file the main file holds everything: read it as immutable, which creates no -wal or -shm
    # (a damaged or foreign file is refused without a byte written next to it). With one, read through it.
    wal = path.with_name(path.name + "-wal").exists()
    tries = (base + "?mode=ro", base + "?mode=ro&immutable=1") if wal else (base + "?mode=ro&immutable=1",)
    for uri in tries:
        try:
            con = sqlite3.connect(uri, uri=True, timeout=errors.busy_timeout())
            try:
                version = con.execute("PRAGMA user_version").fetchone()[0]
                tables = frozenset(
                    r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
                )
                orphans = (
                    "messages" in tables
                    and con.execute("SELECT 1 FROM messages WHERE status='streaming' LIMIT 1").fetchone()
                    is not None
                )
            finally:
                con.close()
            return _Facts(base, version, tables, orphans)
        except sqlite3.Error as exc:
            last = exc
            if getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
                break
    assert last is not None
    raise errors.translate(last, path) from None


def _row_json(text: str, column: str, message_id: int, kinds: tuple[type, ...]) -> Any:
    """A JSON column of a message row; a value Précis never writes (changed behind its back) is one sentence."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        value = None  # not JSON: refused below like any value of the wrong kind
    if not isinstance(value, kinds):
        raise StorageUnusable(
            f"Message {message_id} in the database is damaged (its {column} is not what Précis writes); nothing "
            "was changed. Delete that chat, or put back a backup of the database."
        )
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# Changes to usage_totals: (model key ('' for none), prompt band) -> [replies, input, output, cache creation,
# cache read].
Tally = dict[tuple[str, int], list[int]]


USAGE_MAX = 2**53  # a token count the store keeps: beyond any real one, within SQLite's INTEGER


def _sane(usage: Usage | None) -> Usage | None:
    """``usage`` with every count a whole number from 0 to USAGE_MAX; anything else is stored as 0, with a note
    in the log: a provider's odd number (1e30, -5) never keeps a reply from being saved."""
    if usage is None:
        return None
    counts = usage.to_json()
    fixed = {k: v for k, v in counts.items() if not (type(v) is int and 0 <= v <= USAGE_MAX)}
    if not fixed:
        return usage
    log.warning("usage numbers out of range stored as 0: %.200s", fixed)
    return Usage(**{k: 0 if k in fixed else v for k, v in counts.items()})


def _tally(
    rows: Iterable[tuple[str | None, Usage | None]], sign: int = 1, into: Tally | None = None
) -> Tally:
    """What (model, usage) rows add to the totals (``sign=-1``: what they take away). No usage: nothing."""
    tally: Tally = {} if into is None else into
    for model, usage in rows:
        if usage is None:
            continue
        t = tally.setdefault((model or "", prompt_band(usage)), [0, 0, 0, 0, 0])
        t[0] += sign
        t[1] += sign * int(usage.input_tokens or 0)
        t[2] += sign * int(usage.output_tokens or 0)
        t[3] += sign * int(usage.cache_creation_input_tokens or 0)
        t[4] += sign * int(usage.cache_read_input_tokens or 0)
    return tally


def _estimate_fields(est: StoredEstimate | None) -> dict[str, Any]:
    """The v4 columns of a row: the engine's numbers for it, or NULLs (estimated when first needed)."""
    if est is None:
        return {"est_key": None, "est": None, "est_results": None, "est_media": None, "est_trimmed": None}
    return {
        "est_key": est.key,
        "est": est.tokens,
        "est_results": est.results,
        "est_media": est.media,
        "est_trimmed": int(est.trimmed),
    }


SENDABLE_SQL = tuple(sorted(SENDABLE))  # types.SENDABLE, as the queries filter it (SQL parameters)

# The hot paths (every turn reads and writes a few rows; every start lists the chats) speak SQL directly: peewee
# builds each query anew, which cost more than SQLite's own work on those statements.
MESSAGE_COLUMNS = "id, session_id, role, content, status, usage, model, created_at, meta, parent_id, est_key"
# A session as the list shows it: its stored message count (kept by triggers, schema v16) and its newest usage,
# found through the partial index of rows with a usage (``messages_usage``): neither reads the chat's rows.
SESSION_SELECT_NO_USAGE = (
    "SELECT s.id, s.title, s.model, s.created_at, s.updated_at, s.profile, s.pinned, s.project_id, s.state, "
    "s.message_count, NULL FROM sessions AS s"
)
# The id of the active compaction: the newest whose covered-through row is on the active path (or gone).
ACTIVE_COMPACTION = (
    "SELECT c.id FROM compactions AS c LEFT OUTER JOIN messages AS m ON m.id = c.covers_through_message_id "
    "WHERE c.session_id = ? AND m.off_path IS NULL ORDER BY c.id DESC LIMIT 1"
)
SESSION_SELECT = SESSION_SELECT_NO_USAGE.replace(
    "NULL FROM",
    "(SELECT m.usage FROM messages AS m WHERE m.session_id = s.id AND m.usage IS NOT NULL "
    "AND m.off_path IS NULL ORDER BY m.id DESC LIMIT 1) FROM",
)


def _message_of(row: tuple[Any, ...]) -> StoredMessage:
    """A row of ``MESSAGE_COLUMNS`` (see ``Repo._message``)."""
    mid = row[0]
    return StoredMessage(
        id=mid,
        session_id=row[1],
        role=row[2],
        content=_row_json(row[3], "content", mid, (list, str)),
        status=row[4],
        usage=stored_usage(row[5]),  # counts only: a damaged value reads as none
        model=row[6],
        created_at=row[7],
        meta=_row_json(row[8] or "{}", "meta", mid, (dict,)),
        parent_id=row[9],
    )


class Repo:
    """All SQL lives here; every method is synchronous and must run on the database thread."""

    def __init__(self, path: Path, *, readonly: bool = False):
        self.path = path
        self.readonly = readonly
        # Before SQLite sees the file: not a database, cut short, another program's, newer: left untouched.
        errors.check_file(path)
        facts = _probe(path)
        if facts is not None:
            facts.refuse_foreign_or_newer(path)
        if readonly and self._open_read_only(facts):
            return
        self.readonly = False
        self._open_writable()

    def _open_read_only(self, facts: _Facts | None) -> bool:
        """A read-only command's open: no file created, no migration, no pragma written. False when the schema
        needs an upgrade (the writable open does it)."""
        if facts is None or not facts.tables:  # no database yet: an empty one in memory reads as no sessions
            self.db = Database(":memory:", pragmas={"foreign_keys": 1})
            self.m = build_models(self.db)
            self.db.connect()
            migrations.upgrade(self.db, self.m)
            self.db.execute_sql("PRAGMA query_only = 1")
            return True
        if facts.version != migrations.CURRENT_VERSION:
            return False
        # Read-only media: a WAL database whose -shm cannot be created opens only as immutable.
        for uri in (facts.uri + "?mode=ro", facts.uri + "?mode=ro&immutable=1"):
            self.db = Database(uri, uri=True, pragmas=_read_pragmas(), timeout=errors.busy_timeout())
            try:
                self.db.connect()
                self.db.execute_sql("SELECT 1 FROM sessions LIMIT 1").fetchall()
                break
            except pw.OperationalError as exc:
                self.db.close()
                if "immutable" in uri:
                    raise errors.translate(exc, self.path) from None
        self.m = build_models(self.db)
        if facts.orphans:
            self._sweep_quietly()
        return True

    def _open_writable(self) -> None:
        from desktop.engine.config import files

        path = self.path
        try:
            files.private_dir(path.parent)
            # The history is private: create the file 0600 before SQLite does (it would use 0644), and SQLite
            # gives -wal and -shm the database file's mode. Files an older version left world-readable are
            # tightened.
            files.touch_private(path)
        except OSError as exc:
            raise errors.from_os_error(exc, path) from None
        for suffix in ("-wal", "-shm"):
            files.tighten(path.with_name(path.name + suffix), files.PRIVATE_FILE)
        wait = errors.busy_timeout()
        self.db = Database(str(path), pragmas={**PRAGMAS, "busy_timeout": int(wait * 1000)}, timeout=wait)
        self.m = build_models(self.db)
        self.db.connect()
        migrations.upgrade(self.db, self.m)

    def _sweep_quietly(self) -> None:
        """A read-only command found replies a crash left 'streaming': mark them interrupted if the lock is free
        at once, else leave them (the next writer does it); a read never waits for the write lock."""
        try:
            con = sqlite3.connect(str(self.path), timeout=0.2)
            try:
                with con:
                    _sweep(con, time.time())
            finally:
                con.close()
        except sqlite3.Error as exc:
            log.debug("streaming rows left as they are: %s", exc)

    def close(self) -> None:
        if not self.db.is_closed():
            self.db.close()

    # --- conversions -------------------------------------------------------------------------------
    @staticmethod
    def _message(row: Any) -> StoredMessage:
        return StoredMessage(
            id=row.id,
            session_id=row.session_id,
            role=row.role,
            content=_row_json(row.content, "content", row.id, (list, str)),
            status=row.status,
            usage=stored_usage(row.usage),  # counts only: a damaged value reads as none
            model=row.model,
            created_at=row.created_at,
            meta=_row_json(row.meta or "{}", "meta", row.id, (dict,)),
            parent_id=row.parent_id,
        )

    @staticmethod
    def _compaction(row: Any) -> CompactionRecord:
        return CompactionRecord(
            id=row.id,
            session_id=row.session_id,
            summary=row.summary,
            covers_through_message_id=row.covers_through_message_id,
            trigger=row.trigger,
            stats=json.loads(row.stats or "{}"),
            created_at=row.created_at,
        )

    def _session(self, row: Any) -> SessionInfo:
        """A session just written (a peewee row), read back as the list shows it."""
        info = self._session_by_id(row.id)
        assert info is not None, "read in the transaction that wrote it"
        return info

    def _session_by_id(self, session_id: int, *, usage: bool = True) -> SessionInfo | None:
        row = self.db.execute_sql(
            (SESSION_SELECT if usage else SESSION_SELECT_NO_USAGE) + " WHERE s.id = ?", (session_id,)
        ).fetchone()
        return self._session_info(row) if row else None

    @staticmethod
    def _session_info(row: tuple[Any, ...]) -> SessionInfo:
        """A row of ``SESSION_SELECT``: the message count is the one the schema's triggers keep (schema v16) and the
        newest usage is found through the index of replies with usage, so neither reads the session's rows."""
        return SessionInfo(
            id=row[0],
            title=row[1],
            model=row[2],
            created_at=row[3],
            updated_at=row[4],
            message_count=row[9] or 0,
            last_usage=stored_usage(row[10]),
            profile=row[5],
            pinned=bool(row[6]),
            project_id=row[7],
        )

    def _state_of(self, session_id: int, text: str | None) -> dict[str, Any]:
        """A session's state column as ``get_state`` gives it."""
        try:
            state = json.loads(text or "{}")
        except (ValueError, RecursionError):
            state = None
        if not isinstance(state, dict):  # bookkeeping only (breaker, horizons): rebuilt from the messages
            log.warning("session %s: its saved state is not a JSON object; starting it afresh", session_id)
            return {}
        return state

    # --- sessions ----------------------------------------------------------------------------------
    def create_session(
        self,
        title: str = DEFAULT_TITLE,
        model: str | None = None,
        profile: str | None = None,
        project_id: int | None = None,
    ) -> SessionInfo:
        row = self.m.Session.create(title=title, model=model, profile=profile, project_id=project_id)
        return self._session(row)

    def data_version(self) -> int:
        """Changes whenever another connection (another process: the CLI) commits to the database."""
        return int(self.db.execute_sql("PRAGMA data_version").fetchone()[0])

    def get_session(self, session_id: int) -> SessionInfo | None:
        return self._session_by_id(session_id)

    def list_sessions(self, title_filter: str = "") -> list[SessionInfo]:
        """Every chat with its message count and newest usage, in one statement that reads no chat's rows (the
        count is kept per session, the usage is one index lookup each): the window's first read at every start."""
        where, params = "", []
        if title_filter:  # as peewee's contains(): a case-insensitive substring, wildcards taken literally
            escaped = title_filter.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            where, params = " WHERE s.title LIKE ? ESCAPE '\\'", [f"%{escaped}%"]
        # Pinned chats first (the sidebar's top group), then the newest activity.
        rows = self.db.execute_sql(
            f"{SESSION_SELECT}{where} ORDER BY coalesce(s.pinned, 0) DESC, s.updated_at DESC, s.id DESC",
            params,
        )
        return [self._session_info(r) for r in rows]

    def update_session(
        self,
        session_id: int,
        *,
        title: str | None = None,
        model: str | None = None,
        profile: str | None = None,
    ) -> None:
        S = self.m.Session
        fields: dict[str, Any] = {"updated_at": time.time()}
        if title is not None:
            fields["title"] = title
        if model is not None:
            fields["model"] = model
        if profile is not None:
            fields["profile"] = profile
        S.update(**fields).where(S.id == session_id).execute()

    def move_profile(self, old: str, new: str, model: str | None = None) -> int:
        """The chats of profile ``old`` use ``new`` (and ``model`` when given); updated_at stays, so the sidebar's
        order does not change. Returns how many chats moved."""
        S = self.m.Session
        fields: dict[str, Any] = {"profile": new}
        if model:
            fields["model"] = model
        return int(S.update(**fields).where(S.profile == old).execute())

    def set_pinned(self, session_id: int, pinned: bool) -> None:
        """Pin or unpin a chat; its activity time stays as it is (pinning is not activity)."""
        S = self.m.Session
        S.update(pinned=1 if pinned else None).where(S.id == session_id).execute()

    def delete_session(self, session_id: int) -> None:
        with self.db.atomic():
            # The cascade would take the totals too; said here so they never depend on the pragma.
            self.m.UsageTotal.delete().where(self.m.UsageTotal.session == session_id).execute()
            self.db.execute_sql("DELETE FROM spend WHERE session_id = ?", (session_id,))
            self.m.Session.delete().where(self.m.Session.id == session_id).execute()

    def get_state(self, session_id: int) -> dict[str, Any]:
        row = self.db.execute_sql("SELECT state FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return {} if row is None else self._state_of(session_id, row[0])

    def update_state(self, session_id: int, changes: dict[str, Any]) -> dict[str, Any]:
        with self.db.atomic():
            state = self.get_state(session_id)
            state.update(changes)
            S = self.m.Session
            S.update(state=_dumps(state)).where(S.id == session_id).execute()
        return state

    # --- messages ----------------------------------------------------------------------------------
    def add_user_message(
        self,
        session_id: int,
        content: list[dict[str, Any]],
        *,
        title: str = "",
        meta: dict[str, Any] | None = None,
    ) -> StoredMessage:
        """The user's message, committed before any request; a default-titled session takes ``title``."""
        with self.db.atomic():
            msg = self.add_message(session_id, "user", content, meta=meta)
            if title:
                self.db.execute_sql(
                    "UPDATE sessions SET title = ? WHERE id = ? AND title IN (?, ?)",
                    (title, session_id, "", DEFAULT_TITLE),
                )
        return msg

    def add_message(
        self,
        session_id: int,
        role: str,
        content: list[dict[str, Any]],
        *,
        status: str = "complete",
        model: str | None = None,
        usage: Usage | None = None,
        meta: dict[str, Any] | None = None,
    ) -> StoredMessage:
        usage = _sane(usage)
        text, usage_text, meta_text = (
            _dumps(content),
            _dumps(usage.to_json()) if usage else None,
            _dumps(meta or {}),
        )
        with self.db.atomic():
            parent = versions.leaf(self.db, session_id)  # a new row continues the active path
            created = time.time()
            mid = self.db.execute_sql(
                "INSERT INTO messages (session_id, role, content, usage, status, model, meta, created_at, parent_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, role, text, usage_text, status, model, meta_text, created, parent),
            ).lastrowid
            if usage:
                self._add_totals(session_id, _tally([(model, usage)]))
            self.db.execute_sql("UPDATE sessions SET updated_at = ? WHERE id = ?", (time.time(), session_id))
        # The row as a read would give it (decoded from what was written), without reading it back.
        return _message_of(
            (mid, session_id, role, text, status, usage_text, model, created, meta_text, parent)
        )

    def add_messages(self, session_id: int, rows: list[dict[str, Any]]) -> int:
        """Bulk insert (imports, benchmarks). Returns the number of rows written."""
        M = self.m.Message
        now = time.time()
        rows = [{**r, "usage": _sane(r["usage"])} if r.get("usage") else r for r in rows]
        data = [
            {
                "session": session_id,
                "role": r["role"],
                "content": _dumps(r["content"]),
                "status": r.get("status", "complete"),
                "model": r.get("model"),
                "usage": _dumps(r["usage"].to_json()) if r.get("usage") else None,
                "meta": _dumps(r.get("meta") or {}),
                "created_at": now,
                **_estimate_fields(r.get("estimate")),
            }
            for r in rows
        ]
        with self.db.atomic():
            parent = versions.leaf(self.db, session_id)
            after = self.db.execute_sql(
                "SELECT COALESCE(MAX(id), 0) FROM messages WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
            for start in range(0, len(data), 500):
                M.insert_many(data[start : start + 500]).execute()
            versions.link_appended(self.db, session_id, after, parent)
            self._add_totals(session_id, _tally((r.get("model"), r.get("usage") or None) for r in rows))
        return len(data)

    def update_message(
        self,
        message_id: int,
        *,
        content: list[dict[str, Any]] | None = None,
        status: str | None = None,
        usage: Usage | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        fields: dict[str, Any] = {}
        usage = _sane(usage)
        if content is not None:
            fields["content"] = _dumps(content)
            fields.update(_estimate_fields(None))  # numbers for the old content would be wrong
        if status is not None:
            fields["status"] = status
        if usage is not None:
            fields["usage"] = _dumps(usage.to_json())
        if meta is not None:
            fields["meta"] = _dumps(meta)
        if not fields:
            return
        update = f"UPDATE messages SET {', '.join(f'{k} = ?' for k in fields)} WHERE id = ?"
        values = (*fields.values(), message_id)
        if usage is None:
            self.db.execute_sql(update, values)
            return
        # A streaming reply's usage is written several times: the totals take the difference from what the row
        # held, in the same transaction, so they stay exact.
        with self.db.atomic():
            old = self.db.execute_sql(
                "SELECT session_id, model, usage FROM messages WHERE id = ?", (message_id,)
            ).fetchone()
            self.db.execute_sql(update, values)
            if old is not None:
                session, model, held = old
                change = _tally([(model, stored_usage(held))], -1, into=_tally([(model, usage)]))
                self._add_totals(session, change)

    def get_message(self, message_id: int) -> StoredMessage | None:
        row = self.m.Message.get_or_none(self.m.Message.id == message_id)
        return self._message(row) if row else None

    def messages(
        self,
        session_id: int,
        after_id: int = 0,
        before_id: int | None = None,
        newest: int | None = None,
    ) -> list[StoredMessage]:
        """Messages of the active path in id order; ``newest=N`` returns only the last N (paging for the view)."""
        sql = f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND id > ? AND off_path IS NULL"
        params: tuple[Any, ...] = (session_id, after_id)
        if before_id is not None:
            sql, params = sql + " AND id < ?", (*params, before_id)
        if newest is not None:
            rows = self.db.execute_sql(f"{sql} ORDER BY id DESC LIMIT ?", (*params, newest)).fetchall()
            rows.reverse()
        else:
            rows = self.db.execute_sql(f"{sql} ORDER BY id", params).fetchall()
        return [_message_of(r) for r in rows]

    # --- usage totals --------------------------------------------------------------------------------
    def _add_totals(self, session_id: int, tally: Tally) -> None:
        """Apply a tally to the session's usage totals; called inside the transaction of the row write."""
        emptied = False
        for (model, band), (replies, inp, out, creation, read) in tally.items():
            if not (replies or inp or out or creation or read):
                continue
            self.db.execute_sql(
                "INSERT INTO usage_totals (session_id, model, band, replies, input_tokens, output_tokens, "
                "cache_creation_input_tokens, cache_read_input_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (session_id, model, band) DO UPDATE SET replies = replies + excluded.replies, "
                "input_tokens = input_tokens + excluded.input_tokens, "
                "output_tokens = output_tokens + excluded.output_tokens, "
                "cache_creation_input_tokens = cache_creation_input_tokens + excluded.cache_creation_input_tokens, "
                "cache_read_input_tokens = cache_read_input_tokens + excluded.cache_read_input_tokens",
                (session_id, model, band, replies, inp, out, creation, read),
            )
            emptied = emptied or replies < 0
        if emptied:  # a model none of whose replies is left stored
            self.db.execute_sql(
                "DELETE FROM usage_totals WHERE session_id = ? AND replies <= 0", (session_id,)
            )

    def usage_totals(self, session_id: int) -> dict[str | None, Usage]:
        """Per model (None: replies stored without one), the sums of the usage of the session's stored replies:
        one row per model, whatever the length of the history."""
        rows = self.db.execute_sql(
            "SELECT model, SUM(input_tokens), SUM(output_tokens), SUM(cache_creation_input_tokens), "
            "SUM(cache_read_input_tokens) FROM usage_totals WHERE session_id = ? AND replies > 0 GROUP BY model",
            (session_id,),
        )
        return {model or None: Usage(int(i), int(o), int(c), int(r)) for model, i, o, c, r in rows}

    def add_spend(self, session_id: int, kind: str, requests: Iterable[tuple[str, Usage]]) -> None:
        """Add what requests made for the chat that are no reply of its own cost (``kind``: what they were for),
        per model and prompt band. Never taken away: what was spent stays spent, whatever is deleted later."""
        tally = _tally((model, _sane(usage)) for model, usage in requests)
        with self.db.atomic():
            for (model, band), (count, inp, out, creation, read) in tally.items():
                self.db.execute_sql(
                    "INSERT INTO spend (session_id, kind, model, band, requests, input_tokens, output_tokens, "
                    "cache_creation_input_tokens, cache_read_input_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (session_id, kind, model, band) DO UPDATE SET requests = requests + excluded.requests, "
                    "input_tokens = input_tokens + excluded.input_tokens, "
                    "output_tokens = output_tokens + excluded.output_tokens, "
                    "cache_creation_input_tokens = cache_creation_input_tokens + excluded.cache_creation_input_tokens, "
                    "cache_read_input_tokens = cache_read_input_tokens + excluded.cache_read_input_tokens",
                    (session_id, kind, model, band, count, inp, out, creation, read),
                )

    def spend_by_band(self, session_id: int) -> dict[tuple[str | None, int], Usage]:
        """Per model and prompt band (as ``usage_by_band``), the usage of the requests made for the chat that are
        no reply of its own: its summaries, their section requests and retries."""
        rows = self.db.execute_sql(
            "SELECT model, band, SUM(input_tokens), SUM(output_tokens), SUM(cache_creation_input_tokens), "
            "SUM(cache_read_input_tokens) FROM spend WHERE session_id = ? GROUP BY model, band",
            (session_id,),
        )
        return {
            (model or None, band * PROMPT_BAND): Usage(int(i), int(o), int(c), int(r))
            for model, band, i, o, c, r in rows
        }

    def usage_by_band(self, session_id: int) -> dict[tuple[str | None, int], Usage]:
        """Per model and prompt band, the sums of the usage of the session's stored replies; the key's number is
        the most prompt tokens a request of the band had (what picks its price tier)."""
        rows = self.db.execute_sql(
            "SELECT model, band, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens "
            "FROM usage_totals WHERE session_id = ? AND replies > 0",
            (session_id,),
        )
        return {(model or None, band * PROMPT_BAND): Usage(i, o, c, r) for model, band, i, o, c, r in rows}

    def user_messages(self, session_id: int, through_id: int) -> list[StoredMessage]:
        """User rows up to an id (the instructions a compaction pins verbatim)."""
        M = self.m.Message
        rows = M.select().where(
            (M.session == session_id) & (M.role == "user") & (M.id <= through_id) & M.off_path.is_null()
        )
        return [self._message(r) for r in rows.order_by(M.id)]

    def count_messages(self, session_id: int, before_id: int | None = None, after_id: int = 0) -> int:
        M = self.m.Message
        query = M.select().where((M.session == session_id) & (M.id > after_id) & M.off_path.is_null())
        if before_id is not None:
            query = query.where(M.id < before_id)
        count: int = query.count()
        return count

    def has_messages(self, session_id: int, before_id: int, after_id: int = 0) -> bool:
        """Whether the active path has a row between the two ids: one index lookup, where a count reads them all."""
        row = self.db.execute_sql(
            "SELECT 1 FROM messages WHERE session_id = ? AND id > ? AND id < ? AND off_path IS NULL LIMIT 1",
            (session_id, after_id, before_id),
        ).fetchone()
        return row is not None

    def delete_message(self, message_id: int) -> None:
        """Delete one message. A compaction that covers it keeps covering its id range (ids are never reused).
        Its usage leaves the session's totals: they are the sum over the rows still stored."""
        M = self.m.Message
        with self.db.atomic():
            row = (
                M.select(M.session, M.model, M.usage, M.parent_id, M.off_path)
                .where(M.id == message_id)
                .first()
            )
            versions.detach(self.db, message_id)
            M.delete().where(M.id == message_id).execute()
            if row is not None and row.off_path is None:
                versions.fill_gap(self.db, row.session_id, row.parent_id)
            if row is not None:
                self._add_totals(row.session_id, _tally([(row.model, stored_usage(row.usage))], -1))

    def truncate_from(self, session_id: int, from_id: int) -> list[int]:
        """Delete messages with id >= from_id (edit-and-resend) and every compaction that reached into them,
        in one transaction, so a summary of deleted content can never stay active. Returns the deleted ids."""
        M, C = self.m.Message, self.m.Compaction
        with self.db.atomic():
            rows = list(M.select(M.id, M.model, M.usage).where((M.session == session_id) & (M.id >= from_id)))
            C.delete().where((C.session == session_id) & (C.covers_through_message_id >= from_id)).execute()
            M.delete().where((M.session == session_id) & (M.id >= from_id)).execute()
            self._add_totals(session_id, _tally(((r.model, stored_usage(r.usage)) for r in rows), -1))
        return [r.id for r in rows]

    def clear_history(self, session_id: int) -> None:
        M, C, T = self.m.Message, self.m.Compaction, self.m.UsageTotal
        with self.db.atomic():
            C.delete().where(C.session == session_id).execute()
            M.delete().where(M.session == session_id).execute()
            T.delete().where(T.session == session_id).execute()
            self.update_state(session_id, {"horizons": {}, "breaker_failures": 0, versions.LEAVES_KEY: {}})

    def sweep_streaming(self) -> int:
        """After a crash, rows left 'streaming' become 'interrupted' (their committed text is kept); a reply
        another process is streaming right now (its session lock is live) is left alone."""
        if self.readonly:
            return 0
        with self.db.atomic():
            return _sweep(self.db, time.time())

    # --- the per-session lock of a running turn -------------------------------------------------------
    def claim_session(self, session_id: int, pid: int, host: str, stale_after: float) -> LockHolder | None:
        """Take the session's lock for ``pid`` unless another live process holds it (returned then)."""
        now = time.time()
        with self.db.atomic("IMMEDIATE"):
            row = self.db.execute_sql(
                "SELECT pid, host, heartbeat FROM session_locks WHERE session_id = ?", (session_id,)
            ).fetchone()
            if (
                row is not None
                and (row[0], row[1]) != (pid, host)
                and _live(row[0], row[1], row[2], now, stale_after)
            ):
                return LockHolder(session_id, row[0], row[1], row[2])
            self.db.execute_sql(
                "INSERT OR REPLACE INTO session_locks (session_id, pid, host, heartbeat) VALUES (?, ?, ?, ?)",
                (session_id, pid, host, now),
            )
        return None

    def beat_session(self, session_id: int, pid: int) -> None:
        self.db.execute_sql(
            "UPDATE session_locks SET heartbeat = ? WHERE session_id = ? AND pid = ?",
            (time.time(), session_id, pid),
        )

    def release_session(self, session_id: int, pid: int) -> None:
        self.db.execute_sql("DELETE FROM session_locks WHERE session_id = ? AND pid = ?", (session_id, pid))

    # --- compactions -------------------------------------------------------------------------------
    def add_compaction(
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
        """Write a compaction row. The boundary only moves forward: an older boundary is refused, and so is one
        computed on top of a boundary that is no longer active (``expected_active``: its id, 0 for none).
        Session state changes (breaker reset, horizons) commit in the same transaction."""
        C = self.m.Compaction
        with self.db.atomic():
            current = self.active_compaction(session_id)
            if expected_active is not None and (current.id if current else 0) != expected_active:
                raise StaleBoundary("the conversation was compacted elsewhere meanwhile")
            if current and covers_through_message_id < current.covers_through_message_id:
                raise ValueError("a compaction boundary can only move forward")
            row = C.create(
                session=session_id,
                summary=summary,
                covers_through_message_id=covers_through_message_id,
                trigger=trigger,
                stats=_dumps(stats),
            )
            if state_changes:
                self.update_state(session_id, state_changes)
        return self._compaction(C.get_by_id(row.id))

    def _path_compactions(self, session_id: int) -> Any:
        """The session's compactions that summarise its active path, oldest first: those whose covered-through
        row is on it (or gone: deleted by a build before versions, when rows were not re-anchored)."""
        C, M = self.m.Compaction, self.m.Message
        return (
            C.select(C)
            .join(M, pw.JOIN.LEFT_OUTER, on=(M.id == C.covers_through_message_id))
            .where((C.session == session_id) & M.off_path.is_null())
            .order_by(C.id)
        )

    def active_compaction(self, session_id: int) -> CompactionRecord | None:
        row = self._path_compactions(session_id).order_by(self.m.Compaction.id.desc()).first()
        return self._compaction(row) if row else None

    def compactions(self, session_id: int) -> list[CompactionRecord]:
        return [self._compaction(r) for r in self._path_compactions(session_id)]

    def delete_compaction(self, compaction_id: int) -> None:
        self.m.Compaction.delete().where(self.m.Compaction.id == compaction_id).execute()

    # --- one-trip reads ------------------------------------------------------------------------------
    def _rows_and_keys(self, sql: str, params: tuple[Any, ...]) -> tuple[list[StoredMessage], dict[int, str]]:
        rows = self.db.execute_sql(sql, params).fetchall()
        return [_message_of(r) for r in rows], {r[0]: r[10] for r in rows if r[10]}

    def load(self, session_id: int) -> Loaded | None:
        """Everything a request is built from, in one read transaction: the rows after the boundary and, for
        the cost, the usage totals (one row per model; no reply before the boundary is read)."""
        with self.db.atomic():
            session = self.get_session(session_id)
            if session is None:
                return None
            compactions = self.compactions(session_id)
            after = covered_through(compactions)
            rows, keys = self._rows_and_keys(
                f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND id > ? AND off_path IS NULL "
                "ORDER BY id",
                (session_id, after),
            )
            return Loaded(
                session,
                compactions,
                rows,
                self.get_state(session_id),
                self.usage_totals(session_id),
                keys,
                self.usage_by_band(session_id),
                self.spend_by_band(session_id),
            )

    def since(
        self, session_id: int, after_id: int, estimates: list[StoredEstimate] | None = None
    ) -> Since | None:
        """What a model call needs to read: the session's own row, its boundary and state, new rows only; the
        engine's numbers for rows it estimated since the last call are written in the same trip. Three indexed
        statements (before every model call, so in SQL: peewee's query building cost more than SQLite's work)."""
        run = self.db.execute_sql
        with self.db.atomic():
            if estimates:
                self.set_estimates(estimates)
            row = run(SESSION_SELECT_NO_USAGE + " WHERE s.id = ?", (session_id,)).fetchone()
            if row is None:
                return None
            active = run(ACTIVE_COMPACTION, (session_id,)).fetchone()
            rows = run(
                f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND id > ? AND off_path IS NULL "
                "ORDER BY id",
                (session_id, after_id),
            ).fetchall()
            return Since(
                self._session_info(row),
                active[0] if active else 0,
                self._state_of(session_id, row[8]),
                [_message_of(r) for r in rows],
                {r[0]: r[10] for r in rows if r[10]},
            )

    def set_estimates(self, estimates: list[StoredEstimate]) -> None:
        """Store the engine's numbers for rows (one UPDATE per row, in one transaction)."""
        with self.db.atomic():
            self.db.connection().executemany(
                "UPDATE messages SET est_key = ?, est = ?, est_results = ?, est_media = ?, est_trimmed = ? "
                "WHERE id = ?",
                [(e.key, e.tokens, e.results, e.media, int(e.trimmed), e.message_id) for e in estimates],
            )

    def overview(self, session_id: int, segments: list[Segment], newest: int) -> Overview | None:
        """The gauge's reading of a session: per segment, the sums of the stored numbers that are for the shape
        the engine names; the rows whose numbers are missing or for another shape, decoded; the newest rows."""
        with self.db.atomic():
            session = self.get_session(session_id)
            if session is None:
                return None
            compactions = self.compactions(session_id)
            after = covered_through(compactions)
            M = self.m.Message
            # Rows with numbers are sendable by content (the engine stores numbers only for rows with content):
            # their sums read the estimates index alone. The rest are decoded.
            base = (
                (M.session == session_id) & (M.id > after) & M.status.in_(SENDABLE_SQL) & M.off_path.is_null()
            )
            count = tokens = results = media = 0
            trimmed: list[int] = []
            unknown: list[Any] = []
            for seg in segments:
                where = base & (M.id > seg.lo) & (M.id <= seg.hi)
                known = where & M.est_key.in_(list(seg.keys))
                n, t, r, m = (
                    M.select(
                        pw.fn.COUNT(M.id), pw.fn.SUM(M.est), pw.fn.SUM(M.est_results), pw.fn.SUM(M.est_media)
                    )
                    .where(known)
                    .tuples()
                    .get()
                )
                count, tokens, results, media = (
                    count + n,
                    tokens + (t or 0),
                    results + (r or 0),
                    media + (m or 0),
                )
                trimmed += [i for (i,) in M.select(M.id).where(known & (M.est_trimmed == 1)).tuples()]
                stale = where & (M.est_key.is_null() | M.est_key.not_in(list(seg.keys))) & (M.content != "[]")
                sql, params = M.select(pw.SQL(MESSAGE_COLUMNS)).where(stale).order_by(M.id).sql()
                unknown += self.db.execute_sql(sql, params).fetchall()
            recent = self.db.execute_sql(
                f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND id > ? AND off_path IS NULL "
                "ORDER BY id DESC LIMIT ?",
                (session_id, after, newest),
            ).fetchall()
            recent.reverse()
            keys = {r[0]: r[10] for r in [*unknown, *recent] if r[10]}
            return Overview(
                session,
                compactions,
                self.get_state(session_id),
                self.usage_totals(session_id),
                count,
                tokens,
                results,
                media,
                trimmed,
                [_message_of(r) for r in recent],
                [_message_of(r) for r in unknown],
                keys,
                self.usage_by_band(session_id),
                self.spend_by_band(session_id),
            )

    def page(
        self,
        session_id: int,
        *,
        originals: bool = False,
        before_id: int | None = None,
        hidden_through: int | None = None,
        size: int = 200,
    ) -> Page | None:
        """The newest ``size`` messages (before ``before_id`` when scrolling up). Messages the active summary
        replaced stay collapsed under its card unless ``originals``."""
        with self.db.atomic():
            session = self.get_session(session_id)
            if session is None:
                return None
            compactions = self.compactions(session_id)
            if hidden_through is None:
                hidden_through = 0 if originals else covered_through(compactions)
            rows = self.messages(session_id, after_id=hidden_through, before_id=before_id, newest=size)
            older = bool(rows) and self.has_messages(
                session_id, before_id=rows[0].id, after_id=hidden_through
            )
            shown = versions.versions_of(self.db, session_id, [(m.id, m.parent_id) for m in rows])
            return Page(session, rows, older, hidden_through, compactions, shown)

    def import_session(self, plan: ImportPlan) -> tuple[SessionInfo, CompactionRecord | None]:
        """Write a whole transcript as a new session in one transaction: a crash leaves it complete or absent."""
        with self.db.atomic():
            session = self.create_session(plan.title, plan.model)
            # The compaction covers the transcript's own summary message too: the summary goes out once, in front.
            cut = plan.summary_index + 1 if plan.summary_index is not None else len(plan.rows)
            self.add_messages(session.id, plan.rows[:cut])
            compaction = None
            if plan.summary_index is not None:
                through = self.messages(session.id, newest=1)[0].id
                compaction = self.add_compaction(
                    session.id, plan.summary, through, "manual", plan.compaction_stats
                )
            self.add_messages(session.id, plan.rows[cut:])
            self.update_session(session.id)  # updated_at: the new session sorts first
            return self._session(session), compaction

    # --- versions --------------------------------------------------------------------------------------
    def branch_at(self, session_id: int, message_id: int) -> Fork:
        """Make room for a new version of a message (see versions.branch_at); nothing is deleted."""
        with self.db.atomic():
            return versions.branch_at(self.db, session_id, message_id)

    def restore_branch(self, session_id: int, fork: Fork) -> list[int]:
        with self.db.atomic():
            return versions.restore(self.db, session_id, fork)

    def switch_version(self, session_id: int, message_id: int, delta: int) -> bool:
        """Show another version of a message (``delta`` -1: the previous one, +1: the next); persists."""
        with self.db.atomic():
            return versions.switch(self.db, session_id, message_id, delta)

    # --- key/value ---------------------------------------------------------------------------------
    def get_kv(self, key: str, default: Any = None) -> Any:
        row = self.db.execute_sql("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def set_kv(self, key: str, value: Any) -> None:
        self.db.execute_sql("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", (key, _dumps(value)))

    def integrity_check(self) -> str:
        verdict: str = self.db.execute_sql("PRAGMA integrity_check").fetchone()[0]
        return verdict
