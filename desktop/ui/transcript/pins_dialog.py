"""The chat's pinned messages as a dialog (imported when first opened, from the chat menu)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.api import Pin

PIN_ROLE = Qt.ItemDataRole.UserRole
EXCERPT = 200


class PinsDialog(QDialog):
    """The chat's pinned messages: Remove takes the selected one away, a double click opens it."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("pins_dialog")
        self.setWindowTitle(self.tr("Pinned messages"))
        self.resize(600, 380)
        layout = QVBoxLayout(self)
        intro = QLabel(self.tr("Pinned messages stay verbatim beside every summary of this chat."), self)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.list = QListWidget(self)
        self.list.setObjectName("pins_list")
        self.list.setAccessibleName(self.tr("Pinned messages"))
        self.list.setWordWrap(True)
        layout.addWidget(self.list, 1)
        self.empty = QLabel(self.tr("Nothing is pinned. Pin a message from its actions (hover it)."), self)
        self.empty.setStyleSheet("color: palette(placeholder-text); padding: 12px;")
        layout.addWidget(self.empty)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.remove_button = self.buttons.addButton(self.tr("Unpin"), QDialogButtonBox.ButtonRole.ActionRole)
        self.remove_button.setObjectName("pins_remove")
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def show_pins(self, pins: list[Pin]) -> None:
        current = self.selected()
        self.list.clear()
        for pin in pins:
            who = {"user": self.tr("You"), "assistant": self.tr("Assistant")}.get(pin.role, pin.role)
            text = " ".join(pin.text.split())
            text = text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "…"
            part = " · " + self.tr("selected part") if pin.part else ""
            item = QListWidgetItem(f"#{pin.message_id} · {who}{part}\n{text}", self.list)
            item.setData(PIN_ROLE, pin.message_id)
            if pin.message_id == current:
                self.list.setCurrentItem(item)
        if self.list.currentItem() is None and self.list.count():
            self.list.setCurrentRow(0)
        self.list.setVisible(bool(pins))
        self.empty.setVisible(not pins)
        self.remove_button.setEnabled(bool(pins))

    def selected(self) -> int | None:
        item = self.list.currentItem()
        return int(item.data(PIN_ROLE)) if item is not None else None
