"""The composer's attachment chips: one per file, a thumbnail for an image (a file icon otherwise), the real file
name, what it will be sent as (or why it cannot be) and a remove button. A chip is "Checking…" until the
file's check comes back from its worker thread (``attachment_checks``)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QSize, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPixmap
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from desktop.ui.look.icons import icon
from desktop.ui.transcript.thumbnails import CHIP_SIDE

PASTE_PREFIX = "precis-paste-"  # the composer's temp files of pasted images
PASTED_TEXT_PREFIX = "precis-pasted-text-"  # its files of long pasted text
NAME_CHARS = 28
REFUSED_COLOUR = "#d32f2f"  # a refused chip's icon; the style sheet's border and words use the same red


def _tr(text: str) -> str:
    return QCoreApplication.translate("AttachmentChip", text)


def chip_name(path: str) -> str:
    name = Path(path).name
    if name.startswith(PASTED_TEXT_PREFIX):
        return QCoreApplication.translate("AttachmentChip", "Pasted text")
    return (
        QCoreApplication.translate("AttachmentChip", "Pasted image")
        if name.startswith(PASTE_PREFIX)
        else name
    )


def _kind_words(kind: str) -> str:
    words = {
        "image": QCoreApplication.translate("AttachmentChip", "Image"),
        "pdf": QCoreApplication.translate("AttachmentChip", "PDF"),
        "text": QCoreApplication.translate("AttachmentChip", "Text"),
    }
    return words.get(kind, QCoreApplication.translate("AttachmentChip", "File"))


class AttachmentChip(QFrame):
    """A file of the draft: "Checking…" until its check answers (``show_checked`` / ``show_refused``)."""

    remove_requested = Signal(str)

    def __init__(self, path: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.path = path
        self.state = "pending"  # pending | ready | refused
        self.is_image = False
        self.setObjectName("attachment_chip")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.preview = QLabel(self)
        self.preview.setObjectName("attachment_preview")
        self.preview.setFixedSize(CHIP_SIDE, CHIP_SIDE)
        self.preview.setAlignment(Qt.AlignmentFlag.AlignCenter)
        name = chip_name(path)
        self.name_label = QLabel(name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…", self)
        self.name_label.setObjectName("attachment_name")
        self.name_label.setToolTip(path)
        self.kind_label = QLabel(self.tr("Checking…"), self)
        self.kind_label.setObjectName("attachment_kind")
        self.remove_button = QToolButton(self)
        self.remove_button.setObjectName("attachment_remove")
        self.remove_button.setAutoRaise(True)
        self.remove_button.setToolTip(self.tr("Remove {name}").format(name=name))
        self.remove_button.setAccessibleName(self.tr("Remove {name}").format(name=name))
        self.remove_button.clicked.connect(lambda: self.remove_requested.emit(self.path))
        words = QVBoxLayout()
        words.setSpacing(0)
        words.addWidget(self.name_label)
        words.addWidget(self.kind_label)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 4, 2, 4)
        layout.setSpacing(6)
        layout.addWidget(self.preview)
        layout.addLayout(words)
        layout.addWidget(self.remove_button, 0, Qt.AlignmentFlag.AlignTop)
        self.setAccessibleName(self.tr("Attached: {name}").format(name=name))
        self.refresh_icons()

    def refresh_icons(self) -> None:
        """The file icon and the ×, in the palette's text colour: again after a theme change (drawn once in the
        old theme's colour, they vanished on the new page: dark on dark)."""
        if not self.is_image:
            colour = QColor(REFUSED_COLOUR) if self.state == "refused" else None
            self.preview.setPixmap(icon("file", colour).pixmap(QSize(24, 24)))
        self.remove_button.setIcon(icon("close"))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.PaletteChange:
            self.refresh_icons()
        super().changeEvent(event)

    def show_checked(self, kind: str, thumbnail: QImage | None) -> None:
        """It can be sent: its kind, and an image's thumbnail (made in a worker thread, shown here)."""
        self._set_state("ready")
        self.is_image = kind == "image" and thumbnail is not None
        if thumbnail is not None:
            self.preview.setPixmap(QPixmap.fromImage(thumbnail))
        self.kind_label.setText(_kind_words(kind))

    def show_refused(self, reason: str) -> None:
        """It cannot be sent: said on the chip (the reason on hover and to screen readers) until removed."""
        self._set_state("refused")
        self.is_image = False
        self.refresh_icons()
        self.kind_label.setText(self.tr("Cannot attach"))
        self.setToolTip(reason)
        self.kind_label.setToolTip(reason)
        self.setAccessibleDescription(reason)

    def _set_state(self, state: str) -> None:
        self.state = state
        for widget in (self, self.kind_label):  # the style sheet colours a refused chip by this property
            widget.setProperty("state", state)
            widget.style().unpolish(widget)
            widget.style().polish(widget)


class AttachmentChips(QWidget):
    """A row of chips; ``set_files`` rebuilds only what changed."""

    remove_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("attachment_chips")
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(6)
        self._layout.addStretch(1)
        self.chips: dict[str, AttachmentChip] = {}

    def set_files(self, files: list[str]) -> None:
        for path in [p for p in self.chips if p not in files]:
            gone = self.chips.pop(path)
            self._layout.removeWidget(gone)
            gone.deleteLater()
        for i, path in enumerate(files):
            if path not in self.chips:
                chip = AttachmentChip(path, self)
                chip.remove_requested.connect(self.remove_requested)
                self.chips[path] = chip
            self._layout.insertWidget(i, self.chips[path])
        self.setVisible(bool(files))

    def refresh_icons(self) -> None:
        for chip in self.chips.values():
            chip.refresh_icons()
