"""The per-row estimate columns: the engine's numbers for each row, and a gauge read from them at open."""

from __future__ import annotations

import pytest
from msgspec import structs

from desktop.engine import compaction as cp
from desktop.engine.metering.measure import row_estimate
from desktop.engine.turn.session import SessionView, estimate_key, segments
from desktop.engine.types import Usage

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process


def rows(n: int, *, big_every: int = 0) -> list[dict]:
    """``n`` rows: prompts, tool rounds (some results over the ingest limit), replies with usage."""
    out: list[dict] = []
    for i in range(n):
        if i % 4 == 0:
            out.append(
                {"role": "user", "content": [{"type": "text", "text": f"question {i} " + "why " * (i % 30)}]}
            )
        elif i % 4 == 1:
            out.append(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "let me look"},
                        {
                            "type": "tool_use",
                            "id": f"t{i}",
                            "name": "Read",
                            "input": {"file_path": f"/f{i}.py"},
                        },
                    ],
                    "model": "claude-sonnet-4-6",
                    "meta": {"stop_reason": "tool_use"},
                }
            )
        elif i % 4 == 2:
            body = "x = 1\n" * (20_000 if big_every and i % big_every == 2 else 40)
            out.append(
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": f"t{i - 1}", "content": body}],
                }
            )
        else:
            out.append(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"answer {i} " * 5}],
                    "model": "claude-sonnet-4-6",
                    "usage": Usage(3, 20, 10, 1000 + i),
                    "meta": {"stop_reason": "end_turn"},
                }
            )
    return out


def stored(engine, message_id: int) -> tuple:  # noqa: ANN001
    row = engine.store.repo.m.Message.get_by_id(message_id)
    return row.est_key, row.est, row.est_results, row.est_media, row.est_trimmed


async def test_stored_numbers_are_the_engines_estimate_of_each_row_as_requests_carry_it(engine):
    sid = (await engine.store.create_session("est", "claude-sonnet-4-6")).id
    await engine.store.add_messages(sid, rows(120, big_every=12))
    view = engine.view(sid)
    g = await view.gather()
    horizons = {"clear": g.sendable[40].id, "old": g.sendable[20].id, "recent": g.sendable[60].id}
    view.state_changed(await engine.store.update_state(sid, {"horizons": horizons}))
    g = view.shape()
    await view.gather()  # the numbers go with the next read
    family = engine.catalog.info(g.model).family
    limit = view.ingest_limit(g.model)
    assert any(mid == g.sendable[2].id for mid, _ in g.changed)  # the huge result is capped
    for m, raw in zip(g.sendable, [r for r in g.history if r.sendable], strict=True):
        est = row_estimate(m.content, family)
        trimmed = any(mid == m.id for mid, _ in g.changed)
        assert stored(engine, m.id) == (
            estimate_key(family, limit, horizons, raw),
            est.tokens,
            est.results,
            est.media,
            int(trimmed),
        )


async def test_a_content_edit_clears_the_stored_numbers(engine):
    sid = (await engine.store.create_session("edit", "claude-sonnet-4-6")).id
    await engine.store.add_messages(sid, rows(8))
    view = engine.view(sid)
    g = await view.gather()
    await view.gather()
    target = g.sendable[0]
    assert stored(engine, target.id)[0] is not None
    await engine.store.update_message(target.id, content=[{"type": "text", "text": "changed"}])
    assert stored(engine, target.id) == (None, None, None, None, None)


async def test_opening_reads_the_gauge_from_the_columns_and_decodes_only_what_lacks_numbers(engine):
    sid = (await engine.store.create_session("open", "claude-sonnet-4-6")).id
    await engine.store.add_messages(sid, rows(900, big_every=40))
    horizons = {"clear": 300, "old": 100}
    await engine.store.update_state(sid, {"horizons": horizons})

    first = SessionView(sid, engine.shared)
    g1 = await first.glance()  # no numbers stored yet: every row is decoded once, and its numbers stored
    family = engine.catalog.info(g1.model).family
    limit = first.ingest_limit(g1.model)
    ov = await engine.store.overview(sid, segments(family, limit, horizons), 200)
    assert ov.unknown == [] and ov.count == 900 and len(ov.newest) == 200

    second = SessionView(sid, engine.shared)
    g2 = await second.glance()
    assert not second.loaded
    assert g2.ledger.count == 900 and len(g2.ledger.rows) == 200 and g2.ledger.older == 700

    full = SessionView(sid, engine.shared)
    g3 = await full.gather()
    for g in (g1, g2):
        assert (g.ledger.tokens, g.ledger.results, g.ledger.media) == (
            g3.ledger.tokens,
            g3.ledger.results,
            g3.ledger.media,
        )
        assert {mid for mid, _ in g.changed} == {mid for mid, _ in g3.changed}
        snap, exact = second.snapshot(g), full.snapshot(g3)
        assert structs.replace(snap, can_compact=True, compact_reason="") == structs.replace(
            exact, can_compact=True, compact_reason=""
        )
        assert snap.used == exact.used and snap.breakdown == exact.breakdown and snap.source == exact.source

    # Through the engine: the window's open path measures without loading the session.
    view = engine.view(sid)
    assert not view.loaded
    published = await engine.publish_context(sid)
    assert not view.loaded and published.used == full.snapshot(g3).used
    assert published.cost_session == full.snapshot(g3).cost_session


async def test_the_open_reading_is_exact_when_the_newest_rows_are_all_there(engine, fake_api):
    sid = (await engine.store.create_session("small", "claude-sonnet-4-6")).id
    for i in range(4):
        fake_api.queue_text(f"reply {i} " * 30)
        await engine.send(sid, f"message {i} " * 40)
    fresh = SessionView(sid, engine.shared)
    g = await fresh.glance()
    exact = await engine.measure(sid)
    snap = fresh.snapshot(g, refusal=engine.compactor.refusal(g))
    # The engine adds the clock's fields (threshold, cache expiry, next-turn costs) to the measured reading.
    clock = (
        "compact_at_tokens",
        "compact_percent",
        "compact_capped",
        "cache_expires_at",
        "cache_ttl",
        "next_cost_warm",
        "next_cost_cold",
    )
    assert structs.replace(exact, **{f: getattr(snap, f) for f in clock}) == snap
    assert exact.compact_at_tokens == engine.compactor.threshold(g.model)
    assert cp.problems(engine.view(sid).request(await engine.view(sid).gather())["messages"]) == []


async def test_an_import_stores_the_numbers_the_engine_would_give_its_rows(engine):
    from desktop.engine.history.storage import ImportPlan
    from desktop.engine.metering.measure import new_row_estimate

    plan = ImportPlan("imported", "claude-sonnet-4-6", rows(60))
    for row in plan.rows:
        row["estimate"] = new_row_estimate(row["content"], plan.model)
    session, _ = await engine.store.import_session(plan)
    before = {m.id: stored(engine, m.id) for m in await engine.store.messages(session.id)}
    assert all(v[0] for v in before.values())
    view = engine.view(session.id)
    await view.gather()
    assert view._unsaved == {}  # the view finds every row's numbers already right
    await view.gather()
    assert {mid: stored(engine, mid) for mid in before} == before
