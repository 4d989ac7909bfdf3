"""Stop has one owner (the engine's task registry): it cancels whatever runs for the session — a turn, or a
manual, background or reactive compaction — and leaves the old state whole."""

from __future__ import annotations

import asyncio

import pytest

from desktop.engine.events import StatusChanged
from desktop.engine.turn.tasks import Activity
from tests.fakeapi import Fault
from tests.test_compaction_engine import is_summary_request

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process


def prose(n_words: int, seed: int) -> str:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    return " ".join(words[(i * 7 + seed) % len(words)] for i in range(n_words))


async def converse(engine, srv, sid: int, turns: int) -> None:
    for i in range(turns):
        srv.queue_text(f"answer {i}: " + prose(300, i))
        await engine.send(sid, f"question {i}: " + prose(300, i + 50))


async def reached(fault: Fault, timeout: float = 10.0) -> None:
    for _ in range(int(timeout / 0.01)):
        if fault.reached.is_set():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the held request never arrived")


def summary_requests(srv) -> list:
    return [r for r in srv.message_requests() if is_summary_request(r.body)]


def last_status(engine, sid: int) -> StatusChanged:
    return [e for e in engine.events if isinstance(e, StatusChanged) and e.session_id == sid][-1]


async def test_stop_cancels_a_manual_compaction_and_leaves_the_old_state_whole(small_engine, fake_api):
    sid = (await small_engine.store.create_session("m", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    before = await small_engine.measure(sid)
    records = await small_engine.store.compactions(sid)  # automatic ones, made while conversing
    hold = Fault.hold(after=1)
    fake_api.queue_fault(hold)
    job = asyncio.ensure_future(small_engine.compact(sid, "manual"))
    await reached(hold)
    assert small_engine.busy(sid) and small_engine.tasks.activity(sid) == Activity.COMPACTING
    assert last_status(small_engine, sid).activity == Activity.COMPACTING
    assert small_engine.stop(sid)  # on main this returned False while the summary was being written
    outcome = await job
    hold.release.set()
    assert not outcome.ok and "stopped" in outcome.message.lower()
    assert await small_engine.store.compactions(sid) == records
    assert not small_engine.busy(sid)
    status = last_status(small_engine, sid)
    assert status.activity == Activity.IDLE and status.stopped
    assert (await small_engine.measure(sid)).used == before.used  # nothing changed
    again = await small_engine.compact(sid, "manual")
    assert again.ok, again.message


async def test_stop_cancels_a_background_summary(small_engine, fake_api):
    small_engine.settings.prepare_ratio = 0.99  # nothing prepared while conversing...
    small_engine.settings.auto_compact_ratio = 0.95
    sid = (await small_engine.store.create_session("bg", "claude-test")).id
    await converse(small_engine, fake_api, sid, 4)
    small_engine.settings.prepare_ratio = 0.3  # ...and the next turn starts preparing one
    hold = Fault.hold(after=1)
    fake_api.queue_fault(Fault.slow(0), hold)  # the turn's own request, then the background summary
    fake_api.queue_text("fine: " + prose(300, 98))  # the context grows fast: a summary will be needed soon
    await small_engine.send(sid, "one more " + prose(300, 99))
    await reached(hold)
    assert small_engine.tasks.activity(sid) == Activity.PREPARING
    assert not small_engine.busy(sid)  # sending stays possible while a summary is prepared
    assert small_engine.stop(sid)
    await small_engine.tasks.wait(sid, "prepare")
    hold.release.set()
    assert small_engine.tasks.running(sid, "prepare") is None
    assert small_engine.tasks.activity(sid) == Activity.IDLE
    # Nothing was prepared: the next compaction asks for a summary of its own.
    asked = len(summary_requests(fake_api))
    outcome = await small_engine.compact(sid, "auto")
    assert outcome.ok, outcome.message
    assert outcome.record.trigger == "auto" and len(summary_requests(fake_api)) == asked + 1


async def test_stop_cancels_a_reactive_compaction_and_keeps_the_message(small_engine, fake_api):
    sid = (await small_engine.store.create_session("ptl", "claude-test")).id
    for i in range(7):
        await small_engine.store.add_message(
            sid, "user", [{"type": "text", "text": f"q{i} " + prose(200, i)}]
        )
        await small_engine.store.add_message(
            sid, "assistant", [{"type": "text", "text": f"a{i} " + prose(200, i)}]
        )
    fake_api.window = 5_400  # the provider's real window is smaller than the engine believes (8,000)
    small_engine.settings.auto_compact_ratio = 0.8  # no automatic summary first: the request must overflow
    hold = Fault.hold(after=1)
    fake_api.queue_fault(Fault.slow(0), hold)  # the turn's request overflows; the recovery's summary is held
    turn = asyncio.ensure_future(small_engine.send(sid, "and now?"))
    await reached(hold)
    assert small_engine.tasks.activity(sid) == Activity.RECOVERING
    assert small_engine.stop(sid)
    assert await turn is None
    hold.release.set()
    assert await small_engine.store.compactions(sid) == []  # the old state, whole
    assert len(summary_requests(fake_api)) == 1
    stored = await small_engine.store.messages(sid)
    assert stored[-1].role == "user" and stored[-1].content[0]["text"] == "and now?"  # retryable
    assert not small_engine.busy(sid) and last_status(small_engine, sid).stopped


async def test_compact_now_is_offered_exactly_when_the_compactor_would_compact(small_engine, fake_api):
    seen = set()
    for turns in range(0, 7):
        sid = (await small_engine.store.create_session(f"n{turns}", "claude-test")).id
        await converse(small_engine, fake_api, sid, turns)
        snapshot = await small_engine.measure(sid)
        outcome = await small_engine.compact(sid, "manual")
        assert snapshot.can_compact == outcome.ok, (turns, snapshot.compact_reason, outcome.message)
        if not outcome.ok:
            assert outcome.message == snapshot.compact_reason
        seen.add(outcome.ok)
    assert seen == {True, False}  # both sides of the rule were exercised
