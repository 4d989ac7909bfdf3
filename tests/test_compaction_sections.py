"""Sectioned summaries: validated, merged into the previous one section by section, and failing loudly."""

from __future__ import annotations

import pytest

from desktop.engine.compaction import sections
from desktop.engine.compaction.salvage import MAX_ASKS
from tests.fakeapi import SUMMARY_MARKER
from tests.test_compaction_engine import converse
from tests.test_summary_degenerate import DEGENERATE

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process


@pytest.mark.parametrize("reply", DEGENERATE)
async def test_degenerate_summaries_in_sections_are_rejected_too(small_engine, fake_api, reply):
    """Wrapped in every heading, the same text restates the request in each section."""
    sid = (await small_engine.store.create_session("d", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    fake_api.queue_summary(
        "\n\n".join(f"## {title}\n{reply}" for _key, title, _hint in sections.SECTIONS), *[reply] * MAX_ASKS
    )  # ... and each section asked for alone (salvage.py)
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
    # Automatic summaries at a fixed threshold (the user's own), as this scenario was written for; the default
    # schedule by cost puts them off while they do not pay.
    small_engine.settings.auto_compact_ratio = 0.45
    await converse(small_engine, fake_api, sid, 6)
    assert (await small_engine.compact(sid, "manual")).ok
    await converse(small_engine, fake_api, sid, 6, start=10)
    # The model rewrites some sections and leaves the others unchanged: those keep the previous text.
    fake_api.queue_summary(
        "## Goal\nunchanged\n\n## User instructions and constraints\nunchanged\n\n"
        "## Decisions and why\n- tabs, because the user asked (turn 10)\n\n"
        "## Current state\nDone:\n- turns 0 to 15 answered\n\n## Errors and fixes\nNone\n\n"
        "## Next step\n- answer turn 16"
    )
    second = await small_engine.compact(sid, "manual")
    assert second.ok, second.message
    records = await small_engine.store.compactions(sid)  # automatic ones may have come between
    old, new = sections.parse(records[-2].summary), sections.parse(second.record.summary)
    assert new["goal"] == old["goal"] and new["instructions"] == old["instructions"]
    assert "tabs, because the user asked" in new["decisions"] and new["next"] == "- answer turn 16"
    # The request carried the previous summary to update, not a blank page.
    asked = [r for r in fake_api.message_requests() if SUMMARY_MARKER in str(r.body)][-1]
    assert old["goal"] in str(asked.body)


def test_a_much_smaller_summary_is_rejected_unless_what_it_drops_is_done():
    work = [f"- exporter for format {n}: header, rows, escaping and the round-trip test" for n in range(8)]
    previous = {
        "goal": "Port the exporter to the new schema and keep the CLI output stable for every format.",
        "instructions": "- use tabs\n- never touch the migrations folder",
        "decisions": "- JSON lines, because the importer streams\n- no new dependency, because of packaging",
        "state": "In progress:\n" + "\n".join(work),
        "errors": "- KeyError 'role' in export.py line 40, fixed by defaulting to user",
        "next": "- finish the csv exporter",
    }
    shrunk = {**previous, "decisions": "None", "state": "None", "errors": "None"}
    assert "smaller" in (sections.check(shrunk, previous) or "")
    done = {
        **shrunk,
        "state": "Done:\n" + "\n".join(w[:30] for w in work) + "\n- JSON lines\n- no new dependency"
        "\n- KeyError 'role' in export.py line 40",
    }
    assert sections.check(done, previous) is None


def test_headings_in_the_conversations_language_are_read_and_unchanged_keeps_the_old_text():
    text = (
        "## 目标\n把导出器移植到新模式\n\n## 用户的指示与约束\n- 使用制表符\n\n## 决定及原因\n无\n\n"
        "## 当前状态\n已完成：\n- 解析器\n\n## 错误与修复\n无\n\n## 下一步\n- 写测试"
    )
    parsed = sections.parse(text)
    assert parsed is not None and set(parsed) == set(sections.KEYS)
    assert sections.check(parsed, None) is None
    merged = sections.merge({**parsed, "goal": "unchanged"}, {**parsed, "goal": "旧目标"})
    assert merged["goal"] == "旧目标" and merged["next"] == "- 写测试"


def test_a_repetitive_or_detailed_section_is_not_taken_for_a_restated_request():
    summary = {key: "None" for key in sections.KEYS}
    summary["goal"] = "Step 0: port the exporter. Always keep tabs. " + "Details. " * 15
    summary["state"] = "Done:\n- wrote a detailed summary of the request log for the user (task 4)"
    assert sections.check(summary, None) is None
