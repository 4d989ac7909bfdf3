"""The tools' records in the database: the per-chat audit log, saved approvals, and the crash sweep that
answers a tool_use left without its result.

Each method is one round trip on the store's database thread (see store.py).
"""

from __future__ import annotations

import json
import time
from typing import Any

from msgspec import Struct

from desktop.engine.history.storage import SavedApproval
from desktop.store.repo import SENDABLE_SQL, Repo
from desktop.store.store import Store

INTERRUPTED = "[interrupted: Précis stopped before this tool finished; it may or may not have run]"


class AuditEntry(Struct, frozen=True):
    """One tool call as the audit log keeps it: what ran, how it was allowed, how it ended."""

    session_id: int
    tool_use_id: str
    server: str
    tool: str
    arguments: dict[str, Any]
    decision: str  # how it was allowed or denied (see permissions.Verdict.how)
    outcome: str  # ok | error | denied | cancelled
    is_error: bool
    exit_code: int | None = None
    duration: float | None = None
    created_at: float = 0.0


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class ToolLog:
    def __init__(self, store: Store):
        self._store = store

    # --- audit --------------------------------------------------------------------------------------------
    async def record(self, entry: AuditEntry) -> None:
        def write(repo: Repo) -> None:
            repo.db.execute_sql(
                "INSERT INTO tool_audit (session_id, tool_use_id, server, tool, arguments, decision, outcome, "
                "is_error, exit_code, duration, created_at) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? "
                "WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?)",
                (
                    entry.session_id,
                    entry.tool_use_id,
                    entry.server,
                    entry.tool,
                    _dumps(entry.arguments),
                    entry.decision,
                    entry.outcome,
                    int(entry.is_error),
                    entry.exit_code,
                    entry.duration,
                    entry.created_at or time.time(),
                    entry.session_id,
                ),
            )

        await self._store.call(write, self._store.repo)

    async def audit(self, session_id: int) -> list[AuditEntry]:
        def read(repo: Repo) -> list[AuditEntry]:
            rows = repo.db.execute_sql(
                "SELECT session_id, tool_use_id, server, tool, arguments, decision, outcome, is_error, exit_code, "
                "duration, created_at FROM tool_audit WHERE session_id = ? ORDER BY id",
                (session_id,),
            )
            return [
                AuditEntry(
                    r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], bool(r[7]), r[8], r[9], r[10]
                )
                for r in rows
            ]

        return await self._store.call(read, self._store.repo)

    async def outcomes(self, session_id: int) -> dict[str, tuple[str, float | None]]:
        """How each of a chat's tool calls ended (tool_use id -> outcome, seconds): a reopened chat shows them."""

        def read(repo: Repo) -> dict[str, tuple[str, float | None]]:
            rows = repo.db.execute_sql(
                "SELECT tool_use_id, outcome, duration FROM tool_audit WHERE session_id = ? ORDER BY id",
                (session_id,),
            )
            return {str(r[0]): (str(r[1]), None if r[2] is None else float(r[2])) for r in rows if r[0]}

        return await self._store.call(read, self._store.repo)

    # --- saved approvals ------------------------------------------------------------------------------------
    async def approvals(self) -> list[SavedApproval]:
        def read(repo: Repo) -> list[SavedApproval]:
            rows = repo.db.execute_sql(
                "SELECT id, server, tool, origin, created_at FROM tool_approvals ORDER BY id"
            )
            return [SavedApproval(*r) for r in rows]

        return await self._store.call(read, self._store.repo)

    async def save_approval(self, server: str, tool: str, origin: str) -> SavedApproval:
        def write(repo: Repo) -> SavedApproval:
            with repo.db.atomic():
                repo.db.execute_sql(
                    "INSERT OR IGNORE INTO tool_approvals (server, tool, origin, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (server, tool, origin, time.time()),
                )
                row = repo.db.execute_sql(
                    "SELECT id, server, tool, origin, created_at FROM tool_approvals "
                    "WHERE server = ? AND tool = ? AND origin = ?",
                    (server, tool, origin),
                ).fetchone()
            return SavedApproval(*row)

        return await self._store.call(write, self._store.repo)

    async def revoke_approval(self, approval_id: int) -> bool:
        def delete(repo: Repo) -> bool:
            return repo.db.execute_sql("DELETE FROM tool_approvals WHERE id = ?", (approval_id,)).rowcount > 0

        return await self._store.call(delete, self._store.repo)

    # --- "Allow for this chat" ------------------------------------------------------------------------------
    async def chat_approvals(self, session_id: int | None = None) -> list[SavedApproval]:
        """One chat's (or, with None, every chat's) "Allow for this chat" answers."""

        def read(repo: Repo) -> list[SavedApproval]:
            where, args = ("WHERE session_id = ? ", (session_id,)) if session_id is not None else ("", ())
            rows = repo.db.execute_sql(
                "SELECT id, server, tool, origin, created_at, session_id "
                f"FROM tool_chat_approvals {where}ORDER BY id",
                args,
            )
            return [SavedApproval(*r) for r in rows]

        return await self._store.call(read, self._store.repo)

    async def save_chat_approval(self, session_id: int, server: str, tool: str, origin: str) -> None:
        def write(repo: Repo) -> None:
            # A chat deleted meanwhile keeps nothing (the same guard as the audit log).
            repo.db.execute_sql(
                "INSERT OR IGNORE INTO tool_chat_approvals (session_id, server, tool, origin, created_at) "
                "SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?)",
                (session_id, server, tool, origin, time.time(), session_id),
            )

        await self._store.call(write, self._store.repo)

    async def revoke_chat_approval(self, approval_id: int) -> bool:
        def delete(repo: Repo) -> bool:
            return (
                repo.db.execute_sql("DELETE FROM tool_chat_approvals WHERE id = ?", (approval_id,)).rowcount
                > 0
            )

        return await self._store.call(delete, self._store.repo)

    # --- after a crash ----------------------------------------------------------------------------------------
    async def answer_orphans(self) -> list[int]:
        """A session whose newest row is an assistant message with tool calls died before their results were
        stored: add the results, marked interrupted, so every tool_use keeps its pair. Returns the new row ids."""

        def sweep(repo: Repo) -> list[int]:
            rows = repo.db.execute_sql(
                # Each chat's newest row by its (session_id, id) index: one lookup per chat, not a pass over
                # every message of every chat (5 ms at every start with a 50k-message chat in the home).
                "SELECT m.session_id, m.content FROM sessions AS s JOIN messages AS m ON m.id = "
                "(SELECT MAX(id) FROM messages WHERE session_id = s.id) WHERE m.role = 'assistant' "
                f"AND m.status IN ({', '.join('?' * len(SENDABLE_SQL))}) AND m.content LIKE '%\"tool_use\"%'",
                SENDABLE_SQL,
            ).fetchall()
            added = []
            with repo.db.atomic():
                for session_id, content in rows:
                    try:
                        blocks = json.loads(content)
                    except ValueError:
                        continue
                    ids = [
                        b.get("id")
                        for b in blocks
                        if isinstance(b, dict)
                        and b.get("type") == "tool_use"
                        and isinstance(b.get("id"), str)
                        and b.get("id")
                    ]
                    if not ids:
                        continue
                    results = [
                        {"type": "tool_result", "tool_use_id": i, "is_error": True, "content": INTERRUPTED}
                        for i in ids
                    ]
                    msg = repo.add_message(session_id, "user", results, meta={"interrupted_tools": True})
                    added.append(msg.id)
            return added

        return await self._store.call(sweep, self._store.repo)
