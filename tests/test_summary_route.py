"""Summary requests that read the prompt cache, the route picked by cost, the threshold the user sets, the
cache-expiry clock and the idle summary before it lapses."""

from __future__ import annotations

import json

import pytest

from desktop.engine.config.settings import Settings
from desktop.engine.types import Usage
from tests.conftest import _open_engine
from tests.test_compaction_engine import chat_requests, converse, prose, summary_requests

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process

MODEL = "claude-sonnet-4-6"  # priced in the catalog


async def test_a_warm_summary_is_the_chats_request_plus_an_instruction_and_reads_the_cache(
    small_engine, fake_api
):
    sid = (await small_engine.store.create_session("c", MODEL)).id
    await converse(small_engine, fake_api, sid, 5)
    last_chat = chat_requests(fake_api)[-1].body
    outcome = await small_engine.compact(sid, "manual")
    assert outcome.ok, outcome.message
    asked = summary_requests(fake_api)[-1]
    # Same system and the chat's messages as they were, then the instruction block at the very end.
    assert asked.body["system"] == last_chat["system"] and asked.body["model"] == MODEL
    assert asked.body["messages"][: len(last_chat["messages"]) - 1] == last_chat["messages"][:-1]
    assert "<precis-summary-request>" in asked.body["messages"][-1]["content"][-1]["text"]
    assert asked.usage["cache_read_input_tokens"] > 0  # the prefix was read, not written again
    stats = outcome.record.stats
    assert stats["summary_route"] == "cached" and set(stats["route_estimates"]) == {"cached", "transcript"}
    assert stats["summary_usage"]["cache_read_input_tokens"] == asked.usage["cache_read_input_tokens"]
    assert stats["summary_cost"] > 0 and stats["saving_per_turn"] > 0


async def test_a_cold_cache_and_a_cheaper_small_model_take_the_transcript_route(small_engine, fake_api):
    small_engine.settings.small_model = "claude-haiku-4-5"
    sid = (await small_engine.store.create_session("t", MODEL)).id
    await converse(small_engine, fake_api, sid, 5)
    now = small_engine.clock()
    small_engine.clock = lambda: now + 600  # ten minutes later: the 5-minute cache has lapsed
    outcome = await small_engine.compact(sid, "manual")
    assert outcome.ok, outcome.message
    asked = summary_requests(fake_api)[-1]
    assert (
        "<precis-summary-request>" in str(asked.body["system"]) and asked.body["model"] == "claude-haiku-4-5"
    )
    stats = outcome.record.stats
    assert stats["summary_route"] == "transcript"
    assert stats["route_estimates"]["transcript"] < stats["route_estimates"]["cached"]


async def test_the_users_threshold_is_a_percent_and_a_cap_per_model(small_engine, fake_api):
    compactor = small_engine.compactor
    default = compactor.threshold(MODEL)
    small_engine.settings.model_overrides = {MODEL: {"compact_percent": 90, "compact_at_tokens": 2_500}}
    assert compactor.threshold(MODEL) == 2_500 < default
    small_engine.settings.model_overrides = {MODEL: {"compact_percent": 20}}
    assert compactor.threshold(MODEL) == int(compactor.budget(MODEL) * 0.2)
    assert compactor.threshold("claude-other") == default  # other models keep the default
    sid = (await small_engine.store.create_session("th", MODEL)).id
    await converse(small_engine, fake_api, sid, 12)
    snap = await small_engine.measure(sid)
    assert snap.compact_at_tokens == compactor.threshold(MODEL)
    first = (await small_engine.store.compactions(sid))[0]  # a low threshold compacts early
    assert first.trigger == "auto" and first.stats["tokens_before"] < default


def test_threshold_overrides_are_checked_in_settings_json(tmp_path):
    from desktop.engine.config.settings import Paths

    paths = Paths(tmp_path / "c", tmp_path / "d", tmp_path / "k")
    paths.ensure()
    paths.settings_file.write_text(
        json.dumps({"model_overrides": {MODEL: {"compact_percent": 150, "compact_at_tokens": 200_000}}})
    )
    settings = Settings.load(paths, env={})
    assert settings.model_overrides[MODEL] == {"compact_percent": 99.0, "compact_at_tokens": 200_000}
    assert any("compact_percent" in p for p in settings.problems)


async def test_the_snapshot_says_when_the_cache_expires_and_what_the_next_turn_costs(small_engine, fake_api):
    sid = (await small_engine.store.create_session("e", MODEL)).id
    assert (await small_engine.measure(sid)).cache_expires_at is None  # nothing sent yet
    await converse(small_engine, fake_api, sid, 2)
    snap = await small_engine.measure(sid)
    sent = small_engine.view(sid).last_request
    assert snap.cache_expires_at == sent + snap.cache_ttl and snap.cache_ttl in (300.0, 3600.0)
    assert 0 < snap.next_cost_warm < snap.next_cost_cold


class ManualScheduler:
    """Timers a test fires by hand."""

    def __init__(self):
        self.pending: list[tuple[float, object]] = []

    def call_later(self, delay, callback):  # noqa: ANN001, ANN201
        entry = (delay, callback)
        self.pending.append(entry)

        class Handle:
            def cancel(_self) -> None:  # noqa: N805
                if entry in self.pending:
                    self.pending.remove(entry)

        return Handle()


@pytest.fixture
async def mid_engine(fake_api, monkeypatch):
    """A 60K window: large enough that a summary before the cache lapses pays for itself."""
    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "60000")
    fake_api.window = 60_000
    async with _open_engine({"max_output_tokens": 2048, "auto_compact_ratio": 0.9}) as eng:
        yield eng


async def idle_chat(engine, fake_api, title: str, pause_before: int | None = None):  # noqa: ANN001, ANN201
    """A chat of nine long turns on a clock and timers the test moves by hand (``pause_before``: ten minutes
    before that turn, so the session asks for the hour cache). (session id, clock, timers)."""
    scheduler = ManualScheduler()
    engine.idle_timers.scheduler = scheduler
    now = [engine.clock()]
    engine.clock = lambda: now[0]
    sid = (await engine.store.create_session(title, MODEL)).id
    for turn in range(9):
        if turn == pause_before:
            now[0] += 600
        fake_api.queue_text(f"Answer {turn}: " + prose(600, turn))
        await engine.send(sid, f"Instruction {turn}: keep using tabs. " + prose(1400, turn + 100))
        now[0] += 20 if pause_before is not None else 0
    return sid, now, scheduler


async def back_after(
    engine,
    fake_api,
    sid: int,
    now: list[float],
    scheduler: ManualScheduler,  # noqa: ANN001
    seconds: float,
) -> None:
    """The idle timer fires when due and prepares a summary from the warm cache; the user comes back
    ``seconds`` later: that prepared summary is committed, and no other is asked for."""
    delay, fire = scheduler.pending.pop()
    assert 0 < delay <= 300 - 30  # shortly before the 5-minute cache (or its 5-minute part) expires
    asked = len(summary_requests(fake_api))
    now[0] += delay
    fire()
    await engine.tasks.wait(sid, "prepare")
    assert len(summary_requests(fake_api)) == asked + 1  # prepared while the cache was still warm
    assert summary_requests(fake_api)[-1].usage["cache_read_input_tokens"] > 0
    before = len(await engine.store.compactions(sid))
    now[0] += seconds
    fake_api.queue_text("welcome back")
    await engine.send(sid, "I am back.")
    records = await engine.store.compactions(sid)
    assert (
        len(records) == before + 1 and records[-1].trigger == "background" and records[-1].stats["prepared"]
    )
    assert len(summary_requests(fake_api)) == asked + 1


async def test_an_idle_session_prepares_its_summary_before_the_cache_expires_and_uses_it_cold(
    mid_engine, fake_api
):
    sid, now, scheduler = await idle_chat(mid_engine, fake_api, "i")
    assert (await mid_engine.measure(sid)).used > 20_000
    assert len(scheduler.pending) == 1
    await back_after(mid_engine, fake_api, sid, now, scheduler, 600)  # the cache lapsed


async def test_a_session_on_the_hour_cache_uses_its_idle_summary_once_the_five_minute_part_lapsed(
    mid_engine, fake_api
):
    # After one pause of ten minutes the session asks for the 1-hour cache, but only on its stable prefix (the
    # system prompt, the summary, the oldest breakpoint): the rest lives five minutes. The idle summary is
    # prepared before those five minutes run out; on main it was used only after an hour, so a user back after
    # twenty minutes had the whole tail written again and the summary made for that moment was left unused.
    sid, now, scheduler = await idle_chat(mid_engine, fake_api, "hour", pause_before=2)
    assert chat_requests(fake_api)[-1].body["system"][0]["cache_control"].get("ttl") == "1h"
    await back_after(mid_engine, fake_api, sid, now, scheduler, 1200)  # the tail lapsed, the hour prefix not


async def test_a_timer_that_fires_after_the_cache_went_cold_prepares_nothing(mid_engine, fake_api):
    sid, now, scheduler = await idle_chat(mid_engine, fake_api, "late")
    _delay, fire = scheduler.pending.pop()
    now[0] += 400  # the loop was late (a suspended laptop): the cache is already cold
    fire()
    await mid_engine.tasks.wait(sid, "prepare")
    assert summary_requests(fake_api) == []  # nothing left to read from the cache: no summary now


def test_an_idle_summary_pays_only_when_it_spares_more_than_it_costs():
    from desktop.engine.config.catalog import ModelCatalog
    from desktop.engine.metering.cache_clock import summary_pays

    info = ModelCatalog().info(MODEL)  # $3 in: a cold write of 10K tokens costs $0.0375
    assert summary_pays(info, saving_tokens=10_000, summary_cost=0.02)
    assert not summary_pays(info, saving_tokens=10_000, summary_cost=0.05)


async def test_switching_chats_cancels_the_other_chats_idle_timers(small_engine, fake_api):
    scheduler = ManualScheduler()
    small_engine.idle_timers.scheduler = scheduler
    first = (await small_engine.store.create_session("a", MODEL)).id
    second = (await small_engine.store.create_session("b", MODEL)).id
    for sid in (first, second):
        fake_api.queue_text("hi")
        await small_engine.send(sid, "hello")
    assert small_engine.idle_timers.armed(first) and small_engine.idle_timers.armed(second)
    small_engine.session_changed(second)
    assert not small_engine.idle_timers.armed(first) and small_engine.idle_timers.armed(second)
    assert len(scheduler.pending) == 1


def test_a_merged_summary_is_expected_to_be_at_least_as_long_as_the_one_it_updates():
    from desktop.engine.compaction import summary_route as route

    first = route.expected_output(previous_tokens=0, cap=4_096)
    assert 0 < first < 4_096
    # The update restates every section of the previous summary and adds to it: its reply is longer.
    assert route.expected_output(previous_tokens=2_500, cap=4_096) >= 2_500 + first
    assert route.expected_output(previous_tokens=9_000, cap=4_096) == 4_096  # never above the reply cap


def test_the_summary_route_and_the_cache_clock_read_the_chat_models_own_cache_prices():
    from desktop.engine.compaction import summary_route as route
    from desktop.engine.config.catalog import ModelCatalog
    from desktop.engine.metering.cache_clock import turn_costs

    catalog = ModelCatalog()
    opus, fable, sonnet = (
        catalog.info(m) for m in ("claude-opus-5-5", "claude-fable-5-2", "claude-sonnet-4-6")
    )
    # A warm prefix is read at the model's own price: $0.20 on Opus 5.5 (0.05x), $0.20 on Fable 5.2 (0.025x of
    # $8), $0.30 on Sonnet 4.6 (0.1x); the instruction is plain input and the reply output.
    assert route.cached_cost(opus, 200_000, 2_000, warm=True) == pytest.approx(
        (200_000 * 0.2 + route.INSTRUCTION_TOKENS * 4 + 2_000 * 20) / 1e6
    )
    assert route.cached_cost(fable, 200_000, 0, warm=True) == pytest.approx(
        (200_000 * 0.2 + route.INSTRUCTION_TOKENS * 8) / 1e6
    )
    assert route.cached_cost(sonnet, 200_000, 0, warm=True) == pytest.approx(
        (200_000 * 0.3 + route.INSTRUCTION_TOKENS * 3) / 1e6
    )
    assert route.cost_of(opus, Usage(cache_read_input_tokens=1_000_000)) == pytest.approx(0.2)
    # The hover card's next-turn costs: a read of the cached prefix, or all of it written again.
    assert turn_costs(opus, 100_000) == pytest.approx(
        ((100_000 * 0.2 + 1_000 * 20) / 1e6, (100_000 * 5 + 1_000 * 20) / 1e6)
    )


def test_a_cached_summary_over_a_price_cliff_is_priced_on_the_higher_tier():
    from desktop.engine.compaction import summary_route as route
    from desktop.engine.config.catalog import ModelCatalog

    haiku = ModelCatalog().info("claude-haiku-5-5")
    assert route.cached_cost(haiku, 150_000, 1_000, warm=True) == pytest.approx(
        (150_000 * 0.05 + route.INSTRUCTION_TOKENS * 0.5 + 1_000 * 2.5) / 1e6
    )


async def test_haiku_5_5_compacts_below_its_100k_price_cliff_unless_the_user_allows_crossing_it(engine):
    compactor = engine.compactor
    threshold = compactor.threshold("claude-haiku-5-5")
    assert threshold is not None and threshold < 100_000
    assert compactor.budget("claude-haiku-5-5") <= 100_000  # no request is fitted past the cliff either
    assert compactor.threshold("claude-opus-5-5") > 100_000  # a model without a cliff is not held back
    engine.settings.allow_price_tiers = True
    assert compactor.threshold("claude-haiku-5-5") > 100_000
