"""The sessions' running usage totals (schema v3) on a real SQLite file: always the sum over the stored replies,
built by the migration, read by ``load`` as one entry per model, and priced by the engine like every reply."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

import peewee as pw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.engine.history.storage import ImportPlan
from desktop.engine.types import Usage
from desktop.store import Store, migrations
from desktop.store.repo import Repo
from desktop.store.schema import build_models
from tests.bench.bench_engine_io import prompt, reply, wait_background

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process

MODELS = [None, "", "claude-opus-4-7", "claude-haiku-4-5"]


def text(t: str) -> list[dict]:
    return [{"type": "text", "text": t}]


def _stored_usage(db_path: Path, session_id: int) -> list[tuple[str | None, Usage]]:
    """Each stored reply's model and usage, read with a separate connection and no help from the totals."""
    con = sqlite3.connect(db_path)
    try:
        rows = con.execute(
            "SELECT model, usage FROM messages WHERE session_id = ? AND usage IS NOT NULL", (session_id,)
        ).fetchall()
    finally:
        con.close()
    read = [(model or None, Usage.from_json(json.loads(raw))) for model, raw in rows]
    assert all(u is not None for _m, u in read)
    return [(m, u) for m, u in read if u is not None]


def _summed[K](rows: list[tuple[K, Usage]]) -> dict[K, Usage]:
    sums: dict[K, list[int]] = {}
    for key, u in rows:
        t = sums.setdefault(key, [0, 0, 0, 0])
        for i, v in enumerate(
            (u.input_tokens, u.output_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens)
        ):
            t[i] += v
    return {key: Usage(*t) for key, t in sums.items()}


def brute_force(db_path: Path, session_id: int) -> dict[str | None, Usage]:
    """The sums per model over the stored rows."""
    return _summed(_stored_usage(db_path, session_id))


def brute_force_bands(db_path: Path, session_id: int) -> dict[tuple[str | None, int], Usage]:
    """The same per model and prompt band (keyed by the band's largest prompt)."""
    return _summed(
        [((m, -(-u.prompt_tokens // 1000) * 1000), u) for m, u in _stored_usage(db_path, session_id)]
    )


def table_rows(repo: Repo) -> list[tuple]:
    return repo.db.execute_sql("SELECT session_id, model, replies FROM usage_totals").fetchall()


def check(repo: Repo, session_ids: list[int]) -> None:
    for sid in session_ids:
        assert repo.usage_totals(sid) == brute_force(repo.path, sid), sid
        assert repo.usage_by_band(sid) == brute_force_bands(repo.path, sid), sid
    live = {r[0] for r in repo.db.execute_sql("SELECT id FROM sessions").fetchall()}
    for session_id, _model, replies in table_rows(repo):
        assert replies > 0 and session_id in live  # no emptied or orphaned total is left behind


# --- random sequences ---------------------------------------------------------------------------------------

usages = st.builds(
    Usage, st.integers(0, 5000), st.integers(0, 5000), st.integers(0, 5000), st.integers(0, 5000)
)
maybe_usage = st.one_of(st.none(), usages)
row = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]), "model": st.sampled_from(MODELS), "usage": maybe_usage}
)
pick = st.integers(0, 10_000)  # an index into whatever exists, taken modulo its length
ops = st.one_of(
    st.tuples(st.just("add"), pick, st.sampled_from(MODELS), maybe_usage),
    st.tuples(st.just("stream"), pick, st.lists(usages, min_size=1, max_size=4)),
    st.tuples(st.just("edit"), pick),  # content and status only: the usage stays
    st.tuples(st.just("delete"), pick),
    st.tuples(st.just("truncate"), pick),
    st.tuples(st.just("bulk"), pick, st.lists(row, max_size=6)),
    st.tuples(st.just("import"), st.lists(row, min_size=1, max_size=6), st.booleans()),
    st.tuples(st.just("clear"), pick),
    st.tuples(st.just("drop"), pick),
)


def run_ops(repo: Repo, sequence: list[tuple]) -> None:
    sessions = [repo.create_session("a").id, repo.create_session("b").id]
    everything = list(sessions)

    def rows_of(sid: int) -> list[int]:
        return [m.id for m in repo.messages(sid)]

    def all_rows() -> list[int]:
        return [mid for sid in sessions for mid in rows_of(sid)]

    for op in sequence:
        kind = op[0]
        if kind == "add":
            repo.add_message(
                sessions[op[1] % len(sessions)],
                "assistant",
                text("r"),
                model=op[2],
                usage=op[3],
                status="complete" if op[3] else "streaming",
            )
        elif kind == "stream" and (ids := all_rows()):
            mid = ids[op[1] % len(ids)]
            for u in op[2]:  # a streaming reply's usage written again and again
                repo.update_message(mid, content=text("more"), status="streaming", usage=u)
        elif kind == "edit" and (ids := all_rows()):
            repo.update_message(ids[op[1] % len(ids)], content=text("edited"), status="complete")
        elif kind == "delete" and (ids := all_rows()):
            repo.delete_message(ids[op[1] % len(ids)])
        elif kind == "truncate":
            sid = sessions[op[1] % len(sessions)]
            if ids := rows_of(sid):
                repo.truncate_from(sid, ids[op[1] % len(ids)])
        elif kind == "bulk":
            repo.add_messages(
                sessions[op[1] % len(sessions)], [{**r, "content": text("bulk")} for r in op[2]]
            )
        elif kind == "import":
            rows = [{**r, "content": text("imported")} for r in op[1]]
            plan = ImportPlan(
                "imp", "claude-haiku-4-5", rows, summary_index=0 if op[2] else None, summary="s"
            )
            session, _compaction = repo.import_session(plan)
            sessions.append(session.id)
            everything.append(session.id)
        elif kind == "clear":
            repo.clear_history(sessions[op[1] % len(sessions)])
        elif kind == "drop" and len(sessions) > 1:
            repo.delete_session(sessions.pop(op[1] % len(sessions)))
        check(repo, everything)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ops, max_size=25))
def test_totals_are_the_sum_over_the_stored_rows_after_any_sequence(sequence):
    with tempfile.TemporaryDirectory() as tmp:
        repo = Repo(Path(tmp) / "t.db")
        try:
            run_ops(repo, sequence)
        finally:
            repo.close()


def test_a_streaming_reply_counts_once_with_its_last_usage(tmp_path):
    repo = Repo(tmp_path / "s.db")
    sid = repo.create_session("s").id
    row = repo.add_message(sid, "assistant", [], status="streaming", model="claude-opus-4-7")
    assert repo.usage_totals(sid) == {}
    for out in (1, 40, 90):
        repo.update_message(row.id, content=text("x" * out), usage=Usage(100, out, 10, 1000))
    repo.update_message(row.id, status="complete")
    assert repo.usage_totals(sid) == {"claude-opus-4-7": Usage(100, 90, 10, 1000)}
    assert table_rows(repo) == [(sid, "claude-opus-4-7", 1)]
    repo.delete_message(row.id)
    assert repo.usage_totals(sid) == {} and table_rows(repo) == []
    repo.close()


# --- load -----------------------------------------------------------------------------------------------------


def test_load_returns_one_entry_per_model_covered_rows_included(tmp_path):
    repo = Repo(tmp_path / "l.db")
    sid = repo.create_session("l", "claude-opus-4-7").id
    for i in range(60):
        repo.add_message(sid, "user", text(f"q{i}"))
        repo.add_message(sid, "assistant", text(f"a{i}"), model=MODELS[i % 4], usage=Usage(i, 2 * i, 3, 4))
    ids = [m.id for m in repo.messages(sid)]
    repo.add_compaction(sid, "summary", ids[99], "manual", {})  # the first 50 replies are behind the boundary
    loaded = repo.load(sid)
    assert len(loaded.history) == 20
    # None and '' are both "no model" (priced at the default): three entries for 60 replies.
    assert set(loaded.usage_totals) == {None, "claude-opus-4-7", "claude-haiku-4-5"}
    assert loaded.usage_totals == brute_force(repo.path, sid)
    assert sum(u.input_tokens for u in loaded.usage_totals.values()) == sum(range(60))
    repo.close()


# --- migration -------------------------------------------------------------------------------------------------


def test_migration_from_v2_builds_the_totals_and_keeps_every_row(tmp_path):
    path = tmp_path / "v2.db"
    db = pw.SqliteDatabase(str(path), pragmas={"foreign_keys": 1})
    migrations.upgrade(db, build_models(db), target=2)  # a database exactly as schema v2 left it
    assert migrations.schema_version(db) == 2
    with db.atomic():
        for sid in (1, 2, 3):
            db.execute_sql(
                "INSERT INTO sessions (id, title, model, created_at, updated_at, state) "
                "VALUES (?, 's', 'claude-opus-4-7', 1, 1, '{}')",
                (sid,),
            )
        n = 0
        for sid in (1, 2):
            for i in range(40):
                n += 1
                usage = None if i % 5 == 0 else json.dumps(Usage(i, i + 1, i + 2, i + 3).to_json())
                model = [None, "claude-opus-4-7", "claude-haiku-4-5", ""][i % 4] if usage else None
                db.execute_sql(
                    "INSERT INTO messages (session_id, role, content, usage, status, model, meta, "
                    "created_at) VALUES (?, ?, ?, ?, 'complete', ?, '{}', ?)",
                    (sid, "assistant" if usage else "user", json.dumps(text(f"m{n}")), usage, model, n),
                )
        db.execute_sql(
            "INSERT INTO compactions (session_id, summary, covers_through_message_id, trigger, stats, "
            "created_at) VALUES (1, 'sum', 30, 'manual', '{}', 1)"
        )
    before = db.execute_sql("SELECT * FROM messages ORDER BY id").fetchall()
    db.close()

    store = Store.open_sync(path)
    repo = store.repo
    assert migrations.schema_version(repo.db) == migrations.CURRENT_VERSION >= 3
    columns = (
        "id, session_id, role, content, usage, status, model, created_at, meta"  # later steps add columns
    )
    assert repo.db.execute_sql(f"SELECT {columns} FROM messages ORDER BY id").fetchall() == [
        (r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]) for r in before
    ]
    assert len(before) == 80 and len(repo.compactions(1)) == 1
    for sid in (1, 2, 3):
        assert repo.usage_totals(sid) == brute_force(path, sid)
    assert repo.usage_totals(3) == {}
    assert len(repo.usage_totals(1)) == 3  # None/'' merged, opus, haiku
    assert sorted(r[2] for r in table_rows(repo) if r[0] == 1) == [8, 8, 16]
    assert repo.integrity_check() == "ok"
    assert repo.db.execute_sql("PRAGMA foreign_key_check").fetchall() == []
    # The totals go on being kept from where the migration left them.
    repo.delete_message(2)
    repo.add_message(1, "assistant", text("new"), model="claude-opus-4-7", usage=Usage(1, 1, 1, 1))
    assert repo.usage_totals(1) == brute_force(path, 1)
    store.close_sync()


def test_migration_counts_unparsable_usage_as_none(tmp_path):
    path = tmp_path / "odd.db"
    db = pw.SqliteDatabase(str(path))
    migrations.upgrade(db, build_models(db), target=2)
    with db.atomic():
        db.execute_sql("INSERT INTO sessions (id, title, created_at, updated_at) VALUES (1, 's', 1, 1)")
        good = json.dumps(Usage(5, 6, 7, 8).to_json())
        for sid, usage in ((1, good), (1, "not json"), (1, "[1, 2]")):
            db.execute_sql(
                "INSERT INTO messages (session_id, role, content, usage, status, model, created_at) "
                "VALUES (?, 'assistant', '[]', ?, 'complete', 'm', 1)",
                (sid, usage),
            )
    db.close()
    repo = Repo(path)
    assert migrations.schema_version(repo.db) == migrations.CURRENT_VERSION
    assert repo.usage_totals(1) == {"m": Usage(5, 6, 7, 8)}
    assert table_rows(repo) == [(1, "m", 1)]
    repo.delete_message(2)  # the unparsable row leaves nothing behind either
    assert table_rows(repo) == [(1, "m", 1)]
    repo.close()


# --- the engine -------------------------------------------------------------------------------------------------


async def _old_way_cost(engine, sid: int) -> float:  # noqa: ANN001
    """What the engine used to do on every full load: price every stored reply."""
    rows = await engine.store.messages(sid)
    costs = [engine.catalog.cost(m.model or engine.settings.model, m.usage) for m in rows if m.usage]
    assert all(c is not None for c in costs)
    return sum(costs)


async def test_measured_cost_equals_pricing_every_reply(small_engine, fake_api):
    engine = small_engine
    store = engine.store
    sid = (await store.create_session("cost", "claude-sonnet-4-6")).id
    # A reply stored without a model (an older import) is priced at the settings' default model.
    await store.add_message(sid, "user", text("hello"))
    await store.add_message(sid, "assistant", text("hi"), usage=Usage(1234, 56, 78, 900))
    for i in range(7):
        fake_api.queue_text(reply(i))
    for i in range(3):
        await engine.send(sid, prompt(i))
    await engine.store.update_session(sid, model="claude-haiku-4-5")  # the session switches model
    for i in range(3, 6):
        await engine.send(sid, prompt(i))
    await wait_background(engine, sid)
    rows = await store.messages(sid)
    assert {m.model for m in rows if m.usage} == {None, "claude-sonnet-4-6", "claude-haiku-4-5"}

    expected = await _old_way_cost(engine, sid)
    assert expected > 0
    assert (await engine.measure(sid)).cost_session == pytest.approx(
        expected, rel=1e-12
    )  # kept by remember()
    view = engine.view(sid)
    view.invalidate()
    assert (await engine.measure(sid)).cost_session == pytest.approx(
        expected, rel=1e-12
    )  # priced from totals

    outcome = await engine.compact(sid, "manual")
    assert outcome.ok, outcome.message
    # The summary request is no stored reply, but the chat paid for it: the session's cost counts it apart.
    snap = await engine.measure(sid)
    summary = engine.catalog.info("claude-haiku-4-5").cost(Usage(**outcome.record.stats["summary_usage"]))
    assert snap.cost_compaction == pytest.approx(summary, rel=1e-9) and summary > 0
    expected = await _old_way_cost(engine, sid) + snap.cost_compaction
    assert snap.cost_session == pytest.approx(expected, rel=1e-12)

    # A full load after the compaction reads the totals, never the replies behind the boundary.
    statements: list[str] = []
    await store.call(lambda: store.repo.db.connection().set_trace_callback(statements.append))
    try:
        view.invalidate()
        g = await view.gather()
    finally:
        await store.call(lambda: store.repo.db.connection().set_trace_callback(None))
    assert g.cost == pytest.approx(expected, rel=1e-12)
    assert any("usage_totals" in s for s in statements), statements
    boundary = g.compaction.covers_through_message_id
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT") and '"messages"' in s]
    for s in reads:  # the history after the boundary, a count, the newest usage (LIMIT 1): no usage scan
        # (the compactions of the active path read each one's covered row by id: one row per compaction)
        by_id = 'FROM "compactions"' in s and '"t2"."id" = "t1"."covers_through_message_id"' in s
        assert f"> {boundary})" in s or "COUNT(" in s.upper() or "LIMIT 1" in s or by_id, s

    # Deleting a reply (the totals are the sum over stored rows) and undoing the compaction: still exact.
    last_reply = [m for m in await store.messages(sid) if m.usage][-1]
    await engine.delete_message(sid, last_reply.id)
    expected_after = await _old_way_cost(engine, sid) + snap.cost_compaction  # what was spent stays spent
    assert expected_after < expected
    assert (await engine.measure(sid)).cost_session == pytest.approx(expected_after, rel=1e-12)
    assert await engine.undo_compaction(sid)
    assert (await engine.measure(sid)).cost_session == pytest.approx(expected_after, rel=1e-12)


# --- price tiers: judged per request, not on the session's sum ---------------------------------------------------


async def _record_replies(store, sid: int, model: str, usages: list[Usage]) -> None:  # noqa: ANN001
    """Replies recorded as the reply recorder does: a streaming row, its usage written as it streams, then done."""
    for i, usage in enumerate(usages):
        await store.add_message(sid, "user", text(f"q{i}"))
        row = await store.add_message(sid, "assistant", [], status="streaming", model=model)
        await store.update_message(row.id, content=text("a"), usage=Usage(usage.input_tokens, 1, 0, 0))
        await store.update_message(row.id, content=text(f"a{i}"), status="complete", usage=usage)


async def test_a_price_cliff_is_judged_per_request_not_on_the_sessions_sum(engine):
    """Haiku 5.5 costs 5x on every token of a request whose prompt is over 100K: ten requests of 20K each stay
    below it, though their sum is 200K."""
    store = engine.store
    model = "claude-haiku-5-5"
    sid = (await store.create_session("tiers", model)).id
    await _record_replies(store, sid, model, [Usage(20_000, 500, 0, 0)] * 10)
    info = engine.catalog.info(model)
    one = info.cost(Usage(20_000, 500, 0, 0))
    assert one is not None and 10 * one == pytest.approx(0.0225)
    view = engine.view(sid)
    view.invalidate()  # a full load: priced from the store's totals
    snap = await engine.measure(sid)  # what the hover card shows and `precis context --json` prints
    assert snap.cost_session == pytest.approx(0.0225)
    data = snap.to_json()
    assert data["cost_session"] == pytest.approx(0.0225) and data["session_bill"]["total"] == pytest.approx(
        0.0225
    )
    assert sum(t.bill.total for t in snap.turns if t.bill) == pytest.approx(0.0225)  # the turn-by-turn bill
    g = await view.gather()
    assert g.cost == pytest.approx(0.0225)
    assert g.bill is not None and g.bill.total == pytest.approx(0.0225)
    assert g.bill.input == pytest.approx(0.02) and g.bill.output == pytest.approx(0.0025)
    # One request over the cliff pays the tier, alone: 120K in, 1K out at 5x.
    await _record_replies(store, sid, model, [Usage(120_000, 1_000, 0, 0)])
    over = 5 * (120_000 * 0.1 + 1_000 * 0.5) / 1_000_000
    view.invalidate()
    assert (await engine.measure(sid)).cost_session == pytest.approx(0.0225 + over)
    g = await view.gather()
    assert g.cost == pytest.approx(0.0225 + over)
    assert g.bill is not None and g.bill.total == pytest.approx(0.0225 + over)


def test_migration_to_v12_splits_an_old_sessions_totals_by_prompt_band(tmp_path):
    """An existing database's totals are rebuilt per prompt band from its stored replies: its sessions are priced
    per request too, and no row changes."""
    path = tmp_path / "v11.db"
    db = pw.SqliteDatabase(str(path), pragmas={"foreign_keys": 1})
    migrations.upgrade(db, build_models(db), target=11)
    model = "claude-haiku-5-5"
    with db.atomic():
        db.execute_sql(
            "INSERT INTO sessions (id, title, model, created_at, updated_at, state) "
            "VALUES (1, 's', ?, 1, 1, '{}')",
            (model,),
        )
        for i, usage in enumerate([Usage(20_000, 500, 0, 0)] * 10 + [Usage(100_000, 7, 0, 1)]):
            db.execute_sql(
                "INSERT INTO messages (session_id, role, content, usage, status, model, meta, "
                "created_at) VALUES (1, 'assistant', ?, ?, 'complete', ?, '{}', ?)",
                (json.dumps(text(f"a{i}")), json.dumps(usage.to_json()), model, i),
            )
        # One row per model at v11, as its repo kept it.
        db.execute_sql("INSERT INTO usage_totals VALUES (1, ?, 11, 300000, 5007, 0, 1)", (model,))
    before = db.execute_sql("SELECT id, content, usage FROM messages ORDER BY id").fetchall()
    db.close()

    store = Store.open_sync(path)
    repo = store.repo
    assert migrations.schema_version(repo.db) == migrations.CURRENT_VERSION >= 12
    assert repo.db.execute_sql("SELECT id, content, usage FROM messages ORDER BY id").fetchall() == before
    assert repo.usage_by_band(1) == {
        (model, 20_000): Usage(200_000, 5_000, 0, 0),
        (model, 101_000): Usage(100_000, 7, 0, 1),
    }
    assert repo.usage_totals(1) == brute_force(path, 1)
    assert repo.integrity_check() == "ok"
    store.close_sync()
