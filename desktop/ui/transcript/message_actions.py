"""Copy / Edit / Regenerate / Pin on the message under the pointer (or the current one, from the keyboard).

One small bar of real buttons floats over the painted list at the bubble's lower corner, so the actions are
reachable with Tab and read by a screen reader; they call what the context menu calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRect,
    Qt,
    Signal,
    SignalInstance,
)
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget

from desktop.ui.transcript.chat_model import Roles

if TYPE_CHECKING:
    from desktop.ui.transcript.chat_view import ChatView

BAR_STYLE = (
    "#message_actions { background: palette(base); border: 1px solid palette(mid); border-radius: 8px; }"
    " QToolButton { border: none; padding: 2px 8px; } QToolButton:hover, QToolButton:focus"
    " { background: palette(midlight); border-radius: 6px; }"
)


class MessageActions(QWidget):
    copy_requested = Signal(int)  # message id
    edit_requested = Signal(int)
    regenerate_requested = Signal(int)
    pin_requested = Signal(int)  # pin (or unpin, when ``pinned`` holds it) the message

    def __init__(self, view: ChatView) -> None:
        super().__init__(view.viewport())
        self.setObjectName("message_actions")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setStyleSheet(BAR_STYLE)
        self._view = view
        self._index = QPersistentModelIndex()
        self.pinned: set[int] = set()  # the open chat's pinned message ids (the window keeps it current)
        self.copy_button = self._button(self.tr("Copy"), self.tr("Copy the message"), self.copy_requested)
        self.edit_button = self._button(
            self.tr("Edit"), self.tr("Edit and resend the message"), self.edit_requested
        )
        self.regenerate_button = self._button(
            self.tr("Regenerate"), self.tr("Ask for another reply"), self.regenerate_requested
        )
        self.pin_button = self._button(
            self.tr("Pin"),
            self.tr("Keep the message (or the selected part) verbatim beside every summary"),
            self.pin_requested,
        )
        row = QHBoxLayout(self)
        row.setContentsMargins(2, 1, 2, 1)
        row.setSpacing(0)
        for b in (self.copy_button, self.edit_button, self.regenerate_button, self.pin_button):
            row.addWidget(b)
        self._viewport = view.viewport()  # kept: the filter must not call into a view being destroyed
        self._viewport.installEventFilter(self)
        view.installEventFilter(self)
        view.verticalScrollBar().valueChanged.connect(lambda _v: self._place())
        self.hide()

    def _button(self, text: str, tip: str, signal: SignalInstance) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setAccessibleName(tip)
        button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        button.clicked.connect(lambda: self._emit(signal))
        button.installEventFilter(self)
        return button

    def _emit(self, signal: SignalInstance) -> None:
        key = self._index.data(Roles.Id) if self._index.isValid() else None
        if isinstance(key, int):
            signal.emit(key)

    @property
    def index(self) -> QModelIndex:
        model = self._view.model()
        return (
            model.index(self._index.row(), 0)
            if self._index.isValid() and model is not None
            else QModelIndex()
        )

    def show_for(self, index: QModelIndex) -> None:
        """Show the actions that apply to the row at ``index`` (none for cards, tool rows, a streaming reply)."""
        key = index.data(Roles.Id) if index.isValid() else None
        if (
            not isinstance(key, int)
            or index.data(Roles.Kind) != "message"
            or index.data(Roles.Status) == "streaming"
        ):
            self._index = QPersistentModelIndex()
            self.hide()
            return
        role = index.data(Roles.Role)
        self._index = QPersistentModelIndex(index)
        self.edit_button.setVisible(role == "user")
        self.regenerate_button.setVisible(role == "assistant")
        self.show_pinned(key in self.pinned)
        self.adjustSize()
        self._place()
        self.show()
        self.raise_()

    def show_pinned(self, pinned: bool) -> None:
        """The pin button says what a click does: Pin, or Unpin on a pinned message."""
        self.pin_button.setText(self.tr("Unpin") if pinned else self.tr("Pin"))
        tip = (
            self.tr("Stop keeping this message verbatim beside the summary")
            if pinned
            else self.tr("Keep the message (or the selected part) verbatim beside every summary")
        )
        self.pin_button.setToolTip(tip)
        self.pin_button.setAccessibleName(tip)
        if self.isVisible() and self.width() < self.sizeHint().width():
            # "Pin" became "Unpin" under the pointer (the chat's pins came back): a bar left at its old width
            # squeezed its buttons, and "Regenerate" read "Reg…ate".
            self.adjustSize()
            self._place()

    def _place(self) -> None:
        if not self._index.isValid():
            self.hide()
            return
        index = self.index
        rect = self._view.visualRect(index)
        bubble = self._view.delegate.bubble_rect(index, rect)
        port = self._view.viewport().rect()
        x = int(min(bubble.right() - self.width() - 6, port.right() - self.width() - 4))
        # On the bubble's lower edge but inside its own row: half below the bubble it covered the next message.
        y = int(min(bubble.bottom() - self.height() / 2, rect.bottom() + 1 - self.height()))
        y = max(min(y, port.bottom() - self.height()), port.top())
        x = max(x, int(bubble.left()))
        arrows = self._view.delegate.version_rects(index, rect)
        if arrows is not None:
            # An edited message's ‹ 2/2 › sit under its bubble's corner, where the bar goes: beside them, never on
            # them.
            pill = arrows[0].united(arrows[1]).adjusted(-4, -2, 4, 2)
            if QRect(x, y, self.width(), self.height()).intersects(pill.toAlignedRect()):
                left = int(pill.left()) - self.width()
                x = left if left >= port.left() else int(pill.right()) + 1
        self.move(x, y)

    def leaveEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        """The pointer left the bar: unless it went back over the list or a button has the focus, it goes."""
        port = self._viewport
        if not self._focus_inside() and not port.rect().contains(port.mapFromGlobal(QCursor.pos())):
            self.hide()
        super().leaveEvent(event)

    def _pointer_inside(self) -> bool:
        return self.isVisible() and self.rect().contains(self.mapFromGlobal(QCursor.pos()))

    def _focus_inside(self) -> bool:
        return any(
            b.hasFocus()
            for b in (self.copy_button, self.edit_button, self.regenerate_button, self.pin_button)
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        kind = event.type()
        view = self._view
        if watched is self._viewport:
            if kind == QEvent.Type.MouseMove and not (getattr(event, "buttons", lambda: 0)()):
                pos = event.position().toPoint()  # type: ignore[attr-defined]
                index = view.indexAt(pos)
                if index != self.index:
                    self.show_for(index)
            elif kind == QEvent.Type.Leave and not self._focus_inside() and not self._pointer_inside():
                # (Moving onto this bar is a Leave of the viewport too: the bar stays for its buttons.) The
                # pointer has gone: so does the bar, even over the current row (the keyboard brings it back).
                self.hide()
            elif kind in (QEvent.Type.Resize, QEvent.Type.LayoutRequest) and self.isVisible():
                self._place()
        elif watched is view and kind == QEvent.Type.FocusIn:
            if view.currentIndex().isValid():
                self.show_for(view.currentIndex())
        elif watched is view and kind == QEvent.Type.KeyRelease and view.hasFocus():
            self.show_for(view.currentIndex())  # the keyboard moved the current row: the actions follow it
        elif (
            kind == QEvent.Type.FocusOut
            and watched is not view
            and not self._focus_inside()
            and not view.hasFocus()
        ):
            self.hide()
        return False
