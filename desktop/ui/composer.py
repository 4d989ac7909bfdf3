"""The composer: Enter sends, Shift+Enter adds a line; Send turns into Stop while a reply streams."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QSizePolicy, QWidget


class ComposerEdit(QPlainTextEdit):
    submitted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.submitted.emit()
            return
        super().keyPressEvent(event)


class Composer(QWidget):
    send_requested = Signal(str)
    stop_requested = Signal()
    draft_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.edit = ComposerEdit(self)
        self.edit.setObjectName("composer_edit")
        self.edit.setPlaceholderText(self.tr("Message Claude — Enter sends, Shift+Enter adds a line"))
        self.edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.edit.setFixedHeight(78)
        self.edit.setAccessibleName(self.tr("Message"))
        self.send_button = QPushButton(self.tr("Send"), self)
        self.send_button.setObjectName("send_button")
        self.stop_button = QPushButton(self.tr("Stop"), self)
        self.stop_button.setObjectName("stop_button")
        self.stop_button.hide()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 8)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        layout.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignBottom)
        self.edit.submitted.connect(self._submit)
        self.send_button.clicked.connect(self._submit)
        self.stop_button.clicked.connect(self.stop_requested)
        self.edit.textChanged.connect(lambda: self.draft_changed.emit(self.edit.toPlainText()))
        self._busy = False

    def _submit(self) -> None:
        text = self.edit.toPlainText()
        if self._busy or not text.strip():
            return
        self.edit.clear()
        self.send_requested.emit(text)

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.send_button.setVisible(not busy)
        self.stop_button.setVisible(busy)
