"""Recall: the model's tool and `precis recall` search one chat's own history (bm25 over the full-text index,
filtered to that chat) and read messages back by id, verbatim, within a token budget. Real SQLite files; the
tool through the real engine against the test server."""

from __future__ import annotations

import pytest

from desktop.store import Store
from desktop.tools import recall
from desktop.tools.events import PermissionAsked, ToolCallFinished
from tests.tools_helpers import tool_runtime


@pytest.fixture
def store(tmp_path):
    s = Store.open_sync(tmp_path / "precis.db")
    yield s
    s.close_sync()


def text(t: str) -> list[dict]:
    return [{"type": "text", "text": t}]


def _two_chats(store: Store) -> tuple[int, int, dict[str, int]]:
    r = store.repo
    a, b = r.create_session("a"), r.create_session("b")
    ids = {
        "a_decision": r.add_message(
            a.id,
            "assistant",
            text("We decided on WAL journal mode because the CLI reads while the app writes."),
        ).id,
        "a_other": r.add_message(a.id, "user", text("The journal of the trip is elsewhere.")).id,
        "a_result": r.add_message(
            a.id,
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "FileNotFoundError: conf/aardvark.toml",
                }
            ],
        ).id,
        "b_secret": r.add_message(
            b.id, "user", text("Only chat b knows the zeppelin journal mode decision.")
        ).id,
    }
    return a.id, b.id, ids


def test_recall_ranks_one_chats_messages_and_never_returns_another_chats(store):
    a, b, ids = _two_chats(store)
    from desktop.store import search as fts

    hits = store.run(fts.recall, store.repo, a, "which journal mode did we decide on, and why?")
    assert [h.message_id for h in hits][:1] == [ids["a_decision"]]  # more and rarer words first (bm25)
    assert ids["b_secret"] not in [h.message_id for h in hits]
    assert store.run(fts.recall, store.repo, a, "zeppelin") == []  # only chat b has it
    assert [h.message_id for h in store.run(fts.recall, store.repo, b, "zeppelin")] == [ids["b_secret"]]
    tool = store.run(fts.recall, store.repo, a, "aardvark config missing")
    assert [(h.message_id, h.role) for h in tool] == [(ids["a_result"], "tool")]
    # Reading by id: another chat's id is not found.
    assert [m.id for m in store.run(fts.read, store.repo, a, [ids["b_secret"], ids["a_other"]])] == [
        ids["a_other"]
    ]


def test_a_query_of_fts_syntax_is_plain_words(store):
    a, _b, _ids = _two_chats(store)
    from desktop.store import search as fts

    for query in ('"', "AND OR NOT", "journal* NEAR(", "(", "-", "^mode"):
        store.run(fts.recall, store.repo, a, query)  # no syntax error, whatever the words


async def test_a_read_within_the_budget_is_cut_with_a_note_naming_the_rest(store):
    r = store.repo
    s = r.create_session("long")
    first = r.add_message(s.id, "user", text("alpha " * 3000))
    second = r.add_message(s.id, "assistant", text("beta"))
    out = await recall.run(store, s.id, {"from_id": first.id, "to_id": second.id, "max_tokens": 500})
    assert out.text().startswith(f"[#{first.id}] user:\nalpha alpha")
    assert "cut at the 500-token budget" in out.text() and f"not shown: #{second.id}" in out.text()
    assert len(out.text()) < 4000
    whole = await recall.run(store, s.id, {"ids": [second.id]})
    assert whole.text() == f"[#{second.id}] assistant:\nbeta"
    assert (await recall.run(store, s.id, {})).is_error


async def test_the_model_recalls_a_compacted_message_of_its_own_chat_without_a_prompt(fake_api):
    async with tool_runtime(workspace=None) as rt:
        other = await rt.engine.new_session()
        await rt.store.add_message(other, "user", text("the zeppelin password is only in the other chat"))
        sid = await rt.engine.new_session()
        planted = await rt.store.add_message(
            sid,
            "assistant",
            text("We decided on WAL journal mode because the CLI reads while the app writes."),
        )
        await rt.store.add_message(sid, "user", text("ok"))
        fake_api.queue_text("Fine.")
        await rt.engine.send(sid, "Before any compaction.")
        assert "tools" not in fake_api.message_requests()[-1].body  # no compaction yet: no recall
        last = (await rt.store.messages(sid))[-1]
        await rt.store.add_compaction(sid, "## Goal\nA CLI.", last.id, "manual", {})
        rt.engine.view(sid).invalidate()
        fake_api.queue_tool_use("recall", {"query": "why that journal mode"}, id="toolu_q")
        fake_api.queue_tool_use("recall", {"ids": [planted.id]}, id="toolu_r")
        fake_api.queue_tool_use("recall", {"query": "zeppelin password"}, id="toolu_x")
        fake_api.queue_text("WAL, because the CLI reads while the app writes.")
        reply = await rt.engine.send(sid, "Which journal mode did we pick?")
        messages = await rt.store.messages(sid)
        audit = await rt.tool_log.audit(sid)
    assert reply is not None and reply.content[0]["text"].startswith("WAL")
    bodies = [r.body for r in fake_api.message_requests()[-4:]]
    assert all([t["name"] for t in b["tools"]] == ["recall"] for b in bodies)
    results = {
        b["tool_use_id"]: b
        for m in messages
        if m.role == "user"
        for b in m.content
        if b.get("type") == "tool_result"
    }
    assert f"[#{planted.id}] assistant:" in results["toolu_q"]["content"]
    assert results["toolu_r"]["content"] == (
        f"[#{planted.id}] assistant:\nWe decided on WAL journal mode because "
        "the CLI reads while the app writes."
    )
    assert "No earlier message" in results["toolu_x"]["content"]  # the other chat's words are out of reach
    assert not any(isinstance(e, PermissionAsked) for e in rt.events)
    assert [e.status for e in rt.events if isinstance(e, ToolCallFinished)] == ["ok", "ok", "ok"]
    assert [(a.tool, a.decision) for a in audit] == [("recall", "own history")] * 3


def _cli(args, env):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "desktop", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_precis_recall_finds_words_only_the_compacted_part_of_an_imported_transcript_holds(
    fake_api, precis_home
):
    """A real Claude Code transcript, imported and compacted by the CLI; `precis recall` finds, in the messages
    the summary replaced, words that neither the summary, its pins nor the later messages hold."""
    import json
    import os
    import re

    from tests.corpus import CORPUS, require_corpus

    name = "spotter/tool_heavy.jsonl"
    require_corpus(name)
    env = {
        **os.environ,
        "PRECIS_HOME": str(precis_home),
        "ANTHROPIC_BASE_URL": fake_api.base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "PRECIS_CONTEXT_WINDOW": "6000",
    }  # a small window: a short tail
    assert _cli(["import-claude-code", str(CORPUS / name)], env).returncode == 0
    done = _cli(["compact", "1"], env)
    assert done.returncode == 0, done.stderr
    from desktop.engine.config.settings import Paths

    store = Store.open_sync(Paths.resolve().database)  # this test's PRECIS_HOME
    try:
        compaction = store.repo.active_compaction(1)
        assert compaction is not None
        rows = store.repo.messages(1)
    finally:
        store.close_sync()

    def words(t: str) -> set[str]:
        return {w.casefold() for w in re.findall(r"[A-Za-z]{9,}", t)}

    covered = [m for m in rows if m.id <= compaction.covers_through_message_id]
    visible = words(compaction.summary + str(compaction.stats.get("pins_text") or "")) | words(
        " ".join(recall.message_text(m) for m in rows if m.id > compaction.covers_through_message_id)
    )
    only = sorted(words(" ".join(recall.message_text(m) for m in covered)) - visible)[:3]
    assert only, "the compaction left no word out of view"
    first = 0
    for word in only:
        res = _cli(["recall", "1", word, "--json"], env)
        assert res.returncode == 0, res.stderr
        hits = json.loads(res.stdout)
        assert hits and hits[0]["message_id"] <= compaction.covers_through_message_id, word
        assert word in hits[0]["text"].casefold()
        first = first or hits[0]["message_id"]
    plain = _cli(["recall", "1", only[0]], env)
    assert plain.stdout.startswith(f"#{first} ")
    missing = _cli(["recall", "99", "anything"], env)
    assert missing.returncode == 1 and "no session with id 99" in missing.stderr


def _document(name: str, body: str) -> dict:
    return {
        "type": "document",
        "title": name,
        "source": {"type": "text", "media_type": "text/plain", "data": body},
    }


def test_an_attached_text_files_words_are_searchable_and_read_back(store):
    from desktop.store import search as fts

    r = store.repo
    s = r.create_session("files")
    m = r.add_message(
        s.id,
        "user",
        [
            _document("notes.md", "the quetzal protocol uses port 7781"),
            {"type": "text", "text": "see the notes"},
        ],
    )
    assert [h.message_id for h in store.run(fts.recall, r, s.id, "quetzal port")] == [m.id]
    assert [h.message_id for h in store.run(fts.search, r, "quetzal")] == [m.id]
    assert "[attached notes.md]\nthe quetzal protocol uses port 7781" in recall.message_text(
        r.get_message(m.id)
    )


def test_v11_indexes_the_text_files_attached_before_it(tmp_path):
    import peewee as pw

    from desktop.store import migrations
    from desktop.store import search as fts
    from desktop.store.schema import build_models

    path = tmp_path / "old.db"
    db = pw.SqliteDatabase(str(path))
    db.connect()
    migrations.upgrade(db, build_models(db), target=10)
    db.execute_sql("INSERT INTO sessions (title, model, created_at, updated_at) VALUES ('old', NULL, 1, 1)")
    content = (
        '[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"an old axolotl"}}]'
    )
    db.execute_sql(
        "INSERT INTO messages (session_id, role, content, usage, status, model, created_at) VALUES "
        "(1, 'user', ?, NULL, 'complete', NULL, 1)",
        (content,),
    )
    # As v10's triggers indexed it: without the attachment's text.
    db.execute_sql("DELETE FROM message_fts WHERE rowid = 1")
    db.execute_sql("INSERT INTO message_fts (rowid, body) VALUES (1, '')")
    db.close()
    s = Store.open_sync(path)
    try:
        assert [h.message_id for h in s.run(fts.recall, s.repo, 1, "axolotl")] == [1]
        assert s.repo.integrity_check() == "ok"
    finally:
        s.close_sync()
