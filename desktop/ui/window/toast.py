"""A transient message over the bottom of the chat pane ("nothing to compact", "compacted · 31K saved")."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QLabel, QWidget

LEVEL_STYLE = {
    "info": "background: rgba(40, 40, 48, 0.92); color: white;",
    "warning": "background: rgba(170, 100, 0, 0.95); color: white;",
    "error": "background: rgba(180, 30, 40, 0.95); color: white;",
}


class Toast(QLabel):
    def __init__(self, host: QWidget):
        super().__init__(host)
        self.setObjectName("toast")
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self._timer = QTimer(self, singleShot=True)
        self._timer.timeout.connect(self.hide)
        host.installEventFilter(self)
        self.hide()

    def show_message(self, text: str, level: str = "info", msec: int = 4500) -> None:
        # The hairline keeps the dark "info" toast distinct on a dark theme's dark chat background.
        self.setStyleSheet(
            f"#toast {{ {LEVEL_STYLE.get(level, LEVEL_STYLE['info'])} border-radius: 8px;"
            " border: 1px solid rgba(255, 255, 255, 0.22); padding: 8px 14px; }"
        )
        self.setText(text)
        self._place()
        self.show()
        self.raise_()
        self._timer.start(msec)

    def _place(self) -> None:
        host = self.parentWidget()
        if host is None:  # not placed until it has a window to sit in
            return
        width = min(560, max(200, host.width() - 40))
        self.setFixedWidth(width)
        self.adjustSize()
        self.move((host.width() - width) // 2, host.height() - self.height() - 16)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self._place()
        return False
