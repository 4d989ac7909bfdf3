"""The steering flows in the real window: Edit summary, New chat from summary, Summarise up to here, the hover
card's threshold and cache rows, and the threshold fields in Settings."""

from __future__ import annotations

import re

import pytest

from desktop.ui.transcript.chat_delegate import card_actions
from tests.conftest import engine_of
from tests.test_summary_degenerate import RECORDED
from tests.test_window import cards, compacted, long_chat, message_rows, until

pytestmark = pytest.mark.qt


async def _compacted(window):
    store = engine_of(window).store
    return await compacted(window, store, ": never use tabs."), store


async def test_a_refused_summary_shows_on_the_trimmed_card_with_what_the_model_wrote(window, fake_api, qtbot):
    sid = await long_chat(window, engine_of(window).store)
    reply = RECORDED[0]["reply"]  # a real small model's 4,000 characters of looping filler
    fake_api.queue_summary(reply, reply)  # the summary, then the first section asked for alone (salvage.py)
    await engine_of(window).compact(sid, "auto", target=6_000)
    await until(lambda: len(cards(window)) == 1)
    card = cards(window)[0]
    assert "the summary failed" in card.title
    body = "".join(segment.text for segment in card.segments)
    assert "removed from the context without a summary" in body
    assert "User: Which journal mode?" in body  # the user reads what the summary model wrote instead
    assert len(body) < 1_500  # ... in part: a looping reply would fill the chat


async def test_edit_summary_from_the_card_makes_an_undoable_row(window, fake_api, qtbot):
    sid, store = await _compacted(window)
    card = cards(window)[0]
    labels = [label for _a, label in card_actions(card.detail)]
    assert "Edit summary…" in labels and "New chat from summary" in labels
    window.chat.card_action.emit(str(card.key), "edit")
    editor = window.summary_editor
    assert editor is not None and editor.isVisible()
    original = (await store.active_compaction(sid)).summary
    assert editor.editor.toPlainText() == original
    editor.editor.setPlainText(original + "\n- the user's own note: ship on Friday")
    editor.save_button.click()
    await until(lambda: cards(window) and "edited" in cards(window)[0].title)
    active = await store.active_compaction(sid)
    assert active.trigger == "edit" and "ship on Friday" in active.summary
    window.chat.card_action.emit(str(cards(window)[0].key), "undo")
    await until(lambda: cards(window) and "edited" not in cards(window)[0].title)
    assert (await store.active_compaction(sid)).summary == original


async def test_new_chat_from_summary_puts_it_in_the_new_chats_composer(window, fake_api, qtbot):
    sid, store = await _compacted(window)
    window.chat.card_action.emit(str(cards(window)[0].key), "handoff")
    await until(lambda: window.session_id != sid)
    text = window.composer.edit.toPlainText()
    summary = (await store.active_compaction(sid)).summary
    assert summary.strip() in text and "User instructions so far (verbatim):" in text
    assert "never use tabs" in text
    assert await store.messages(window.session_id) == []  # nothing sent until the user sends it
    # The toast speaks of the new chat, not of what was last done in the old one.
    assert window.toast.isVisible() and "New chat from the summary" in window.toast.text()


async def test_summarise_up_to_here_from_the_message_menu(window, fake_api, qtbot):
    sid = window.session_id
    store = engine_of(window).store
    for i in range(4):
        await store.add_message(sid, "user", [{"type": "text", "text": f"question {i} " + "dolor " * 300}])
        await store.add_message(sid, "assistant", [{"type": "text", "text": f"answer {i} " + "lorem " * 300}])
    await window.bridge.open_session(sid)
    here = [m for m in message_rows(window) if m.role == "user"][2]
    index = window.chat_model.index(window.chat_model.row_of(here.id))
    menu = window.chat.build_context_menu(window.chat.visualRect(index).center())
    actions = {a.text(): a for a in menu.actions()}
    actions["Summarise up to here"].trigger()  # the same preview as Compact now, cut before this message
    await until(lambda: window.memory.preview is not None and window.memory.preview.isVisible())
    preview = window.memory.preview
    assert preview.windowTitle() == "Summarise up to here" and preview.plan.kept[0] == here.id
    preview.accept()
    await until(lambda: len(cards(window)) == 1)
    record = await store.active_compaction(sid)
    assert record.covers_through_message_id == here.id - 1


async def test_hover_card_shows_threshold_countdown_and_warm_cold_cost(window, fake_api, qtbot):
    engine = engine_of(window)
    await engine.set_chat_model(window.session_id, "claude-sonnet-4-6")
    fake_api.queue_text("warm now")
    window.composer.edit.setPlainText("hello")
    window.composer.send_button.click()
    await until(lambda: window.gauge.snapshot() is not None and window.gauge.snapshot().cache_expires_at)
    card = window.gauge.card
    card.set_snapshot(window.gauge.snapshot())
    # The first request of a chat buys the 5-minute cache (no long pause seen yet), and the row says which.
    assert re.fullmatch(r"0[0-5]:[0-5]\d · 5 min cache", card.value("cache_expiry").text())
    assert card.value("compact_at").text().startswith("~")
    assert "/" in card.value("next_cost").text() and "$" in card.value("next_cost").text()


def test_cache_countdown_words_and_the_expired_case():
    from desktop.ui.gauge import cache_rows

    assert cache_rows.countdown(299.2) == "05:00" and cache_rows.countdown(61) == "01:01"
    assert cache_rows.countdown(3599) == "59:59" and cache_rows.countdown(-3) == "00:00"


def test_settings_threshold_fields_round_trip_into_the_profiles_model_override(qtbot):
    from desktop.engine.config.settings import Settings
    from desktop.ui.settings.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings(), None, "none")
    qtbot.addWidget(dialog)
    form = dialog.form
    form.model.setText("claude-opus-4-7")
    form.threshold.percent.setValue(40)
    form.threshold.cap.setValue(200_000)
    over = form.profile().model_overrides["claude-opus-4-7"]
    assert over == {"compact_percent": 40, "compact_at_tokens": 200_000}
    form.threshold.percent.setValue(0)
    form.threshold.cap.setValue(0)
    assert "claude-opus-4-7" not in form.profile().model_overrides  # both empty: the default
