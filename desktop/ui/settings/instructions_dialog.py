"""Instructions the model keeps to: the default ones (in Settings, for every chat) and a chat's own (a dialog
from the chat header or the Chat menu). Both go out in the system prompt, inside the cached prefix."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGroupBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)


class DefaultInstructions(QGroupBox):
    """The Settings field: instructions every chat starts with."""

    def __init__(self, text: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setTitle(self.tr("Default instructions"))
        self.edit = QPlainTextEdit(self)
        self.edit.setObjectName("default_instructions")
        self.edit.setPlaceholderText(
            self.tr("For example: answer briefly; prefer Python 3.12; explain trade-offs.")
        )
        self.edit.setPlainText(text)
        self.edit.setFixedHeight(90)
        self.edit.setAccessibleName(self.tr("Default instructions for every chat"))
        note = QLabel(
            self.tr("Sent with every chat, before the chat's own instructions; kept in the prompt cache."),
            self,
        )
        note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.edit)
        layout.addWidget(note)

    def text(self) -> str:
        return self.edit.toPlainText().strip()


class ChatInstructionsDialog(QDialog):
    """One chat's instructions, shown under the default ones they follow."""

    def __init__(self, chat_text: str, default_text: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("chat_instructions_dialog")
        self.setWindowTitle(self.tr("Chat instructions"))
        self.setMinimumWidth(520)
        self.edit = QPlainTextEdit(self)
        self.edit.setObjectName("chat_instructions")
        self.edit.setPlainText(chat_text)
        self.edit.setPlaceholderText(self.tr("Instructions for this chat only, e.g. “Reply in French”."))
        self.edit.setAccessibleName(self.tr("Instructions for this chat"))
        intro = QLabel(
            self.tr(
                "The model receives these with every request of this chat, in its system prompt. "
                "Changing them starts a new prompt cache once."
            ),
            self,
        )
        intro.setWordWrap(True)
        default = QLabel(self)
        default.setObjectName("default_instructions_note")
        default.setWordWrap(True)
        default.setText(
            self.tr("Default instructions (Settings), sent first: {text}").format(text=default_text)
            if default_text
            else self.tr("No default instructions (Settings).")
        )
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, parent=self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.edit, 1)
        layout.addWidget(default)
        layout.addWidget(buttons)

    def text(self) -> str:
        return self.edit.toPlainText().strip()
