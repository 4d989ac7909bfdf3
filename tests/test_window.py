"""The real window with pytest-qt on the qasync loop, against the loopback server.

Async tests that touch Qt run on a qasync loop so Qt events and asyncio tasks share one thread (see conftest)."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt

from desktop.runtime import open_runtime
from tests.conftest import engine_of
from tests.fakeapi import Fault

pytestmark = pytest.mark.qt


async def until(predicate, timeout: float = 30.0) -> None:  # generous: a passing test never waits it out
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        assert loop.time() < end, "condition not reached in time"
        await asyncio.sleep(0.02)


async def ready(win) -> None:  # noqa: ANN001
    """Until the window shows its chat idle (Send, not Stop) and the engine agrees: only then is a click on Send
    taken. The engine is idle a moment before its status event reaches the composer; a click in that moment is
    ignored, as the Stop button it lands on would be."""
    await until(lambda: win.composer.send_button.isVisible() and not win.bridge.engine.busy(win.session_id))


def message_rows(win):
    model = win.chat_model
    return [model.row_at(i).message for i in range(model.rowCount()) if model.row_at(i).message]


async def test_send_streams_reply_and_updates_gauge(window, fake_api, qtbot):
    fake_api.queue_text("Streaming **works**")
    qtbot.keyClicks(window.composer.edit, "Hello")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    user, reply = message_rows(window)
    assert user.content[0]["text"] == "Hello"
    assert reply.content == [{"type": "text", "text": "Streaming **works**"}]
    assert window.composer.edit.toPlainText() == ""
    await until(lambda: window.gauge.snapshot() is not None and window.gauge.snapshot().source == "api")
    # The gauge shows exactly what `precis context` computes for the same session.
    assert window.gauge.snapshot() == await engine_of(window).measure(window.session_id)
    assert window.gauge.snapshot().used >= reply.usage.prompt_tokens
    assert window.title_label.text() == "Hello"


async def test_shift_enter_adds_a_line_instead_of_sending(window, fake_api, qtbot):
    qtbot.keyClicks(window.composer.edit, "line one")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(window.composer.edit, "line two")
    await asyncio.sleep(0.1)
    assert window.composer.edit.toPlainText() == "line one\nline two"
    assert fake_api.message_requests() == []


async def test_stop_keeps_partial_reply(window, fake_api, qtbot):
    hold = Fault.hold(after=5)
    fake_api.queue_fault(hold)
    fake_api.queue_text("b" * 500)
    window.composer.edit.setPlainText("go")
    window.composer.send_button.click()
    await until(lambda: window.composer.stop_button.isVisible())
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].content)
    window.composer.stop_button.click()
    await until(lambda: message_rows(window)[1].status == "interrupted")
    hold.release.set()
    await ready(window)
    stored = await engine_of(window).store.messages(window.session_id)
    assert stored[1].status == "interrupted" and stored[1].content[0]["text"].startswith("b")


async def test_error_banner_and_retry(window, fake_api, qtbot):
    fake_api.queue_fault(Fault.custom(401, "authentication_error", "invalid x-api-key"))
    window.composer.edit.setPlainText("please work")
    window.composer.send_button.click()
    await until(lambda: window.banner.isVisible())
    assert "API key" in window.banner.label.text()
    assert [m.role for m in message_rows(window)] == ["user"]  # the empty failed reply is gone
    fake_api.queue_text("now it works")
    window.banner.retry_button.click()
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    assert not window.banner.isVisible()
    assert message_rows(window)[1].content[0]["text"] == "now it works"


async def test_context_command_shows_card_not_stored(window, fake_api, qtbot):
    fake_api.queue_text("hi")
    window.composer.edit.setPlainText("hello")
    window.composer.send_button.click()
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    await ready(window)
    window.composer.edit.setPlainText("/context")
    window.composer.send_button.click()
    model = window.chat_model
    await until(lambda: any(model.row_at(i).kind == "notice" for i in range(model.rowCount())))
    assert len(fake_api.message_requests()) == 1
    assert len(await engine_of(window).store.messages(window.session_id)) == 2


async def test_session_survives_restart_and_older_pages_load(qtbot, fake_api):
    from desktop.ui.bridge import PAGE_SIZE, Bridge
    from desktop.ui.window.main_window import MainWindow

    async with open_runtime() as runtime:  # written by one process...
        store = runtime.store
        sid = (await store.create_session("Long one")).id
        await store.add_messages(
            sid,
            [
                {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": [{"type": "text", "text": f"message {i}"}],
                }
                for i in range(PAGE_SIZE * 2 + 10)
            ],
        )
    async with open_runtime() as runtime:  # ...and opened by the next
        bridge = Bridge(runtime.engine)
        win = MainWindow(bridge, runtime.paths.config_dir / "window.ini")
        win.show()
        await win.start()
        await until(
            lambda: len(message_rows(win)) == PAGE_SIZE
        )  # a screenful first, the rest after the gauge
        assert message_rows(win)[-1].content[0]["text"] == f"message {PAGE_SIZE * 2 + 9}"
        await bridge.load_older(sid, win.chat_model.oldest_message_id())
        assert len(message_rows(win)) == PAGE_SIZE * 2
        await bridge.close()
    win.close()
    win.deleteLater()


def cards(win):
    model = win.chat_model
    return [model.row_at(i) for i in range(model.rowCount()) if model.row_at(i).kind == "compaction"]


async def long_chat(win, store, note: str = "") -> int:
    """Six long exchanges (~48K tokens: more than the verbatim tail) in the window's chat, opened; its id."""
    sid = win.session_id
    for i in range(6):
        await store.add_message(
            sid, "user", [{"type": "text", "text": f"question {i}{note} " + "dolor " * 3000}]
        )
        await store.add_message(sid, "assistant", [{"type": "text", "text": f"answer {i} " + "lorem " * 800}])
    await win.bridge.open_session(sid)
    return sid


async def compact_now(win) -> None:
    """The hover card's Compact now: its preview opens, and is confirmed as it is."""
    win.gauge.compact_requested.emit()
    await until(lambda: win.memory.preview is not None and win.memory.preview.isVisible())
    win.memory.preview.accept()


async def compacted(win, store, note: str = "") -> int:
    """``long_chat``, compacted from the hover card's Compact now, its card shown."""
    sid = await long_chat(win, store, note)
    await compact_now(win)
    await until(lambda: len(cards(win)) == 1)
    return sid


async def test_compaction_card_collapses_originals_and_undo_restores(window, fake_api, qtbot):
    store = engine_of(window).store
    sid = await long_chat(window, store)
    assert len(message_rows(window)) == 12 and not cards(window)
    await compact_now(window)  # the hover card's Compact now button, its preview confirmed
    await until(lambda: len(cards(window)) == 1)
    await until(lambda: window.toast.isVisible() and "Context compacted" in window.toast.text())
    card = cards(window)[0]
    assert window.chat_model.row_at(0).kind == "compaction"  # the card sits where the originals were
    assert len(message_rows(window)) < 12  # covered originals are collapsed under it
    assert "messages summarised" in card.title and "tokens saved" in card.title
    window.chat.card_action.emit(str(card.key), "summary")
    assert cards(window)[0].detail["expanded"]
    window.chat.card_action.emit(str(card.key), "originals")
    # Originals readable again, the card still between them and the rest.
    await until(lambda: len(message_rows(window)) == 12 and len(cards(window)) == 1)
    window.chat.card_action.emit(str(cards(window)[0].key), "undo")
    await until(lambda: not cards(window))
    assert await store.active_compaction(sid) is None
    assert len(message_rows(window)) == 12


def test_card_html_offers_the_three_actions():
    from desktop.ui.transcript.chat_delegate import CARD_SCHEME, card_actions_html

    html = card_actions_html({"undoable": True})
    for action in ("summary", "originals", "undo"):
        assert f'href="{CARD_SCHEME}{action}"' in html
    assert "undo" not in card_actions_html({"undoable": False})


async def test_overflow_that_survives_recovery_offers_two_ways_forward(window, fake_api, qtbot):
    fake_api.window = 50  # not even the system prompt fits: recovery cannot help
    first = window.session_id
    window.composer.edit.setPlainText("hello")
    window.composer.send_button.click()
    await until(lambda: window.banner.isVisible())
    assert window.banner.compact_retry_button.isVisible() and window.banner.new_chat_button.isVisible()
    assert "context window" in window.banner.label.text()
    # Nothing could make the request smaller, so it was not sent again (resending a request that failed is what
    # the engine never does).
    assert len([r for r in fake_api.message_requests() if r.status == 400]) == 1
    window.banner.new_chat_button.click()
    await until(lambda: window.session_id != first)
    assert (await engine_of(window).store.messages(first))[0].content[0]["text"] == "hello"  # nothing lost


async def test_hover_card_rows_after_a_streamed_turn(window, fake_api, qtbot):
    from desktop.ui.look.format import fmt_cost, fmt_percent, fmt_tokens

    fake_api.queue_text("The card should show this turn's usage.")
    window.composer.edit.setPlainText("measure me")
    window.composer.send_button.click()
    await until(lambda: window.gauge.snapshot() is not None and window.gauge.snapshot().source == "api")
    snap = window.gauge.snapshot()
    card = window.gauge.card
    served = fake_api.message_requests()[-1].usage
    assert card.value("model").text() == snap.model
    assert fmt_tokens(snap.used) in card.value("used").text()
    assert card.value("percent").text() == fmt_percent(snap.percent)
    assert card.value("output").text() == fmt_tokens(served["output_tokens"])
    assert card.value("cost_session").text() == fmt_cost(snap.cost_session)
    assert "last API response" in card.value("source").text()


async def test_sidebar_new_rename_filter_and_delete(window, fake_api, qtbot, monkeypatch):
    from PySide6.QtWidgets import QInputDialog, QMessageBox

    bar = window.sidebar
    first = window.session_id
    fake_api.queue_text("hello")  # New chat reuses an empty chat: the first one gets a message
    window.composer.edit.setPlainText("first chat")
    window.composer.send_button.click()
    await until(lambda: len(message_rows(window)) == 2 and window.composer.send_button.isVisible())
    bar.new_button.click()
    await until(lambda: window.session_id != first and bar.list.count() == 2)
    second = window.session_id
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("Renamed chat", True))
    bar.ask_rename(bar.list.currentItem())
    await until(lambda: any(bar.list.item(i).text() == "Renamed chat" for i in range(bar.list.count())))
    assert window.title_label.text() == "Renamed chat"
    bar.filter_edit.setText("Renamed")
    await until(lambda: bar.list.count() == 1)
    bar.filter_edit.clear()
    await until(lambda: bar.list.count() == 2)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Cancel)
    bar.ask_delete(bar.list.currentItem())
    await asyncio.sleep(0.1)
    assert await engine_of(window).store.get_session(second) is not None  # cancelled: nothing deleted
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    bar.ask_delete(bar.list.currentItem())
    await until(lambda: bar.list.count() == 1)
    assert await engine_of(window).store.get_session(second) is None


async def test_edit_and_resend_from_the_message_menu(window, fake_api, qtbot):
    fake_api.queue_text("first answer")
    window.composer.edit.setPlainText("original question")
    window.composer.send_button.click()
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    await ready(window)
    user_id = message_rows(window)[0].id
    index = window.chat_model.index(window.chat_model.row_of(user_id))
    menu = window.chat.build_context_menu(window.chat.visualRect(index).center())
    actions = {a.text(): a for a in menu.actions()}
    assert "Delete message…" in actions
    actions["Edit and resend…"].trigger()
    assert window.composer.edit.toPlainText() == "original question"
    window.composer.edit.setPlainText("better question")
    fake_api.queue_text("second answer")
    window.composer.send_button.click()
    await until(
        lambda: (
            [m.content[0]["text"] if m.content else "" for m in message_rows(window)]
            == ["better question", "second answer"]
            and message_rows(window)[1].status == "complete"
        )
    )
    stored = await engine_of(window).store.messages(window.session_id)
    assert [m.content[0]["text"] for m in stored] == ["better question", "second answer"]


async def test_attachments_from_the_composer_reach_the_request(window, fake_api, qtbot, tmp_path):
    from PIL import Image

    path = tmp_path / "screenshot.png"
    Image.new("RGB", (40, 20), (10, 200, 10)).save(path)
    window.composer.add_files([str(path)])
    assert window.composer.chips.chips[str(path)].name_label.text() == "screenshot.png"
    fake_api.queue_text("a green bar")
    window.composer.edit.setPlainText("what is this?")
    window.composer.send_button.click()
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    content = fake_api.message_requests()[-1].body["messages"][0]["content"]
    assert [b["type"] for b in content] == ["image", "text"]
    assert not window.composer.attachments  # sent attachments are cleared
    await ready(window)  # the turn has fully ended
    (tmp_path / "notes.txt").write_text("text, not an image")
    window.composer.add_files([str(tmp_path / "notes.txt")])
    await until(lambda: not window.composer.checking)  # accepted when added (checked in a worker thread)
    (tmp_path / "notes.txt").write_bytes(b"\x00binary now")  # changed after it was added
    window.composer.edit.setPlainText("and this?")
    window.composer.send_button.click()
    await until(lambda: window.toast.isVisible() and "Cannot attach" in window.toast.text())
    assert len(fake_api.message_requests()) == 1  # refused with a clear message, nothing sent


async def test_window_geometry_is_remembered(window, fake_api, qtbot):
    from PySide6.QtCore import QSettings

    await until(lambda: window.gauge.snapshot() is not None)  # start-up work has finished
    window.resize(700, 500)  # within the offscreen screen, which restoreGeometry clamps to
    window.close()
    ini = engine_of(window).paths.config_dir / "window.ini"
    saved = QSettings(str(ini), QSettings.Format.IniFormat).value("window/geometry")
    assert saved is not None
    from desktop.ui.window.main_window import MainWindow

    again = MainWindow(window.bridge, ini)
    assert (again.width(), again.height()) == (700, 500)
    again.deleteLater()


async def test_gauge_spinner_and_stop_follow_the_activity_not_its_wording(
    window, fake_api, qtbot, monkeypatch
):
    from desktop.ui.api import Activity
    from desktop.ui.window import activity

    # Reworded (as a translation would): the window must still know a compaction is running.
    monkeypatch.setitem(activity.ACTIVITY_TEXT, Activity.COMPACTING, "Squeezing the context")
    engine = engine_of(window)
    sid = window.session_id
    for i in range(12):
        await engine.store.add_message(
            sid,
            "user" if i % 2 == 0 else "assistant",
            [{"type": "text", "text": f"part {i} " + "lorem ipsum dolor " * 2500}],
        )
    await window.bridge.open_session(sid)
    await until(lambda: window.gauge.snapshot() is not None and window.gauge.snapshot().can_compact)
    assert window.gauge.card.compact_button.isEnabled()  # offered: the compactor would compact
    hold = Fault.hold(after=1)
    fake_api.queue_fault(hold)
    await compact_now(window)  # the hover card's Compact now, its preview confirmed
    await until(hold.reached.is_set)
    await until(window.gauge.is_busy)
    assert window.status.text() == "Squeezing the context"
    assert not window.gauge.card.compact_button.isEnabled()  # not twice at once
    assert window.composer.stop_button.isVisibleTo(window)  # Stop is offered...
    qtbot.mouseClick(window.composer.stop_button, Qt.MouseButton.LeftButton)  # ...and it works
    await until(lambda: not window.gauge.is_busy())
    hold.release.set()
    await until(lambda: window.composer.send_button.isVisibleTo(window))
    assert await engine.store.compactions(sid) == []  # stopped: nothing changed
    assert not engine.busy(sid)


async def test_an_edit_belongs_to_its_chat_and_esc_cancels_it(window, fake_api, qtbot):
    engine = engine_of(window)
    first = window.session_id
    fake_api.queue_text("reply one")
    window.composer.edit.setPlainText("first chat message")
    window.composer.send_button.click()
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    second = await window.bridge.new_session()
    fake_api.queue_text("reply two")
    window.composer.edit.setPlainText("second chat message")
    window.composer.send_button.click()
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    await window.bridge.open_session(first)
    window._edit_message(message_rows(window)[0].id)  # "Edit and resend…" in chat 1
    await window.bridge.open_session(second)  # ...then chat 2
    assert window.composer.edit.toPlainText() == ""  # the edit stayed with chat 1
    await ready(window)  # chat 2's turn may still be ending (its reply complete before its job is)
    fake_api.queue_text("reply three")
    window.composer.edit.setPlainText("a new message for chat 2")
    window.composer.send_button.click()
    await until(lambda: len(message_rows(window)) == 4 and message_rows(window)[3].status == "complete")
    texts = [m.content[0]["text"] for m in await engine.store.messages(second)]
    assert texts[0] == "second chat message"  # on main this history was deleted
    assert len(await engine.store.messages(first)) == 2
    # Esc leaves an edit without deleting anything.
    window._edit_message(message_rows(window)[0].id)
    assert window.composer.cancel_edit_button.isVisibleTo(window)
    window.composer.edit.setFocus()
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Escape)
    assert window.composer.edit.toPlainText() == "" and not window.composer.cancel_edit_button.isVisibleTo(
        window
    )
    assert len(await engine.store.messages(second)) == 4


async def test_a_refused_attachment_keeps_the_draft(window, fake_api, qtbot, tmp_path):
    script = tmp_path / "tool.py"
    script.write_text("print('hi')\n", "utf-8")
    window.composer.edit.setPlainText("please look at this")
    window.composer.add_files([str(script)])
    await until(lambda: not window.composer.checking)  # accepted when added (checked in a worker thread)
    script.write_bytes(b"\x00\x01 compiled")  # no longer text when it is sent: refused at send after all
    window.composer.send_button.click()
    await until(lambda: window.toast.isVisible())
    await asyncio.sleep(0.1)
    assert window.composer.edit.toPlainText() == "please look at this"  # nothing lost
    assert window.composer.attachments == [str(script)]
    assert await engine_of(window).store.messages(window.session_id) == []  # and nothing stored


async def test_edit_and_resend_refuses_another_chats_message(engine, fake_api):
    one = await engine.new_session()
    two = await engine.new_session()
    fake_api.queue_text("a")
    await engine.send(one, "in chat one")
    fake_api.queue_text("b")
    await engine.send(two, "in chat two")
    foreign = (await engine.store.messages(one))[0].id
    with pytest.raises(ValueError, match="not a user message of session"):
        await engine.edit_and_resend(two, foreign, "oops")
    assert len(await engine.store.messages(two)) == 2 and len(await engine.store.messages(one)) == 2


async def test_after_deleting_the_open_chat_a_typed_message_still_has_a_chat(
    window, fake_api, qtbot, monkeypatch
):
    from PySide6.QtWidgets import QMessageBox

    engine = engine_of(window)
    only = window.session_id
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    window._delete_session(only)
    await until(lambda: window.session_id is not None and window.session_id != only)
    assert await engine.store.get_session(only) is None
    fake_api.queue_text("still here")
    window.composer.edit.setPlainText("typed after the delete")
    window.composer.send_button.click()
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    stored = await engine.store.messages(window.session_id)
    assert stored[0].content[0]["text"] == "typed after the delete"  # on main it was dropped silently
    # The title follows the first message once the chat list is read again (after the reply, not with it).
    await until(lambda: window.title_label.text() == "typed after the delete")


async def test_f2_renames_the_chat_even_with_the_focus_in_the_composer(window, fake_api, qtbot, monkeypatch):
    from PySide6.QtWidgets import QInputDialog

    asked = []
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: asked.append(1) or ("Renamed by F2", True))
    window.composer.edit.setPlainText("a draft")
    window.composer.edit.setFocus()
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_F2)
    session = window.session_id
    await until(lambda: window.title_label.text() == "Renamed by F2")
    assert (await engine_of(window).store.get_session(session)).title == "Renamed by F2"
    assert window.composer.edit.toPlainText() == "a draft"  # the name never went into the composer
    assert await engine_of(window).store.messages(session) == []  # nor to the model
    window.sidebar.list.setFocus()  # from the list too, and only one dialog
    qtbot.keyClick(window.sidebar.list, Qt.Key.Key_F2)
    assert len(asked) == 2


async def test_a_long_status_line_is_elided_never_widens_the_window_and_clears(window, qtbot):
    width = window.width()
    window.status.FLASH_MS = 200
    window.status.flash("imported 61 messages; skipped records: " + "progress, " * 300)
    await asyncio.sleep(0.05)
    assert window.width() == width and window.composer.send_button.isVisibleTo(window)
    assert window.status.toolTip().startswith("imported 61 messages")  # the whole line is still readable
    await until(lambda: window.status.text() == "")
