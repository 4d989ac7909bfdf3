"""Engine I/O targets, counted (not timed): the benchmark's scenario on this tree, in-process.

One plain turn and one manual compaction after a six-turn warm-up in an 8,000-token window (see
tests/bench/bench_engine_io.py, which also runs the old engine for the before/after table).
"""

from __future__ import annotations

from collections import Counter

from tests.bench.bench_engine_io import (
    AfterMeter,
    breakdown,
    check_targets,
    http_mark,
    phase_requests,
    queue_replies,
    run_scenario,
)


async def test_plain_turn_and_manual_compaction_meet_the_io_targets(small_engine, fake_api):
    queue_replies(fake_api)
    result = await run_scenario(
        small_engine, small_engine.store, AfterMeter(small_engine), http_mark(fake_api.base_url)
    )
    result["requests"] = phase_requests(fake_api.requests)
    seen = "; ".join(
        f"{phase}: {result[phase]['round_trips']} round trips, {result[phase]['gathers']} gathers, "
        f"{result[phase]['measures']} measures, {result['requests'][phase]} "
        f"[{breakdown(result, phase)}]"
        for phase in ("turn", "compact")
    )

    assert result["turn_ok"] and result["compact_ok"], result["compact_message"]
    # The scenario is what it says: the turn is one chat request, the compaction one summary request.
    assert result["requests"]["turn"] == {"chat": 1, "summary": 0, "count_tokens": 0, "model_calls": 1}, seen
    assert result["requests"]["compact"] == {"chat": 0, "summary": 1, "count_tokens": 0, "model_calls": 1}, (
        seen
    )
    assert fake_api.pending_replies == 0
    # Every database call went through Store.call / Store.run (so the names below are all of them).
    assert "unlogged_round_trips" not in result["turn"] and "unlogged_round_trips" not in result["compact"], (
        seen
    )
    turn, compact = Counter(result["turn"]["calls"]), Counter(result["compact"]["calls"])
    assert turn["add_user_message"] == 1 and turn["add_message"] == 1, seen  # the user row and the reply row
    assert compact["add_compaction"] == 1, seen  # the boundary

    missed = [
        f"{phase} {name} = {value} > {limit}"
        for phase, name, value, limit, met in check_targets(result)
        if not met
    ]
    assert not missed, f"{missed}; {seen}"


async def test_reading_a_chats_state_does_not_gather_its_history(engine, fake_api):
    """The window reads the workspace and instructions on every chat open; a gather would decode every row
    (the 50k-message open peaked at 670 MB instead of 160 MB)."""
    sid = (await engine.store.create_session("state", "claude-sonnet-4-6")).id
    await engine.update_state(sid, {"workspace": "/w"})
    before = engine.shared.counts["gathers"]
    assert (await engine.session_state(sid))["workspace"] == "/w"
    assert engine.shared.counts["gathers"] == before
