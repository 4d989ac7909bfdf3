"""The Settings choice of the window's language: System / English / 简体中文 (applies at the next start)."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

# Settings value -> the name shown; each language is named in its own language, "System" in the current one.
NATIVE_NAMES = {"en": "English", "zh_CN": "简体中文"}


class LanguageBox(QWidget):
    def __init__(self, current: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._start = current
        self.combo = QComboBox(self)
        self.combo.setObjectName("language_box")
        self.combo.setAccessibleName(self.tr("Language"))
        self.combo.addItem(self.tr("System"), "")
        for value, name in NATIVE_NAMES.items():
            self.combo.addItem(name, value)
        self.combo.setCurrentIndex(max(0, self.combo.findData(current)))
        self.note = QLabel(self.tr("Applies at the next start"), self)
        self.note.setObjectName("language_note")
        self.note.setVisible(False)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.combo)
        layout.addWidget(self.note, 1)
        self.combo.currentIndexChanged.connect(lambda _i: self.note.setVisible(self.value() != self._start))

    def value(self) -> str:
        return str(self.combo.currentData() or "")
