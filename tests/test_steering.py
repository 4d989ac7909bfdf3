"""Steering compaction: Edit summary (a new row, undoable), New chat from summary (the composer holds it, nothing
stored), Summarise up to here (only what comes before the message)."""

from __future__ import annotations

import pytest

from desktop.engine.compaction import sections
from tests.requests import request_of
from tests.test_compaction_engine import converse

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process


async def test_an_edited_summary_is_a_new_row_the_next_request_carries_and_undo_restores(
    small_engine, fake_api
):
    sid = (await small_engine.store.create_session("e", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    assert (await small_engine.compact(sid, "manual")).ok
    original = await small_engine.store.active_compaction(sid)
    edited = original.summary.replace("## Next step", "## Next step\n- rename the parser module first\n", 1)
    record = await small_engine.edit_summary(sid, edited)
    assert record is not None and record.trigger == "edit" and record.id > original.id
    assert record.covers_through_message_id == original.covers_through_message_id
    assert (
        record.stats["pins_text"] == original.stats["pins_text"]
        and record.stats["edited_from"] == original.id
    )
    assert len(await small_engine.store.compactions(sid)) == 2  # the original row is kept
    assert "rename the parser module first" in str((await request_of(small_engine, sid))["messages"][0])
    assert await small_engine.undo_compaction(sid)
    request = str((await request_of(small_engine, sid))["messages"][0])
    assert "rename the parser module first" not in request
    assert sections.parse(original.summary)["goal"] in request


async def test_new_chat_from_summary_stores_nothing_and_hands_over_summary_pins_and_ledger(
    small_engine, fake_api
):
    sid = (await small_engine.store.create_session("Parser work", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    new_id, text = await small_engine.handoff(sid)
    record = await small_engine.store.active_compaction(sid)
    assert record is not None and new_id != sid
    assert await small_engine.store.messages(new_id) == []  # editable in the composer, not sent yet
    assert "Parser work" in text and record.summary.strip() in text
    assert "User instructions so far (verbatim):" in text and "Instruction 0: keep using tabs." in text
    assert (await small_engine.store.get_session(new_id)).title == "Parser work (continued)"


async def test_summarise_up_to_here_compacts_only_what_comes_before_the_message(small_engine, fake_api):
    sid = (await small_engine.store.create_session("u", "claude-test")).id
    await converse(small_engine, fake_api, sid, 5)
    users = [m for m in await small_engine.store.messages(sid) if m.role == "user"]
    here = users[2]
    outcome = await small_engine.compact(sid, "manual", before_message=here.id)
    assert outcome.ok, outcome.message
    assert outcome.record.covers_through_message_id == here.id - 1
    request = (await request_of(small_engine, sid))["messages"]
    assert here.content[0]["text"] in str(request[0])  # the message opens the kept part, verbatim
    assert "Instruction 1:" not in str(request[1:])
    first = await small_engine.compact(sid, "manual", before_message=users[0].id)
    assert not first.ok and "Nothing to summarise before" in first.message


async def test_an_edited_summary_gets_the_summary_check_and_a_refused_one_stores_nothing(
    small_engine, fake_api
):
    import pytest

    sid = (await small_engine.store.create_session("e", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    assert (await small_engine.compact(sid, "manual")).ok
    rows = len(await small_engine.store.compactions(sid))
    with pytest.raises(ValueError, match="too short"):
        await small_engine.edit_summary(sid, "ok then")
    covered = sum(len(str(m.content)) for m in await small_engine.store.messages(sid))
    with pytest.raises(ValueError, match="not smaller than what it replaces"):
        await small_engine.edit_summary(sid, "word " * covered)  # longer than everything it would stand for
    assert (
        len(await small_engine.store.compactions(sid)) == rows
    )  # nothing stored, the summary in force stays
