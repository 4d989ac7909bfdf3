"""Edit summary: the active summary in a plain-text editor; saving makes it a new compaction row (Undo on the
card brings the previous one back)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget


class SummaryEditor(QDialog):
    def __init__(self, summary: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("summary_editor")
        self.setWindowTitle(self.tr("Edit summary"))
        self.resize(640, 520)
        note = QLabel(
            self.tr(
                "The model reads this instead of the messages it covers. Keep the headings; your "
                "text becomes a new summary, and Undo on the card restores this one."
            ),
            self,
        )
        note.setWordWrap(True)
        self.editor = QPlainTextEdit(self)
        self.editor.setObjectName("summary_text")
        self.editor.setPlainText(summary)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        self.editor.textChanged.connect(lambda: self.save_button.setEnabled(bool(self.text())))
        layout = QVBoxLayout(self)
        layout.addWidget(note)
        layout.addWidget(self.editor, 1)
        layout.addWidget(buttons)

    def text(self) -> str:
        return self.editor.toPlainText().strip()
