"""The one line under the chat (and the chat's title in the header): elided, never wider than it is given."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from desktop.ui.api import one_line


class StatusLine(QLabel):
    """One line under the chat: elided to the width it is given (a long line never widens the window), the
    whole text in its tooltip; ``flash`` shows a line that clears itself."""

    FLASH_MS = 6000

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(1)
        self.setTextFormat(Qt.TextFormat.PlainText)  # a title or an error that holds "<b>" shows it as typed

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        text = one_line(text)  # plain text, one line: a title or an error may carry a terminal's escapes
        self._full = text
        self.setToolTip(text if self._elided(text) != text else "")
        super().setText(self._elided(text))

    def text(self) -> str:
        return self._full

    def flash(self, text: str) -> None:
        self.setText(text)
        shown = self.text()  # as set: one line
        QTimer.singleShot(self.FLASH_MS, self, lambda: self._clear_if(shown))

    def _clear_if(self, text: str) -> None:
        if self.text() == text:
            self.clear()

    def clear(self) -> None:
        self._full = ""
        super().clear()

    def _elided(self, text: str) -> str:
        width = max(1, self.width() - self.contentsMargins().left() - self.contentsMargins().right())
        return self.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, width)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().setText(self._elided(self._full))
        super().resizeEvent(event)
