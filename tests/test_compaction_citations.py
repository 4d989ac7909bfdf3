"""Summaries cite their sources: the summariser sees message ids (in the transcript, or indexed after a cached
request's messages), is asked to end each item with [#id], its sections check accepts an update that cites
differently, and the engine's summary (the test server's summariser) carries ids of the chat's messages."""

from __future__ import annotations

from desktop.engine.compaction import sections
from desktop.engine.compaction.citations import RULE, cited_ids, message_index, strip_citations
from desktop.engine.compaction.summary_prompt import build_summary_request
from desktop.engine.compaction.summary_route import cached_request
from desktop.engine.types import StoredMessage
from tests.test_compaction_engine import converse, summary_requests


def _m(mid: int, role: str, text: str) -> StoredMessage:
    return StoredMessage(id=mid, session_id=1, role=role, content=[{"type": "text", "text": text}])


def test_the_transcript_shows_each_messages_id_and_the_prompt_asks_for_citations():
    req = build_summary_request(
        [_m(41, "user", "Which journal mode?"), _m(42, "assistant", "WAL, because …")],
        previous_summary=None,
        focus=None,
        max_tokens=1000,
    )
    body = req["messages"][0]["content"][0]["text"]
    assert "User [#41]: Which journal mode?" in body and "Assistant [#42]: WAL" in body
    assert RULE in req["system"]


def test_a_cached_request_lists_the_ids_after_its_messages_not_in_them():
    messages = [{"role": "user", "content": [{"type": "text", "text": "Which journal mode?"}]}]
    index = message_index([_m(41, "user", "Which journal mode do we use here and why?")])
    assert index.endswith("#41 user: «Which journal mode do we use»")
    req = cached_request(
        {"messages": messages, "system": "s"},
        tail_start=None,
        previous=False,
        focus=None,
        max_tokens=100,
        index=index,
    )
    assert req["messages"][0]["content"][0] == messages[0]["content"][0]  # the cached prefix unchanged
    assert (
        index in req["messages"][0]["content"][-1]["text"]
        and RULE in req["messages"][0]["content"][-1]["text"]
    )


def test_cited_ids_reads_single_lists_and_ranges_in_order():
    text = (
        "- WAL because the CLI reads [#42]\n- tabs [#7, #9] and [#12-#14]; again [#42]; not a cite #5 or [5]"
    )
    assert cited_ids(text) == [42, 7, 9, 12, 13, 14]
    assert strip_citations("- tabs [#7, #9] only") == "- tabs only"
    assert cited_ids("[#1-#100000]") == [1, 100000]  # a huge range names its ends only


def test_an_update_that_cites_other_messages_does_not_count_as_dropping_an_item():
    cites = ", ".join(f"#{i}" for i in range(1, 80))
    previous = sections.render(
        {k: "None" for k in sections.KEYS}
        | {"decisions": f"- WAL mode because the CLI reads while the app writes [{cites}]"}
    )
    new = sections.render(
        {k: "unchanged" for k in sections.KEYS}
        | {"decisions": "- WAL mode because the CLI reads while the app writes [#3]"}
    )
    _text, problem = sections.accept(new, previous)
    assert problem is None


async def test_the_engines_summary_cites_ids_of_the_chats_own_messages(small_engine, fake_api):
    sid = (await small_engine.store.create_session("cite", "claude-test")).id
    await small_engine.store.add_message(sid, "user", [{"type": "text", "text": "Which journal mode?"}])
    decision = await small_engine.store.add_message(
        sid,
        "assistant",
        [{"type": "text", "text": "We decided on WAL mode because the CLI reads while the app writes."}],
    )
    await converse(small_engine, fake_api, sid, 5)
    outcome = await small_engine.compact(sid, "manual")
    assert outcome.ok and outcome.record is not None, outcome.message
    summary = outcome.record.summary
    line = next(ln for ln in summary.splitlines() if "WAL mode" in ln)
    assert line.endswith(f"[#{decision.id}]")
    ids = {m.id for m in await small_engine.store.messages(sid)}
    assert cited_ids(summary) and set(cited_ids(summary)) <= ids
    assert summary_requests(fake_api)
