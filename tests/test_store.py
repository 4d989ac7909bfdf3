"""The store on a real SQLite file: ids, migrations, boundaries, crash sweep."""

from __future__ import annotations

import sqlite3

import pytest

from desktop.engine.history.storage import StorageError
from desktop.engine.types import Usage
from desktop.store import Store, migrations


@pytest.fixture
def store(tmp_path):
    s = Store.open_sync(tmp_path / "precis.db")
    yield s
    s.close_sync()


def text(t: str) -> list[dict]:
    return [{"type": "text", "text": t}]


def test_pragmas_and_schema_version(store):
    db = store.repo.db
    assert db.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1
    from desktop.store import errors

    assert db.execute_sql("PRAGMA busy_timeout").fetchone()[0] == int(errors.DEFAULT_BUSY_TIMEOUT * 1000)
    assert migrations.schema_version(db) == migrations.CURRENT_VERSION


def test_message_ids_never_reused_after_delete(store):
    r = store.repo
    s = r.create_session("t")
    a = r.add_message(s.id, "user", text("a"))
    b = r.add_message(s.id, "assistant", text("b"))
    r.delete_message(b.id)
    c = r.add_message(s.id, "user", text("c"))
    assert c.id > b.id > a.id
    # Even deleting the newest row and the whole session does not hand its id out again.
    r.delete_session(s.id)
    s2 = r.create_session("u")
    d = r.add_message(s2.id, "user", text("d"))
    assert d.id > c.id


def test_content_blocks_and_usage_roundtrip(store):
    r = store.repo
    s = r.create_session("t")
    blocks = [
        {"type": "text", "text": "héllo 你好"},
        {"type": "tool_use", "id": "tu1", "name": "Read", "input": {"file_path": "a.py"}},
    ]
    m = r.add_message(s.id, "assistant", blocks, usage=Usage(10, 5, 3, 2), meta={"stop_reason": "tool_use"})
    got = r.get_message(m.id)
    assert got.content == blocks
    assert got.usage == Usage(10, 5, 3, 2)
    assert got.usage.prompt_tokens == 15
    assert got.meta == {"stop_reason": "tool_use"}
    assert r.get_session(s.id).last_usage == Usage(10, 5, 3, 2)


def test_paging_newest_and_before(store):
    r = store.repo
    s = r.create_session("t")
    ids = [r.add_message(s.id, "user", text(str(i))).id for i in range(10)]
    page = r.messages(s.id, newest=3)
    assert [m.id for m in page] == ids[-3:]
    older = r.messages(s.id, before_id=page[0].id, newest=3)
    assert [m.id for m in older] == ids[4:7]
    assert r.count_messages(s.id, before_id=ids[4]) == 4


def test_boundary_only_moves_forward_and_truncate_drops_stale_summaries(store):
    r = store.repo
    s = r.create_session("t")
    ids = [r.add_message(s.id, "user", text(str(i))).id for i in range(6)]
    r.add_compaction(s.id, "sum1", ids[2], "manual", {})
    with pytest.raises(ValueError):
        r.add_compaction(s.id, "older", ids[1], "auto", {})
    r.add_compaction(s.id, "sum2", ids[4], "auto", {})
    assert r.active_compaction(s.id).summary == "sum2"
    # Edit-and-resend from ids[3]: the summary covering ids[4] described deleted messages, so it goes too.
    r.truncate_from(s.id, ids[3])
    assert r.active_compaction(s.id).summary == "sum1"
    assert [m.id for m in r.messages(s.id)] == ids[:3]
    new = r.add_message(s.id, "user", text("new"))
    assert new.id > ids[-1]  # never inside the old summary's range


def test_sweep_marks_streaming_rows_interrupted(tmp_path):
    store = Store.open_sync(tmp_path / "x.db")
    s = store.repo.create_session("t")
    m = store.repo.add_message(s.id, "assistant", text("partial"), status="streaming")
    store.close_sync()
    store = Store.open_sync(tmp_path / "x.db")
    got = store.repo.get_message(m.id)
    assert got.status == "interrupted" and got.content == text("partial")
    store.close_sync()


def test_the_crash_sweep_at_every_start_reads_an_index_not_every_message(tmp_path, monkeypatch):
    # Every start asks whether a crash left replies 'streaming' and marks them interrupted; scanning an index entry
    # per message took 35-180 ms at start with a 200 MB database, for rows that are almost never there.
    path = tmp_path / "x.db"
    Store.open_sync(path).close_sync()
    seen: list[str] = []
    connect = sqlite3.connect

    def traced(*args, **kwargs):
        con = connect(*args, **kwargs)
        con.set_trace_callback(seen.append)
        return con

    monkeypatch.setattr(sqlite3, "connect", traced)
    Store.open_sync(path).close_sync()  # the start's own statements, as it runs them
    monkeypatch.undo()
    sweeps = [q for q in seen if "streaming" in q]
    assert len(sweeps) >= 2  # the look before opening and the sweep after
    con = sqlite3.connect(path)
    try:
        for statement in sweeps:
            plan = " ".join(str(row[-1]) for row in con.execute(f"EXPLAIN QUERY PLAN {statement}"))
            assert "messages_streaming" in plan, (statement, plan)
    finally:
        con.close()


def test_migration_from_v1_keeps_data(tmp_path):
    import peewee as pw

    from desktop.store.schema import build_models

    path = tmp_path / "old.db"
    db = pw.SqliteDatabase(str(path))
    with db.atomic():  # a database exactly as schema v1 wrote it
        migrations._v1(db, build_models(db))
        db.execute_sql("PRAGMA user_version = 1")
        db.execute_sql(
            "INSERT INTO sessions (title, model, created_at, updated_at) VALUES ('old', NULL, 1, 1)"
        )
        db.execute_sql(
            "INSERT INTO messages (session_id, role, content, usage, status, model, created_at) "
            'VALUES (1, \'user\', \'[{"type":"text","text":"kept"}]\', NULL, \'complete\', NULL, 1)'
        )
    db.close()
    store = Store.open_sync(path)
    assert migrations.schema_version(store.repo.db) == migrations.CURRENT_VERSION
    msgs = store.repo.messages(1)
    assert msgs[0].content == text("kept") and msgs[0].meta == {}
    assert store.repo.get_state(1) == {}
    assert store.repo.integrity_check() == "ok"
    store.close_sync()


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "new.db"
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version = 99")
    con.close()
    with pytest.raises(StorageError, match="newer Précis"):
        Store.open_sync(path)


async def test_async_facade_runs_on_one_db_thread(tmp_path):
    import threading

    store = await Store.open(tmp_path / "a.db")
    names = {await store.call(lambda: threading.current_thread().name) for _ in range(5)}
    assert len(names) == 1 and next(iter(names)).startswith("precis-db")
    assert threading.current_thread().name not in names
    await store.close()


def test_v6_adds_the_chat_profile_and_keeps_every_message(tmp_path):
    import peewee as pw

    from desktop.store import migrations
    from desktop.store.repo import Repo
    from desktop.store.schema import build_models

    path = tmp_path / "v3.db"
    db = pw.SqliteDatabase(str(path))
    migrations.upgrade(db, build_models(db), target=3)
    db.execute_sql(
        "INSERT INTO sessions (id, title, model, created_at, updated_at) VALUES (1, 's', 'm', 1, 1)"
    )
    db.execute_sql(
        "INSERT INTO messages (session_id, role, content, status, created_at) "
        'VALUES (1, \'user\', \'[{"type": "text", "text": "hi"}]\', \'complete\', 1)'
    )
    db.close()
    repo = Repo(path)
    assert migrations.schema_version(repo.db) == migrations.CURRENT_VERSION >= 6
    assert repo.get_session(1).profile is None and len(repo.messages(1)) == 1
    repo.update_session(1, profile="DeepSeek", model="deepseek-v4-pro")
    assert (repo.get_session(1).profile, repo.get_session(1).model) == ("DeepSeek", "deepseek-v4-pro")
    repo.close()
