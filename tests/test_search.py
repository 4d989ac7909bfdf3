"""Full-text search across every chat (FTS5, store/search.py): message text, tool input and results, summaries;
kept in step by triggers on every write path; the v10 step backfills rows stored before it."""

from __future__ import annotations

import peewee as pw
import pytest

from desktop.engine.history.search import MARK_END, MARK_START, SearchHit
from desktop.store import Store, migrations
from desktop.store.schema import build_models
from desktop.store.search import match_expression


@pytest.fixture
def store(tmp_path):
    s = Store.open_sync(tmp_path / "precis.db")
    yield s
    s.close_sync()


def text(t: str) -> list[dict]:
    return [{"type": "text", "text": t}]


def search(store: Store, query: str) -> list[SearchHit]:
    from desktop.store import search as fts

    return store.run(fts.search, store.repo, query)


def test_a_word_inside_a_tool_result_is_found_with_its_snippet(store):
    r = store.repo
    s = r.create_session("tools")
    r.add_message(
        s.id, "assistant", [{"type": "tool_use", "id": "t1", "name": "grep", "input": {"pattern": "needle"}}]
    )
    result = r.add_message(
        s.id,
        "user",
        [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": [{"type": "text", "text": "src/a.py:3: the zanzibar flag"}],
            }
        ],
    )
    plain = r.add_message(
        s.id, "user", [{"type": "tool_result", "tool_use_id": "t2", "content": "exit 0: quokka printed"}]
    )
    hits = search(store, "zanzibar")
    assert [(h.kind, h.message_id, h.session_title, h.role) for h in hits] == [
        ("message", result.id, "tools", "tool")
    ]
    assert f"{MARK_START}zanzibar{MARK_END}" in hits[0].snippet
    assert ("zanzibar", True) in hits[0].parts() and hits[0].plain == "src/a.py:3: the zanzibar flag"
    assert [h.message_id for h in search(store, "quokka")] == [plain.id]  # a result given as a plain string
    assert search(store, "needle")  # the tool's input is searchable too


def test_summaries_are_found_and_point_at_their_boundary(store):
    r = store.repo
    s = r.create_session("long")
    m = r.add_message(s.id, "user", text("early talk"))
    c = r.add_compaction(s.id, "We agreed on the marmalade schema.", m.id, "manual", {})
    hits = search(store, "marmalade")
    assert [(h.kind, h.compaction_id, h.message_id, h.role) for h in hits] == [
        ("summary", c.id, m.id, "summary")
    ]
    r.delete_compaction(c.id)
    assert search(store, "marmalade") == []


def test_every_write_path_keeps_the_index_in_step(store):
    r = store.repo
    s = r.create_session("a")
    m = r.add_message(s.id, "assistant", text("partial"), status="streaming")
    r.update_message(m.id, content=text("partial pelican"), status="streaming")
    assert search(store, "pelican") == []  # progressive commits are not indexed one by one
    r.update_message(m.id, content=text("partial pelican done"), status="complete")
    assert [h.message_id for h in search(store, "pelican")] == [m.id]
    r.update_message(m.id, content=text("rewritten"))
    assert search(store, "pelican") == [] and search(store, "rewritten")
    r.delete_message(m.id)
    assert search(store, "rewritten") == []
    n = r.add_message(s.id, "user", text("truncate walrus"))
    r.truncate_from(s.id, n.id)
    assert search(store, "walrus") == []
    r.add_messages(s.id, [{"role": "user", "content": text("bulk heron")}])
    assert search(store, "heron")
    r.clear_history(s.id)
    assert search(store, "heron") == []
    r.add_message(s.id, "user", text("gone with the chat: ibis"))
    r.delete_session(s.id)
    assert search(store, "ibis") == []
    assert store.repo.db.execute_sql("SELECT count(*) FROM message_fts").fetchone()[0] == 0


def test_prefix_accents_and_fts_syntax_in_the_query(store):
    r = store.repo
    s = r.create_session("x")
    m = r.add_message(s.id, "user", text("Le café est prêt; compaction AND recovery"))
    assert [h.message_id for h in search(store, "cafe")] == [m.id]  # diacritics folded
    assert [h.message_id for h in search(store, "compac")] == [m.id]  # the last word as a prefix while typing
    for odd in ('"', "AND", "NEAR(", "*", "a:b", "-x", "(", "'"):
        search(store, odd)  # never an FTS syntax error
    assert search(store, "   ") == []
    assert match_expression('say "hi"') == '"say" """hi"""*'


def test_v10_backfills_rows_stored_before_it(tmp_path):
    path = tmp_path / "old.db"
    db = pw.SqliteDatabase(str(path))
    db.connect()
    migrations.upgrade(db, build_models(db), target=9)
    db.execute_sql("INSERT INTO sessions (title, model, created_at, updated_at) VALUES ('old', NULL, 1, 1)")
    db.execute_sql(
        "INSERT INTO messages (session_id, role, content, usage, status, model, created_at) VALUES "
        '(1, \'user\', \'[{"type":"text","text":"backfilled ocelot"}]\', NULL, \'complete\', NULL, 1)'
    )
    db.execute_sql(
        "INSERT INTO messages (session_id, role, content, usage, status, model, created_at) VALUES "
        "(1, 'user', 'not json at all', NULL, 'complete', NULL, 1)"
    )
    db.execute_sql(
        "INSERT INTO compactions (session_id, summary, covers_through_message_id, trigger, stats, "
        "created_at) VALUES (1, 'an old lynx summary', 1, 'manual', '{}', 1)"
    )
    db.close()
    store = Store.open_sync(path)
    try:
        assert migrations.schema_version(store.repo.db) == migrations.CURRENT_VERSION >= 10
        assert [h.message_id for h in search(store, "ocelot")] == [1]
        assert [h.kind for h in search(store, "lynx")] == ["summary"]
        assert store.repo.get_session(1).pinned is False
        assert store.repo.integrity_check() == "ok"
    finally:
        store.close_sync()


def test_pinned_chats_sort_first_and_pinning_is_not_activity(store):
    r = store.repo
    a = r.create_session("a")
    b = r.create_session("b")
    r.add_message(b.id, "user", text("newest"))
    before = r.get_session(a.id).updated_at
    assert [x.id for x in r.list_sessions()] == [b.id, a.id]
    r.set_pinned(a.id, True)
    assert [(x.id, x.pinned) for x in r.list_sessions()] == [(a.id, True), (b.id, False)]
    assert r.get_session(a.id).updated_at == before
    r.set_pinned(a.id, False)
    assert [x.id for x in r.list_sessions()] == [b.id, a.id]


def test_precis_search_json_finds_a_word_inside_a_tool_result(precis_home):
    import json
    import os
    import subprocess
    import sys

    from desktop.engine.config.settings import Paths

    store = Store.open_sync(Paths.resolve().ensure().database)
    r = store.repo
    s = r.create_session("grep run")
    r.add_message(s.id, "user", text("find the flag"))
    hit = r.add_message(
        s.id,
        "user",
        [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": [{"type": "text", "text": "config.toml: capybara = true"}],
            }
        ],
    )
    store.close_sync()
    env = {**os.environ, "PRECIS_HOME": str(precis_home)}
    res = subprocess.run(
        [sys.executable, "-m", "desktop", "search", "capybara", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert [(x["session_id"], x["message_id"], x["kind"], x["matches"]) for x in rows] == [
        (s.id, hit.id, "message", ["capybara"])
    ]
    assert rows[0]["snippet"] == "config.toml: capybara = true" and rows[0]["session_title"] == "grep run"
    plain = subprocess.run(
        [sys.executable, "-m", "desktop", "search", "nothing-like-it"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert plain.returncode == 0 and plain.stdout == "" and "no results" in plain.stderr
    text_out = subprocess.run(
        [sys.executable, "-m", "desktop", "search", "capy"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "[capybara]" in text_out.stdout and "grep run" in text_out.stdout
