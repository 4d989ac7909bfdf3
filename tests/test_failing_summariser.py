"""A summariser that answers garbage costs little and is never the chat's memory (QA: with one, every compaction
sent a summary and six section requests, fully uncached, and stored the junk). Two such summarisers, through the
real SDK against the loopback server: one that writes one sentence under every heading, one that answers with
lines copied from the conversation. Each compaction asks at most 1 + GIVE_UP_AFTER times, nothing they wrote is
stored as the summary, the chat goes on by trims, and its requests keep reading the cache."""

from __future__ import annotations

import pytest

from desktop.engine.events import TurnError
from tests.test_compaction_engine import chat_requests, prose, summary_requests
from tests.test_summary_junk import everywhere

# The stated bound: the summary, then section requests until two (salvage.GIVE_UP_AFTER) fail in a row. A number,
# not the constant: a larger GIVE_UP_AFTER is a more expensive failing summariser, which this test must catch.
PER_COMPACTION = 3
TURNS = 30


def _junk(_i: int) -> str:
    return everywhere("The user is working on the project.")


def _echo(i: int) -> str:
    return f"Answer {i % 6}: " + prose(120, i % 6)  # an assistant message of the chat, word for word


async def _rescript(engine, srv, sid: int, answer) -> None:  # noqa: ANN001
    """Before each turn: the echoing summariser answers with the starts of the chat's own replies it can see
    (those after the boundary: the ones a summary request carries); the junk one as it always does."""
    srv._summary_replies.clear()
    if not [c for c in await engine.store.compactions(sid) if c.trigger != "snip"]:
        return  # the summariser works until the chat has a summary: later ones can carry its sections
    if answer is _junk:
        srv.queue_summary(*[_junk(i) for i in range(20)])
        return
    boundary = await engine.store.active_compaction(sid) or None
    after = boundary.covers_through_message_id if boundary else 0
    replies = [
        m.content[0]["text"]
        for m in await engine.store.messages(sid, after_id=after)
        if m.role == "assistant" and m.content and m.content[0].get("type") == "text"
    ]
    srv.queue_summary(
        *[" ".join(replies[i % len(replies)].split()[:40]) for i in range(20)] if replies else []
    )


@pytest.mark.parametrize("answer", [_junk, _echo], ids=["one-sentence-everywhere", "copies-of-the-chat"])
async def test_a_failing_summariser_costs_a_bounded_number_of_requests_and_the_chat_trims(
    small_engine, fake_api, answer
):
    sid = (await small_engine.store.create_session("junk", "claude-test")).id
    per_turn: list[int] = []
    first_summary_seq = 0
    for turn in range(TURNS):
        await _rescript(small_engine, fake_api, sid, answer)
        if not first_summary_seq and fake_api._summary_replies:  # the failing summariser answers from now on
            first_summary_seq = fake_api.requests[-1].seq
        before = (len(summary_requests(fake_api)), len(await small_engine.store.compactions(sid)))
        fake_api.queue_text(f"Answer {turn}: " + prose(120, turn))
        await small_engine.send(sid, f"Instruction {turn}: keep using tabs. " + prose(140, turn + 100))
        await small_engine.tasks.wait(sid, "prepare")
        asked = len(summary_requests(fake_api)) - before[0]
        compacted = len(await small_engine.store.compactions(sid)) - before[1]
        per_turn.append(asked)
        # A turn compacts at most once in its request and once in the background after it.
        assert asked <= 2 * PER_COMPACTION, (turn, asked, compacted)
    assert not [e for e in small_engine.events if isinstance(e, TurnError)]
    assert all(r.status == 200 for r in chat_requests(fake_api))
    rows = await small_engine.store.compactions(sid)
    assert rows and rows[0].trigger != "snip", "the scenario must summarise first, then fail"
    rows = rows[1:]
    assert rows, "the scenario must compact with the failing summariser"
    assert not [
        r for r in rows if "The user is working on the project" in r.summary
    ]  # never the chat's memory
    assert all("summary_error" in r.stats and r.stats["summary_error"] for r in rows)
    assert all(r.trigger == "snip" for r in rows)
    # Summary requests are a small part of what the chat sent: the breaker pauses them between tries.
    summaries = [r for r in summary_requests(fake_api) if r.seq > first_summary_seq]
    assert len(summaries) <= PER_COMPACTION * (len(rows) + 2), (
        len(summaries),
        len(rows),
        str(per_turn),
        [r.trigger for r in rows],
    )
    sent = sum(r.prompt_tokens or 0 for r in fake_api.message_requests())
    assert sum(r.prompt_tokens or 0 for r in summaries) < 0.5 * sent
    # After the first trim most chat requests read the cache (a trim re-writes once, the next turns read it).
    first = next(i for i, r in enumerate(chat_requests(fake_api)) if r.seq > summaries[0].seq)
    later = chat_requests(fake_api)[first:]
    reading = [r for r in later if (r.usage or {}).get("cache_read_input_tokens", 0) > 0]
    assert len(reading) >= 0.6 * len(later), (len(reading), len(later))
