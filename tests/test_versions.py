"""Versions of edits and regenerations: rows are never deleted, the chat shows (and sends) one path through them,
and compactions stay on the path they summarised."""

from __future__ import annotations

import pytest

from desktop.engine.compaction import problems
from desktop.engine.events import PathChanged
from desktop.store import migrations
from desktop.store.repo import Repo
from tests.fakeapi import SUMMARY_MARKER
from tests.requests import request_of
from tests.test_compaction_engine import converse

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process


def texts(messages) -> list[str]:  # noqa: ANN001
    out = []
    for m in messages:
        content = m["content"] if isinstance(m, dict) else m.content
        out.append(" ".join(str(b.get("text", "")) for b in content if isinstance(b, dict)))
    return out


def chat_bodies(srv) -> list[dict]:  # noqa: ANN001
    return [r.body for r in srv.message_requests() if SUMMARY_MARKER not in str(r.body.get("system", ""))]


async def three_turns(engine, srv, sid: int) -> None:  # noqa: ANN001
    for i in range(3):
        srv.queue_text(f"answer {i}")
        await engine.send(sid, f"question {i}")


async def test_an_edit_keeps_the_earlier_version_and_sends_only_the_new_path(engine, fake_api):
    sid = (await engine.store.create_session("edit")).id
    await three_turns(engine, fake_api, sid)
    before = await engine.store.messages(sid)
    second = before[2]
    fake_api.queue_text("answer to the edit")
    await engine.edit_and_resend(sid, second.id, "question 1, better")
    # On main the edit deleted the old question and everything after it.
    for m in before:
        assert await engine.store.get_message(m.id) is not None
    assert texts(await engine.store.messages(sid)) == [
        "question 0",
        "answer 0",
        "question 1, better",
        "answer to the edit",
    ]
    sent = chat_bodies(fake_api)[-1]["messages"]
    assert texts(sent) == ["question 0", "answer 0", "question 1, better"]
    page = await engine.store.page(sid)
    new_user = page.messages[2]
    assert page.versions[new_user.id] == (2, 2) and new_user.parent_id == before[1].id
    assert any(isinstance(e, PathChanged) for e in engine.events)


async def test_regenerate_keeps_the_old_reply_and_the_request_ends_with_its_question(engine, fake_api):
    sid = (await engine.store.create_session("regen")).id
    await three_turns(engine, fake_api, sid)
    old = await engine.store.messages(sid)
    fake_api.queue_text("answer 1, again")
    reply = await engine.regenerate(sid, old[3].id)
    assert reply is not None and reply.parent_id == old[2].id
    # The request is exactly the path up to the question: the old reply and the turn after it stay out.
    assert texts(chat_bodies(fake_api)[-1]["messages"]) == ["question 0", "answer 0", "question 1"]
    path = await engine.store.messages(sid)
    assert texts(path) == ["question 0", "answer 0", "question 1", "answer 1, again"]
    page = await engine.store.page(sid)
    assert page.versions == {reply.id: (2, 2)}
    # ‹ back: the old reply and the turn that followed it, then the next request carries that path.
    assert await engine.switch_version(sid, reply.id, -1)
    assert texts(await engine.store.messages(sid)) == texts(old)
    assert (await engine.store.page(sid)).versions == {old[3].id: (1, 2)}
    fake_api.queue_text("answer 3")
    await engine.send(sid, "question 3")
    assert texts(chat_bodies(fake_api)[-1]["messages"]) == [*texts(old), "question 3"]
    assert not await engine.switch_version(sid, old[3].id, -1)  # nothing before the first version


async def test_switching_back_returns_to_the_leaf_last_shown_under_a_version(engine, fake_api):
    sid = (await engine.store.create_session("leaves")).id
    await three_turns(engine, fake_api, sid)
    rows = await engine.store.messages(sid)
    fake_api.queue_text("alt answer 0")
    alt = await engine.regenerate(sid, rows[1].id)
    fake_api.queue_text("alt answer 0, third")
    third = await engine.regenerate(sid, alt.id)
    assert (await engine.store.page(sid)).versions[third.id] == (3, 3)
    assert await engine.switch_version(sid, third.id, -2)
    assert texts(await engine.store.messages(sid)) == texts(rows)  # the whole first path, to its end
    assert await engine.switch_version(sid, rows[1].id, 1)
    assert texts(await engine.store.messages(sid)) == ["question 0", "alt answer 0"]


async def test_a_failed_regenerate_that_wrote_nothing_shows_the_old_path_again(engine, fake_api):
    from tests.fakeapi import Fault

    sid = (await engine.store.create_session("fail")).id
    await three_turns(engine, fake_api, sid)
    rows = await engine.store.messages(sid)
    fake_api.queue_fault(
        Fault("status", status=400, error_type="invalid_request_error", message="bad request")
    )
    assert await engine.regenerate(sid, rows[5].id) is None
    assert texts(await engine.store.messages(sid)) == texts(rows)


async def test_a_summary_covers_one_path(small_engine, fake_api):
    """Compact on one path, edit before its boundary: the new path is sent from its originals; its own
    compaction covers it; switching back brings the first summary back; each request is exactly its path."""
    eng = small_engine
    sid = (await eng.store.create_session("paths", "claude-test")).id
    await converse(eng, fake_api, sid, 6)
    first = await eng.compact(sid, "manual")
    assert first.ok, first.message
    boundary = first.record.covers_through_message_id
    path_a = await eng.store.messages(sid)
    inside = next(m for m in path_a if m.role == "user" and m.id < boundary and m.id != path_a[0].id)
    fake_api.queue_text("fresh answer")
    edited_reply = await eng.edit_message(sid, inside.id, "Instruction E: spaces")
    assert await eng.store.active_compaction(sid) is None  # the summary covered the old version
    body = str(chat_bodies(fake_api)[-1])
    assert "conversation-summary" not in body and "Instruction E: spaces" in body
    request = await request_of(eng, sid)
    path_b = texts(await eng.store.messages(sid))
    assert texts(request["messages"])[: len(path_b)] == path_b
    # The new path grows and gets its own summary.
    await converse(eng, fake_api, sid, 4, start=20)
    second = await eng.compact(sid, "manual")
    assert second.ok, second.message
    assert (await eng.store.active_compaction(sid)).id == second.record.id
    # Back to the first version: its own summary covers it again, the second stays with its path.
    edited = await eng.store.messages(sid, after_id=0)
    new_user = next(m for m in edited if m.parent_id == inside.parent_id and m.role == "user")
    assert await eng.switch_version(sid, new_user.id, -1)
    assert (await eng.store.active_compaction(sid)).id == first.record.id
    assert [c.id for c in await eng.store.compactions(sid)] == [first.record.id]
    request = await request_of(eng, sid)
    assert request["messages"][0]["content"][0]["text"].startswith("<conversation-summary>")
    assert "Instruction E" not in str(request["messages"]) and problems(request["messages"]) == []
    assert texts(await eng.store.messages(sid)) == texts(path_a)
    # Undo on this path removes this path's summary only; the other path keeps its own.
    assert await eng.undo_compaction(sid)
    assert await eng.store.active_compaction(sid) is None
    assert await eng.switch_version(sid, inside.id, 1)
    assert (await eng.store.active_compaction(sid)).id == second.record.id
    assert edited_reply is not None


async def test_deleting_a_summarised_row_keeps_its_summary_on_the_path(small_engine, fake_api):
    eng = small_engine
    sid = (await eng.store.create_session("del", "claude-test")).id
    await converse(eng, fake_api, sid, 6)
    outcome = await eng.compact(sid, "manual")
    anchor = outcome.record.covers_through_message_id
    await eng.delete_message(sid, anchor)
    active = await eng.store.active_compaction(sid)
    assert active is not None and active.id == outcome.record.id and active.covers_through_message_id < anchor
    rows = await eng.store.messages(sid)
    after = [m for m in rows if m.id > active.covers_through_message_id]
    assert after and after[0].parent_id == active.covers_through_message_id  # the chain stays whole
    request = await request_of(eng, sid)
    assert request["messages"][0]["content"][0]["text"].startswith("<conversation-summary>")
    assert problems(request["messages"]) == []
    await eng.clear_history(sid)
    assert await eng.store.messages(sid) == [] and await eng.store.compactions(sid) == []
    fake_api.queue_text("clean")
    assert (await eng.send(sid, "again")).parent_id is not None


async def test_the_chosen_version_persists_across_a_restart(tmp_path, fake_api):
    from tests.conftest import _open_engine

    async with _open_engine() as eng:
        sid = (await eng.store.create_session("persist")).id
        await three_turns(eng, fake_api, sid)
        rows = await eng.store.messages(sid)
        fake_api.queue_text("answer 2, again")
        await eng.regenerate(sid, rows[5].id)
        assert await eng.switch_version(sid, rows[5].id, 1) is False  # the first is not shown now
        shown = texts(await eng.store.messages(sid))
    async with _open_engine() as eng:
        assert texts(await eng.store.messages(sid)) == shown
        fake_api.queue_text("next")
        await eng.send(sid, "question 3")
        assert texts(chat_bodies(fake_api)[-1]["messages"]) == [*shown, "question 3"]


def test_the_migration_links_every_existing_row_to_the_one_before(tmp_path):
    import peewee as pw

    from desktop.store.schema import build_models

    path = tmp_path / "old.db"
    db = pw.SqliteDatabase(str(path))
    db.connect()
    migrations.upgrade(db, build_models(db), target=8)
    db.execute_sql("INSERT INTO sessions (title, created_at, updated_at, state) VALUES ('old', 0, 0, '{}')")
    for i in range(4):
        db.execute_sql(
            "INSERT INTO messages (session_id, role, content, status, created_at, meta) "
            "VALUES (1, ?, ?, 'complete', 0, '{}')",
            ("user" if i % 2 == 0 else "assistant", f'[{{"type":"text","text":"{i}"}}]'),
        )
    db.close()
    repo = Repo(path)
    assert migrations.schema_version(repo.db) == migrations.CURRENT_VERSION
    rows = repo.messages(1)
    assert [m.parent_id for m in rows] == [None, rows[0].id, rows[1].id, rows[2].id]
    plan = repo.db.execute_sql(
        "EXPLAIN QUERY PLAN SELECT COUNT(id), SUM(est) FROM messages WHERE session_id = 1 "
        "AND id > 0 AND status IN ('complete') AND est_key IN ('k') AND off_path IS NULL"
    ).fetchall()
    assert "COVERING INDEX messages_estimates" in str(plan)
    repo.close()


def test_bulk_rows_follow_the_active_path(tmp_path):
    repo = Repo(tmp_path / "bulk.db")
    s = repo.create_session("bulk")
    first = repo.add_message(s.id, "user", [{"type": "text", "text": "q"}])
    old = repo.add_message(s.id, "assistant", [{"type": "text", "text": "a"}])
    repo.branch_at(s.id, old.id)
    repo.add_messages(
        s.id,
        [
            {"role": "assistant", "content": [{"type": "text", "text": "b"}]},
            {"role": "user", "content": [{"type": "text", "text": "c"}]},
        ],
    )
    rows = repo.messages(s.id)
    assert [m.content[0]["text"] for m in rows] == ["q", "b", "c"]
    assert [m.parent_id for m in rows] == [None, first.id, rows[1].id]
    assert repo.page(s.id).versions == {rows[1].id: (2, 2)}
    assert repo.get_session(s.id).message_count == 3
    repo.close()


@pytest.mark.loopback  # precis in a subprocess
async def test_the_cli_exports_and_continues_the_path_the_window_shows(engine, fake_api, precis_home):
    import asyncio
    import json
    import os

    from tests.test_cli import run

    sid = (await engine.store.create_session("cli")).id
    await three_turns(engine, fake_api, sid)
    rows = await engine.store.messages(sid)
    fake_api.queue_text("answer 1, again")
    await engine.regenerate(sid, rows[3].id)
    env = {
        **os.environ,
        "PRECIS_HOME": str(precis_home),
        "ANTHROPIC_BASE_URL": fake_api.base_url,
        "ANTHROPIC_API_KEY": "test-key",
    }
    out = await asyncio.to_thread(run, ["export", str(sid), "--format", "json"], env)
    assert out.returncode == 0, out.stderr
    exported = json.loads(out.stdout)["messages"]
    assert [m["content"][0]["text"] for m in exported] == [
        "question 0",
        "answer 0",
        "question 1",
        "answer 1, again",
    ]
    fake_api.queue_text("from the terminal")
    res = await asyncio.to_thread(run, ["chat", "--session", str(sid), "question 2, from the CLI"], env)
    assert res.returncode == 0, res.stderr
    assert texts(fake_api.message_requests()[-1].body["messages"]) == [
        "question 0",
        "answer 0",
        "question 1",
        "answer 1, again",
        "question 2, from the CLI",
    ]


async def test_deleting_the_shown_version_shows_the_other_one(engine, fake_api):
    sid = (await engine.store.create_session("delete a version")).id
    await three_turns(engine, fake_api, sid)
    rows = await engine.store.messages(sid)
    fake_api.queue_text("answer 2, again")
    again = await engine.regenerate(sid, rows[5].id)
    await engine.delete_message(sid, again.id)
    assert texts(await engine.store.messages(sid)) == texts(rows)  # not a question left without its answer
    assert (await engine.store.page(sid)).versions == {}
    request = await request_of(engine, sid)
    assert texts(request["messages"])[:6] == texts(rows)


def path_invariants(repo, sid: int) -> None:  # noqa: ANN001
    """The shown path is one chain from the first row; every row hangs from a stored row of its session; every
    compaction offered summarises the shown path."""
    rows = repo.db.execute_sql(
        "SELECT id, parent_id, off_path FROM messages WHERE session_id = ? ORDER BY id", (sid,)
    ).fetchall()
    ids = {r[0] for r in rows}
    shown = [r for r in rows if r[2] is None]
    assert all(parent is None or parent in ids for _i, parent, _o in rows)
    assert [r[1] for r in shown] == [None, *[r[0] for r in shown[:-1]]]
    on_path = {r[0] for r in shown}
    for c in repo.compactions(sid):
        assert c.covers_through_message_id in on_path or c.covers_through_message_id <= 0


async def test_random_versions_compactions_undo_and_deletes_keep_the_path_whole(small_engine, fake_api):
    import random
    import re

    from tests.test_compaction_engine import prose

    eng = small_engine
    rng = random.Random(3)
    sid = (await eng.store.create_session("random", "claude-test")).id
    n = 0
    seen: set[str] = set()  # what the run did (the test must have met each kind of change)

    def word() -> str:
        nonlocal n
        n += 1
        return f"w{n}x"

    for _step in range(40):
        rows = await eng.store.messages(sid)
        op = rng.choice(
            ["send", "send", "regenerate", "edit", "switch", "compact", "undo", "delete"]
            if rows
            else ["send"]
        )
        users = [m for m in rows if m.role == "user"]
        replies = [m for m in rows if m.role == "assistant"]
        if op == "send" or (op == "regenerate" and not replies):
            fake_api.queue_text(f"{word()} " + prose(120, n))
            await eng.send(sid, f"{word()} " + prose(150, n))
        elif op == "regenerate":
            fake_api.queue_text(f"{word()} " + prose(120, n))
            await eng.regenerate(sid, rng.choice(replies).id)
        elif op == "edit":
            fake_api.queue_text(f"{word()} " + prose(120, n))
            await eng.edit_message(sid, rng.choice(users).id, f"{word()} " + prose(150, n))
        elif op == "switch":
            page = await eng.store.page(sid, originals=True, size=500)
            if page.versions:
                mid = rng.choice(sorted(page.versions))
                pos, count = page.versions[mid]
                assert await eng.switch_version(
                    sid, mid, rng.choice([d for d in (-1, 1) if 1 <= pos + d <= count])
                )
        elif op == "compact":
            await eng.compact(sid, "manual")
        elif op == "undo":
            await eng.undo_compaction(sid)
        elif op == "delete" and len(rows) > 2:
            await eng.delete_message(sid, rng.choice(rows[:-1]).id)
        seen.add(op)
        if await eng.store.active_compaction(sid) is not None:
            seen.add("compacted")
        await eng.store.call(lambda: path_invariants(eng.store.repo, sid))
        # The request is the shown path: no word of a row off it, every shown typed message after the boundary.
        # (A summary's own text is left out of the first check: the summariser also reads the verbatim tail of the
        # path it was made on, and an edit after the boundary keeps the summary, as it always did.)
        request = str((await request_of(eng, sid))["messages"])
        request = re.sub(r"<conversation-summary>.*?</conversation-summary>", "", request, flags=re.S)
        stored = await eng.store.call(
            lambda: eng.store.repo.db.execute_sql(
                "SELECT id, content, off_path FROM messages WHERE session_id = ?", (sid,)
            ).fetchall()
        )
        active = await eng.store.active_compaction(sid)
        floor = active.covers_through_message_id if active else 0
        for mid, content, off in stored:
            tag = content.split('"text":"', 1)[-1].split(" ", 1)[0]
            if off is not None:
                assert tag not in request, (op, mid)
            elif mid > floor and "tool_result" not in content and tag.startswith("w"):
                assert tag in request, (op, mid)
    assert seen >= {"send", "regenerate", "edit", "switch", "compact", "undo", "delete", "compacted"}, seen
