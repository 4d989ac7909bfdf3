"""Issue 22's "Other" list, on the real window (offscreen) over a real engine and SQLite store: the menu order, the
language notice, what the hour-long prompt cache does and when, and the smaller reading fixes."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from desktop.engine.metering.context import ContextSnapshot
from desktop.ui.gauge import cache_rows
from tests.test_window import until

pytestmark = pytest.mark.qt


async def test_help_is_the_last_menu_after_view(window):
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert "View" in titles and "Help" in titles
    assert titles.index("View") < titles.index("Help") == len(titles) - 1, titles


async def test_saving_another_language_says_it_applies_at_the_next_start(window):
    dialog = window.open_settings()
    combo = dialog.form.language.combo
    combo.setCurrentIndex(combo.findData("zh_CN" if window.bridge.settings.language != "zh_CN" else "en"))
    assert dialog.form.language.note.isVisible()  # the dialog says it before saving
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()
    await until(lambda: window.toast.isVisible())  # and the window once it is saved
    assert "next start" in window.toast.text()


async def test_saving_the_same_language_says_nothing_about_a_restart(window):
    dialog = window.open_settings()
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()
    await until(lambda: dialog.isHidden())
    await until(lambda: not window.bridge._tasks)  # the save's task has run (it toasts at its end, if at all)
    assert "next start" not in (window.toast.text() if window.toast.isVisible() else "")


def _snap(ttl: float) -> ContextSnapshot:
    return ContextSnapshot(
        model="m",
        window=200_000,
        max_output=8_000,
        used=50_000,
        next_turn=51_000,
        source="api",
        cache_expires_at=1_000.0 + ttl,
        cache_ttl=ttl,
    )


def test_the_hover_card_says_which_cache_lifetime_the_last_request_bought():
    hour = cache_rows.values(_snap(3600.0), now=lambda: 1_000.0)["cache_expiry"] or ""
    five = cache_rows.values(_snap(300.0), now=lambda: 1_000.0)["cache_expiry"] or ""
    assert hour.startswith("1:00:00") and "1 h" in hour
    assert five.startswith("05:00") and "5 min" in five


async def test_the_hour_long_cache_setting_says_when_it_applies(window):
    dialog = window.open_settings()
    tip = dialog.form.long_ttl.toolTip()
    assert "5 minutes" in tip and "next request" in tip
    dialog.reject()


# --- search and export: the attached files' names (and a text file's words) --------------------------------------


def _attached(tmp_path):
    from desktop.engine.history.attachments import text_document
    from desktop.store import Store

    store = Store.open_sync(tmp_path / "precis.db")
    r = store.repo
    s = r.create_session("files")
    photo = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    msg = r.add_message(
        s.id,
        "user",
        [
            photo,
            text_document("the quarterly wombat census", "notes-q3.txt"),
            {"type": "text", "text": "what do these say?"},
        ],
        meta={"files": ["holiday-beach.png", "notes-q3.txt"]},
    )
    return store, s, msg


def test_search_finds_a_message_by_its_attached_files_names_and_a_text_files_words(tmp_path):
    from desktop.store import search as fts

    store, _s, msg = _attached(tmp_path)
    try:
        for query in ("holiday", "holiday-beach.png", "notes-q3", "wombat"):
            hits = store.run(fts.search, store.repo, query)
            assert [h.message_id for h in hits] == [msg.id], query
        name_hit = store.run(fts.search, store.repo, "beach")[0]
        assert "holiday-beach.png" in name_hit.plain  # the snippet shows the name that matched
        assert store.run(fts.search, store.repo, "zebra") == []
    finally:
        store.close_sync()


def test_export_names_the_attached_files(tmp_path):
    from desktop.engine.history.export import export_markdown

    store, s, msg = _attached(tmp_path)
    try:
        session = store.repo.get_session(s.id)
        text = export_markdown(session, [msg], [])
    finally:
        store.close_sync()
    assert "holiday-beach.png" in text and "notes-q3.txt" in text


# --- display math in the user's own bubble ----------------------------------------------------------------------


@pytest.mark.parametrize("typeset", [False, True])
def test_display_math_in_a_users_bubble_is_drawn_inside_the_bubble(view, qtbot, typeset):
    """A centred formula was laid out across the whole column while the bubble shrinks to its text: it was drawn
    outside the bubble (clipped: a blank gap)."""
    from desktop.engine.types import StoredMessage
    from desktop.ui.transcript import math_render
    from desktop.ui.transcript.chat_delegate import PAD

    if typeset:
        math_render.warm_in_background()
        qtbot.waitUntil(math_render._loaded.is_set, timeout=60_000)
    view.resize(900, 480)
    view.model().set_messages(
        [StoredMessage(1, 1, "user", [{"type": "text", "text": "why is\n$$\\sum_i x_i^2$$"}])], False
    )
    view.model().flush()
    view.doItemsLayout()
    index = view.model().index(0, 0)
    geometry = view.delegate._geometry(index, view.visualRect(index))
    doc = geometry.doc
    inner = geometry.bubble.width() - 2 * PAD  # the bubble's text room
    block = doc.begin()
    while block.isValid():
        layout = block.layout()
        for i in range(layout.lineCount()):
            line = layout.lineAt(i)
            start = line.cursorToX(line.textStart())  # where the line's text starts, its alignment applied
            left = start[0] if isinstance(start, tuple) else start
            right = layout.position().x() + left + line.naturalTextWidth()
            assert right <= inner + 1, (block.text(), right, inner)
        block = block.next()


# --- a tool card opens with a click --------------------------------------------------------------------------------


async def test_a_click_on_a_tool_row_expands_it_and_another_folds_it(window, qtbot):
    from PySide6.QtCore import QPoint

    from desktop.engine.types import StoredMessage

    call = StoredMessage(
        901,
        window.session_id,
        "assistant",
        [{"type": "tool_use", "id": "t1", "name": "grep", "input": {"pattern": "needle " * 30}}],
    )
    window.chat_model.set_messages([call], False)
    window.chat_model.flush()
    window.chat.doItemsLayout()
    await until(lambda: window.chat_model.rowCount() == 1)
    # QTest's mouse calls spin the Qt loop inside this task: no other task may be waiting to run then (see
    # tests/test_reading_window.py), or it is refused and left pending, and the window's close hangs.
    await until(lambda: not window.bridge._tasks)
    index = window.chat_model.index(0, 0)
    rect = window.chat.visualRect(index)
    where = QPoint(rect.left() + 40, rect.center().y())
    assert not window.chat_model.row_at(0).detail.get("expanded")
    qtbot.mouseClick(window.chat.viewport(), Qt.MouseButton.LeftButton, pos=where)
    await until(lambda: bool(window.chat_model.row_at(0).detail.get("expanded")))
    await asyncio.sleep(
        (QApplication.doubleClickInterval() + 50) / 1000
    )  # a second click, not a double click
    await until(lambda: not window.bridge._tasks)
    rect = window.chat.visualRect(window.chat_model.index(0, 0))
    qtbot.mouseClick(
        window.chat.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.left() + 40, rect.top() + 12)
    )
    await until(lambda: not window.chat_model.row_at(0).detail.get("expanded"))


# --- the hover bar (Copy | Regenerate) --------------------------------------------------------------------------


def _two_messages(view):
    from desktop.engine.types import StoredMessage

    view.resize(700, 500)
    view.model().set_messages(
        [
            StoredMessage(1, 1, "assistant", [{"type": "text", "text": "a short reply"}]),
            StoredMessage(2, 1, "user", [{"type": "text", "text": "the next message"}]),
        ],
        False,
    )
    view.model().flush()
    view.doItemsLayout()
    from desktop.ui.transcript.message_actions import MessageActions

    return MessageActions(view)


def _hover(view, index) -> None:
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QMouseEvent

    centre = QPointF(view.visualRect(index).center())
    move = QMouseEvent(
        QMouseEvent.Type.MouseMove,
        centre,
        view.viewport().mapToGlobal(centre),
        Qt.MouseButton.NoButton,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(view.viewport(), move)


def test_the_hover_bar_stays_within_its_own_row(view, qtbot):
    bar = _two_messages(view)
    first, second = view.model().index(0, 0), view.model().index(1, 0)
    _hover(view, first)
    assert bar.isVisible() and bar.index == first
    assert bar.geometry().bottom() <= view.visualRect(first).bottom()
    assert not bar.geometry().intersects(view.visualRect(second))


def test_the_hover_bar_goes_when_the_pointer_leaves_even_with_a_current_row(view, qtbot):
    from PySide6.QtCore import QEvent

    bar = _two_messages(view)
    first = view.model().index(0, 0)
    view.setFocus()
    view.setCurrentIndex(first)  # a click on a message made it current
    _hover(view, first)
    assert bar.isVisible()
    QApplication.sendEvent(view.viewport(), QEvent(QEvent.Type.Leave))
    assert not bar.isVisible()
