"""The compaction schedule by cost (desktop/engine/compaction/schedule.py): a summary is made when the reads it
spares outweigh the summary and the re-write it costs, else it waits (up to the end of the room) and says why;
one that would make the context larger is never made; the verbatim tail shrinks at a small window when the cost
model says so but keeps the newest ten tool rounds; clearing batches are sized by the same model; every figure
comes from the model's own catalog multipliers."""

from __future__ import annotations

import logging

import pytest

from desktop.engine.compaction import schedule
from desktop.engine.config.catalog import ModelCatalog
from desktop.engine.events import CompactionChanged, TurnError
from tests.test_compaction_engine import converse, prose

pytestmark = pytest.mark.in_process

STANDARD = schedule.Rates(read=0.1, write=1.25, output=5.0)


# --- the model ---------------------------------------------------------------------------------------------


def test_a_compaction_pays_once_the_reads_it_spares_over_a_cycle_reach_its_cost():
    cost = 20_000.0
    small = schedule.summary_verdict(
        STANDARD, used=12_000, after=10_000, growth=1_000, cost=cost, turns_left=200
    )
    large = schedule.summary_verdict(
        STANDARD, used=40_000, after=10_000, growth=1_000, cost=cost, turns_left=200
    )
    assert small.why is schedule.Why.WAITS and not small.pays
    assert large.why is schedule.Why.PAYS and large.pays
    # The turns counted: half the turns the context takes to grow back (30K at 1K a turn).
    assert large.turns == pytest.approx(15) and large.saving == pytest.approx(0.1 * 30_000 * 15)
    assert "No summary yet" in small.reason and "20,000" in small.reason


def test_a_verdict_says_after_how_many_turns_the_compaction_pays_for_itself():
    # 20K tokens freed at 0.1 spare 2,000 a turn: a 10,000 cost is back after 5 turns, whether the schedule makes
    # it now (a long session) or waits (one expected to end within 4 turns).
    pays = schedule.summary_verdict(
        STANDARD, used=30_000, after=10_000, growth=1_000, cost=10_000, turns_left=200
    )
    waits = schedule.summary_verdict(
        STANDARD, used=30_000, after=10_000, growth=1_000, cost=10_000, turns_left=1
    )
    assert pays.pays and not waits.pays
    assert pays.payback_turns == pytest.approx(5) and waits.payback_turns == pytest.approx(5)
    larger = schedule.summary_verdict(
        STANDARD, used=10_000, after=10_500, growth=500, cost=100.0, turns_left=100
    )
    assert larger.payback_turns is None  # never


def test_a_session_expected_to_end_soon_does_not_pay_for_a_summary():
    long = schedule.summary_verdict(
        STANDARD, used=40_000, after=10_000, growth=1_000, cost=20_000, turns_left=200
    )
    short = schedule.summary_verdict(
        STANDARD, used=40_000, after=10_000, growth=1_000, cost=20_000, turns_left=5
    )
    assert long.pays and not short.pays


def test_a_compaction_that_would_make_the_context_larger_is_not_made_and_says_why():
    verdict = schedule.summary_verdict(
        STANDARD, used=10_000, after=10_500, growth=500, cost=0.0, turns_left=100
    )
    assert verdict.why is schedule.Why.LARGER and not verdict.pays
    assert "would not make the context smaller" in verdict.reason and "10,500" in verdict.reason


def test_the_cost_model_reads_the_models_own_multipliers():
    catalog = ModelCatalog({})
    opus = schedule.Rates.of(catalog.info("claude-opus-5-5"))
    sonnet = schedule.Rates.of(catalog.info("claude-sonnet-4-5"))
    assert (opus.read, opus.write, opus.output) == (0.05, 1.25, 5.0)
    assert sonnet.read == 0.1
    # The same compaction pays at a 0.1x cache read and waits at Opus 5.5's 0.05x (reads are cheaper to keep).
    figures = {"used": 30_000, "after": 10_000, "growth": 1_000, "cost": 15_000.0, "turns_left": 200}
    assert schedule.summary_verdict(sonnet, **figures).pays
    assert not schedule.summary_verdict(opus, **figures).pays


def test_a_cold_cache_makes_the_re_write_free():
    warm = schedule.summary_cost(STANDARD, used=30_000, after=10_000, output=1_000, warm=True)
    cold = schedule.summary_cost(STANDARD, used=30_000, after=10_000, output=1_000, warm=False)
    assert warm == pytest.approx(0.1 * 30_000 + 5 * 1_000 + 1.25 * 10_000)
    assert cold == pytest.approx(30_000 + 5 * 1_000)  # the prompt is written anyway: no re-write counted


def test_clearing_batches_grow_with_what_they_re_write_and_with_a_cheaper_cache_read():
    base = {"rewritten": 40_000, "turns": 10.0, "compaction_cost": 20_000.0, "cycle": 20_000}
    batch = schedule.min_clear(STANDARD, **base)
    # x pays from (write - read)·rewritten / (read·turns + cost/cycle) = 1.15·40K / (1 + 1).
    assert batch == 23_000
    assert schedule.min_clear(STANDARD, **{**base, "rewritten": 80_000}) == 2 * batch
    opus = schedule.Rates(read=0.05, write=1.25, output=5.0)
    assert schedule.min_clear(opus, **base) > batch


def test_the_tail_cap_shrinks_only_when_it_leaves_too_little_room_for_a_summary_to_pay():
    roomy = schedule.tail_cap(
        STANDARD, hard=150_000, fixed=10_000, growth=2_000, cost=50_000, cap=30_000, floor=1_000
    )
    tight = schedule.tail_cap(
        STANDARD, hard=30_000, fixed=6_000, growth=1_000, cost=20_000, cap=7_500, floor=1_000
    )
    assert roomy == 30_000
    # A summary from the tail pays from a 20K gap (sqrt(2·20K·1K/0.1)): 30K - 6K - 20K leaves 4K for the tail.
    assert tight == 4_000
    assert (
        schedule.tail_cap(
            STANDARD, hard=25_000, fixed=6_000, growth=1_000, cost=20_000, cap=7_500, floor=1_000
        )
        == 1_000
    )


# --- the engine ----------------------------------------------------------------------------------------------


async def _to(engine, srv, sid: int, size: int, start: int = 0) -> int:
    """Converse until the context measures at least ``size`` tokens; the next turn's index."""
    turn = start
    view = engine.view(sid)
    while True:
        g = await view.gather()
        if view.used(g)[0] >= size:
            return turn
        await converse(engine, srv, sid, 1, start=turn)
        turn += 1
        view = engine.view(sid)


async def test_a_summary_that_would_not_pay_waits_past_the_threshold_and_says_why(
    small_engine, fake_api, caplog
):
    from desktop.engine.compaction.compactor import Step

    caplog.set_level(logging.INFO, logger="desktop.engine.compaction.compactor")
    sid = (await small_engine.store.create_session("schedule", "claude-test")).id
    compactor = small_engine.compactor
    threshold, hard = compactor.threshold("claude-test"), compactor.hard_limit("claude-test")
    assert threshold < hard
    await converse(small_engine, fake_api, sid, 9)
    view = small_engine.view(sid)
    g = await view.gather()
    used = view.used(g)[0]
    assert threshold <= used < hard, (threshold, used, hard)
    decision = compactor.before_call(g, used, "exact", 30.0, cleared=True)
    assert decision.step is Step.NOTHING  # past the threshold, but a summary would not pay yet
    assert g.memo["schedule"].why is schedule.Why.WAITS
    assert any("No summary yet" in r.getMessage() for r in caplog.records)
    # The same state at the end of the room: the summary is made whether it pays or not.
    assert compactor.before_call(g, hard, "exact", 30.0, cleared=True).step is Step.SUMMARISE


async def test_the_chat_tells_the_views_once_why_a_due_summary_waits_and_the_row_keeps_why_it_was_made(
    small_engine, fake_api
):
    sid = (await small_engine.store.create_session("notes", "claude-test")).id
    await converse(small_engine, fake_api, sid, 30)
    assert not [e for e in small_engine.events if isinstance(e, TurnError)]
    waits = [
        e
        for e in small_engine.events
        if isinstance(e, CompactionChanged) and e.session_id == sid and e.note.startswith("No summary yet")
    ]
    rows = [c for c in await small_engine.store.compactions(sid) if c.trigger != "snip"]
    assert waits and rows
    # Once per boundary: at most one note for each compaction row and the open stretch after the last one.
    assert len(waits) <= len(rows) + 1
    assert rows[0].stats["schedule"]["why"] in ("pays", "due")


async def test_a_user_threshold_is_kept_as_the_user_set_it(small_engine, fake_api):
    from desktop.engine.compaction.compactor import Step

    sid = (await small_engine.store.create_session("own", "claude-test")).id
    await converse(small_engine, fake_api, sid, 9)
    view = small_engine.view(sid)
    g = await view.gather()
    used = view.used(g)[0]
    small_engine.settings.auto_compact_ratio = 0.45  # the user's own ratio: compaction starts there
    compactor = small_engine.compactor
    assert compactor.user_threshold("claude-test") and used >= compactor.threshold("claude-test")
    assert compactor.before_call(g, used, "exact", 30.0, cleared=True).step is Step.SUMMARISE


@pytest.fixture
async def mid_engine(fake_api, monkeypatch):
    """An engine whose model has a 32,000-token window, like the server's."""
    from tests.conftest import _open_engine

    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "32000")
    fake_api.window = 32_000
    async with _open_engine() as eng:
        yield eng


async def _exchanges_then_tools(
    store, title: str, *, exchanges: int, words: int, rounds: int, output: int
) -> int:
    """A chat of ``exchanges`` typed questions and answers, then "now read the logs" and ``rounds`` tool rounds
    (calls t0, t1, ...) whose results are ``output`` words each."""
    sid = (await store.create_session(title, "claude-test")).id
    for turn in range(exchanges):
        await store.add_message(
            sid, "user", [{"type": "text", "text": f"question {turn}: " + prose(words, turn)}]
        )
        await store.add_message(
            sid, "assistant", [{"type": "text", "text": f"answer {turn}: " + prose(words, turn)}]
        )
    await store.add_message(sid, "user", [{"type": "text", "text": "now read the logs one by one"}])
    for k in range(rounds):
        await store.add_message(
            sid,
            "assistant",
            [{"type": "tool_use", "id": f"t{k}", "name": "read", "input": {"path": f"{k}.log"}}],
        )
        await store.add_message(
            sid, "user", [{"type": "tool_result", "tool_use_id": f"t{k}", "content": prose(output, k + 10)}]
        )
    return sid


async def test_the_tail_shrinks_at_a_small_window_but_keeps_the_last_ten_tool_rounds(mid_engine):
    from desktop.engine.compaction.compactor import KEEP_ROUNDS, TAIL_FRACTION

    # 14 tool rounds of about 650 tokens each: the context grows fast
    sid = await _exchanges_then_tools(mid_engine.store, "tail", exchanges=3, words=400, rounds=14, output=500)
    compactor = mid_engine.compactor
    g = await mid_engine.view(sid).gather()
    cap = int(32_000 * TAIL_FRACTION)
    assert compactor.tail_cap(g, cap) < cap  # the cost model asks for a smaller tail in a 32K window
    head, tail = compactor.split(g)
    assert head
    # The newest ten tool rounds stay whole in the tail, and the tail is no larger than that needs.
    kept = {b.get("id") for m in tail for b in m.content if b.get("type") == "tool_use"}
    answered = {b.get("tool_use_id") for m in tail for b in m.content if b.get("type") == "tool_result"}
    newest = {f"t{k}" for k in range(14 - KEEP_ROUNDS, 14)}
    assert newest <= kept and newest <= answered
    assert "question 2" not in str([m.content for m in tail])  # the older exchange is summarised


async def _parallel_rounds(engine, rounds: int, calls: int, words: int) -> int:
    """A session of one question and ``rounds`` tool rounds of ``calls`` parallel calls each."""
    store = engine.store
    sid = (await store.create_session("parallel", "claude-test")).id
    await store.add_message(sid, "user", [{"type": "text", "text": "question: " + prose(300, 1)}])
    await store.add_message(sid, "assistant", [{"type": "text", "text": "answer: " + prose(300, 2)}])
    await store.add_message(sid, "user", [{"type": "text", "text": "now check every module"}])
    for r in range(rounds):
        ids = [f"t{r}_{c}" for c in range(calls)]
        await store.add_message(
            sid,
            "assistant",
            [{"type": "tool_use", "id": i, "name": "read", "input": {"path": f"{i}.py"}} for i in ids],
        )
        await store.add_message(
            sid,
            "user",
            [
                {"type": "tool_result", "tool_use_id": i, "content": prose(words, r * calls + c)}
                for c, i in enumerate(ids)
            ],
        )
    return sid


def _newest_calls(rounds: int, calls: int, n: int) -> set[str]:
    """The ids of the ``n`` newest of ``rounds`` × ``calls`` calls (see _parallel_rounds)."""
    return {f"t{k // calls}_{k % calls}" for k in range(rounds * calls - n, rounds * calls)}


async def test_the_tail_keeps_the_ten_newest_tool_calls_whole_when_ten_parallel_rounds_would_not_fit(
    mid_engine,
):
    # Rounds of three parallel calls: ten rounds (30 calls) are over CLEAN_FRACTION of the window, but the
    # rounds that hold the ten newest calls are not. Those ten calls stay whole: what the model was just doing
    # is the calls, however they were grouped into rounds.
    from desktop.engine.compaction.compactor import CLEAN_FRACTION, KEEP_ROUNDS

    sid = await _parallel_rounds(mid_engine, rounds=12, calls=3, words=260)
    g = await mid_engine.view(sid).gather()
    head, tail = mid_engine.compactor.split(g)
    assert head
    sizes = g.row_tokens
    assert sum(sizes[-2 * KEEP_ROUNDS :]) > 32_000 * CLEAN_FRACTION  # ten rounds do not fit
    kept = {b.get("id") for m in tail for b in m.content if b.get("type") == "tool_use"}
    answered = {b.get("tool_use_id") for m in tail for b in m.content if b.get("type") == "tool_result"}
    newest = _newest_calls(12, 3, KEEP_ROUNDS)
    assert newest <= kept and newest <= answered


async def test_clearing_old_tool_results_keeps_the_ten_newest_whole(mid_engine):
    # Microcompaction clears tool results behind a horizon; the newest ten tool calls keep their results, the
    # same ten a summary keeps verbatim (clearing the ninth and tenth newest lost them all the same).
    from desktop.engine.compaction.compactor import KEEP_ROUNDS
    from desktop.engine.turn.session import CACHE_TTL

    sid = await _parallel_rounds(mid_engine, rounds=16, calls=1, words=700)
    view = mid_engine.view(sid)
    g = await view.gather()
    used, _source = view.used(g)
    horizons = mid_engine.compactor.plan_micro(g, used, CACHE_TTL + 60)  # a cold cache: any batch is taken
    assert horizons and horizons["clear"]
    newest = _newest_calls(16, 1, KEEP_ROUNDS)
    cleared = {
        b.get("tool_use_id")
        for m in g.sendable
        if m.id <= horizons["clear"]
        for b in m.content
        if b.get("type") == "tool_result"
    }
    assert cleared and not cleared & newest


async def test_a_summary_is_sized_to_the_window_and_the_request_says_so(mid_engine, fake_api, monkeypatch):
    # A summary is read by every later request: at a 50K window it must not be asked for at the size a 200K
    # window affords, and the request says the length, so a model plans to fit rather than being cut at the cap.
    from desktop.engine.compaction.summary_maker import SUMMARY_MAX_TOKENS
    from tests.test_compaction_engine import summary_requests

    compactor = mid_engine.compactor
    caps = {}
    for window in (200_000, 100_000, 50_000, 32_000):
        monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", str(window))
        caps[window] = compactor.summary_reply_cap("claude-test")
    assert caps[200_000] == caps[100_000] == SUMMARY_MAX_TOKENS
    assert caps[32_000] < caps[50_000] < SUMMARY_MAX_TOKENS
    assert caps[50_000] <= 50_000 // 24 and caps[32_000] <= 32_000 // 24
    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "32000")
    sid = await _parallel_rounds(mid_engine, rounds=12, calls=3, words=260)
    before = len(summary_requests(fake_api))
    outcome = await mid_engine.compact(sid, "manual")
    assert outcome.ok, outcome.message
    asked = [r.body for r in summary_requests(fake_api)[before:]]
    assert asked and all(body["max_tokens"] <= caps[32_000] for body in asked)
    # (the cap the request was given: smaller still when the cost model says so, see the test below)
    assert all(
        f"{body['max_tokens'] * 3 // 4:,} words" in str(body["messages"][-1]["content"]) for body in asked
    )


async def test_a_pause_the_hour_cache_outlives_is_not_a_cold_cache(mid_engine):
    # Once the session has paused for longer than five minutes (and less than the hour), its requests ask for the
    # 1-hour cache on the stable prefix. A later pause of ten minutes leaves that prefix warm: clearing old
    # results then is not free (it re-writes the prefix the next request would read), so only a batch that pays
    # while warm is taken. A 5-minute clock cleared at every such pause and re-wrote tens of thousands of tokens.
    from desktop.engine.turn.session import CACHE_TTL, LONG_CACHE_TTL
    from desktop.engine.types import Usage

    store = mid_engine.store
    compactor = mid_engine.compactor
    sid = await _parallel_rounds(mid_engine, rounds=16, calls=1, words=700)
    view = mid_engine.view(sid)
    g = await view.gather()
    used, _source = view.used(g)
    assert compactor.plan_micro(g, used, CACHE_TTL + 300) is not None  # no pause seen: 5-minute cache, cold
    assert compactor.cache_lifetime(g) == CACHE_TTL
    # Two replies ten minutes apart: the session pauses, its requests ask for the hour.
    for sent in (1_000.0, 1_600.0):
        await store.add_message(
            sid,
            "assistant",
            [{"type": "text", "text": "noted " + prose(5, int(sent))}],
            usage=Usage(input_tokens=100),
            meta={"sent_at": sent},
        )
        await store.add_message(sid, "user", [{"type": "text", "text": "go on"}])
    g = await view.gather()
    used, _source = view.used(g)
    assert compactor.cache_lifetime(g) == LONG_CACHE_TTL
    assert (
        compactor.plan_micro(g, used, CACHE_TTL + 300) is None
    )  # the hour's prefix is warm: too small a batch
    assert compactor.plan_micro(g, used, LONG_CACHE_TTL + 60) is not None  # past the hour: cold, any batch


async def test_the_ledger_beside_a_summary_keeps_its_newest_entries_within_the_pin_room(mid_engine):
    # Sixty files read, sixty edited and forty commands make a ledger of thousands of tokens: at a 32K window it
    # would take more than the room pins are given, read by every later request. Pins and ledger share that room;
    # the ledger keeps its newest entries (the full ledger stays in the record, folded into the next one).
    from desktop.engine.metering.tokens import estimate_text

    store = mid_engine.store
    sid = (await store.create_session("ledger", "claude-test")).id
    await store.add_message(
        sid, "user", [{"type": "text", "text": "refactor the whole package " + prose(40, 1)}]
    )
    deep = "/".join(f"package_module_{k}" for k in range(12))
    for k in range(150):
        # Each file in its own tree (no common directory the ledger could name once).
        name, arg = [
            ("Read", {"file_path": f"/src{k % 7}/{deep}/read_{k:03d}.py"}),
            ("Edit", {"file_path": f"/src{k % 7}/{deep}/edit_{k:03d}.py"}),
            ("Bash", {"command": f"pytest -q tests/{deep}/test_{k:03d}.py -k case_{k} --maxfail 1"}),
        ][k % 3]
        await store.add_message(
            sid, "assistant", [{"type": "tool_use", "id": f"t{k}", "name": name, "input": arg}]
        )
        await store.add_message(
            sid, "user", [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "ok " + prose(30, k)}]
        )
    outcome = await mid_engine.compact(sid, "manual")
    assert outcome.ok and outcome.record is not None, outcome.message
    stats = outcome.record.stats
    assert estimate_text(stats["pins_text"]) <= mid_engine.compactor.pin_room("claude-test")
    reads = [k for k in range(0, 150, 3) if f"read_{k:03d}.py" in str(stats["ledger"])]
    assert len(reads) > 20
    assert f"read_{max(reads):03d}.py" in stats["pins_text"]  # the newest stay
    assert f"read_{min(reads):03d}.py" not in stats["pins_text"]  # the oldest give way in what is sent ...


async def test_the_tail_keeps_its_share_of_a_large_window(small_engine, monkeypatch):
    from desktop.engine.compaction.compactor import TAIL_FRACTION

    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "200000")
    store = small_engine.store
    sid = (await store.create_session("large", "claude-test")).id
    await store.add_message(sid, "user", [{"type": "text", "text": "hello " + prose(200, 1)}])
    await store.add_message(sid, "assistant", [{"type": "text", "text": "hi " + prose(200, 2)}])
    g = await small_engine.view(sid).gather()
    cap = int(200_000 * TAIL_FRACTION)
    assert small_engine.compactor.tail_cap(g, cap) == cap


@pytest.mark.qt
def test_the_card_says_why_an_automatic_summary_was_made_now(qtbot):
    from desktop.ui.transcript.compaction_card import card_title
    from tests.test_compaction_readable import record

    pays = schedule.Verdict(schedule.Why.PAYS, 30_000, 10_000, 12.0, 36_000.0, 20_000.0).stats()
    assert "the reads it saves over ~12 turns outweigh its cost" in card_title(record(schedule=pays))
    due = schedule.Verdict(schedule.Why.DUE, 30_000, 30_000).stats()
    assert "neared the end of the room" in card_title(record(schedule=due))
    assert "made now" not in card_title(record())


async def _large_session(engine, monkeypatch, title: str) -> int:
    """A chat in a 200K window whose first forty exchanges hold long tool outputs (about 60K tokens) and whose
    last twenty are short: a summary of the old part would free most of the context, and the session grows
    slowly, so every later turn would read what it frees."""
    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "200000")
    store = engine.store
    sid = (await store.create_session(title, "claude-test")).id
    await store.add_message(sid, "user", [{"type": "text", "text": "port the parser " + prose(40, 1)}])
    for k in range(40):
        await store.add_message(
            sid,
            "assistant",
            [{"type": "tool_use", "id": f"r{k}", "name": "Read", "input": {"file_path": f"/src/p{k}.py"}}],
        )
        await store.add_message(
            sid, "user", [{"type": "tool_result", "tool_use_id": f"r{k}", "content": prose(1_100, k)}]
        )
    for k in range(20):
        await store.add_message(sid, "assistant", [{"type": "text", "text": f"done {k} " + prose(20, k)}])
        await store.add_message(sid, "user", [{"type": "text", "text": f"next {k} " + prose(20, k + 50)}])
    return sid


async def test_a_summary_that_pays_below_the_threshold_of_a_large_window_is_made(small_engine, monkeypatch):
    # At a 200K window the threshold is half the input room (about 96K tokens). A context of about 60K tokens,
    # most of it a head a summary would free, growing a few hundred tokens a turn: each turn re-reads that head,
    # and by the threshold it would have been read a hundred times more. The cost model says the summary pays
    # now, so it is made now instead of waiting for the threshold.
    from desktop.engine.compaction.compactor import Step

    sid = await _large_session(small_engine, monkeypatch, "early")
    compactor = small_engine.compactor
    view = small_engine.view(sid)
    g = await view.gather()
    used = view.used(g)[0]
    assert used < compactor.threshold("claude-test"), (used, compactor.threshold("claude-test"))
    head, _tail = compactor.split(g)
    assert compactor.verdict(g, used, head, warm=True).pays
    decision = compactor.before_call(g, used, "exact", 30.0, cleared=True)
    assert decision.step is Step.SUMMARISE
    assert g.memo["schedule"].why is schedule.Why.PAYS  # the row and the card say why it was made now
    # The user's own threshold is kept as the user set it: nothing below it.
    small_engine.settings.auto_compact_ratio = 0.45
    g = await view.gather()
    assert compactor.before_call(g, used, "exact", 30.0, cleared=True).step is Step.NOTHING


async def test_a_summary_that_will_pay_below_the_threshold_is_prepared_so_the_send_does_not_wait(
    small_engine, fake_api, monkeypatch
):
    # The same chat: a summary below the threshold pays at the next turn. Made at that turn, the user would wait
    # for it; prepared in the background after this turn (below the prepare mark too), the next send commits it.
    sid = await _large_session(small_engine, monkeypatch, "prepared early")
    fake_api.window = 200_000
    compactor = small_engine.compactor
    view = small_engine.view(sid)
    g = await view.gather()
    used = view.used(g)[0]
    assert used < compactor.prepare_mark("claude-test") < compactor.threshold("claude-test")
    assert compactor.prepare_soon(g, used, growth=200)
    chat = small_engine._conversation(sid).compaction
    await compactor.prepare(g, view, chat)
    outcome = await compactor.compact(view, await view.gather(), "auto", chat=chat)
    assert outcome.ok and outcome.record is not None and outcome.record.stats.get("prepared")
    # A chat that does not need one soon (a tiny context) is not prepared below the mark.
    small_sid = (await small_engine.store.create_session("short", "claude-test")).id
    await small_engine.store.add_message(small_sid, "user", [{"type": "text", "text": "hello"}])
    small_view = small_engine.view(small_sid)
    sg = await small_view.gather()
    assert not compactor.prepare_soon(sg, small_view.used(sg)[0], growth=200)


async def test_a_chat_that_fills_a_small_share_of_a_large_window_is_kept_whole(small_engine, monkeypatch):
    # The chat whose summary pays below a 200K window's threshold, in a 1M window: the same reads would be spared,
    # but a chat of ~50K tokens with a million-token room is kept whole; a user who picked that room did not pick
    # a summary at 5 % of it.
    from desktop.engine.compaction.compactor import EARLY_FLOOR, Step

    sid = await _large_session(small_engine, monkeypatch, "kept whole")
    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "1000000")
    compactor = small_engine.compactor
    view = small_engine.view(sid)
    g = await view.gather()
    used = view.used(g)[0]
    assert used < EARLY_FLOOR * compactor.budget("claude-test")
    head, _tail = compactor.split(g)
    assert compactor.verdict(g, used, head, warm=True).pays  # by cost alone it would be made
    assert compactor.before_call(g, used, "exact", 30.0, cleared=True).step is Step.NOTHING
    assert not compactor.prepare_soon(g, used, growth=200)


async def test_a_summary_below_the_threshold_that_does_not_pay_is_not_made_and_nothing_is_said(
    small_engine, monkeypatch, caplog
):
    # The same chat growing fast (long turns): the context grows back soon after a summary, so it does not pay
    # yet; below the threshold it is neither made nor announced as waiting.
    from desktop.engine.compaction.compactor import Step

    caplog.set_level(logging.INFO, logger="desktop.engine.compaction.compactor")
    sid = await _large_session(small_engine, monkeypatch, "not yet")
    store = small_engine.store
    for k in range(10):
        await store.add_message(sid, "assistant", [{"type": "text", "text": prose(1_500, k)}])
        await store.add_message(sid, "user", [{"type": "text", "text": f"more {k}"}])
    view = small_engine.view(sid)
    g = await view.gather()
    used = view.used(g)[0]
    compactor = small_engine.compactor
    assert used < compactor.threshold("claude-test")
    head, _tail = compactor.split(g)
    assert not compactor.verdict(g, used, head, warm=True).pays
    assert compactor.before_call(g, used, "exact", 30.0, cleared=True).step is Step.NOTHING
    assert "schedule" not in g.memo and "schedule_note" not in g.memo
    assert not any("No summary yet" in r.getMessage() for r in caplog.records)


async def test_the_tail_keeps_the_rounds_of_the_ten_newest_calls_and_no_older_round(mid_engine):
    # Twenty small tool rounds after a question: the rounds of the ten newest calls take about 2K tokens, but the
    # tail grew by tokens (to half its cap) and moved back to the typed question, keeping older rounds too, each
    # written again after the summary and read by every later turn. Nothing needs them verbatim: the question
    # is pinned beside the summary, the older calls are in the summary and the ledger.
    from desktop.engine.compaction.compactor import KEEP_ROUNDS

    sid = await _exchanges_then_tools(
        mid_engine.store, "rounds", exchanges=4, words=500, rounds=20, output=120
    )
    g = await mid_engine.view(sid).gather()
    head, tail = mid_engine.compactor.split(g)
    assert head
    kept = {b.get("id") for m in tail for b in m.content if b.get("type") == "tool_use"}
    answered = {b.get("tool_use_id") for m in tail for b in m.content if b.get("type") == "tool_result"}
    newest = {f"t{k}" for k in range(20 - KEEP_ROUNDS, 20)}
    assert kept == newest and answered == newest
    assert "now read the logs" not in str(
        [m.content for m in tail]
    )  # typed before them: pinned, not kept twice


async def test_a_conversation_without_tool_calls_keeps_a_tail_by_tokens(mid_engine):
    store = mid_engine.store
    sid = (await store.create_session("chat", "claude-test")).id
    for turn in range(16):
        await store.add_message(
            sid, "user", [{"type": "text", "text": f"question {turn}: " + prose(400, turn)}]
        )
        await store.add_message(
            sid, "assistant", [{"type": "text", "text": f"answer {turn}: " + prose(400, turn)}]
        )
    g = await mid_engine.view(sid).gather()
    head, tail = mid_engine.compactor.split(g)
    assert head and len(tail) >= 2 and "answer 15" in str(tail[-1].content)


async def test_the_summary_gives_way_like_the_tail_when_its_size_leaves_no_cycle_that_pays(
    mid_engine, fake_api
):
    # At a 32K window the summary, the pins and the rounds of the ten newest calls leave less room below the hard
    # limit than a summary needs to pay for itself (its reply at the output price and the re-write of what it
    # leaves, against the reads it spares): every token of it is read by every turn until the next summary, in a
    # cycle that is too short. It gives way as the tail does, down to its floor; a large window keeps its share.
    from desktop.engine.compaction.summary_maker import SUMMARY_MIN_TOKENS, summary_cap
    from tests.test_compaction_engine import summary_requests

    sid = await _parallel_rounds(mid_engine, rounds=12, calls=3, words=260)
    compactor = mid_engine.compactor
    g = await mid_engine.view(sid).gather()
    assert compactor.summary_reply_cap("claude-test", g) == SUMMARY_MIN_TOKENS < summary_cap(32_000)
    assert compactor.expected_summary(g) <= SUMMARY_MIN_TOKENS
    before = len(summary_requests(fake_api))
    outcome = await mid_engine.compact(sid, "manual")
    assert outcome.ok, outcome.message
    asked = [r.body for r in summary_requests(fake_api)[before:]]
    assert asked and all(body["max_tokens"] <= SUMMARY_MIN_TOKENS for body in asked)


async def test_a_large_window_keeps_its_summary_size(small_engine, monkeypatch):
    from desktop.engine.compaction.summary_maker import SUMMARY_MAX_TOKENS

    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "200000")
    sid = await _parallel_rounds(small_engine, rounds=12, calls=3, words=260)
    g = await small_engine.view(sid).gather()
    assert small_engine.compactor.summary_reply_cap("claude-test", g) == SUMMARY_MAX_TOKENS


async def test_when_the_summary_gives_way_the_ledger_keeps_only_its_floor(mid_engine):
    # The ledger took the room the pins left (up to a tenth of the window) as if it were free; when the cost
    # model has the summary give way, that room is not free either: the ledger keeps its floor, its newest
    # entries (the record keeps it whole).
    from desktop.engine.compaction.summary_maker import summary_cap
    from desktop.engine.metering.tokens import estimate_text

    store = mid_engine.store
    sid = (await store.create_session("ledger", "claude-test")).id
    await store.add_message(sid, "user", [{"type": "text", "text": "run every check " + prose(40, 1)}])
    for k in range(60):
        command = (
            f"pytest -q tests/suite_{k:03d}/test_module_{k:03d}.py -k 'case_{k} and not slow' --maxfail 1 -x"
        )
        await store.add_message(
            sid,
            "assistant",
            [{"type": "tool_use", "id": f"c{k}", "name": "Bash", "input": {"command": command}}],
        )
        await store.add_message(
            sid, "user", [{"type": "tool_result", "tool_use_id": f"c{k}", "content": "ok " + prose(20, k)}]
        )
    for r in range(12):
        ids = [f"t{r}_{c}" for c in range(3)]
        await store.add_message(
            sid,
            "assistant",
            [{"type": "tool_use", "id": i, "name": "read", "input": {"path": f"{i}.py"}} for i in ids],
        )
        await store.add_message(
            sid,
            "user",
            [
                {"type": "tool_result", "tool_use_id": i, "content": prose(260, r * 3 + c)}
                for c, i in enumerate(ids)
            ],
        )
    compactor = mid_engine.compactor
    g = await mid_engine.view(sid).gather()
    assert compactor.summary_reply_cap("claude-test", g) < summary_cap(32_000)  # the summary gives way
    outcome = await mid_engine.compact(sid, "manual")
    assert outcome.ok and outcome.record is not None, outcome.message
    sent = outcome.record.stats["pins_text"]
    ledger = sent[sent.index("<artifact-ledger>") :]
    assert estimate_text(ledger) <= compactor.pin_room("claude-test") // 4
    assert "suite_059" in ledger and len(outcome.record.stats["ledger"]["commands"]) == 40


async def test_a_summary_is_prepared_for_the_next_turn_not_two_turns_ahead(mid_engine):
    # A background summary is there so the next send does not wait. Made two turns ahead it is a turn older than
    # that needs when it is committed, and at a small window the turn's tokens make a fresh summary pay: the
    # prepared one was billed for nothing (92 summary requests for 56 compactions at 32K in the replay).
    sid = await _parallel_rounds(mid_engine, rounds=12, calls=3, words=260)
    compactor = mid_engine.compactor
    g = await mid_engine.view(sid).gather()
    hard, growth = compactor.hard_limit("claude-test"), 2_000
    assert hard is not None
    two_turns_ahead = hard - growth - 500  # due (at the hard limit) two turns from now, not at the next one
    assert not compactor._due(g, two_turns_ahead + growth, warm=True)[0]
    assert compactor.wants_prepare(g, two_turns_ahead)
    assert not compactor.prepare_soon(g, two_turns_ahead, growth)
    assert compactor.prepare_soon(g, hard - growth // 2, growth)  # due at the next turn: prepared now
