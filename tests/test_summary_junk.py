"""What a summariser that answers garbage writes is never the chat's memory (QA, a summariser answering junk):
the same sentence under every heading, and section answers that only copy lines of the conversation. Copies
count as failed answers, so the salvage stops asking after GIVE_UP_AFTER of them."""

from __future__ import annotations

import pytest

from desktop.engine.compaction import salvage, sections
from desktop.engine.compaction.normalize import flatten
from tests.test_compaction_engine import prose, summary_requests
from tests.test_summary_salvage import ANSWERS, ASKED, DONE, PARTIAL

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process


def everywhere(body: str) -> str:
    return "\n\n".join(f"## {title}\n{body}" for _key, title, _hint in sections.SECTIONS)


# A summary with something in every section, unlike the others (what the checks must keep passing).
GOOD = {
    "goal": "Move the settings store to SQLite in WAL mode without losing the user's drafts.",
    "instructions": "- keep using tabs\n- never drop a draft on upgrade",
    "decisions": "- WAL journal mode, because the CLI reads while the app writes",
    "state": "Done:\n- schema written\nIn progress:\n- the migration of drafts\nBlocked:\nNone",
    "errors": "- `database is locked` on upgrade: fixed by a busy timeout of 5 s",
    "next": "Write the drafts migration test, then run it on the old store.",
}


# -- one text under several headings ----------------------------------------------------------------------------


def test_one_sentence_under_every_heading_is_refused():
    summary, problem = sections.accept(everywhere("The user is working on the project."), None)
    assert problem is not None and "repeats the same text" in problem, problem
    assert sections.check(sections.parse(everywhere("The user is working on the project.")), None) == problem


@pytest.mark.parametrize(
    "bodies",
    [
        # three sections of six, the others real
        {
            "decisions": "The user is working on the project.",
            "errors": "The user is working on the project.",
            "next": "The user is working on the project.",
        },
        # the same sentence, written a little differently each time (case, list marker, citation, full stop)
        {
            "goal": "The user is working on the project.",
            "decisions": "- the user is working on the project [#12]",
            "next": "THE USER IS WORKING ON THE PROJECT",
        },
        # the same sentence making up most of each body
        {
            "goal": "The settings store moves to SQLite in WAL mode. Fine.",
            "state": "The settings store moves to SQLite in WAL mode. Yes.",
            "next": "The settings store moves to SQLite in WAL mode.",
        },
    ],
    ids=["three-of-six", "written-differently", "most-of-the-body"],
)
def test_the_same_text_in_three_sections_is_refused(bodies):
    problem = sections.check({**GOOD, **bodies}, None)
    assert problem is not None and "repeats the same text" in problem, problem
    assert all(title in problem for key, title, _h in sections.SECTIONS if key in bodies)


@pytest.mark.parametrize(
    "bodies",
    [
        {},
        # a young chat: the goal and the next step may well say the same
        {"goal": "Fix the failing login test.", "next": "Fix the failing login test."},
        # a sentence shared by three sections but not most of them
        {
            "goal": "Port the exporter. Keep the CLI output stable for every format and each flag it takes.",
            "decisions": "Port the exporter. Use JSON lines, because the importer streams its input.",
            "next": "Port the exporter. Then write the round-trip test for csv and run it on the old files.",
        },
        # short items repeated in lists, nothing else
        {"goal": "None", "decisions": "None", "errors": "None", "next": "unchanged"},
    ],
    ids=["distinct", "goal-is-next-step", "shared-opening", "empty-and-unchanged"],
)
def test_summaries_that_do_not_repeat_one_text_pass(bodies):
    assert sections.check({**GOOD, **bodies}, None) is None


def test_a_salvaged_section_repeating_two_others_is_refused_as_a_failure():
    found = salvage.start("", None)
    same = "The settings store moves to SQLite in WAL mode."
    assert salvage.take_answer(found, "goal", same)
    assert salvage.take_answer(found, "instructions", same)  # twice may be right
    assert not salvage.take_answer(found, "decisions", same)
    assert "repeats" in found.problems["decisions"] and found.failed_in_a_row == 1


def test_sections_of_a_refused_summary_that_repeat_one_text_are_asked_for_again():
    text = everywhere("The settings store moves to SQLite in WAL mode.").replace(
        "## Goal\nThe settings store moves to SQLite in WAL mode.", "## Goal\n" + GOOD["goal"]
    )
    found = salvage.start(text, None)
    assert found.found == {"goal": GOOD["goal"]}
    assert set(found.problems) == set(sections.KEYS) - {"goal"}
    assert all("repeats" in problem for problem in found.problems.values())


async def converse(engine, srv, sid: int, turns: int, start: int = 0) -> None:
    """The salvage tests' conversation, each answer opening with a short line of its own (what a garbage
    summariser copies)."""
    for i in range(start, start + turns):
        srv.queue_text(f"Reply {i}: calling write.\n{DONE} " + prose(70, i))
        await engine.send(sid, f"Instruction {i}: {ASKED} " + prose(115, i + 100))


async def test_one_sentence_under_every_heading_is_never_the_chats_memory(small_engine, fake_api):
    sid = (await small_engine.store.create_session("same", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    same = "The settings store moves to SQLite in WAL mode."  # about the conversation: only repeated
    fake_api.queue_summary(everywhere(same), *[same] * salvage.MAX_ASKS)
    outcome = await small_engine.compact(sid, "auto", target=1_500)
    record = await small_engine.store.active_compaction(sid)
    assert outcome.ok and record is not None and record.trigger == "snip", record and record.summary
    assert same not in record.summary and record.stats["summary_error"]


# -- copies of the conversation ---------------------------------------------------------------------------------


def message(role: str, *blocks: dict) -> dict:
    return {"role": role, "content": list(blocks)}


def text(value: str) -> dict:
    return {"type": "text", "text": value}


PREVIOUS = sections.render(
    {
        "goal": "Move the settings store to SQLite.",
        "instructions": "- keep using tabs always",
        "decisions": "- WAL journal mode, because the CLI reads while the app writes",
        "state": "Done:\n- schema written",
        "errors": "None",
        "next": "Migrate the drafts table.",
    }
)
MESSAGES = [
    message("user", text("Fix the failing login test in auth.py.\nAlways keep using tabs, never spaces.")),
    message(
        "assistant",
        text("Reply 24: calling write."),
        {"type": "tool_use", "id": "t1", "name": "run", "input": {"command": "pytest tests/test_auth.py"}},
    ),
    message(
        "user",
        {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": [
                text(
                    "collected 3 items\nE   AssertionError: expected 200 but got <Response 500>\n1 failed, 2 passed"
                )
            ],
        },
    ),
    message(
        "assistant",
        text("The session cookie is not set on login.\n- I will patch the cookie handler next.\nOn it."),
    ),
    # What a cached request opens with: the previous summary (its lines are no copy of the conversation).
    message("user", text("<conversation-summary>\nSummary:\n" + PREVIOUS + "\n</conversation-summary>")),
]
TRANSCRIPT = flatten(MESSAGES)
COPIED = "copies the conversation instead of summarising it"


def judged(lines=None) -> salvage.Salvage:  # noqa: ANN001
    return salvage.start("", PREVIOUS, lines=salvage.source_lines(TRANSCRIPT) if lines is None else lines)


@pytest.mark.parametrize(
    ("key", "answer"),
    [
        ("goal", "Reply 24: calling write."),
        ("goal", "## Goal\n- reply 24: Calling write"),  # case, list marker and end aside
        ("next", "I will patch the cookie handler next"),
        (
            "state",
            "Done:\n- Reply 24: calling write.\nIn progress:\n- The session cookie is not set on login.",
        ),
        ("decisions", "Always keep using tabs, never spaces."),  # the user's words are no decision
        ("goal", "1 failed, 2 passed"),  # a tool's output is no goal
        ("errors", "Reply 24: calling write.\nE AssertionError: expected 200 but got <Response 500>"),
    ],
)
def test_a_section_answer_that_only_copies_lines_of_the_conversation_is_refused(key, answer):
    found = judged()
    assert not salvage.take_answer(found, key, answer)
    assert found.problems[key] == COPIED and found.failed_in_a_row == 1 and key not in found.found


@pytest.mark.parametrize(
    ("key", "answer"),
    [
        ("goal", "Fix the failing login test in auth.py."),  # the user's request, in the user's words
        (
            "instructions",
            "- Always keep using tabs, never spaces.",
        ),  # quoting the user is what this section asks
        ("next", "- fix the failing login test in auth.py"),
        ("errors", "- E   AssertionError: expected 200 but got <Response 500>"),  # an error's exact message
        (
            "decisions",
            "- WAL journal mode, because the CLI reads while the app writes",
        ),  # kept from the previous
        (
            "state",
            "Done:\n- Reply 24: calling write.\nIn progress:\n- the session cookie fix for the login test",
        ),
        ("goal", "Make the login test in auth.py pass: Reply 24: calling write."),
    ],
)
def test_a_section_answer_that_says_something_of_its_own_or_quotes_fairly_is_taken(key, answer):
    found = judged()
    assert salvage.take_answer(found, key, answer), found.problems
    assert found.failed_in_a_row == 0


def test_without_the_transcripts_lines_nothing_is_judged_a_copy():
    found = salvage.start("", PREVIOUS)
    assert found.lines is None
    assert salvage.take_answer(found, "goal", "Reply 24: calling write.")


def test_copied_answers_count_toward_giving_up():
    # The summary refused, three sections to ask for, each answered with a line of the conversation: before,
    # the copies shared words with the conversation, were taken, reset the count, and the junk was stored.
    found = salvage.start(PARTIAL, PREVIOUS, lines=salvage.source_lines(TRANSCRIPT))
    asked = 0
    while found.wants_more():
        key = found.next_key()
        salvage.take_answer(found, key, "Reply 24: calling write.")
        asked += 1
    assert asked == salvage.GIVE_UP_AFTER
    salvage.carry(found, PREVIOUS)
    summary, problem = salvage.assemble(found, PREVIOUS)
    assert problem is None and "Reply 24" not in summary


def test_sections_of_the_refused_summary_that_copy_the_conversation_are_asked_for_again():
    text = PARTIAL.replace(
        "## Goal\nMove the settings store to SQLite in WAL mode without losing the user's drafts.",
        "## Goal\nReply 24: calling write.",
    )
    found = salvage.start(text, PREVIOUS, lines=salvage.source_lines(TRANSCRIPT))
    assert found.problems["goal"] == COPIED and "goal" not in found.found
    assert found.found["instructions"] == "- keep using tabs\n- never drop a draft on upgrade"


def test_the_transcripts_lines_are_its_messages_lines_without_roles_tags_or_summary():
    lines = salvage.source_lines(TRANSCRIPT)
    assert "reply 24: calling write" in lines
    assert "fix the failing login test in auth.py" in lines  # "User: " aside
    assert "e assertionerror: expected 200 but got <response 500>" in lines  # the tool's output, unescaped
    assert "1 failed, 2 passed" in lines
    assert "collected 3 items" in lines
    assert not any(
        "wal journal mode" in line for line in lines
    )  # the previous summary is not the conversation
    assert not any("summary" in line for line in lines)
    assert all(len(line.split()) >= 3 for line in lines) and "on it" not in lines  # a short line is no copy


def test_keeping_the_previous_summarys_items_is_no_copy_even_when_the_transcript_holds_them():
    # A caller may pass the previous summary along with the transcript, untagged: its items stay fair.
    lines = salvage.source_lines(TRANSCRIPT + "\n" + PREVIOUS)
    assert "wal journal mode, because the cli reads while the app writes" in lines
    found = salvage.start("", PREVIOUS, lines=lines)
    assert salvage.take_answer(
        found, "decisions", "- WAL journal mode, because the CLI reads while the app writes"
    )
    kept = {
        **GOOD,
        "decisions": "- WAL journal mode, because the CLI reads while the app writes",
        "state": "None",
        "errors": "None",
        "goal": "Move the settings store to SQLite.",
        "instructions": "- keep using tabs always",
        "next": "Migrate the drafts table.",
    }
    assert (
        sections.copies(kept, lines) is not None
    )  # judged against the transcript alone, it would be refused
    assert sections.check(kept, sections.parse(PREVIOUS), lines=lines) is None


def test_a_whole_summary_made_of_lines_of_the_conversation_is_refused():
    lines = salvage.source_lines(TRANSCRIPT)
    copied = {
        "goal": "Fix the failing login test in auth.py.",
        "instructions": "Always keep using tabs, never spaces.",
        "decisions": "Reply 24: calling write.",
        "state": "Done:\n- The session cookie is not set on login.",
        "errors": "None",
        "next": "I will patch the cookie handler next.",
    }
    problem = sections.copies(copied, lines)
    assert problem is not None and COPIED in problem, problem
    assert sections.check(copied, None, lines=lines) == problem
    assert sections.accept(sections.render(copied), None, lines=lines)[1] == problem
    assert sections.check(copied, None) is None  # not judged without the lines
    # One section of its own is enough; so are copies the sections may make (the user's words as the goal).
    assert sections.copies({**copied, "decisions": GOOD["decisions"]}, lines) is None
    fair = {
        **{key: "None" for key in sections.KEYS},
        "goal": copied["goal"],
        "next": "Fix the failing login test.",
    }
    assert sections.copies(fair, lines) is None
    assert sections.check(GOOD, None, lines=lines) is None
    # The salvage assembles with the same check.
    found = salvage.start(sections.render(copied), None, lines=lines)
    assert "decisions" not in found.found and found.problems["decisions"] == COPIED


# The wiring in summary_maker.py (salvage.start(..., lines=salvage.source_lines(transcript)) and
# sections.accept(..., lines=...)) is another change: until it is made, the engine does not judge copies.
async def test_a_salvage_answered_with_copies_of_the_conversation_stops_after_give_up_after(
    small_engine, fake_api
):
    sid = (await small_engine.store.create_session("copies", "claude-test")).id
    small_engine.settings.auto_compact_ratio = 0.95  # only the test's compactions
    await converse(small_engine, fake_api, sid, 6)
    await small_engine.compact(sid, "auto", target=2_500)  # the fake's own summary, every section there
    first = await small_engine.store.active_compaction(sid)
    assert first is not None and first.trigger == "auto"
    old = sections.parse(first.summary)
    await converse(small_engine, fake_api, sid, 4, start=6)
    asked_before = len(summary_requests(fake_api))
    # The goal and the instructions unchanged, the state rewritten, the decisions and the errors unusable and the
    # next step missing: those three asked for alone, each answered with a line of the conversation.
    refused = (
        "## Goal\nunchanged\n\n## User instructions and constraints\nunchanged\n\n## Decisions and why"
        + PARTIAL.split("## Decisions and why", 1)[1]
    )
    fake_api.queue_summary(refused, *[f"Reply {i}: calling write." for i in (7, 8, 9)])
    outcome = await small_engine.compact(sid, "auto", target=2_500)
    record = await small_engine.store.active_compaction(sid)
    assert outcome.ok and record is not None and record.trigger == "auto" and record.id != first.id, (
        record.stats
    )
    assert "calling write" not in record.summary
    assert record.stats["section_requests"] == salvage.GIVE_UP_AFTER
    assert len(summary_requests(fake_api)) - asked_before == 1 + salvage.GIVE_UP_AFTER
    parsed = sections.parse(record.summary)
    assert parsed is not None and parsed["decisions"] == old["decisions"]


async def test_answers_about_the_conversation_are_still_salvaged_with_its_lines_judged(
    small_engine, fake_api
):
    sid = (await small_engine.store.create_session("ok", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    fake_api.queue_summary(PARTIAL, ANSWERS["decisions"], ANSWERS["errors"], ANSWERS["next"])
    outcome = await small_engine.compact(sid, "auto")
    record = await small_engine.store.active_compaction(sid)
    assert outcome.ok and record is not None and record.trigger == "auto", record and record.stats
    assert record.stats["section_requests"] == 3


async def test_a_summary_made_of_lines_of_the_conversation_is_never_the_chats_memory(small_engine, fake_api):
    sid = (await small_engine.store.create_session("copied", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    lines = [f"Reply {i}: calling write." for i in range(6)]
    fake_api.queue_summary(
        "\n\n".join(f"## {title}\n{lines[n]}" for n, (_k, title, _h) in enumerate(sections.SECTIONS)), *lines
    )  # ... and each section asked for alone, answered alike
    outcome = await small_engine.compact(sid, "auto", target=1_500)
    record = await small_engine.store.active_compaction(sid)
    assert outcome.ok and record is not None and record.trigger == "snip", record and record.summary
    assert "calling write" not in record.summary and COPIED in record.stats["summary_error"]
