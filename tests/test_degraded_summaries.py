"""When every summary is unusable (a small local model refuses or writes garbage), the chat still reads the
prompt cache: it trims in batches down to a low-water mark, not a few messages at every turn; the breaker retries
one summary now and then; and the chat says once that summaries are failing with that model."""

from __future__ import annotations

import pytest

from desktop.engine.events import Notice, TurnError
from tests.test_compaction_engine import chat_requests, converse, summary_requests
from tests.test_summary_degenerate import DEGENERATE

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process

TURNS = 40
LONG_RUN = 60
TRIM_NOTE = "earlier messages were removed"


def _trimmed(body: dict) -> bool:
    return TRIM_NOTE in str(body["messages"])


async def _degraded_run(engine, srv, turns: int = TURNS) -> tuple[int, list]:
    sid = (await engine.store.create_session("degraded", "claude-test")).id
    srv.queue_summary(*[DEGENERATE[i % 2] for i in range(400)])  # every summary request: refused or garbage
    await converse(engine, srv, sid, turns)
    return sid, chat_requests(srv)


async def test_every_summary_unusable_most_requests_after_the_first_trim_read_the_cache(
    small_engine, fake_api
):
    sid, requests = await _degraded_run(small_engine, fake_api)
    assert not [e for e in small_engine.events if isinstance(e, TurnError)]
    first = next(i for i, r in enumerate(requests) if _trimmed(r.body))
    after = requests[first:]
    read = [r for r in after if (r.usage or {}).get("cache_read_input_tokens", 0) > 0]
    share = len(read) / len(after)
    # The cache the fake server models (prefix keys, breakpoints, TTL) reports what each request read.
    assert share >= 0.60, f"{len(read)} of {len(after)} requests after the first trim read the cache"


async def test_with_summaries_failing_the_breaker_retries_one_now_and_then_and_the_chat_says_so_once(
    small_engine, fake_api
):
    # Compactions come when they pay (compaction.schedule), near the end of the room in an 8K window: 60 turns
    # see the breaker open and retry.
    sid, _requests = await _degraded_run(small_engine, fake_api, LONG_RUN)
    asked = len(summary_requests(fake_api))
    state = await small_engine.store.get_state(sid)
    # The breaker opened at 3 failures and then tried again (each retry failed too): not one summary request a
    # turn, and not none for the rest of the chat.
    assert state["breaker_failures"] > 3
    assert asked < LONG_RUN // 2, asked
    failing = [
        e
        for e in small_engine.events
        if isinstance(e, Notice)
        and e.session_id == sid
        and e.level == "warning"
        and ("Summar" in e.text or "summar" in e.text)
    ]
    assert len(failing) == 1, [e.text for e in failing]
    assert "claude-test" in failing[0].text  # says with which model


async def test_the_policy_decides_the_trim_and_when_the_breaker_retries_a_summary(small_engine, fake_api):
    from desktop.engine.compaction.compactor import BREAKER_RETRY_TRIMS, Step

    sid = (await small_engine.store.create_session("policy", "claude-test")).id
    small_engine.settings.auto_compact_ratio = 0.95  # no compaction while the chat is written
    await converse(small_engine, fake_api, sid, 8)
    small_engine.settings.auto_compact_ratio = 0.3  # now past the threshold
    conv = await small_engine._open(sid)
    compactor = (await conv.ready()).compactor

    async def decide():
        conv.view.invalidate()
        g = await conv.view.gather()
        return g, compactor.before_call(g, conv.view.used(g)[0], "exact", None, cleared=True)

    g, decision = await _decide_with(small_engine, sid, decide, {"breaker_failures": 0})
    assert decision.step is Step.SUMMARISE
    g, decision = await _decide_with(small_engine, sid, decide, {"breaker_failures": 3})
    assert decision.step is Step.TRIM and decision.target == compactor.low_water(g)
    assert decision.target <= 0.5 * compactor.threshold(g.model)  # a batch: well under the threshold
    g, decision = await _decide_with(small_engine, sid, decide, {"breaker_trims": BREAKER_RETRY_TRIMS})
    assert decision.step is Step.SUMMARISE  # the breaker's one retry


async def _decide_with(engine, sid, decide, state):
    await engine.store.update_state(sid, state)
    return await decide()
