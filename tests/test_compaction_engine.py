"""Staged compaction end to end: the engine against the loopback server through the real SDK."""

from __future__ import annotations

import pytest

from desktop.engine.compaction import problems
from desktop.engine.events import CompactionChanged, TurnError
from tests.fakeapi import SUMMARY_MARKER, Fault
from tests.requests import request_of

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process

WINDOW = 8_000
WORDS = tuple(
    [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "lambda",
        "mu",
        "nu",
        "xi",
        "omicron",
        "pi",
        "rho",
        "sigma",
        "tau",
        "upsilon",
        "phi",
        "chi",
        "psi",
        "omega",
    ]
)


def prose(n_words: int, seed: int) -> str:
    return " ".join(WORDS[(seed * 7 + i) % len(WORDS)] for i in range(n_words))


def is_summary_request(body: dict) -> bool:
    """A transcript summary (marker in the system prompt) or the chat's request with the instruction appended."""
    last = body["messages"][-1] if body.get("messages") else {}
    return SUMMARY_MARKER in str(body.get("system", "")) or (
        last.get("role") == "user" and SUMMARY_MARKER in str(last.get("content"))
    )


def summary_requests(srv) -> list:
    return [r for r in srv.message_requests() if is_summary_request(r.body)]


def chat_requests(srv) -> list:
    return [r for r in srv.message_requests() if not is_summary_request(r.body)]


async def converse(engine, srv, sid: int, turns: int, start: int = 0) -> None:
    for i in range(start, start + turns):
        srv.queue_text(f"Answer {i}: " + prose(120, i))
        await engine.send(sid, f"Instruction {i}: keep using tabs. " + prose(140, i + 100))


async def test_forty_turns_in_a_small_window_never_reach_the_user_as_errors(small_engine, fake_api):
    sid = (await small_engine.store.create_session("long", "claude-test")).id
    await converse(small_engine, fake_api, sid, 40)
    assert not [e for e in small_engine.events if isinstance(e, TurnError)]
    assert all(r.status == 200 for r in chat_requests(fake_api))
    compactions = await small_engine.store.compactions(sid)
    assert len(compactions) >= 3
    assert all(c.covers_through_message_id for c in compactions)
    ids = [c.covers_through_message_id for c in compactions]
    assert ids == sorted(ids)  # the boundary only moves forward
    # Every request stayed under the window, and the latest instructions are pinned verbatim.
    assert max(r.prompt_tokens for r in chat_requests(fake_api)) <= WINDOW
    last_body = str(chat_requests(fake_api)[-1].body["messages"])
    assert "Instruction 39: keep using tabs." in last_body
    # The newest instructions the summary covers are pinned verbatim next to it (newest first, within budget).
    active = compactions[-1]
    covered = [
        m
        for m in await small_engine.store.messages(sid)
        if m.role == "user" and m.id <= active.covers_through_message_id
    ]
    assert covered[-1].content[0]["text"] in active.stats["pins_text"]
    assert all(len(c.summary) >= 10 for c in compactions if c.trigger != "snip")


async def test_manual_compaction_writes_the_boundary_and_undo_restores_originals(small_engine, fake_api):
    sid = (await small_engine.store.create_session("m", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    before = len(chat_requests(fake_api)[-1].body["messages"])
    outcome = await small_engine.compact(sid, "manual", focus="the tabs rule")
    assert outcome.ok, outcome.message
    record = await small_engine.store.active_compaction(sid)
    assert record.trigger == "manual"
    assert "the tabs rule" in str(summary_requests(fake_api)[-1].body["messages"])
    history = await small_engine.store.messages(sid)
    assert len(history) == 12  # originals are never deleted
    request = await request_of(small_engine, sid)
    assert len(request["messages"]) < before
    assert request["messages"][0]["content"][0]["text"].startswith("<conversation-summary>")
    assert any(isinstance(e, CompactionChanged) for e in small_engine.events)
    assert await small_engine.undo_compaction(sid)
    assert await small_engine.store.active_compaction(sid) is None
    restored = await request_of(small_engine, sid)
    assert "Instruction 0" in str(restored["messages"][0])


async def test_nothing_to_compact_is_said_not_stored(small_engine, fake_api):
    sid = (await small_engine.store.create_session("short", "claude-test")).id
    fake_api.queue_text("hi")
    await small_engine.send(sid, "hello")
    outcome = await small_engine.compact(sid, "manual")
    assert not outcome.ok and "Nothing to compact" in outcome.message
    assert await small_engine.store.compactions(sid) == []
    assert len(await small_engine.store.messages(sid)) == 2


async def test_slash_compact_is_not_stored_in_the_transcript(small_engine, fake_api):
    sid = (await small_engine.store.create_session("s", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    assert await small_engine.command(sid, "/compact keep the tabs rule")
    assert len(await small_engine.store.messages(sid)) == 12
    assert (await small_engine.store.active_compaction(sid)).stats["focus"] == "keep the tabs rule"


async def test_summary_not_smaller_is_rejected_and_three_failures_open_the_breaker(small_engine, fake_api):
    fake_api.summariser.fraction = 3.0  # the "summary" is three times longer than its input
    sid = (await small_engine.store.create_session("b", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    later = small_engine.clock() + 3_600
    small_engine.clock = lambda: later  # a cold cache: the transcript route, whose reply may be 4K tokens
    for _ in range(3):
        outcome = (
            await small_engine.compact(sid, "manual") if _ == 0 else await small_engine.compact(sid, "auto")
        )
    state = await small_engine.store.get_state(sid)
    assert state["breaker_failures"] >= 3
    snap = await small_engine.measure(sid)
    assert snap.breaker_open
    # With the breaker open, automatic compaction snips instead of asking for a summary.
    asked = len(summary_requests(fake_api))
    outcome = await small_engine.compact(sid, "auto", target=2_000)
    assert len(summary_requests(fake_api)) == asked
    assert outcome.ok and outcome.record.trigger == "snip"
    # A manual compaction resets the breaker; a good summary closes it.
    fake_api.summariser.fraction = 0.1
    await converse(small_engine, fake_api, sid, 2, start=50)
    outcome = await small_engine.compact(sid, "manual")
    assert outcome.ok, outcome.message
    assert (await small_engine.store.get_state(sid))["breaker_failures"] == 0


async def test_background_summary_is_used_at_the_next_send(small_engine, fake_api):
    small_engine.settings.prepare_ratio = 0.3
    small_engine.settings.auto_compact_ratio = 0.7
    sid = (await small_engine.store.create_session("bg", "claude-test")).id
    for turn in range(12):  # prepared once the context grows to within two turns of the threshold
        await converse(small_engine, fake_api, sid, 1, start=turn)
        await small_engine.tasks.wait(sid, "prepare")
        if summary_requests(fake_api):
            break
    assert summary_requests(fake_api) and not small_engine.busy(sid)  # prepared in the background
    assert await small_engine.store.active_compaction(sid) is None
    prepared = small_engine._conversation(sid).compaction.prepared
    asked = len(summary_requests(fake_api))
    # The next send crosses the threshold: the prepared summary is committed when it covers what a fresh
    # one would (nothing was added since), with no new summary request.
    view = small_engine.view(sid)
    g = await view.gather()
    assert not small_engine.compactor.fresh_pays(g, prepared.covers_through, view.used(g)[0], warm=True)
    outcome = await small_engine.compact(sid, "auto")
    assert outcome.ok, outcome.message
    record = await small_engine.store.active_compaction(sid)
    assert record is not None and record.trigger == "background" and record.stats.get("prepared")
    assert len(summary_requests(fake_api)) == asked  # no new summary request: the prepared one was used


async def test_a_background_summary_turns_older_than_pays_is_made_afresh(small_engine, fake_api):
    # Prepared two turns before the threshold: by the time it is due the verbatim tail has moved on by those
    # turns, which the prepared summary would leave in the prompt. In an 8K window a fresh summary pays over
    # it, and is made (it was committed before, leaving the turns since behind). The engine prepares one for the
    # next turn only (test_compaction_schedule); an older one is made here as a longer turn would leave it.
    small_engine.settings.prepare_ratio = 0.3
    small_engine.settings.auto_compact_ratio = 0.7
    sid = (await small_engine.store.create_session("bg2", "claude-test")).id
    compactor, view = small_engine.compactor, small_engine.view(sid)
    for turn in range(12):
        await converse(small_engine, fake_api, sid, 1, start=turn)
        await small_engine.tasks.wait(sid, "prepare")
        assert not summary_requests(fake_api)  # not yet due at the next turn
        g = await view.gather()
        used = (await small_engine.measure(sid)).used
        if used + 2 * compactor.growth(g) >= (compactor.threshold("claude-test") or 0):
            await compactor.prepare(
                g, view, small_engine._conversation(sid).compaction
            )  # two turns before it
            break
    assert summary_requests(fake_api)
    prepared = small_engine._conversation(sid).compaction.prepared
    asked = len(summary_requests(fake_api))
    for turn in range(20, 26):  # the next sends cross the threshold
        fake_api.queue_text(f"after {turn}")
        await small_engine.send(sid, f"next {turn} " + prose(300, turn))
        if await small_engine.store.active_compaction(sid) is not None:
            break
    record = await small_engine.store.active_compaction(sid)
    assert record is not None and record.trigger == "auto" and not record.stats.get("prepared")
    assert record.covers_through_message_id > prepared.covers_through
    assert len(summary_requests(fake_api)) == asked + 1


async def test_no_background_summary_while_the_threshold_is_far(small_engine, fake_api):
    small_engine.settings.prepare_ratio = 0.3
    small_engine.settings.auto_compact_ratio = 0.95
    sid = (await small_engine.store.create_session("far", "claude-test")).id
    for i in range(5):  # an earlier part of the conversation: past the prepare mark already
        await small_engine.store.add_message(sid, "user", [{"type": "text", "text": prose(250, i)}])
        await small_engine.store.add_message(sid, "assistant", [{"type": "text", "text": prose(250, i + 9)}])
    for turn in range(4):
        fake_api.queue_text(f"short answer {turn}")
        await small_engine.send(sid, f"short question {turn} " + prose(120, turn))
        await small_engine.tasks.wait(sid, "prepare")
    assert (await small_engine.measure(sid)).used > 0.3 * small_engine.compactor.budget("claude-test")
    assert summary_requests(fake_api) == []  # past the prepare mark, but growing too slowly to need one


async def test_overflow_recovers_invisibly_when_the_server_window_is_smaller(
    small_engine, fake_api, monkeypatch
):
    # The estimator believes 8,000; the server really has 5,000. Summaries wait until 80 % of the believed
    # room, so the requests outgrow the real window before any automatic summary.
    fake_api.window = 5_000
    small_engine.settings.auto_compact_ratio = 0.8
    sid = (await small_engine.store.create_session("ptl", "claude-test")).id
    await converse(small_engine, fake_api, sid, 12)
    assert not [e for e in small_engine.events if isinstance(e, TurnError)]
    overflowed = [r for r in chat_requests(fake_api) if r.status == 400]
    assert overflowed, "the scenario must actually overflow at least once"
    assert small_engine.catalog.info("claude-test").window == 5_000  # learned from "N tokens > M maximum"
    for bad in overflowed:
        nxt = next(
            r
            for r in fake_api.message_requests()
            if r.seq > bad.seq and SUMMARY_MARKER not in str(r.body.get("system", ""))
        )
        assert nxt.status == 200


@pytest.mark.loopback  # an SSE error event mid-stream
async def test_retry_after_overflow_does_not_duplicate_partial_reply(small_engine, fake_api):
    sid = (await small_engine.store.create_session("dup", "claude-test")).id
    await converse(small_engine, fake_api, sid, 2)
    fake_api.queue_fault(Fault.sse_error(after=3))
    fake_api.queue_text("partial answer that breaks " * 10)
    await small_engine.send(sid, "break please")
    fake_api.queue_text("clean answer")
    await small_engine.retry(sid)
    body = chat_requests(fake_api)[-1].body
    assert "partial answer that breaks" not in str(body["messages"])


async def test_every_trigger_writes_the_boundary_the_same_way(small_engine, fake_api):
    results = {}
    for trigger in ("manual", "auto", "reactive"):
        sid = (await small_engine.store.create_session(trigger, "claude-test")).id
        await converse(small_engine, fake_api, sid, 6)
        outcome = await small_engine.compact(sid, trigger)
        assert outcome.ok, (trigger, outcome.message)
        history = await small_engine.store.messages(sid)
        record = outcome.record
        covered = [m for m in history if m.id <= record.covers_through_message_id]
        results[trigger] = (len(covered), record.trigger, bool(record.stats.get("pins_text")))
    assert {v[0] for v in results.values()} == {results["manual"][0]}
    assert all(v[2] for v in results.values())
    assert [v[1] for v in results.values()] == ["manual", "auto", "reactive"]


async def test_edit_and_resend_drops_summaries_of_deleted_messages(small_engine, fake_api):
    """A summary of edited-away messages must never stay active: it would put back text the user removed."""
    sid = (await small_engine.store.create_session("edit", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    outcome = await small_engine.compact(sid, "manual")
    assert outcome.ok
    boundary = outcome.record.covers_through_message_id
    history = await small_engine.store.messages(sid)
    first_user_inside = next(m for m in history if m.role == "user" and m.id <= boundary)
    fake_api.queue_text("fresh start")
    await small_engine.edit_and_resend(sid, first_user_inside.id, "Instruction X: use spaces instead")
    assert await small_engine.store.active_compaction(sid) is None
    after = await small_engine.store.messages(sid)
    assert [m.content[0]["text"] for m in after][-2:] == ["Instruction X: use spaces instead", "fresh start"]
    assert after[-2].id > history[-1].id  # ids are never reused, so no old summary can cover the new rows
    body = str(chat_requests(fake_api)[-1].body)
    assert "conversation-summary" not in body and "keep using tabs" not in body.split("Instruction X")[-1]


async def test_edit_after_the_boundary_keeps_the_summary(small_engine, fake_api):
    sid = (await small_engine.store.create_session("edit2", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    outcome = await small_engine.compact(sid, "manual")
    last_user = [m for m in await small_engine.store.messages(sid) if m.role == "user"][-1]
    assert last_user.id > outcome.record.covers_through_message_id
    fake_api.queue_text("ok")
    await small_engine.edit_and_resend(sid, last_user.id, "changed my mind")
    assert (await small_engine.store.active_compaction(sid)).id == outcome.record.id
    assert "conversation-summary" in str(chat_requests(fake_api)[-1].body["messages"][0])


async def test_delete_message_and_clear_history_keep_the_boundary_consistent(small_engine, fake_api):
    sid = (await small_engine.store.create_session("del", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    outcome = await small_engine.compact(sid, "manual")
    covered = next(
        m for m in await small_engine.store.messages(sid) if m.id <= outcome.record.covers_through_message_id
    )
    await small_engine.delete_message(sid, covered.id)
    request = await request_of(small_engine, sid)
    assert request["messages"][0]["content"][0]["text"].startswith("<conversation-summary>")
    assert problems(request["messages"]) == []
    await small_engine.clear_history(sid)
    assert await small_engine.store.messages(sid) == []
    assert await small_engine.store.compactions(sid) == []
    assert (await small_engine.store.get_state(sid)).get("breaker_failures", 0) == 0
    fake_api.queue_text("clean slate")
    reply = await small_engine.send(sid, "hello again")
    assert reply.content[0]["text"] == "clean slate"
    assert [m["role"] for m in chat_requests(fake_api)[-1].body["messages"]] == ["user"]


async def test_a_prepared_summary_that_frees_too_little_is_not_committed(small_engine, fake_api):
    # A summary prepared on an older state may cover little of what the context is now: committing it re-writes
    # the whole prompt cache for a saving under MIN_SAVING (seen: 51,935 -> 47,546 tokens at 100K).
    from desktop.engine.compaction.compactor import MIN_SAVING, Prepared
    from desktop.engine.metering.tokens import estimate_message

    small_engine.settings.prepare_ratio = 0.99  # only the summary this test prepares
    sid = (await small_engine.store.create_session("stale", "claude-test")).id
    await converse(small_engine, fake_api, sid, 8)
    view = small_engine.view(sid)
    g = await view.gather()
    before, _source = view.used(g)
    head, _tail = small_engine.compactor.split(g)
    assert len(head) >= 2
    # Prepared when only the oldest messages were old enough: the most of them that still save under 10 %.
    sizes = [estimate_message(m.content) for m in head]
    k = max(n for n in range(1, len(head)) if sum(sizes[:n]) < MIN_SAVING * before)
    first = head[:k]
    assert 2 <= k < len(head)
    small_engine._conversation(sid).compaction.prepared = Prepared(
        g.boundary, first[-1].id, "prepared: the first question", {}
    )
    await commits_a_fresh_summary(small_engine, fake_api, sid, head)


async def commits_a_fresh_summary(engine, fake_api, sid: int, head: list) -> None:  # noqa: ANN001
    """The next automatic compaction leaves the prepared summary and asks for one of the whole head."""
    asked = len(summary_requests(fake_api))
    outcome = await engine.compact(sid, "auto")
    assert outcome.ok, outcome.message
    assert not outcome.record.stats.get("prepared")
    assert outcome.record.covers_through_message_id == head[-1].id
    assert len(summary_requests(fake_api)) == asked + 1  # a fresh summary of the whole head


async def a_long_head(engine, title: str):  # noqa: ANN001, ANN201
    """A chat of long replies, no summary prepared but the test's own: (id, its gathered history, the tokens it
    uses, the head a summary would cover)."""
    engine.settings.prepare_ratio = 0.99
    sid = (await engine.store.create_session(title, "claude-test")).id
    await long_replies(engine, sid)
    view = engine.view(sid)
    g = await view.gather()
    before, _source = view.used(g)
    head, _tail = engine.compactor.split(g)
    return sid, g, before, head


async def long_replies(engine, sid: int, turns: int = 12) -> None:
    """A session of short questions and long answers (tool output, say): most of it is what a summary frees."""
    for i in range(turns):
        await engine.store.add_message(sid, "user", [{"type": "text", "text": f"q{i}"}])
        await engine.store.add_message(sid, "assistant", [{"type": "text", "text": f"a{i} " + prose(320, i)}])


async def test_a_prepared_summary_a_fresh_one_outpays_is_replaced(small_engine, fake_api):
    # A summary prepared turns before it is due covers only the head of that time: committed, it leaves the
    # turns since in the prompt, re-written now and read on every turn until the next summary, which also
    # comes sooner (the corpus at 32K billed 4.21M with background summaries, 3.72M without). When a fresh
    # summary of the whole head costs less than that, by the model's prices, it is made instead.
    from desktop.engine.compaction.compactor import MIN_SAVING, Prepared
    from desktop.engine.metering.tokens import estimate_message

    sid, g, before, head = await a_long_head(small_engine, "older")
    # Prepared when about half of today's head was old enough: it frees well over MIN_SAVING, so the rule
    # before committed it.
    sizes = [estimate_message(m.content) for m in head]
    k = min(n for n in range(1, len(head)) if sum(sizes[:n]) >= 2 * MIN_SAVING * before)
    assert k < len(head) - 2
    older = head[:k]
    assert small_engine.compactor.fresh_pays(g, older[-1].id, before, warm=True)
    small_engine._conversation(sid).compaction.prepared = Prepared(
        g.boundary, older[-1].id, "prepared: the first questions", {}
    )
    await commits_a_fresh_summary(small_engine, fake_api, sid, head)


async def test_a_prepared_summary_nearly_as_fresh_is_committed(small_engine, fake_api):
    # The counterpart: prepared one message short of today's head, a fresh summary would free too little more
    # to pay for its request; the prepared one is committed and no summary is asked for.
    from desktop.engine.compaction.compactor import Prepared

    sid, g, before, head = await a_long_head(small_engine, "recent")
    assert not small_engine.compactor.fresh_pays(g, head[-2].id, before, warm=True)
    small_engine._conversation(sid).compaction.prepared = Prepared(
        g.boundary, head[-2].id, "prepared: nearly all of it", {}
    )
    asked = len(summary_requests(fake_api))
    outcome = await small_engine.compact(sid, "auto")
    assert outcome.ok, outcome.message
    assert outcome.record.stats.get("prepared")
    assert len(summary_requests(fake_api)) == asked


async def test_a_history_many_windows_long_is_summarised_in_chunks_that_each_fit(small_engine, fake_api):
    # A giant history once sent summary requests of 3.6-8.7x the window before falling back to a snip; each
    # summary request is now sized to fit before it is sent, oldest part first, with nothing dropped.
    sid = (await small_engine.store.create_session("giant", "claude-test")).id
    for i in range(60):  # ~36,000 tokens: 4.5 windows of 8,000
        await small_engine.store.add_message(
            sid, "user", [{"type": "text", "text": f"q{i} " + prose(250, i)}]
        )
        await small_engine.store.add_message(
            sid, "assistant", [{"type": "text", "text": f"a{i} " + prose(200, i)}]
        )
    outcome = await small_engine.compact(sid, "manual")
    assert outcome.ok, outcome.message
    asked = summary_requests(fake_api)
    assert len(asked) >= 4
    assert all(r.status == 200 and r.prompt_tokens <= fake_api.window for r in asked)
    stats = outcome.record.stats
    # One request a part, and one per section of a part whose summary came back cut short (salvage.py).
    assert (
        stats["chunks"] + stats.get("section_requests", 0) == len(asked) and stats["dropped_for_length"] == 0
    )
    # The chunks run oldest first, each folding in the summary so far.
    first, last = (r.body["messages"][0]["content"][0]["text"] for r in (asked[0], asked[-1]))
    assert "q0 " in first and "<previous-summary>" not in first
    assert "<previous-summary>" in last


async def test_a_summary_that_would_free_little_waits_while_there_is_room(small_engine, fake_api):
    # Past the threshold, but nearly all of the context is the newest tool round: a summary now frees under
    # MIN_SAVING, and the deeper cut it would need drops the newest tool results. With room left it waits.
    from desktop.engine.compaction.compactor import MIN_SAVING

    sid = (await small_engine.store.create_session("wait", "claude-test")).id
    add = small_engine.store.add_message
    for i in range(3):
        await add(sid, "user", [{"type": "text", "text": f"q{i} " + prose(20, i)}])
        await add(sid, "assistant", [{"type": "text", "text": f"a{i} " + prose(20, i)}])
    await add(sid, "user", [{"type": "text", "text": "read the three logs"}])
    await add(
        sid,
        "assistant",
        [
            {"type": "tool_use", "id": f"t{k}", "name": "read", "input": {"path": f"{k}.log"}}
            for k in range(3)
        ],
    )
    await add(
        sid,
        "user",
        [{"type": "tool_result", "tool_use_id": f"t{k}", "content": prose(700, k)} for k in range(3)],
    )
    view = small_engine.view(sid)
    g = await view.gather()
    used, _source = view.used(g)
    budget = small_engine.compactor.budget("claude-test")
    assert 0.3 * budget < used < 0.8 * budget
    head, _tail = small_engine.compactor.split(g)
    assert small_engine.compactor._saving(g, head) < MIN_SAVING * used
    small_engine.settings.auto_compact_ratio = 0.9 * used / budget  # past the threshold
    assert not small_engine.compactor.needs_summary(g, used)
    # Close to the end of the room it compacts after all (deeper, if it must).
    assert small_engine.compactor.needs_summary(g, int(0.85 * budget))


async def test_a_summary_keeps_the_newest_ten_tool_rounds_verbatim_when_they_fit(small_engine, fake_api):
    from desktop.engine.compaction.compactor import KEEP_ROUNDS

    sid = (await small_engine.store.create_session("rounds", "claude-test")).id
    add = small_engine.store.add_message
    await add(sid, "user", [{"type": "text", "text": "fix the build " + prose(200, 1)}])
    for r in range(30):
        await add(sid, "assistant", [{"type": "tool_use", "id": f"t{r}", "name": "run", "input": {"n": r}}])
        await add(sid, "user", [{"type": "tool_result", "tool_use_id": f"t{r}", "content": prose(60, r)}])
    await add(sid, "assistant", [{"type": "text", "text": "done " + prose(30, 3)}])
    outcome = await small_engine.compact(sid, "manual")
    assert outcome.ok, outcome.message
    view = small_engine.view(sid)
    request = view.request(await view.gather())
    kept = [
        b["tool_use_id"] for m in request["messages"] for b in m["content"] if b.get("type") == "tool_result"
    ]
    assert kept[-KEEP_ROUNDS:] == [f"t{r}" for r in range(30 - KEEP_ROUNDS, 30)]
