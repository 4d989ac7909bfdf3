"""Every action on the keyboard, in the real window: switching chats, regenerating, attaching, flipping versions,
expanding a tool block; the shortcut sheet lists every key the window binds."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut

from tests.conftest import engine_of
from tests.test_window import message_rows, until
from tests.test_window_restore import tool_window
from tests.tools_helpers import make_workspace

pytestmark = pytest.mark.qt

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier
ALT = Qt.KeyboardModifier.AltModifier


async def three_chats(window) -> list[int]:
    store = engine_of(window).store
    await store.add_message(window.session_id, "user", [{"type": "text", "text": "first"}])
    for title in ("second", "third"):
        sid = (await store.create_session(title)).id
        await store.add_message(sid, "user", [{"type": "text", "text": title}])
    await window.bridge.refresh_sessions()
    items = [window.sidebar.list.item(i) for i in range(window.sidebar.list.count())]
    ids = [int(item.data(Qt.ItemDataRole.UserRole)) for item in items]  # in the sidebar's order
    assert len(ids) == 3
    await window.bridge.open_session(ids[0])
    return ids


async def press(qtbot, window, widget, key, modifiers, expect: int) -> None:
    qtbot.keyClick(widget, key, modifiers)
    await until(lambda: window.session_id == expect)


async def test_chats_switch_from_the_keyboard_wherever_the_focus_is(window, fake_api, qtbot):
    ids = await three_chats(window)
    edit = window.composer.edit
    await press(qtbot, window, edit, Qt.Key.Key_Tab, CTRL, ids[1])
    await press(qtbot, window, edit, Qt.Key.Key_PageDown, CTRL, ids[2])
    await press(qtbot, window, edit, Qt.Key.Key_PageDown, CTRL, ids[0])  # round from the last to the first
    await press(qtbot, window, edit, Qt.Key.Key_Backtab, CTRL | SHIFT, ids[2])  # as X11 sends Ctrl+Shift+Tab
    await press(qtbot, window, edit, Qt.Key.Key_PageUp, CTRL, ids[1])
    await press(qtbot, window, edit, Qt.Key.Key_1, CTRL, ids[0])
    await press(qtbot, window, edit, Qt.Key.Key_3, CTRL, ids[2])
    window.chat.setFocus()
    await press(qtbot, window, window.chat, Qt.Key.Key_PageUp, CTRL, ids[1])
    await press(qtbot, window, window.chat, Qt.Key.Key_Tab, CTRL, ids[2])
    window.sidebar.list.setFocus()
    await press(qtbot, window, window.sidebar.list, Qt.Key.Key_2, CTRL, ids[1])
    await press(qtbot, window, window.sidebar.list, Qt.Key.Key_PageDown, CTRL, ids[2])


async def test_regenerate_and_flip_versions_from_the_keyboard(window, fake_api, qtbot):
    fake_api.queue_text("first answer")
    window._send("question")
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    await until(
        lambda: not window.bridge.engine.busy(window.session_id)
    )  # Regenerate waits for the turn's end
    fake_api.queue_text("second answer")
    edit = window.composer.edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_R, CTRL)  # the window's Regenerate, through the bridge: a new version
    model = window.chat_model

    def reply():
        row = model.row_at(model.row_of(message_rows(window)[-1].id))
        return row.message.content[0].get("text") if row.message.content else "", row.versions

    await until(lambda: reply() == ("second answer", (2, 2)))
    await until(
        lambda: not window.bridge.engine.busy(window.session_id)
    )  # versions switch once the turn is over
    qtbot.keyClick(edit, Qt.Key.Key_Left, ALT)
    await until(lambda: reply() == ("first answer", (1, 2)))
    qtbot.keyClick(edit, Qt.Key.Key_Right, ALT)
    await until(lambda: reply() == ("second answer", (2, 2)))
    qtbot.keyClick(edit, Qt.Key.Key_Right, ALT)  # no third version: nothing happens
    assert reply() == ("second answer", (2, 2))


async def test_attach_opens_the_file_dialog_from_the_keyboard(window, fake_api, qtbot, tmp_path):
    note = tmp_path / "notes.txt"
    note.write_text("remember the milk\n")
    asked = []
    window.composer.file_picker = lambda: asked.append(True) or [str(note)]
    window.composer.edit.setFocus()
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_U, CTRL)
    assert asked == [True]
    await until(lambda: window.composer.attachments == [str(note)])


async def test_a_tool_block_expands_and_collapses_from_the_keyboard(qtbot, fake_api, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    async with tool_window(qtbot) as win:
        win.tools.set_workspace(str(ws))
        await until(lambda: win.tools._writing == 0)
        win.runtime.toolbox.policy.yes = True
        fake_api.queue_tool_use("run", {"command": "seq 1 3"}, id="tr")
        fake_api.queue_text("counted")
        win._send("count")
        await until(lambda: not win.bridge.engine.busy(win.session_id) and len(message_rows(win)) == 4)
        model = win.chat_model
        win.composer.edit.setFocus()
        qtbot.keyClick(
            win.composer.edit, Qt.Key.Key_Tab, Qt.KeyboardModifier.ShiftModifier
        )  # back to the chat
        for _ in range(8):
            if win.chat.hasFocus():
                break
            qtbot.keyClick(win.focusWidget(), Qt.Key.Key_Tab, Qt.KeyboardModifier.ShiftModifier)
        assert win.chat.hasFocus()
        while model.row_at(win.chat.currentIndex().row()).kind != "tool":
            row = win.chat.currentIndex().row()
            qtbot.keyClick(win.chat, Qt.Key.Key_Up)
            assert win.chat.currentIndex().row() < row
        tool_row = win.chat.currentIndex().row()
        qtbot.keyClick(win.chat, Qt.Key.Key_Return)
        assert model.row_at(tool_row).detail.get("expanded")
        qtbot.keyClick(win.chat, Qt.Key.Key_Space)
        assert not model.row_at(tool_row).detail.get("expanded")


def window_keys(window) -> set[str]:
    keys = {k for a in window.findChildren(QAction) for k in a.shortcuts()}
    for shortcut in window.findChildren(QShortcut):
        keys.update(shortcut.keys())
    return {k.toString(QKeySequence.SequenceFormat.PortableText) for k in keys if not k.isEmpty()}


async def test_the_shortcut_sheet_lists_every_key_the_window_binds(window, fake_api, qtbot):
    from desktop.ui.window.shortcuts import SHORTCUTS

    dialog = window.organise.show_shortcuts()
    listed = {k.toString(QKeySequence.SequenceFormat.PortableText) for s in SHORTCUTS for k in s.sequences()}
    bound = window_keys(window)
    assert bound - listed == set()  # a key added without its line in the sheet fails here
    assert len(dialog.rows()) == len(SHORTCUTS)
    shown = "\n".join(f"{keys} {what}" for keys, what in dialog.rows())
    for what in (
        "Next chat",
        "Previous chat",
        "Regenerate the last reply",
        "Attach files",
        "Previous version",
        "Next version",
        "Expand or collapse a tool block",
    ):
        assert what in shown
    for keys in ("Ctrl+Tab", "Ctrl+PgDown", "Ctrl+PgUp", "Ctrl+1", "Ctrl+9", "Ctrl+R", "Ctrl+U"):
        assert keys in shown, keys
    # and every key the new commands use is really bound on the window
    for command in (
        "next_chat",
        "previous_chat",
        "chat_number",
        "regenerate",
        "attach",
        "previous_version",
        "next_version",
    ):
        entry = next(s for s in SHORTCUTS if s.command == command)
        assert {k.toString(QKeySequence.SequenceFormat.PortableText) for k in entry.sequences()} <= bound, (
            command
        )


def test_the_version_arrows_are_a_readable_size_and_easy_to_hit(qtbot):
    from PySide6.QtGui import QFontInfo

    from desktop.engine.types import StoredMessage
    from desktop.ui.transcript.chat_model import ChatModel
    from desktop.ui.transcript.chat_view import ChatView

    view = ChatView()
    model = ChatModel(view)
    view.setModel(model)
    view.resize(640, 480)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    rows = [
        StoredMessage(1, 1, "user", [{"type": "text", "text": "question"}]),
        StoredMessage(3, 1, "assistant", [{"type": "text", "text": "first of two"}], parent_id=1),
    ]
    model.set_messages(rows, False, {3: (1, 2)})
    view.doItemsLayout()
    reply = model.index(1, 0)
    prev, nxt = view.delegate.version_rects(reply, view.visualRect(reply))
    for arrow in (prev, nxt):  # on main 20 x 17 px
        assert arrow.width() >= 24 and arrow.height() >= 22, arrow
    label, arrows = view.delegate.versions_fonts()
    body = QFontInfo(view.font()).pixelSize()
    assert QFontInfo(label).pixelSize() >= body  # "2/3" as large as the text (on main 0.85 of it)
    assert QFontInfo(arrows).pixelSize() >= 1.5 * body
    # the line under the message holds them: the row is tall enough for the arrows' box
    assert view.visualRect(reply).bottom() >= prev.bottom()
