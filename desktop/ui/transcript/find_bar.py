"""Ctrl+F in the open chat: a bar above the composer that highlights every match and steps through them.

It searches the rows the chat has loaded (older pages load as the user scrolls up; full-text search across
every chat is the search index's job). A row is looked at through its plain text first and only rows that
contain the words have their rendered document searched, so a keystroke does not build every document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from desktop.ui.transcript.chat_model import ChatModel, RowKey
from desktop.ui.transcript.text_marks import Range, find_all

if TYPE_CHECKING:
    from desktop.ui.transcript.chat_view import ChatView

SEARCH_DELAY_MS = 120  # typing a word searches once, not once per letter


class FindBar(QWidget):
    closed = Signal()

    def __init__(self, view: ChatView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("find_bar")
        self._view = view
        self.matches: list[tuple[RowKey, Range]] = []
        self.current = -1
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText(self.tr("Find in this chat"))
        self.edit.setAccessibleName(self.tr("Find in this chat"))
        self.edit.setClearButtonEnabled(True)
        self.count = QLabel(self)
        self.count.setObjectName("find_count")
        self.count.setMinimumWidth(90)
        self.previous_button = QToolButton(self)
        self.previous_button.setText("↑")
        self.previous_button.setToolTip(self.tr("Previous match (Shift+Enter)"))
        self.previous_button.setAccessibleName(self.tr("Previous match"))
        self.next_button = QToolButton(self)
        self.next_button.setText("↓")
        self.next_button.setToolTip(self.tr("Next match (Enter)"))
        self.next_button.setAccessibleName(self.tr("Next match"))
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setToolTip(self.tr("Close (Esc)"))
        self.close_button.setAccessibleName(self.tr("Close the find bar"))
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 2, 12, 2)
        row.addWidget(self.edit, 1)
        row.addWidget(self.count)
        row.addWidget(self.previous_button)
        row.addWidget(self.next_button)
        row.addWidget(self.close_button)
        self._timer = QTimer(self, singleShot=True, interval=SEARCH_DELAY_MS)
        self._timer.timeout.connect(self.search)
        self.edit.textChanged.connect(lambda _t: self._timer.start())
        self.previous_button.clicked.connect(self.find_previous)
        self.next_button.clicked.connect(self.find_next)
        self.close_button.clicked.connect(self.close_bar)
        self.edit.installEventFilter(self)
        self.hide()

    # -- opening and closing ------------------------------------------------------------------------------

    def open_bar(self) -> None:
        """Show (or focus) the bar; a selection in the chat becomes the search text."""
        self.show()
        self.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.edit.selectAll()
        if self.edit.text():
            self.search()

    def close_bar(self) -> None:
        self._timer.stop()
        self._set_marks([], -1)
        self.hide()
        self.closed.emit()
        self._view.setFocus(Qt.FocusReason.OtherFocusReason)

    def eventFilter(self, watched: object, event: object) -> bool:  # noqa: N802 - Qt override
        if not (watched is self.edit and isinstance(event, QKeyEvent)):
            return False
        if event.type() == QKeyEvent.Type.ShortcutOverride and event.key() == Qt.Key.Key_Escape:
            event.accept()  # Esc closes this bar, whatever window-wide shortcut also uses it
            return True
        if event.type() != QKeyEvent.Type.KeyPress:
            return False
        if event.key() == Qt.Key.Key_Escape:
            self.close_bar()
            return True
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if self._timer.isActive():
                self.search()
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.find_previous()
            else:
                self.find_next()
            return True
        return False

    # -- searching ----------------------------------------------------------------------------------------

    def search(self) -> None:
        """Find every match of the text in the loaded rows; the first one at or below the screen's top is
        current."""
        self._timer.stop()
        needle = self.edit.text()
        view, model = self._view, cast(ChatModel | None, self._view.model())
        found: list[tuple[RowKey, Range]] = []
        if needle and model is not None:
            model.release_pending()  # a chat just opened: the rest of its first page is searched too
            folded = needle.casefold()
            for r in range(model.rowCount()):
                row = model.row_at(r)
                if folded not in row.plain_text.casefold():
                    continue
                doc = view.delegate.document(model.index(r, 0))
                found.extend((row.key, m) for m in find_all(doc, needle))
        self._set_marks(found, self._first_on_screen(found))
        if self.current >= 0:
            self._reveal()

    def _first_on_screen(self, found: list[tuple[RowKey, Range]]) -> int:
        if not found:
            return -1
        top = self._view.indexAt(self._view.viewport().rect().topLeft())
        top_row = top.row() if top.isValid() else 0
        model = cast(ChatModel, self._view.model())
        return next((i for i, (key, _r) in enumerate(found) if model.row_of(key) >= top_row), 0)

    def find_next(self) -> None:
        self._step(1)

    def find_previous(self) -> None:
        self._step(-1)

    def _step(self, delta: int) -> None:
        if not self.matches:
            return
        self._set_marks(self.matches, (self.current + delta) % len(self.matches))
        self._reveal()

    def _set_marks(self, found: list[tuple[RowKey, Range]], current: int) -> None:
        self.matches, self.current = found, current
        marks = self._view.delegate.marks
        marks.matches = {}
        for key, r in found:
            marks.matches.setdefault(key, []).append(r)
        marks.current = found[current] if 0 <= current < len(found) else None
        if not self.edit.text():
            self.count.setText("")
        elif not found:
            self.count.setText(self.tr("No results"))
        else:
            self.count.setText(
                self.tr("%1 of %2").replace("%1", str(current + 1)).replace("%2", str(len(found)))
            )
        self._view.viewport().update()

    def _reveal(self) -> None:
        """Scroll so the current match is in view, a third of the way down (long rows included)."""
        key, r = self.matches[self.current]
        view, model = self._view, cast(ChatModel, self._view.model())
        row = model.row_of(key)
        if row < 0:
            return
        index = model.index(row, 0)
        view.scrollTo(index)
        point = view.delegate.position_point(index, view.visualRect(index), r.start)
        height = view.viewport().height()
        if not 0 <= point.y() <= height - 40:
            bar = view.verticalScrollBar()
            bar.setValue(bar.value() + int(point.y() - height / 3))
        view.viewport().update()
