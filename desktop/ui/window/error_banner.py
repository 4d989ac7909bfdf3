"""The banner over the chat when a turn failed: what went wrong in words, and the ways forward."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget


class ErrorBanner(QWidget):
    """A failed turn: what went wrong in words, and Retry. The user's message is already saved."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("error_banner")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.label = QLabel(self)
        self.label.setObjectName("error_text")
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.retry_button = QPushButton(self.tr("Retry"), self)
        self.retry_button.setObjectName("retry_button")
        # After a context overflow that survived the automatic recovery, two more ways forward.
        self.compact_retry_button = QPushButton(self.tr("Compact and retry"), self)
        self.compact_retry_button.setObjectName("compact_retry_button")
        self.new_chat_button = QPushButton(self.tr("New chat from summary"), self)
        self.new_chat_button.setObjectName("new_chat_from_summary_button")
        self.dismiss_button = QPushButton(self.tr("Dismiss"), self)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.retry_button)
        layout.addWidget(self.compact_retry_button)
        layout.addWidget(self.new_chat_button)
        layout.addWidget(self.dismiss_button)
        self.dismiss_button.clicked.connect(self.hide)
        self.setStyleSheet(
            "#error_banner { background: rgba(220, 53, 69, 0.14); border: 1px solid rgba(220, 53, 69, 0.55);"
            " border-radius: 6px; }"
        )
        self.hide()

    def show_error(self, message: str, actions: tuple[str, ...] = ("retry",)) -> None:
        self.label.setText(message)
        self.retry_button.setVisible("retry" in actions)
        self.compact_retry_button.setVisible("compact_retry" in actions)
        self.new_chat_button.setVisible("new_chat_from_summary" in actions)
        self.show()
