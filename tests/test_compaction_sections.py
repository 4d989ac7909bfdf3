"""Sectioned summaries: validated, merged into the previous one section by section, and failing loudly."""

from __future__ import annotations

import pytest

from desktop.engine.compaction import sections
from tests.fakeapi import SUMMARY_MARKER
from tests.test_compaction_engine import converse

from tests.test_summary_degenerate import DEGENERATE


@pytest.mark.parametrize("reply", DEGENERATE)
async def test_degenerate_summaries_in_sections_are_rejected_too(small_engine, fake_api, reply):
    """Wrapped in every heading, the same text restates the request in each section."""
    sid = (await small_engine.store.create_session("d", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    fake_api.queue_summary("\n\n".join(f"## {title}\n{reply}" for _key, title, _hint in sections.SECTIONS))
    outcome = await small_engine.compact(sid, "manual")
    assert not outcome.ok and "restates" in outcome.message
    assert await small_engine.store.active_compaction(sid) is None


async def test_the_test_servers_summary_has_every_section_and_is_committed(small_engine, fake_api):
    sid = (await small_engine.store.create_session("s", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    outcome = await small_engine.compact(sid, "manual")
    assert outcome.ok, outcome.message
    parsed = sections.parse(outcome.record.summary)
    assert parsed is not None and set(parsed) == {key for key, _t, _h in sections.SECTIONS}
    assert "keep using tabs" in parsed["instructions"]


async def test_the_second_summary_updates_the_first_section_by_section(small_engine, fake_api):
    sid = (await small_engine.store.create_session("u", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    first = (await small_engine.compact(sid, "manual")).record
    await converse(small_engine, fake_api, sid, 6, start=10)
    # The model rewrites some sections and leaves the others unchanged: those keep the previous text.
    fake_api.queue_summary("## Goal\nunchanged\n\n## User instructions and constraints\nunchanged\n\n"
                           "## Decisions and why\n- tabs, because the user asked (turn 10)\n\n"
                           "## Current state\nDone:\n- turns 0 to 15 answered\n\n## Errors and fixes\nNone\n\n"
                           "## Next step\n- answer turn 16")
    second = await small_engine.compact(sid, "manual")
    assert second.ok, second.message
    old, new = sections.parse(first.summary), sections.parse(second.record.summary)
    assert new["goal"] == old["goal"] and new["instructions"] == old["instructions"]
    assert "tabs, because the user asked" in new["decisions"] and new["next"] == "- answer turn 16"
    # The request carried the previous summary to update, not a blank page.
    asked = [r for r in fake_api.message_requests() if SUMMARY_MARKER in str(r.body)][-1]
    assert old["goal"] in str(asked.body)


def test_a_much_smaller_summary_is_rejected_unless_what_it_drops_is_done():
    previous = sections.render({
        "goal": "Port the exporter to the new schema and keep the CLI output stable for every format.",
        "instructions": "- use tabs\n- never touch the migrations folder\n- answer in English",
        "decisions": "- JSON lines, because the importer streams\n- no new dependency, because of packaging",
        "state": "In progress:\n- exporter for markdown\n- exporter for json\n- exporter for csv",
        "errors": "- KeyError 'role' in export.py line 40, fixed by defaulting to user",
        "next": "- finish the csv exporter and run the export tests",
    })
    shrunk = previous.replace("- exporter for markdown\n- exporter for json\n- exporter for csv", "None") \
        .replace("- KeyError 'role' in export.py line 40, fixed by defaulting to user", "None") \
        .replace("- JSON lines, because the importer streams\n- no new dependency, because of packaging", "None")
    assert "smaller" in (sections.check(sections.parse(shrunk), sections.parse(previous)) or "")
    done = shrunk.replace("## Current state\nNone", "## Current state\nDone:\n- exporter for markdown\n"
                          "- exporter for json\n- exporter for csv\n- JSON lines\n- no new dependency\n"
                          "- KeyError 'role' in export.py line 40")
    assert sections.check(sections.parse(done), sections.parse(previous)) is None
