"""The reading features in the real window: Ctrl+F, "Copied" feedback, hover actions, expanded thinking."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QGuiApplication

from tests.test_window import ready, until

pytestmark = pytest.mark.qt


async def _exchange(window, fake_api, text: str, reply: str) -> None:
    fake_api.queue_text(reply)
    window.composer.edit.setPlainText(text)
    window.composer.send_button.click()
    model = window.chat_model
    await until(lambda: model.rowCount() >= 2 and model.row_at(model.rowCount() - 1).status == "complete")
    # The send's own task too: QTest's mouse and key calls spin the Qt loop inside this test's task, and a wakeup
    # of another task run there is refused ("Cannot enter into task … while another task is being executed"),
    # which left that task pending for ever and hung the window's close.
    await until(lambda: not window.bridge._tasks)
    await ready(window)


async def test_ctrl_f_finds_in_the_open_chat_and_esc_closes(window, fake_api, qtbot):
    await _exchange(window, fake_api, "where is the needle?", "The needle is in the haystack; a needle.")
    window.activateWindow()
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = window.reading.find_bar
    assert bar.isVisible() and bar.edit.hasFocus()
    qtbot.keyClicks(bar.edit, "needle")
    await until(lambda: len(bar.matches) == 3)
    assert bar.count.text() == f"{bar.current + 1} of 3"
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    assert bar.count.text() == f"{(bar.current % 3) + 1} of 3"
    qtbot.keyClick(bar.edit, Qt.Key.Key_Escape)
    assert not bar.isVisible() and window.chat.delegate.marks.matches == {}


async def test_copy_says_copied(window, fake_api, qtbot):
    await _exchange(window, fake_api, "hi", "a reply to copy")
    window.chat.setFocus()
    window.chat.setCurrentIndex(window.chat_model.index(1, 0))
    qtbot.keyClick(window.chat, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "a reply to copy"
    assert window.toast.isVisible() and window.toast.text() == "Copied"


async def test_hover_actions_copy_and_edit_a_message(window, fake_api, qtbot):
    await _exchange(window, fake_api, "my question", "the answer")
    chat, actions = window.chat, window.reading.actions
    user = chat.visualRect(window.chat_model.index(0, 0))
    qtbot.mouseMove(chat.viewport(), QPoint(user.right() - 30, user.center().y()))
    await until(lambda: actions.isVisible())
    assert actions.edit_button.isVisible() and not actions.regenerate_button.isVisible()
    actions.edit_button.click()
    assert window.composer.edit.toPlainText() == "my question"  # the same edit the menu starts
    window.cancel_edit()
    await _drafts_settled(window)
    reply = chat.visualRect(window.chat_model.index(1, 0))
    qtbot.mouseMove(chat.viewport(), QPoint(reply.left() + 30, reply.center().y()))
    await until(lambda: actions.index.row() == 1)
    assert not actions.edit_button.isVisible()
    actions.copy_button.click()
    assert QGuiApplication.clipboard().text() == "the answer" and window.toast.text() == "Copied"
    await _drafts_settled(window)


async def _drafts_settled(window) -> None:
    # The edit's draft save is timed (300 ms); a save spawned while the fixture closes the bridge never ends.
    save = lambda: window.bridge._draft_save  # noqa: E731
    await until(
        lambda: (
            not window._draft_timer.isActive()
            and (save() is None or save().done())
            and not window.bridge._tasks
        )
    )


async def test_hover_actions_are_reachable_with_the_keyboard(window, fake_api, qtbot):
    await _exchange(window, fake_api, "q", "a")
    chat, actions = window.chat, window.reading.actions
    chat.setFocus()
    chat.setCurrentIndex(window.chat_model.index(0, 0))
    qtbot.keyClick(chat, Qt.Key.Key_Up)
    await until(lambda: actions.isVisible() and actions.index.row() == 0)
    chat.focusNextChild()
    assert actions.copy_button.hasFocus()


async def test_thinking_expands_from_its_link_and_the_switch_is_per_chat(window, fake_api, qtbot):
    from tests.conftest import engine_of

    toggle = window.reading.thinking
    await until(lambda: toggle.isEnabled())  # the default model has extended thinking
    toggle.click()
    await until(lambda: window.bridge._tasks == set())
    assert (await engine_of(window).session_state(window.session_id)).get("thinking") is True
    fake_api.queue_thinking("step one\nstep two, the hidden part", "done")
    window.composer.edit.setPlainText("think")
    window.composer.send_button.click()
    model = window.chat_model
    await until(lambda: model.rowCount() == 2 and model.row_at(1).status == "complete")
    assert "thinking" in fake_api.message_requests()[-1].body
    chat = window.chat
    index = model.index(1, 0)
    chat.doItemsLayout()
    doc = chat.delegate.document(index)
    assert "hidden part" not in doc.toPlainText()
    link = doc.toPlainText().index("Show thinking") + 2
    rect = chat.visualRect(index)
    block = doc.findBlock(link)
    line = block.layout().lineForTextPosition(link - block.position())
    y = doc.documentLayout().blockBoundingRect(block).top() + line.y() + line.height() / 2
    pos = chat.delegate.text_origin(index, rect) + QPointF(line.cursorToX(link - block.position())[0], y)
    qtbot.mouseClick(chat.viewport(), Qt.MouseButton.LeftButton, pos=pos.toPoint())
    assert "step two, the hidden part" in chat.delegate.document(index).toPlainText()
    chat.setFocus()
    chat.setCurrentIndex(index)
    qtbot.keyClick(chat, Qt.Key.Key_Return)  # Enter folds it back
    assert "hidden part" not in chat.delegate.document(index).toPlainText()
    await _drafts_settled(window)
