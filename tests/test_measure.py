"""Context measurement through the engine: one number for the gauge, /context and every decision."""

from __future__ import annotations

import pytest

from desktop.engine.config.secrets import Credentials
from desktop.engine.metering.context import ContextSnapshot, context_report, state_for
from desktop.engine.turn.chat import ChatEngine
from tests.requests import request_of

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process


def test_state_thresholds():
    assert state_for(79, 79, 100) == "normal"
    assert state_for(80, 80, 100) == "warning"
    assert state_for(50, 81, 100) == "warning"  # the next-turn ratio counts too
    assert state_for(94, 95, 100) == "critical"
    assert state_for(10, 10, None) == "unknown"


async def test_snapshot_after_a_turn_is_anchored_on_real_usage(engine, fake_api):
    sid = (await engine.store.create_session("m", "claude-sonnet-4-6")).id
    fake_api.queue_text("reply " * 50)
    reply = await engine.send(sid, "hello " * 100)
    snap = await engine.measure(sid)
    assert snap.source == "api"
    assert snap.last_usage == reply.usage
    # used = the real prompt of that request + an estimate of the reply it produced.
    assert reply.usage.prompt_tokens < snap.used < reply.usage.prompt_tokens + 120
    assert sum(v for k, v in snap.breakdown.items() if k not in ("free", "reserved_output")) == snap.used
    assert sum(snap.breakdown.values()) == snap.window  # used + free + reserved fill the window
    assert snap.cost_last_turn is not None and snap.cost_session == pytest.approx(snap.cost_last_turn)
    assert "Used" in context_report(snap) and "Breakdown" in context_report(snap)


async def test_draft_raises_the_next_turn_estimate(engine, fake_api):
    sid = (await engine.store.create_session("d", "claude-sonnet-4-6")).id
    fake_api.queue_text("ok")
    await engine.send(sid, "hi")
    plain = await engine.measure(sid)
    drafted = await engine.measure(sid, draft="word " * 400)
    assert drafted.used == plain.used
    assert drafted.next_turn > plain.next_turn + 300


async def test_unknown_model_asks_the_provider_then_says_capacity_unknown(engine, fake_api):
    sid = (await engine.store.create_session("u", "claude-test")).id  # the server's models endpoint knows it
    snap = await engine.measure(sid)
    assert snap.window == fake_api.window  # learned from models.retrieve()
    sid2 = (await engine.store.create_session("v", "totally-unknown-model")).id  # the provider answers 404
    snap2 = await engine.measure(sid2)
    assert snap2.window is None and snap2.state in ("unknown", "normal")
    assert "capacity unknown" in context_report(snap2)


async def test_anchor_is_dropped_after_a_compaction(engine, fake_api):
    sid = (await engine.store.create_session("c", "claude-sonnet-4-6")).id
    for i in range(8):  # ~8 x 6K tokens: more than the 40K verbatim tail
        fake_api.queue_text(f"answer {i} " + "lorem ipsum " * 200)
        await engine.send(sid, f"question {i} " + "dolor sit amet " * 1600)
    assert (await engine.measure(sid)).source == "api"
    outcome = await engine.compact(sid, "manual")
    assert outcome.ok, outcome.message
    after = await engine.measure(sid)
    assert after.source == "estimate" and after.summary_active and after.compactions == 1
    assert after.breakdown["summary"] > 0 and after.breakdown["pinned"] > 0


async def test_exact_count_is_asked_near_the_threshold(engine, fake_api):
    sid = (await engine.store.create_session("x", "claude-sonnet-4-6")).id
    await engine.store.add_message(sid, "user", [{"type": "text", "text": "word " * 2000}])
    estimate = (await engine.measure(sid)).used
    budget = engine.compactor.budget("claude-sonnet-4-6")
    engine.settings.auto_compact_ratio = (
        estimate * 1.01 / budget
    )  # the estimate lands 1 % under the threshold
    fake_api.queue_text("fine")
    await engine.retry(sid)
    assert [r.path for r in fake_api.requests].count("/v1/messages/count_tokens") == 1


async def test_calibration_persists_across_restarts(engine, fake_api):
    sid = (await engine.store.create_session("cal", "claude-sonnet-4-6")).id
    for i in range(3):
        fake_api.queue_text("ok")
        await engine.send(sid, f"{i} " + "calibrate me please " * 400)
    factor = engine.calibration.factor("claude-sonnet-4-6")
    assert factor != 1.0
    fresh = ChatEngine(
        engine.store,
        engine.paths,
        engine.settings,
        Credentials(api_key="test-key"),
        provider_factory=engine.provider_factory,
    )
    await fresh.measure(sid)
    assert fresh.calibration.factor("claude-sonnet-4-6") == pytest.approx(factor)
    await fresh.close()


def test_snapshot_json_has_every_field():
    snap = ContextSnapshot(model="m", window=1000, max_output=100, used=500, next_turn=600, source="api")
    data = snap.to_json()
    for key in ("model", "window", "used", "next_turn", "state", "percent", "breakdown", "source"):
        assert key in data


async def test_typing_adds_the_draft_to_the_latest_measurement(engine, fake_api):
    sid = (await engine.store.create_session("d2", "claude-sonnet-4-6")).id
    fake_api.queue_text("ok")
    await engine.send(sid, "hi")
    drafted = await engine.publish_draft(sid, "word " * 400)
    full = await engine.measure(sid, draft="word " * 400)
    assert (drafted.used, drafted.next_turn) == (full.used, full.next_turn)
    assert (await engine.publish_draft(sid, "")).next_turn == (await engine.measure(sid)).next_turn


async def test_spilled_content_is_marked_the_same_on_every_measurement(engine, fake_api):
    sid = (await engine.store.create_session("spill", "claude-sonnet-4-6")).id
    small = await engine.store.add_message(sid, "user", [{"type": "text", "text": "short"}])
    await engine.store.add_message(
        sid, "assistant", [{"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}]
    )
    huge = await engine.store.add_message(
        sid,
        "user",
        [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x" * 60_000},
            {"type": "text", "text": "question"},
        ],
    )
    first = await engine.measure(sid)
    second = await engine.measure(sid)
    assert first.trimmed == second.trimmed == (huge.id,)
    request = await request_of(engine, sid)
    assert request["messages"][-1]["content"][-1]["text"] == "question"  # the small block is sent as is
    assert small.id not in first.trimmed
