"""Selecting text inside a painted message with the mouse or the keyboard, and copying it.

An event filter on the chat list: a drag inside a row's text selects (within that row), a double click selects a
word, Shift with the arrow keys, Home/End extends the selection in the current row, Ctrl+A selects the current
row's text, Ctrl+C copies the selection (or, with none, the whole message, as before), Esc clears it. The marks
are painted by the delegate; the view keeps being a QListView.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPointF, Qt, Signal
from PySide6.QtGui import QGuiApplication, QKeyEvent, QKeySequence, QMouseEvent, QTextCursor

from desktop.ui.transcript.chat_model import ChatModel, Roles, RowKey
from desktop.ui.transcript.text_marks import selected_text

if TYPE_CHECKING:
    from desktop.ui.transcript.chat_view import ChatView

Move = QTextCursor.MoveOperation
_KEY_MOVES = {
    Qt.Key.Key_Left: (Move.Left, Move.PreviousWord),
    Qt.Key.Key_Right: (Move.Right, Move.NextWord),
    Qt.Key.Key_Up: (Move.Up, Move.Up),
    Qt.Key.Key_Down: (Move.Down, Move.Down),
    Qt.Key.Key_Home: (Move.StartOfLine, Move.Start),
    Qt.Key.Key_End: (Move.EndOfLine, Move.End),
}
SELECTABLE_KINDS = frozenset({"message", "notice", "compaction", "tool"})


class TextSelector(QObject):
    copied = Signal(str)  # what went to the clipboard (the window says "Copied")

    def __init__(self, view: ChatView) -> None:
        super().__init__(view)
        self._view = view
        self._dragging = False
        self._press: QPointF | None = None
        self._viewport = view.viewport()  # kept: the filter must not call into a view being destroyed
        self._viewport.installEventFilter(self)
        view.installEventFilter(self)

    @property
    def marks(self):  # noqa: ANN201 - the delegate's TextMarks
        return self._view.delegate.marks

    # -- queries -------------------------------------------------------------------------------------------

    def _index_of_key(self, key: RowKey | None) -> QModelIndex:
        model = cast(ChatModel | None, self._view.model())
        if model is None or key is None:
            return QModelIndex()
        row = model.row_of(key)
        return model.index(row, 0) if row >= 0 else QModelIndex()

    def selection_text(self) -> str:
        index = self._index_of_key(self.marks.selection_key)
        if not index.isValid() or not self.marks.has_selection():
            return ""
        return selected_text(self.marks.cursor(self._view.delegate.document(index)))

    def copy_selection(self) -> bool:
        text = self.selection_text()
        if not text:
            return False
        QGuiApplication.clipboard().setText(text)
        self.copied.emit(text)
        return True

    def select(self, index: QModelIndex, anchor: int, position: int) -> None:
        self.marks.select(index.data(Roles.Id), anchor, position)
        self._view.viewport().update()

    def clear(self) -> None:
        if self.marks.selection_key is not None:
            self.marks.clear_selection()
            self._view.viewport().update()

    # -- events --------------------------------------------------------------------------------------------

    def _text_hit(self, pos: QPointF) -> tuple[QModelIndex, int] | None:
        view = self._view
        index = view.indexAt(pos.toPoint())
        if not index.isValid() or index.data(Roles.Kind) not in SELECTABLE_KINDS:
            return None
        rect = view.visualRect(index)
        if not view.delegate.bubble_rect(index, rect).contains(pos):
            return None
        return index, view.delegate.hit_position(index, rect, pos)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        kind = event.type()
        if watched is self._view and kind == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            return self._key(event)
        if watched is not self._viewport or not isinstance(event, QMouseEvent):
            return False
        if kind == QEvent.Type.MouseButtonPress and event.button() == Qt.MouseButton.LeftButton:
            hit = self._text_hit(event.position())
            self.clear()
            if hit is not None:
                index, position = hit
                self._press = event.position()
                self._dragging = True
                self.marks.select(index.data(Roles.Id), position, position)
            return False  # the list still makes the row current
        if kind == QEvent.Type.MouseMove and self._dragging:
            self._extend_to(event.position())
            return True  # a drag selects text, it does not move the current row
        if kind == QEvent.Type.MouseButtonRelease and event.button() == Qt.MouseButton.LeftButton:
            was_drag = self._dragging and self.marks.has_selection()
            self._dragging = False
            return was_drag  # the end of a drag over a link is not a click on it
        if kind == QEvent.Type.MouseButtonDblClick and event.button() == Qt.MouseButton.LeftButton:
            hit = self._text_hit(event.position())
            if hit is not None and hit[0].data(Roles.Kind) != "tool":  # a double click expands a tool card
                index, position = hit
                cursor = QTextCursor(self._view.delegate.document(index))
                cursor.setPosition(position)
                cursor.select(QTextCursor.SelectionType.WordUnderCursor)
                self.select(index, cursor.anchor(), cursor.position())
                self._dragging = False
                return True
        return False

    def _extend_to(self, pos: QPointF) -> None:
        index = self._index_of_key(self.marks.selection_key)
        if not index.isValid():
            return
        view = self._view
        rect = view.visualRect(index)
        bubble = view.delegate.bubble_rect(index, rect)
        # Past the row's top or bottom the selection runs to the start or the end of its text.
        clamped = QPointF(
            min(max(pos.x(), bubble.left()), bubble.right()), min(max(pos.y(), bubble.top()), bubble.bottom())
        )
        position = view.delegate.hit_position(index, rect, clamped)
        if pos.y() > bubble.bottom():
            position = view.delegate.document(index).characterCount() - 1
        elif pos.y() < bubble.top():
            position = 0
        self.select(index, self.marks.anchor, position)

    def _key(self, event: QKeyEvent) -> bool:
        index = self._view.currentIndex()
        if event.matches(QKeySequence.StandardKey.Copy):
            if self.copy_selection():
                return True
            if index.isValid():
                self._view.copy_message(index)
                self.copied.emit(str(index.data(Roles.Text) or ""))
            return True
        if event.key() == Qt.Key.Key_Escape and self.marks.has_selection():
            self.clear()
            return True
        if not index.isValid() or index.data(Roles.Kind) not in SELECTABLE_KINDS:
            return False
        if event.matches(QKeySequence.StandardKey.SelectAll):
            doc = self._view.delegate.document(index)
            self.select(index, 0, doc.characterCount() - 1)
            return True
        shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        moves = _KEY_MOVES.get(Qt.Key(event.key()))
        if not shift or moves is None:
            return False
        doc = self._view.delegate.document(index)
        key = index.data(Roles.Id)
        cursor = QTextCursor(doc)
        if self.marks.selection_key == key:
            cursor = self.marks.cursor(doc)
        elif event.key() in (Qt.Key.Key_Left, Qt.Key.Key_Up, Qt.Key.Key_Home):
            cursor.movePosition(Move.End)  # a first Shift+Left starts from the end of the text
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        cursor.movePosition(moves[1] if ctrl else moves[0], QTextCursor.MoveMode.KeepAnchor)
        self.select(index, cursor.anchor(), cursor.position())
        return True
