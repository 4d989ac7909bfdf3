"""The window's search (Ctrl+K, snippets, "No results", jumping to the message), the date-grouped sidebar with
pins, chat instructions, export and copy, the shortcuts table and its Help list, `/` commands with completion,
↑ to edit the last message and Ctrl+Shift+C to copy the last reply. Real window, engine, store and server."""

from __future__ import annotations

import datetime as _dt
import json
import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence

from desktop.engine.history.export import export_text
from desktop.ui.sidebar.session_groups import group_key
from desktop.ui.window.shortcuts import SHORTCUTS
from desktop.ui.window.shortcuts_dialog import ShortcutsDialog
from tests.conftest import engine_of
from tests.test_window import message_rows, until

pytestmark = pytest.mark.qt


def text(t: str) -> list[dict]:
    return [{"type": "text", "text": t}]


async def chat_with_history(window, n: int, needle_at: int, title: str = "long chat") -> tuple[int, int]:
    """A chat of ``n`` messages (more than one page) with one tool result holding a rare word."""
    store = engine_of(window).store
    session = await store.create_session(title)
    rows = []
    for i in range(n):
        if i == needle_at:
            rows.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "content": "grep output: the axolotl line",
                        }
                    ],
                }
            )
        else:
            rows.append({"role": "user" if i % 2 == 0 else "assistant", "content": text(f"message {i}")})
    await store.add_messages(session.id, rows)
    needle = next(m.id for m in await store.messages(session.id) if m.content[0].get("type") == "tool_result")
    return session.id, needle


async def test_ctrl_k_search_shows_snippets_and_jumps_to_an_old_message(window, qtbot):
    sid, needle = await chat_with_history(window, 700, 40)  # far above the first page of 200
    await window.bridge.new_session()  # another chat is open
    qtbot.keyClick(
        window.composer.edit, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier
    )  # from the composer
    dialog = window.organise.search_dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.keyClicks(dialog.edit, "axolotl")
    await until(lambda: dialog.hits())
    hit = dialog.hits()[0]
    assert (hit.session_id, hit.message_id) == (sid, needle)
    label = dialog.results.itemWidget(dialog.results.item(0))
    assert "<b>axolotl</b>" in label.text() and "long chat" in label.text() and "Tool result" in label.text()
    assert not dialog.empty.isVisible()
    qtbot.keyClick(dialog.edit, Qt.Key.Key_Return)
    await until(lambda: window.session_id == sid and window.chat.currentIndex().isValid())
    current = window.chat_model.row_at(window.chat.currentIndex().row())
    assert current.message is not None and current.message.id <= needle
    assert needle - current.message.id <= 1  # the result itself, or its call's row just before it
    assert window.chat.viewport().rect().intersects(window.chat.visualRect(window.chat.currentIndex()))
    assert not dialog.isVisible()


async def test_search_says_no_results(window, qtbot):
    dialog = window.organise.open_search()
    qtbot.keyClicks(dialog.edit, "nothingmatchesthis")
    await until(lambda: dialog.empty.isVisible())
    assert dialog.empty.text() == "No results for “nothingmatchesthis”" and dialog.hits() == []
    dialog.edit.clear()
    await until(lambda: not dialog.empty.isVisible())


async def test_a_summary_hit_opens_its_card(window, qtbot):
    store = engine_of(window).store
    session = await store.create_session("summarised")
    first = await store.add_message(session.id, "user", text("early"))
    await store.add_message(session.id, "assistant", text("early answer"))
    record = await store.add_compaction(
        session.id, "The pangolin plan was agreed.", first.id + 1, "manual", {}
    )
    await store.add_message(session.id, "user", text("later"))
    hits = await window.bridge.engine.library.search("pangolin")
    assert [h.kind for h in hits] == ["summary"]
    row = await window.organise.jump_to(hits[0])
    assert row >= 0 and window.chat_model.row_at(row).detail.get("record_id") == record.id


async def test_a_hit_in_a_chat_deleted_since_the_search_opens_nothing(window, qtbot):
    store = engine_of(window).store
    gone = await store.create_session("gone")
    await store.add_message(gone.id, "user", text("the narwhal question"))
    hits = await window.bridge.engine.library.search("narwhal")
    open_before = window.session_id
    await store.delete_session(gone.id)
    assert await window.organise.jump_to(hits[0]) == -1
    assert window.session_id == open_before and "no longer exists" in window.toast.text()


def test_date_groups_follow_calendar_days():
    now = _dt.datetime(2026, 12, 1, 9, 0)
    at = lambda *a: _dt.datetime(*a).timestamp()  # noqa: E731
    assert group_key(at(2026, 12, 1, 0, 5), False, now) == "today"
    assert group_key(at(2026, 11, 30, 23, 59), False, now) == "yesterday"
    assert group_key(at(2026, 11, 25), False, now) == "week"
    assert group_key(at(2026, 11, 5), False, now) == "month"
    assert group_key(at(2026, 9, 14), False, now) == "2026-09"
    assert group_key(at(2020, 1, 1), True, now) == "pinned"


async def test_sidebar_groups_by_date_and_pins_on_top(window, qtbot):
    store = engine_of(window).store
    repo = store.repo
    day = 86_400
    now = time.time()
    old = await store.create_session("old")
    last_week = await store.create_session("last week")
    await store.call(
        lambda: (
            repo.m.Session.update(updated_at=now - 3 * day).where(repo.m.Session.id == last_week.id).execute()
        )
    )
    await store.call(
        lambda: repo.m.Session.update(updated_at=now - 90 * day).where(repo.m.Session.id == old.id).execute()
    )
    await window.bridge.refresh_sessions()
    groups = [title for title, _ids in window.sidebar.groups()]
    assert groups[0] == "Today" and "Previous 7 days" in groups and len(groups) == 3
    assert window.sidebar.list.count() == 3  # titles are painted, not items: the list holds chats only
    # Context menu › Pin: the chat moves to a Pinned group on top; stored.
    item = next(window.sidebar.list.item(i) for i in range(3) if window.sidebar.list.item(i).text() == "old")
    menu = window.sidebar.build_context_menu(item)
    pin = menu.findChild(type(menu.actions()[0]), "pin_action")
    assert pin.text() == "Pin"
    pin.trigger()
    await until(lambda: window.sidebar.groups()[0] == ("Pinned", [old.id]))
    assert (await store.get_session(old.id)).pinned
    item = window.sidebar.list.item(0)
    unpin = window.sidebar.build_context_menu(item).findChild(type(pin), "pin_action")
    assert unpin.text() == "Unpin"
    unpin.trigger()
    await until(lambda: window.sidebar.groups()[0][0] == "Today")
    assert not (await store.get_session(old.id)).pinned


async def test_chat_instructions_dialog_saves_and_the_next_request_carries_them(window, fake_api, qtbot):
    window.organise.instructions_button.click()
    await until(lambda: window.organise.instructions_dialog is not None)
    dialog = window.organise.instructions_dialog
    dialog.edit.setPlainText("Answer like a ship's captain.")
    dialog.accept()
    await until(lambda: "instructions" in window.toast.text())
    assert await window.bridge.engine.instructions(window.session_id) == "Answer like a ship's captain."
    fake_api.queue_text("Aye.")
    qtbot.keyClicks(window.composer.edit, "hello")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    await until(lambda: len(fake_api.message_requests()) == 1)
    assert "Answer like a ship's captain." in fake_api.message_requests()[0].body["system"][0]["text"]
    await until(
        lambda: (
            window.gauge.snapshot() is not None
            and window.gauge.snapshot().breakdown.get("instructions", 0) > 0
        )
    )


async def test_default_instructions_are_edited_in_settings(window, qtbot):
    dialog = window.open_settings()
    dialog.instructions.edit.setPlainText("Prefer short answers.")
    dialog.accept()
    await until(lambda: window.bridge.settings.instructions == "Prefer short answers.")
    saved = json.loads(engine_of(window).paths.settings_file.read_text("utf-8"))
    assert saved["instructions"] == "Prefer short answers."


async def test_export_and_copy_give_the_cli_output(window, fake_api, qtbot, tmp_path):
    fake_api.queue_text("The **reply**.")
    qtbot.keyClicks(window.composer.edit, "question")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    store = engine_of(window).store
    sid = window.session_id
    session, msgs, comps = (
        await store.get_session(sid),
        await store.messages(sid),
        await store.compactions(sid),
    )
    for fmt in ("md", "json"):
        path = tmp_path / f"out.{fmt}"
        await window.organise.write_export(sid, path, fmt)
        assert path.read_text("utf-8") == export_text(session, msgs, comps, fmt) + "\n"
        assert path.stat().st_mode & 0o077 == 0
    window.organise.actions["copy_chat"].trigger()
    await until(lambda: QGuiApplication.clipboard().text() == export_text(session, msgs, comps, "md"))
    assert "Copied" in window.toast.text()
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(
        window.composer.edit,
        Qt.Key.Key_C,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert QGuiApplication.clipboard().text() == "The **reply**."


async def test_shortcut_table_binds_the_actions_and_lists_them_all(window, qtbot):
    actions = window.organise.actions
    on_window = [seq for action in window.actions() for seq in action.shortcuts()]  # window-wide keys
    for entry in SHORTCUTS:
        if entry.bound_here:
            bound = actions[entry.command].shortcuts() if entry.command in actions else on_window
            assert all(seq in bound for seq in entry.sequences()), entry.command
    assert QKeySequence("Ctrl+,") in actions["settings"].shortcuts()
    assert QKeySequence("Ctrl+Shift+N") in actions["new_chat"].shortcuts()
    window.organise.actions["shortcuts"].trigger()
    dialog = window.organise.shortcuts_dialog
    assert isinstance(dialog, ShortcutsDialog) and dialog.isVisible()
    rows = dialog.rows()
    assert len(rows) == len(SHORTCUTS)
    described = " | ".join(f"{k} {w}" for k, w in rows)
    for words in (
        "Search all chats",
        "Find in this chat",
        "Settings",
        "Copy the last reply",
        "New chat",
        "Edit your last message",
        "Stop the reply, or cancel an edit",
    ):
        assert words in described
    assert ("Ctrl+K", "Search all chats") in rows


async def test_ctrl_shift_n_opens_a_new_chat(window, fake_api, qtbot):
    fake_api.queue_text("hi")
    qtbot.keyClicks(window.composer.edit, "first")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    first = window.session_id
    qtbot.keyClick(
        window.composer.edit,
        Qt.Key.Key_N,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    await until(lambda: window.session_id != first)
    assert message_rows(window) == []


async def test_up_in_an_empty_composer_edits_the_last_message_and_esc_cancels(window, fake_api, qtbot):
    fake_api.queue_text("one")
    qtbot.keyClicks(window.composer.edit, "my question")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Up)
    assert window.composer.edit.toPlainText() == "my question"
    assert window.composer.cancel_edit_button.isVisible()
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Escape)
    assert not window.composer.cancel_edit_button.isVisible() and window.composer.edit.toPlainText() == ""
    qtbot.keyClicks(window.composer.edit, "draft")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Up)  # not empty: ↑ moves the cursor, nothing else
    assert (
        window.composer.edit.toPlainText() == "draft" and not window.composer.cancel_edit_button.isVisible()
    )


async def test_esc_stops_a_streaming_reply(window, fake_api, qtbot):
    from tests.fakeapi import Fault

    fake_api.queue_fault(Fault.hold(after=3))
    fake_api.queue_text("a long answer " * 50)
    qtbot.keyClicks(window.composer.edit, "go")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    await until(lambda: window.bridge.engine.busy(window.session_id))
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Escape)
    await until(lambda: not window.bridge.engine.busy(window.session_id))
    assert message_rows(window)[0].content[0]["text"] == "go"  # the message is kept


async def test_slash_offers_commands_with_completion_and_runs_them(window, fake_api, qtbot):
    slash = window.organise.slash
    qtbot.keyClicks(window.composer.edit, "/c")
    await until(slash.popup_visible)
    assert slash.offered() == ["/clear", "/compact", "/context"]
    qtbot.keyClicks(window.composer.edit, "on")
    await until(lambda: slash.offered() == ["/context"])
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)  # picks the highlighted command
    assert window.composer.edit.toPlainText() == "/context" and not slash.popup_visible()
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)  # and runs it (the engine's /context card)
    await until(
        lambda: any(window.chat_model.row_at(i).kind == "notice" for i in range(window.chat_model.rowCount()))
    )
    assert fake_api.message_requests() == []
    window.composer.edit.setPlainText("/help")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    await until(
        lambda: window.organise.shortcuts_dialog is not None and window.organise.shortcuts_dialog.isVisible()
    )
    assert window.composer.edit.toPlainText() == ""
    window.composer.edit.setPlainText("/model claude-haiku-4-5")
    slash.hide_popup()
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    await until(
        lambda: (
            (engine_of(window).store is not None) and window.model_picker.currentText() == "claude-haiku-4-5"
        )
    )
    await until(lambda: window.toast.isVisible() and "claude-haiku-4-5" in window.toast.text())
