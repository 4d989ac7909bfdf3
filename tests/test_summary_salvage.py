"""A sectioned summary that fails its check is salvaged section by section before the chat trims: the sections
that passed are kept, each other one is asked for alone with a short prompt, and what still fails is carried from
the previous summary. A model that writes nothing usable still ends in a trim, with the breaker counting it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.engine.compaction import salvage, sections
from tests.test_compaction_engine import converse as converse_in_prose
from tests.test_compaction_engine import prose, summary_requests

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process

RECORDED = {
    case["id"]: case["reply"]
    for case in json.loads(
        (Path(__file__).parent / "data" / "local_model_summaries.json").read_text(encoding="utf-8")
    )
}
# What a small local model wrote where a section should be (recorded replies, see test_summary_degenerate.py),
# cut so the whole reply fits the summary's output cap at an 8K window.
LOOPING = RECORDED["gemma-270m-compaction-2"][:800]  # the last exchange echoed, then one letter over and over
RESTATING = RECORDED["gemma-270m-seed1-compaction-3"][:600]  # the request's tags, one line over and over

# Three sections a chat can go on from, two made of looping filler, one missing.
PARTIAL = (
    "## Goal\nMove the settings store to SQLite in WAL mode without losing the user's drafts.\n\n"
    "## User instructions and constraints\n- keep using tabs\n- never drop a draft on upgrade\n\n"
    "## Decisions and why\n" + LOOPING + "\n\n"
    "## Current state\nDone:\n- schema written\nIn progress:\n- the migration of drafts\nBlocked:\nNone\n\n"
    "## Errors and fixes\n" + RESTATING + "\n"
)
# What the conversation is about, said in every turn: a salvaged section must be about the conversation
# (salvage.off_topic), so the summaries above and the answers below are drawn from these words.
ASKED = (
    "Move the settings store to SQLite in WAL mode without losing the user's drafts; keep using tabs, never "
    "drop a draft on upgrade."
)
DONE = (
    "The schema is written; the migration of drafts is in progress. WAL journal mode, because the CLI reads "
    "while the app writes. `database is locked` on upgrade: fixed by a busy timeout of 5 s. Next: write the "
    "drafts migration test, then run it on the old store."
)


async def converse(engine, srv, sid: int, turns: int, start: int = 0) -> None:
    for i in range(start, start + turns):
        srv.queue_text(f"Answer {i}: {DONE} " + prose(70, i))
        await engine.send(sid, f"Instruction {i}: {ASKED} " + prose(115, i + 100))


ANSWERS = {
    "decisions": "- WAL journal mode, because the CLI reads while the app writes",
    "errors": "- `database is locked` on upgrade: fixed by a busy timeout of 5 s",
    "next": "Write the drafts migration test, then run it on the old store.",
}


async def test_a_summary_with_looping_sections_is_completed_section_by_section_not_trimmed(
    small_engine, fake_api
):
    sid = (await small_engine.store.create_session("s", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    asked_before = len(summary_requests(fake_api))
    fake_api.queue_summary(PARTIAL, ANSWERS["decisions"], ANSWERS["errors"], ANSWERS["next"])
    outcome = await small_engine.compact(sid, "auto")
    record = await small_engine.store.active_compaction(sid)
    assert outcome.ok and record is not None and record.trigger == "auto", record and record.stats
    assert len(await small_engine.store.compactions(sid)) == 1  # no trim
    parsed = sections.parse(record.summary)
    assert parsed is not None and set(parsed) == set(sections.KEYS)
    assert (
        "WAL mode without losing the user's drafts" in parsed["goal"]
    )  # the passing sections kept as written
    assert "migration of drafts" in parsed["state"]
    for key, answer in ANSWERS.items():  # ... and the others answered one by one
        assert parsed[key] == answer
    assert "e e e e" not in record.summary and "asked to explain" not in record.summary
    # Where each section came from, in the compaction's stats; one short request per missing section.
    assert record.stats["section_sources"] == {
        "goal": "summary",
        "instructions": "summary",
        "decisions": "asked",
        "state": "summary",
        "errors": "asked",
        "next": "asked",
    }
    assert record.stats["section_requests"] == 3
    assert len(summary_requests(fake_api)) - asked_before == 4
    assert (await small_engine.store.get_state(sid))["breaker_failures"] == 0


async def a_second_summary_due(engine, srv):  # noqa: ANN001, ANN201
    """A chat with the fake's own sectioned summary (every section there) and four turns since: (id, that
    compaction, its sections)."""
    sid = (await engine.store.create_session("p", "claude-test")).id
    engine.settings.auto_compact_ratio = 0.95  # only the test's compactions
    await converse_in_prose(engine, srv, sid, 6)
    await engine.compact(sid, "auto", target=2_500)
    first = await engine.store.active_compaction(sid)
    assert first is not None and first.trigger == "auto"
    await converse(engine, srv, sid, 4, start=6)
    return sid, first, sections.parse(first.summary)


async def test_sections_still_unusable_are_carried_from_the_previous_summary(small_engine, fake_api):
    sid, first, old = await a_second_summary_due(small_engine, fake_api)
    fake_api.queue_summary(PARTIAL, LOOPING, RESTATING, LOOPING, LOOPING)  # every section answer unusable
    outcome = await small_engine.compact(sid, "auto", target=2_500)
    record = await small_engine.store.active_compaction(sid)
    assert outcome.ok and record is not None and record.trigger == "auto" and record.id != first.id, (
        record.stats
    )
    sources = record.stats["section_sources"]
    assert {k for k, v in sources.items() if v == "summary"} == {"goal", "instructions", "state"}
    assert {k for k, v in sources.items() if v == "previous"} == {"decisions", "errors", "next"}
    parsed = sections.parse(record.summary)
    assert parsed is not None and parsed["next"] == old["next"] and parsed["errors"] == old["errors"]
    # The model failed twice in a row: it is not asked for the third section.
    assert record.stats["section_requests"] == salvage.GIVE_UP_AFTER


async def test_a_summary_cut_at_its_reply_cap_keeps_its_whole_sections_and_carries_the_rest(
    small_engine, fake_api
):
    # A reply stopped at max_tokens: the sections written before the cut are whole, the one it stops in is not,
    # and the ones after it were never written. Those come from the previous summary, as the model would have
    # marked them unchanged, rather than one request per section (each re-reads the whole prompt).
    sid, first, old = await a_second_summary_due(small_engine, fake_api)
    asked_before = len(summary_requests(fake_api))
    cut = (
        "## Goal\nMove the settings store to SQLite in WAL mode without losing the user's drafts.\n\n"
        "## User instructions and constraints\n- keep using tabs\n- never drop a draft on upgrade\n\n"
        "## Decisions and why\n- WAL journal mode, because the CLI reads while the app writes\n\n"
        "## Current state\nDone:\n- schema written\nIn progress:\n"
        + "\n".join(f"- the migration of drafts, table {k} of the old store" for k in range(400))
    )
    fake_api.queue_summary(cut)  # longer than any reply cap: the server stops it in Current state
    outcome = await small_engine.compact(sid, "auto", target=2_500)
    record = await small_engine.store.active_compaction(sid)
    assert outcome.ok and record is not None and record.trigger == "auto" and record.id != first.id, (
        record.stats
    )
    assert len(summary_requests(fake_api)) - asked_before == 1  # no request per section
    assert record.stats["section_requests"] == 0
    sources = record.stats["section_sources"]
    assert {k for k, v in sources.items() if v == "summary"} == {"goal", "instructions", "decisions"}
    assert {k for k, v in sources.items() if v == "previous"} == {"state", "errors", "next"}
    parsed = sections.parse(record.summary)
    assert parsed is not None and parsed["state"] == old["state"] and parsed["next"] == old["next"]
    assert "table 399" not in record.summary


def test_carried_sections_give_up_their_oldest_items_so_a_cut_summary_fits_its_cap():
    # A model cut at its cap wrote what it had room for; carrying every older section whole on top grew the
    # summary past the cap at every compaction (2.3x at 100K in the replay), read by every later request. The
    # carried sections keep their newest items within the cap, or within half the previous summary, below
    # which a summary must account for what it dropped.
    from desktop.engine.metering.tokens import estimate_text

    done = "\n".join(f"- step {k} of the migration finished, table t{k} copied" for k in range(120))
    previous = sections.render(
        {
            "goal": "Move the settings store to SQLite in WAL mode.",
            "instructions": "- keep using tabs",
            "decisions": "- WAL journal mode, because the CLI reads while the app writes",
            "state": "Done:\n" + done + "\nIn progress:\n- the drafts table",
            "errors": "None",
            "next": "Copy the drafts table.",
        }
    )
    cut = (
        "## Goal\nMove the settings store to SQLite in WAL mode without losing drafts.\n\n"
        "## User instructions and constraints\n- keep using tabs\n- never drop a draft\n\n"
        "## Decisions and why\n- WAL journal mode, because the CLI reads while the app writes\n- busy time"
    )
    before = estimate_text(previous)
    room = before // 4
    found = salvage.start(cut, previous, cut=True, room=room)
    summary, problem = salvage.assemble(found, previous)
    assert problem is None, problem
    assert (
        found.sources["state"] is salvage.Source.PREVIOUS
        and found.sources["decisions"] is salvage.Source.PREVIOUS
    )
    assert estimate_text(summary) <= before // 2 + 20  # half the previous: the most it may shrink unexplained
    state = sections.parse(summary)["state"]
    assert "table t119 copied" in state and "table t0 copied" not in state  # the newest items stay
    assert state.startswith("Done:") and "In progress:" in state  # sub-headings stay
    unbounded = salvage.start(cut, previous, cut=True)
    assert "table t0 copied" in sections.parse(salvage.assemble(unbounded, previous)[0])["state"]


async def test_every_section_answer_unusable_still_trims_and_counts_toward_the_breaker(
    small_engine, fake_api
):
    sid = (await small_engine.store.create_session("g", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    asked_before = len(summary_requests(fake_api))
    fake_api.queue_summary(PARTIAL, *[LOOPING] * 10)
    outcome = await small_engine.compact(sid, "auto", target=1_500)
    record = await small_engine.store.active_compaction(sid)
    assert outcome.ok and record is not None and record.trigger == "snip"
    assert LOOPING[:200] not in record.summary
    assert record.stats["summary_error"] and PARTIAL[:300] in record.stats["rejected_summary"]
    assert (await small_engine.store.get_state(sid))["breaker_failures"] == 1
    # No previous summary to carry from: the first unusable answer ends the asking (the summary cannot be whole).
    assert len(summary_requests(fake_api)) - asked_before == 2


def test_looping_filler_in_a_section_fails_the_check():
    parsed = sections.parse(PARTIAL + "\n## Next step\nShip it.\n")
    assert parsed is not None and set(parsed) == set(sections.KEYS)
    problem = sections.check(parsed, None)
    assert problem is not None and "Decisions and why" in problem
    assert sections.loops(LOOPING) and sections.loops(RESTATING)
    assert sections.loops("\n".join(ANSWERS.values())) is None


def test_a_section_answer_that_writes_other_sections_is_not_taken_for_the_one_asked():
    found = salvage.start(PARTIAL, None)
    assert not salvage.take_answer(found, "next", "## Goal\nSomething else entirely, at length.")
    assert salvage.take_answer(found, "next", "## Next step\nRun the migration test.")
    assert found.found["next"] == "Run the migration test." and found.sources["next"] is salvage.Source.ASKED


async def test_section_requests_are_bounded_per_compaction_across_the_parts_of_a_long_history(
    small_engine, fake_api
):
    sid = (await small_engine.store.create_session("giant", "claude-test")).id
    for i in range(60):  # several windows long: summarised in parts, each folding in the summary so far
        await small_engine.store.add_message(
            sid, "user", [{"type": "text", "text": f"q{i} {ASKED} " + prose(230, i)}]
        )
        await small_engine.store.add_message(
            sid, "assistant", [{"type": "text", "text": f"a{i} {DONE} " + prose(160, i)}]
        )
    half = (
        PARTIAL.split("## Decisions and why")[0]
        + "## Current state"  # three good sections, three missing
        + PARTIAL.split("## Current state")[1].split("## Errors and fixes")[0]
    )
    answers = list(ANSWERS.values())
    fake_api.queue_summary(*[reply for _part in range(2) for reply in (half, *answers)], *[half] * 20)
    outcome = await small_engine.compact(sid, "manual")
    # Two parts completed with three section requests each; after that the budget is spent and the later parts
    # carry their missing sections from the summary so far, without asking.
    assert outcome.ok, outcome.message
    stats = outcome.record.stats
    assert stats["chunks"] > 3 and stats["section_requests"] == salvage.MAX_ASKS
    assert len(summary_requests(fake_api)) == stats["chunks"] + salvage.MAX_ASKS
    assert set(stats["section_sources"].values()) == {"summary", "previous"}  # the last part's


async def test_a_transcript_summary_asks_for_no_more_output_than_its_chunk_left_room_for(
    small_engine, fake_api
):
    # The parts are sized to leave a reply of an eighth of a small window (SummaryMaker._chunks); a request asking
    # for 4,096 tokens there lets a small model that loops write until its context is full, which on a local
    # server is minutes per summary, and a provider may refuse the request as longer than the window.
    from desktop.engine.compaction.summary_maker import SUMMARY_MAX_TOKENS

    sid = (await small_engine.store.create_session("s", "claude-test")).id
    for i in range(8):
        await small_engine.store.add_message(
            sid, "user", [{"type": "text", "text": f"q{i} " + prose(140, i)}]
        )
        await small_engine.store.add_message(
            sid, "assistant", [{"type": "text", "text": f"a{i} " + prose(120, i)}]
        )
    before = len(summary_requests(fake_api))
    outcome = await small_engine.compact(sid, "reactive")  # after an overflow: not the chat's own request
    assert outcome.ok and outcome.record is not None, outcome.message
    assert outcome.record.stats["summary_route"] == "transcript"
    asked = [r.body for r in summary_requests(fake_api)[before:]]
    assert asked and all(body["max_tokens"] <= 8_000 // 8 < SUMMARY_MAX_TOKENS for body in asked), [
        body["max_tokens"] for body in asked
    ]


def test_section_requests_of_one_part_share_the_transcript_as_their_prefix():
    # A local server (llama.cpp) reuses the evaluated prompt only up to the first token that differs: with the
    # previous summary's section before the transcript, every section request read the whole transcript again
    # (minutes each on a CPU); after it, only the short instruction is new.
    previous = sections.render(
        {
            "goal": "Ship the store.",
            "instructions": "- tabs",
            "decisions": "- WAL",
            "state": "Done:\n- schema",
            "errors": "None",
            "next": "Migrate the drafts.",
        }
    )
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Move the store to SQLite, please."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "The schema is written."}]},
    ]
    contents = [
        salvage.transcript_request(messages, key, previous_summary=previous)["messages"][0]["content"]
        for key in ("goal", "next")
    ]
    texts = ["\n\n".join(block["text"] for block in content) for content in contents]
    assert texts[0].startswith("<transcript>") and texts[1].startswith("<transcript>")
    end = texts[0].index("</transcript>") + len("</transcript>")
    assert texts[0][:end] == texts[1][:end]
    assert "Ship the store." in texts[0] and "Migrate the drafts." in texts[1]  # the earlier text still sent
    # ... and a provider with a prompt cache reads it from there: the transcript is a block of its own, marked.
    assert contents[0][0] == contents[1][0] and contents[0][0]["text"].endswith("</transcript>")
    assert contents[0][0]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in block for content in contents for block in content[1:])


async def test_the_section_requests_of_a_part_read_its_transcript_from_the_prompt_cache(
    small_engine, fake_api
):
    # Every section request re-sent the whole transcript uncached (one block, no cache_control): six requests
    # of a part paid for it six times at the full input price.
    sid = (await small_engine.store.create_session("cache", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    before = len(summary_requests(fake_api))
    fake_api.queue_summary(PARTIAL, ANSWERS["decisions"], ANSWERS["errors"], ANSWERS["next"])
    outcome = await small_engine.compact(sid, "reactive")  # after an overflow: the transcript route
    assert outcome.ok and outcome.record is not None, outcome.message
    assert outcome.record.stats["summary_route"] == "transcript"
    asked = summary_requests(fake_api)[before + 1 :]  # the section requests, after the whole summary's
    assert len(asked) == 3 and all(len(r.body["messages"][0]["content"]) == 2 for r in asked)
    assert asked[0].usage["cache_creation_input_tokens"] > 1_000
    for later in asked[1:]:
        assert later.usage["cache_read_input_tokens"] == asked[0].usage["cache_creation_input_tokens"]
        assert later.usage["input_tokens"] < 200  # the instruction alone


# What SmolLM2-135M-Instruct (Q4_1, llama-server) answered when asked for each section alone, after its whole
# summary had been refused (tests/bench/bench_needles.py --server, seed 0, third compaction): fluent, passing every
# earlier check, and about nothing in the conversation. Salvaged so, it was accepted and replaced the originals.
CONFABULATED = {
    "goal": "The user has requested a summary of the conversation. In this case, there is only one part. The user "
    "has written the text to provide context, but there is no description of the conversation itself. "
    "They've just provided a summary of what was discussed.",
    "instructions": "The user provides a summary of a conversation in the English language. The user explains their "
    "decision-making process and the decision-making process is the next step. The user explains "
    "their reason for the decision and the user provides a continuation of their request.",
    "decisions": "The user provided a decision to edit an article and explained what they decided. They explained "
    "their reasons for the decision. They explained their reasons for the next steps.",
    "state": "The user provides a summary of a conversation in the English language, but their text is in the "
    "language of their choice. They provide a section with multiple lists in the same line with bold text.",
    "errors": '"Errors and fixes: A note from the gods:\n\nA user has written a note about a recent incident '
    "involving a tech startup. The user is attempting to edit and improve the note.\n\nThe user's note "
    "contains a message that seems to contain a typo.",
    "next": "The conversation began with a description of a task to edit an article and provided a clear outline "
    "of the next step in the user's request.",
}


async def test_sections_about_nothing_in_the_conversation_are_not_salvaged_into_a_summary(
    small_engine, fake_api
):
    sid = (await small_engine.store.create_session("c", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    fake_api.queue_summary(LOOPING, *CONFABULATED.values())  # no section at all, then each one asked alone
    outcome = await small_engine.compact(sid, "auto", target=1_500)
    record = await small_engine.store.active_compaction(sid)
    assert outcome.ok and record is not None and record.trigger == "snip", record and record.summary
    assert "tech startup" not in record.summary and record.stats["summary_error"]


def test_a_section_is_judged_by_the_words_it_shares_with_what_it_summarises():
    source = salvage.source_words(
        "User: Move the settings store to SQLite in WAL mode; keep using tabs.\n"
        "Assistant: The schema is written; `database is locked` on upgrade."
    )
    found = salvage.start("", None, source=source)
    assert not salvage.take_answer(found, "goal", CONFABULATED["goal"])
    assert found.problems["goal"] == "not about the conversation"
    assert salvage.take_answer(
        found, "goal", "Move the settings store to SQLite (WAL mode) without breaking it."
    )
    assert salvage.take_answer(found, "state", "Done:\n- schema written\nIn progress:\nNone\nBlocked:\nNone")
    assert salvage.take_answer(found, "errors", "None")
