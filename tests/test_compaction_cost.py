"""A chat's cost is every request made for it, as the provider bills them: its turns and what its compaction spent
(summaries, their section requests, refused ones too), and the part compaction took is said apart."""

from __future__ import annotations

import pytest

from desktop.engine.metering.bill import compaction_spend
from desktop.engine.metering.context import context_report
from desktop.engine.types import Usage
from tests.conftest import _open_engine
from tests.fakeapi import FakeAnthropic
from tests.test_compaction_engine import converse, summary_requests

MODEL = "claude-sonnet-4-6"  # priced in the catalog


def _billed(engine, requests) -> float:  # noqa: ANN001
    info = engine.catalog.info(MODEL)
    return sum(info.cost(Usage(**r.usage), prompt_tokens=r.prompt_tokens) for r in requests if r.usage)


@pytest.fixture
async def priced(monkeypatch):
    with FakeAnthropic(8_000) as srv:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "8000")
        async with _open_engine({"max_output_tokens": 1024, "model": MODEL}) as engine:
            yield engine, srv


async def test_the_session_cost_is_every_request_the_server_billed_summaries_included(priced):
    engine, srv = priced
    sid = (await engine.store.create_session("c", MODEL)).id
    await converse(engine, srv, sid, 14)
    assert await engine.store.compactions(sid), "the scenario must compact"
    assert summary_requests(srv), "... with a summary"
    snap = await engine.measure(sid)
    everything = _billed(engine, srv.message_requests())
    summaries = _billed(engine, summary_requests(srv))
    assert summaries > 0
    assert snap.cost_session == pytest.approx(everything, rel=1e-6)
    assert snap.cost_compaction == pytest.approx(summaries, rel=1e-6)
    # Read again from the store (a new view, as at the next start), the same figures.
    engine.view(sid).invalidate()
    again = await engine.measure(sid)
    assert again.cost_session == pytest.approx(everything, rel=1e-6)
    assert again.cost_compaction == pytest.approx(summaries, rel=1e-6)
    assert "of which compaction" in context_report(again)


async def test_a_refused_summary_is_paid_for_and_counted(priced):
    engine, srv = priced
    sid = (await engine.store.create_session("r", MODEL)).id
    await converse(engine, srv, sid, 6)
    before = (await engine.measure(sid)).cost_session
    srv.queue_summary(*["I cannot summarise this conversation."] * 8)  # the summary and any section asked for
    outcome = await engine.compact(sid, "manual")
    assert not outcome.ok
    asked = summary_requests(srv)
    assert asked
    snap = await engine.measure(sid)
    assert snap.cost_compaction == pytest.approx(_billed(engine, asked), rel=1e-6)
    assert snap.cost_session == pytest.approx(before + snap.cost_compaction, rel=1e-6)


async def test_each_turn_that_paid_for_a_compaction_shows_its_cost_on_its_bill(priced):
    engine, srv = priced
    sid = (await engine.store.create_session("t", MODEL)).id
    paid_turns = 0
    for turn in range(14):
        asked = len(summary_requests(srv))
        await converse(engine, srv, sid, 1, start=turn)
        await engine.tasks.wait(sid, "prepare")
        new = summary_requests(srv)[asked:]
        snap = await engine.measure(sid)
        last = snap.last_turn
        assert last is not None
        if last.compaction is not None:
            paid_turns += 1
            # Made in this turn, or in the background after the previous one: billed on this turn.
            assert last.compaction.total > 0
            assert "and its compaction" in context_report(snap)
        elif new:
            # Made in the background after this turn's reply: the next turn's bill carries it.
            continue
    assert paid_turns, "the scenario must compact within a turn"
    # Every compaction request is on some turn's bill or still waiting for the next request.
    rows = await engine.store.messages(sid)
    billed = sum(
        engine.catalog.info(m).cost(u, prompt_tokens=u.prompt_tokens)
        for row in rows
        for m, u in compaction_spend(row)
    )
    waiting = sum(
        engine.catalog.info(m).cost(u, prompt_tokens=u.prompt_tokens)
        for m, u in engine.view(sid).take_unbilled()
    )
    assert billed + waiting == pytest.approx(_billed(engine, summary_requests(srv)), rel=1e-6)


async def test_a_route_estimate_counts_the_section_requests_a_refused_summary_may_add(priced):
    from desktop.engine.compaction import sections
    from tests.test_summary_junk import GOOD, everywhere
    from tests.test_summary_salvage import converse as converse_about_drafts

    engine, srv = priced
    sid = (await engine.store.create_session("s", MODEL)).id
    await converse_about_drafts(engine, srv, sid, 6)  # what the sections below are about
    # One sentence under every heading (refused), then each section asked for alone answered well.
    srv.queue_summary(
        everywhere("The user is working on the project."), *[GOOD[key] for key in sections.KEYS]
    )
    outcome = await engine.compact(sid, "manual")
    assert outcome.ok, outcome.message
    stats = outcome.record.stats
    assert stats["section_requests"] == len(sections.KEYS)
    chosen = stats["route_estimates"][stats["summary_route"]]
    # The bare estimate is one request's; the route's bound adds the section requests and holds what was paid.
    assert stats["route_most"] > chosen
    assert stats["summary_cost"] <= stats["route_most"]
    paid = _billed(engine, summary_requests(srv)[-7:])  # the summary and its six section requests
    assert paid == pytest.approx(stats["summary_cost"], rel=1e-3) and paid <= stats["route_most"]
