"""The tools' records in the store: schema v4 from an older database, the audit log, saved approvals, and the
sweep that answers a tool_use a crash left without its result."""

from __future__ import annotations

import json

import peewee as pw

from desktop.store import Store, migrations
from desktop.store.schema import build_models
from desktop.store.tool_log import INTERRUPTED, AuditEntry, ToolLog


def _v3_database(path):
    db = pw.SqliteDatabase(str(path))
    db.connect()
    migrations.upgrade(db, build_models(db), target=3)
    db.execute_sql(
        "INSERT INTO sessions (title, model, created_at, updated_at, state) VALUES ('t', 'm', 1, 1, '{}')"
    )
    calls = [
        {"type": "text", "text": "checking"},
        {"type": "tool_use", "id": "toolu_a", "name": "run", "input": {}},
        {"type": "tool_use", "id": "toolu_b", "name": "read", "input": {}},
    ]
    db.execute_sql(
        "INSERT INTO messages (session_id, role, content, status, meta, created_at) VALUES "
        "(1, 'user', ?, 'complete', '{}', 1)",
        (json.dumps([{"type": "text", "text": "go"}]),),
    )
    db.execute_sql(
        "INSERT INTO messages (session_id, role, content, status, meta, created_at) VALUES "
        "(1, 'assistant', ?, 'streaming', '{}', 2)",
        (json.dumps(calls),),
    )
    db.close()


async def test_v3_database_upgrades_and_the_orphaned_calls_get_interrupted_results(tmp_path):
    path = tmp_path / "precis.db"
    _v3_database(path)
    store = await Store.open(path)
    try:
        log = ToolLog(store)
        assert migrations.schema_version(store.repo.db) == migrations.CURRENT_VERSION
        added = await log.answer_orphans()
        assert len(added) == 1 and await log.answer_orphans() == []  # once only
        messages = await store.messages(1)
        assert [m.role for m in messages] == ["user", "assistant", "user"]
        assert messages[1].status == "interrupted"  # the streaming row was swept first
        results = messages[2].content
        assert [(r["tool_use_id"], r["is_error"], r["content"]) for r in results] == [
            ("toolu_a", True, INTERRUPTED),
            ("toolu_b", True, INTERRUPTED),
        ]
    finally:
        await store.close()


async def test_audit_log_and_saved_approvals_round_trip(tmp_path):
    store = await Store.open(tmp_path / "precis.db")
    try:
        log = ToolLog(store)
        sid = (await store.create_session("t", "m")).id
        await log.record(
            AuditEntry(
                sid,
                "toolu_1",
                "builtin",
                "run",
                {"command": "ls"},
                "asked:once",
                "ok",
                False,
                exit_code=0,
                duration=0.25,
            )
        )
        await log.record(AuditEntry(999, "toolu_x", "builtin", "run", {}, "yes", "ok", False))  # no such chat
        entries = await log.audit(sid)
        assert [(e.tool, e.arguments, e.decision, e.exit_code, e.duration) for e in entries] == [
            ("run", {"command": "ls"}, "asked:once", 0, 0.25)
        ]
        first = await log.save_approval("calc", "add", "origin-1")
        assert await log.save_approval("calc", "add", "origin-1") == first  # saved once
        await log.save_approval("calc", "add", "origin-2")
        assert [(a.tool, a.origin) for a in await log.approvals()] == [
            ("add", "origin-1"),
            ("add", "origin-2"),
        ]
        assert await log.revoke_approval(first.id)
        assert [a.origin for a in await log.approvals()] == ["origin-2"]
        await store.delete_session(sid)
        assert await log.audit(sid) == []  # the audit log goes with its chat
    finally:
        await store.close()
