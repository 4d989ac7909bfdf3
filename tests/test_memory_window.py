"""What the chat remembers past a summary, in the real window (offscreen, real engine and store): Pin in a
message's hover actions (a selected part alone when text is selected), the pinned tag and the pins list with
Unpin; the preview before Compact now (its numbers are the compaction's, a ticked message stays verbatim, the
focus reaches the summary request); a citation in the card opens the cited message; Search earlier in this chat
finds words only a summarised message holds and opens it."""

from __future__ import annotations

import math

import pytest
from PySide6.QtCore import Qt

from desktop.engine.compaction import schedule
from desktop.engine.compaction.citations import cited_ids
from tests.conftest import engine_of
from tests.test_compaction_engine import chat_requests, summary_requests
from tests.test_window import cards, long_chat, message_rows, until

pytestmark = pytest.mark.qt


def _index(window, message_id: int):
    return window.chat_model.index(window.chat_model.row_of(message_id))


async def _open_preview(window):
    window.gauge.compact_requested.emit()  # the hover card's Compact now
    await until(lambda: window.memory.preview is not None and window.memory.preview.isVisible())
    return window.memory.preview


async def test_pin_and_unpin_from_the_message_actions(window, fake_api, qtbot):
    sid = await long_chat(window, engine_of(window).store)
    engine = engine_of(window)
    answer = next(m for m in message_rows(window) if m.role == "assistant")
    actions = window.reading.actions
    actions.show_for(_index(window, answer.id))
    assert actions.pin_button.isVisibleTo(actions) and actions.pin_button.text() == "Pin"
    qtbot.mouseClick(actions.pin_button, Qt.MouseButton.LeftButton)
    await until(lambda: answer.id in window.memory.pinned)
    assert [p.message_id for p in await engine.pins(sid)] == [answer.id]
    row = window.chat_model.row_at(window.chat_model.row_of(answer.id))
    assert row.detail.get("pinned") and window.chat.delegate._tag(_index(window, answer.id)) == "pinned"
    assert actions.pin_button.text() == "Unpin"
    dialog = window.memory.show_pins()
    await until(lambda: dialog.list.count() == 1)
    assert f"#{answer.id}" in dialog.list.item(0).text()
    dialog.remove_button.click()  # Unpin from the list
    await until(lambda: not window.memory.pinned)
    assert await engine.pins(sid) == []
    assert not window.chat_model.row_at(window.chat_model.row_of(answer.id)).detail.get("pinned")
    assert dialog.empty.isVisibleTo(dialog)


async def test_pin_with_text_selected_pins_that_part(window, fake_api, qtbot):
    sid = await long_chat(window, engine_of(window).store)
    answer = next(m for m in message_rows(window) if m.role == "assistant")
    index = _index(window, answer.id)
    window.chat.scrollTo(index)
    window.reading.selector.select(index, 0, 8)  # "answer 0"
    chosen = window.reading.selector.selection_text()
    assert chosen == "answer 0"
    window.reading.actions.show_for(index)
    window.reading.actions.pin_button.click()
    await until(lambda: answer.id in window.memory.pinned)
    pin = (await engine_of(window).pins(sid))[0]
    assert pin.part and pin.text == "answer 0"


async def test_the_preview_shows_what_compact_now_then_does(window, fake_api, qtbot):
    sid = await long_chat(window, engine_of(window).store)
    engine = engine_of(window)
    preview = await _open_preview(window)
    plan = preview.plan
    assert plan.head and plan.kept and plan.cost is not None
    assert f"Summarised: {len(plan.head)} messages" in preview.facts.text()
    assert preview.messages.count() == len(plan.head)
    assert not await engine.store.compactions(sid)  # nothing happens before the user confirms
    keep = next(m for m in plan.head if m.role == "assistant")
    item = next(
        preview.messages.item(i)
        for i in range(preview.messages.count())
        if preview.messages.item(i).data(Qt.ItemDataRole.UserRole) == keep.id
    )
    item.setCheckState(Qt.CheckState.Checked)  # keep it verbatim
    preview.focus_edit.setText("the lorem answers")
    assert preview.excluded() == [keep.id]
    preview.accept()
    await until(lambda: len(cards(window)) == 1)
    record = await engine.store.active_compaction(sid)
    assert record.covers_through_message_id == plan.covers_through
    assert record.stats["messages"] == len(plan.head) and record.stats["focus"] == "the lorem answers"
    assert "the lorem answers" in str(summary_requests(fake_api)[-1].body)
    assert [p.message_id for p in await engine.pins(sid)] == [keep.id]
    fake_api.queue_text("ok")
    await engine.send(sid, "next")
    body = str(chat_requests(fake_api)[-1].body["messages"])
    assert keep.content[0]["text"].strip() in body  # verbatim (less the trailing space)


async def test_the_preview_says_what_the_summary_saves_and_when_it_pays_for_itself(window, fake_api, qtbot):
    # Six long questions: a summary keeps the user's typed texts verbatim beside it, so it takes little off the
    # request. The preview promised the whole of the summarised messages (13,592 of 42,150 tokens) where the
    # compaction then saved 1,152; now it says what stays, and that by cost alone Précis would wait.
    sid = await long_chat(window, engine_of(window).store)
    preview = await _open_preview(window)
    plan, verdict = preview.plan, preview.plan.verdict
    assert verdict is not None and verdict.payback_turns is not None and plan.before
    text = preview.facts.text()
    assert f"It pays for itself after about {math.ceil(verdict.payback_turns)} turns" in text
    assert ("by cost alone Précis would wait" in text) == (verdict.why is schedule.Why.WAITS)
    preview.accept()
    await until(lambda: len(cards(window)) == 1)
    saved = (await engine_of(window).store.active_compaction(sid)).stats["tokens_saved"]
    assert abs(plan.saving - saved) <= 0.05 * plan.before


async def test_a_preview_with_nothing_to_summarise_says_so_and_offers_nothing(window, fake_api, qtbot):
    preview = await _open_preview(window)
    assert preview.plan.refusal and preview.facts.text() == preview.plan.refusal
    assert not preview.compact_button.isEnabled()
    preview.reject()


async def test_a_citation_in_the_card_opens_the_cited_message(window, fake_api, qtbot):
    sid = await long_chat(window, engine_of(window).store)
    preview = await _open_preview(window)
    preview.accept()
    await until(lambda: len(cards(window)) == 1)
    first = await engine_of(window).store.active_compaction(sid)
    target = next(m.id for m in await engine_of(window).store.messages(sid) if m.role == "assistant")
    assert target <= first.covers_through_message_id
    # The summariser here cites as it likes; the user's edit of the summary cites the second message.
    await engine_of(window).edit_summary(sid, f"## Goal\n- The first answer is lorem [#{target}]\n")
    await until(lambda: len(cards(window)) == 1 and "edited" in cards(window)[0].title)
    card = cards(window)[0]
    record = await engine_of(window).store.active_compaction(sid)
    assert cited_ids(record.summary) == [target]
    body = "".join(s.text for s in card.segments)
    assert f"[#{target}](precis-cite:{target})" in body
    window.chat_model.set_card_detail(str(card.key), expanded=True)
    doc = window.chat.delegate.document(window.chat_model.index(window.chat_model.row_of(card.key)))
    assert f'href="precis-cite:{target}"' in doc.toHtml()  # a real link in the painted card
    assert window.chat_model.row_of(target) < 0  # under the summary: not shown
    window.chat.card_action.emit(str(card.key), f"cite:{target}")  # what a click on it emits
    await until(
        lambda: (
            window.chat_model.row_of(target) >= 0
            and window.chat.currentIndex().row() == window.chat_model.row_of(target)
        )
    )


async def test_search_earlier_in_this_chat_opens_a_summarised_message(window, fake_api, qtbot):
    sid = await long_chat(window, engine_of(window).store, note=" quokka")
    preview = await _open_preview(window)
    preview.accept()
    await until(lambda: len(cards(window)) == 1)
    record = await engine_of(window).store.active_compaction(sid)
    dialog = window.memory.open_recall()
    assert dialog.windowTitle() == "Search earlier in this chat"
    dialog.edit.setText("quokka")
    dialog.search_now()
    await until(lambda: bool(dialog.hits()))
    hit = dialog.hits()[0]
    assert hit.session_id == sid and hit.message_id <= record.covers_through_message_id
    dialog.results.setCurrentRow(0)
    dialog._choose(dialog.results.currentItem())
    await until(
        lambda: (
            window.chat_model.row_of(hit.message_id) >= 0
            and window.chat.currentIndex().row() == window.chat_model.row_of(hit.message_id)
        )
    )
