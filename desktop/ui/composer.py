"""The composer: Enter sends, Shift+Enter adds a line; Send turns into Stop while a reply streams.

Images and PDFs can be attached with the button, dropped on the composer, or pasted; they are sent as paths
and turned into content blocks by the engine (desktop.engine.compaction.media.prepare_attachment).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage, QKeyEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

ATTACHABLE = ("png", "jpg", "jpeg", "gif", "webp", "pdf")
MIN_HEIGHT = 78  # px: about four lines
MAX_LINES = 12  # the composer grows with the draft up to this many lines, then scrolls


class ComposerEdit(QPlainTextEdit):
    submitted = Signal()
    files_dropped = Signal(list)  # list[str]
    image_pasted = Signal(QImage)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.submitted.emit()
            return
        super().keyPressEvent(event)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:  # noqa: N802 - Qt override
        return source.hasImage() or source.hasUrls() or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:  # noqa: N802 - Qt override
        if source.hasImage():
            self.image_pasted.emit(QImage(source.imageData()))
            return
        files = [u.toLocalFile() for u in source.urls() if u.isLocalFile()] if source.hasUrls() else []
        if files:
            self.files_dropped.emit(files)
            return
        super().insertFromMimeData(source)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt override
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt override
        files = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if files:
            self.files_dropped.emit(files)
            event.acceptProposedAction()
        else:
            super().dropEvent(event)


class Composer(QWidget):
    send_requested = Signal(str, list)  # text, attachment paths
    stop_requested = Signal()
    draft_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.edit = ComposerEdit(self)
        self.edit.setObjectName("composer_edit")
        self.edit.setPlaceholderText(self.tr("Message Claude — Enter sends, Shift+Enter adds a line"))
        self.edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.edit.setFixedHeight(MIN_HEIGHT)
        # Tab leaves the composer (to Send) instead of typing a tab: keyboard users must be able to get out.
        self.edit.setTabChangesFocus(True)
        self.edit.setAccessibleName(self.tr("Message"))
        self.edit.setAccessibleDescription(self.tr("Enter sends, Shift+Enter adds a line"))
        self.attach_button = QPushButton(self.tr("Attach…"), self)
        self.attach_button.setObjectName("attach_button")
        self.attach_button.setToolTip(self.tr("Attach images or PDFs (or drop / paste them here)"))
        self.attach_button.setAccessibleName(self.tr("Attach files"))
        self.attachments_label = QLabel(self)
        self.attachments_label.setObjectName("attachments_label")
        self.attachments_label.hide()
        self.clear_attachments_button = QToolButton(self)
        self.clear_attachments_button.setObjectName("clear_attachments_button")
        self.clear_attachments_button.setText("×")
        self.clear_attachments_button.setToolTip(self.tr("Remove the attachments"))
        self.clear_attachments_button.setAccessibleName(self.tr("Remove the attachments"))
        self.clear_attachments_button.hide()
        self.cancel_edit_button = QPushButton(self.tr("Cancel edit"), self)
        self.cancel_edit_button.setObjectName("cancel_edit_button")
        self.cancel_edit_button.setToolTip(self.tr("Leave the edit; nothing is changed (Esc)"))
        self.cancel_edit_button.hide()
        self.send_button = QPushButton(self.tr("Send"), self)
        self.send_button.setObjectName("send_button")
        self.send_button.setAccessibleName(self.tr("Send message"))
        self.send_button.setToolTip(self.tr("Send (Enter)"))
        self.stop_button = QPushButton(self.tr("Stop"), self)
        self.stop_button.setObjectName("stop_button")
        self.stop_button.setAccessibleName(self.tr("Stop the reply"))
        self.stop_button.setToolTip(self.tr("Stop the reply; what has arrived is kept"))
        self.stop_button.hide()
        # Attach, Send and Stop share one column width so their edges line up.
        for button in (self.attach_button, self.send_button, self.stop_button):
            button.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
            button.setAutoDefault(True)  # Enter on a focused button presses it (outside dialogs too)
        # Composer -> Send (or Stop) -> Attach -> remove attachments: the likely next key after typing is Send.
        QWidget.setTabOrder(self.edit, self.send_button)
        QWidget.setTabOrder(self.send_button, self.stop_button)
        QWidget.setTabOrder(self.stop_button, self.attach_button)
        QWidget.setTabOrder(self.attach_button, self.clear_attachments_button)

        chips = QHBoxLayout()
        chips.setContentsMargins(0, 0, 0, 0)
        chips.addWidget(self.attachments_label)
        chips.addWidget(self.clear_attachments_button)
        chips.addStretch(1)
        chips.addWidget(self.cancel_edit_button)
        buttons = QVBoxLayout()
        buttons.addWidget(self.attach_button)
        buttons.addStretch(1)
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        row = QHBoxLayout()
        row.addWidget(self.edit, 1)
        row.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 8)
        layout.setSpacing(2)
        layout.addLayout(chips)
        layout.addLayout(row)

        self.edit.submitted.connect(self._submit)
        self.edit.files_dropped.connect(self.add_files)
        self.edit.image_pasted.connect(self.add_image)
        self.send_button.clicked.connect(self._submit)
        self.stop_button.clicked.connect(self.stop_requested)
        self.attach_button.clicked.connect(self._choose_files)
        self.clear_attachments_button.clicked.connect(self.clear_attachments)
        self.edit.textChanged.connect(lambda: self.draft_changed.emit(self.edit.toPlainText()))
        self.edit.document().documentLayout().documentSizeChanged.connect(self._fit_height)
        self._busy = False
        self._files: list[str] = []
        self._pasted: set[str] = set()  # temp files of pasted images: removed once sent or discarded

    def _fit_height(self) -> None:
        """Grow with the draft up to MAX_LINES (then scroll), shrink back to MIN_HEIGHT when it is sent."""
        lines = int(self.edit.document().size().height())  # QPlainTextDocumentLayout counts wrapped lines
        frame = 2 * self.edit.frameWidth() + 2 * int(self.edit.document().documentMargin())
        wanted = min(lines, MAX_LINES) * self.edit.fontMetrics().lineSpacing() + frame
        height = max(MIN_HEIGHT, wanted)
        if height != self.edit.height():
            self.edit.setFixedHeight(height)

    @property
    def attachments(self) -> list[str]:
        return list(self._files)

    def add_files(self, paths: list[str]) -> None:
        self._files += [p for p in paths if p not in self._files]
        self._show_attachments()

    def add_image(self, image: QImage) -> None:
        """A pasted image becomes a PNG file in the temp folder, attached like any other file."""
        if image.isNull():
            return
        fd, name = tempfile.mkstemp(prefix="precis-paste-", suffix=".png")
        os.close(fd)
        image.save(name, "PNG")
        self._pasted.add(name)
        self.add_files([name])

    def clear_attachments(self) -> None:
        """Drop the attachments (sent, or removed by the user): pasted images' temp files go with them."""
        for path in self._files:
            if path in self._pasted:
                self._pasted.discard(path)
                with contextlib.suppress(OSError):
                    os.unlink(path)
        self._files = []
        self._show_attachments()

    def take_draft(self) -> tuple[str, list[str]]:
        """The draft (text, attachments) leaves the composer to be kept for its chat; nothing is deleted."""
        draft = (self.edit.toPlainText(), list(self._files))
        self.edit.clear()
        self._files = []
        self._show_attachments()
        return draft

    def set_draft(self, text: str, files: list[str]) -> None:
        self.edit.setPlainText(text)
        self._files = list(files)
        self._show_attachments()

    def discard_pasted(self, keep: set[str] | None = None) -> None:
        """Temp files of pasted images no draft holds any more (the window closes)."""
        for path in self._pasted - (keep or set()):
            with contextlib.suppress(OSError):
                os.unlink(path)
        self._pasted.clear()

    def _show_attachments(self) -> None:
        names = [Path(p).name for p in self._files]
        shown = ", ".join(names[:4]) + (self.tr(" and {n} more").format(n=len(names) - 4) if len(names) > 4 else "")
        self.attachments_label.setText(self.tr("Attached: {names}").format(names=shown) if names else "")
        self.attachments_label.setVisible(bool(names))
        self.clear_attachments_button.setVisible(bool(names))

    def _choose_files(self) -> None:
        pattern = " ".join(f"*.{ext}" for ext in ATTACHABLE)
        paths, _ = QFileDialog.getOpenFileNames(self, self.tr("Attach files"), "",
                                                self.tr("Images and PDFs ({p})").format(p=pattern))
        if paths:
            self.add_files(paths)

    def _submit(self) -> None:
        text = self.edit.toPlainText()
        if self._busy or (not text.strip() and not self._files):
            return
        # The draft stays until the message is committed (clear()): a refused send loses nothing.
        self.send_requested.emit(text, self.attachments)

    def clear(self) -> None:
        self.edit.clear()
        self.clear_attachments()

    def set_busy(self, busy: bool) -> None:
        # Keep keyboard focus on the button that replaced the focused one (Send <-> Stop).
        had_focus = self.send_button.hasFocus() or self.stop_button.hasFocus()
        self._busy = busy
        self.send_button.setVisible(not busy)
        self.stop_button.setVisible(busy)
        if had_focus:
            (self.stop_button if busy else self.send_button).setFocus(Qt.FocusReason.OtherFocusReason)
