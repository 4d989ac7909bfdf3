"""The preview before Compact now: the compactor's own ``plan`` says what a compaction would summarise, keep
verbatim and carry pinned, with the estimated saving and cost; the compaction then does exactly that. Excluding
a message keeps it verbatim (it is pinned); a focus reaches the summary request."""

from __future__ import annotations

from desktop.engine import messages as M
from tests.test_compaction_engine import chat_requests, converse, summary_requests


async def _kept_ids(engine, sid: int) -> tuple[int, ...]:
    g = await engine.view(sid).gather()
    return tuple(m.id for m in g.sendable)


async def test_the_preview_equals_what_the_compaction_then_does(small_engine, fake_api):
    sid = (await small_engine.store.create_session("plan", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    plan = await small_engine.plan_compaction(sid)
    assert plan.refusal is None and plan.head and plan.kept
    assert plan.before > plan.saving >= 0 and plan.cost is not None and plan.route
    outcome = await small_engine.compact(sid, "manual")
    assert outcome.ok and outcome.record is not None, outcome.message
    assert outcome.record.covers_through_message_id == plan.covers_through
    assert outcome.record.stats["messages"] == len(plan.head)
    # It never promises more than it saves: the user's texts it keeps verbatim beside the summary are counted. (A
    # head this short is summarised in fewer tokens than the typical summary the estimate takes off.)
    assert plan.saving <= outcome.record.stats["tokens_saved"] + 0.05 * plan.before
    assert await _kept_ids(small_engine, sid) == plan.kept


async def test_summarise_up_to_here_uses_the_same_plan(small_engine, fake_api):
    sid = (await small_engine.store.create_session("plan", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    rows = await small_engine.store.messages(sid)
    here = [m for m in rows if m.role == "user"][3].id
    plan = await small_engine.plan_compaction(sid, before_message=here)
    assert plan.covers_through < here and plan.kept[0] == here
    outcome = await small_engine.compact(sid, "manual", before_message=here)
    assert outcome.ok and outcome.record is not None
    assert outcome.record.covers_through_message_id == plan.covers_through
    assert await _kept_ids(small_engine, sid) == plan.kept
    first = rows[0].id
    assert (await small_engine.plan_compaction(sid, before_message=first)).refusal == M.say(M.NOTHING_BEFORE)


async def test_nothing_to_compact_is_a_plan_that_refuses(small_engine, fake_api):
    sid = (await small_engine.store.create_session("plan", "claude-test")).id
    await converse(small_engine, fake_api, sid, 1)
    plan = await small_engine.plan_compaction(sid)
    assert plan.refusal == M.say(M.NOTHING_YET) and not plan.head


async def test_an_excluded_message_stays_verbatim_and_is_shown_pinned(small_engine, fake_api):
    sid = (await small_engine.store.create_session("plan", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    plan = await small_engine.plan_compaction(sid)
    answer = next(m for m in plan.head if m.role == "assistant")
    text = answer.content[0]["text"]
    outcome = await small_engine.compact(sid, "manual", exclude=[answer.id])
    assert outcome.ok, outcome.message
    assert [p.message_id for p in await small_engine.pins(sid)] == [answer.id]
    await converse(small_engine, fake_api, sid, 1, start=6)
    assert text in str(chat_requests(fake_api)[-1].body["messages"])


async def test_the_plan_lists_the_pins_the_summary_will_carry(small_engine, fake_api):
    sid = (await small_engine.store.create_session("plan", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    plan = await small_engine.plan_compaction(sid)
    answer = next(m for m in plan.head if m.role == "assistant")
    await small_engine.pin_message(sid, answer.id)
    assert (await small_engine.plan_compaction(sid)).pinned == (answer.id,)


async def test_a_focus_reaches_the_summary_request(small_engine, fake_api):
    sid = (await small_engine.store.create_session("plan", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    outcome = await small_engine.compact(sid, "manual", focus="the staging database port")
    assert outcome.ok
    assert "the staging database port" in str(summary_requests(fake_api)[-1].body)
