"""The composer: Enter sends, Shift+Enter adds a line; Send turns into Stop while a reply streams.

A rounded card inside the reading column: the attachments' chips on top, the draft, then a row of icon buttons
(attach, the chat's tools docked by the window: instructions, workspace, thinking) with Send / Stop on the right.

Images, PDFs and UTF-8 text or code files can be attached with the button, dropped on the composer, or pasted;
each is shown as a chip at once and checked in a worker thread (``checker``, through ``AttachmentChecks``): a
file that cannot be sent becomes an error chip with the reason and is left out of the draft's files. They are
sent as paths and turned into content blocks by the engine (desktop.engine.history.attachments).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from collections.abc import Callable

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage, QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QAbstractButton,
    QFrame,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.composer.attachment_checks import AttachmentChecks, Checker, CheckResult
from desktop.ui.composer.attachment_chips import PASTED_TEXT_PREFIX, AttachmentChips
from desktop.ui.look.icons import icon, icon_size
from desktop.ui.window.reading_column import COLUMN, GUTTER, WIDE_COLUMN, body_font

ATTACHABLE = ("png", "jpg", "jpeg", "gif", "webp", "pdf", "txt", "md", "py", "json", "csv", "log")
MIN_HEIGHT = 56  # px: about two lines (the card's button row sits under them)
BUTTON = 32  # px: the side of the card's icon buttons
MAX_LINES = 12  # the composer grows with the draft up to this many lines, then scrolls
# A paste this long becomes an attachment (a text file, still sent whole) instead of 33 KB of draft to scroll through.
PASTE_CHARS = 5_000
PASTE_LINES = 100


def is_long_paste(text: str) -> bool:
    return len(text) > PASTE_CHARS or text.count("\n") >= PASTE_LINES


class ComposerEdit(QPlainTextEdit):
    submitted = Signal()
    files_dropped = Signal(list)  # list[str]
    image_pasted = Signal(QImage)
    long_text_pasted = Signal(str)  # a paste past PASTE_CHARS or PASTE_LINES: attached as a file instead

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
        if source.hasText() and is_long_paste(source.text()):
            self.long_text_pasted.emit(source.text())
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
    attachment_refused = Signal(str)  # the reason, in words, when an added file cannot be sent
    draft_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.edit = ComposerEdit(self)
        self.edit.setObjectName("composer_edit")
        self.edit.setFont(
            body_font(self.edit.font())
        )  # what is typed reads at the size it is shown at once sent
        self.edit.setPlaceholderText(self.tr("Message Claude — Enter sends, Shift+Enter adds a line"))
        self.edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.edit.setFixedHeight(MIN_HEIGHT)
        # Tab leaves the composer (to Send) instead of typing a tab: keyboard users must be able to get out.
        self.edit.setTabChangesFocus(True)
        self.edit.setAccessibleName(self.tr("Message"))
        self.edit.setAccessibleDescription(self.tr("Enter sends, Shift+Enter adds a line"))
        self.card = QFrame(self)
        self.card.setObjectName("composer_card")
        self.card.setMaximumWidth(COLUMN)
        self.edit.setParent(self.card)
        self.edit.setFrameShape(QFrame.Shape.NoFrame)
        self.attach_button = QPushButton(self.card)
        self.attach_button.setObjectName("attach_button")
        self.attach_button.setToolTip(
            self.tr("Attach images, PDFs, text or code files (or drop / paste them here)")
        )
        self.attach_button.setAccessibleName(self.tr("Attach files"))
        self.chips = AttachmentChips(self)
        self.chips.hide()
        self.clear_attachments_button = QToolButton(self)
        self.clear_attachments_button.setObjectName("clear_attachments_button")
        self.clear_attachments_button.setText(self.tr("Remove all"))
        self.clear_attachments_button.setAutoRaise(True)
        self.clear_attachments_button.setToolTip(self.tr("Remove the attachments"))
        self.clear_attachments_button.setAccessibleName(self.tr("Remove the attachments"))
        self.clear_attachments_button.hide()
        self.cancel_edit_button = QPushButton(self.tr("Cancel edit"), self)
        self.cancel_edit_button.setObjectName("cancel_edit_button")
        self.cancel_edit_button.setToolTip(self.tr("Leave the edit; nothing is changed (Esc)"))
        self.cancel_edit_button.hide()
        self.send_button = QPushButton(self.card)
        self.send_button.setObjectName("send_button")
        self.send_button.setAccessibleName(self.tr("Send message"))
        self.send_button.setToolTip(self.tr("Send (Enter)"))
        self.stop_button = QPushButton(self.card)
        self.stop_button.setObjectName("stop_button")
        self.stop_button.setAccessibleName(self.tr("Stop the reply"))
        self.stop_button.setToolTip(self.tr("Stop the reply; what has arrived is kept"))
        self.stop_button.hide()
        # Attach, Send and Stop are icons of one size (their names and tooltips say what they do).
        for button in (self.attach_button, self.send_button, self.stop_button):
            button.setFixedSize(BUTTON, BUTTON)
            button.setAutoDefault(True)  # Enter on a focused button presses it (outside dialogs too)
        self._docked: list[
            tuple[QAbstractButton, str]
        ] = []  # the window's tool buttons in the card, with icons
        # Composer -> Send (or Stop) -> Attach -> remove attachments: the likely next key after typing is Send.
        QWidget.setTabOrder(self.edit, self.send_button)
        QWidget.setTabOrder(self.send_button, self.stop_button)
        QWidget.setTabOrder(self.stop_button, self.attach_button)
        QWidget.setTabOrder(self.attach_button, self.clear_attachments_button)

        chips = QHBoxLayout()
        chips.setContentsMargins(0, 0, 0, 0)
        chips.addWidget(self.chips)
        chips.addWidget(self.clear_attachments_button)
        chips.addStretch(1)
        chips.addWidget(self.cancel_edit_button)
        self.tool_row = QHBoxLayout()  # attach, then the window's docked tools, then Send / Stop at the end
        self.tool_row.setContentsMargins(0, 0, 0, 0)
        self.tool_row.setSpacing(4)
        self.tool_row.addWidget(self.attach_button)
        self.tool_row.addStretch(1)
        self.tool_row.addWidget(self.send_button)
        self.tool_row.addWidget(self.stop_button)
        inside = QVBoxLayout(self.card)
        inside.setContentsMargins(10, 6, 8, 8)
        inside.setSpacing(2)
        inside.addLayout(chips)
        inside.addWidget(self.edit)
        inside.addLayout(self.tool_row)
        layout = QHBoxLayout(self)  # the card is centred in the column, like the transcript above it
        layout.setContentsMargins(GUTTER, 4, GUTTER, 10)
        layout.addWidget(self.card, 1)

        self.edit.submitted.connect(self._submit)
        self.edit.files_dropped.connect(self.add_files)
        self.edit.image_pasted.connect(self.add_image)
        self.edit.long_text_pasted.connect(self.add_pasted_text)
        self.send_button.clicked.connect(self._submit)
        self.stop_button.clicked.connect(self.stop_requested)
        self.file_picker: Callable[[], list[str]] = (
            self._file_dialog
        )  # Attach's file dialog (tests give their own)
        self.attach_button.clicked.connect(self._choose_files)
        self.clear_attachments_button.clicked.connect(self.clear_attachments)
        self.chips.remove_requested.connect(self.remove_file)
        self.refresh_icons()
        self.edit.textChanged.connect(lambda: self.draft_changed.emit(self.edit.toPlainText()))
        self.edit.document().documentLayout().documentSizeChanged.connect(self._fit_height)
        self._busy = False
        self._files: list[str] = []
        self._pasted: set[str] = set()  # files of pasted images and text: removed once sent or discarded
        # Where a long paste's text file is written: a folder only this user can read (the window may give the
        # app's own; by default one made for this run in the temp folder, 0700).
        self.paste_folder: str | None = None
        self._refused: dict[str, str] = {}  # shown as error chips (path -> reason) until removed; never sent
        self._checking: dict[str, int] = {}  # path -> the ticket of its check in flight
        self._writing: set[str] = set()  # pasted images whose PNG is still being written
        self._send_when_written = False  # Send was pressed meanwhile
        self._checks: AttachmentChecks | None = None
        self._order = itertools.count()
        self._added: dict[str, int] = {}  # path -> when it was added: the chips' order

    @property
    def checker(self) -> Checker | None:
        return self._checks.checker if self._checks is not None else None

    @checker.setter
    def checker(self, check: Checker | None) -> None:
        """How an added file is checked (in a worker thread); None: every file is taken as it is."""
        if self._checks is not None:
            self._checks.finished.disconnect(self._on_checked)
            self._checks.deleteLater()
        self._checks = AttachmentChecks(check, self) if check is not None else None
        if self._checks is not None:
            self._checks.finished.connect(self._on_checked)

    @property
    def checking(self) -> set[str]:
        """The files whose check has not come back yet."""
        return set(self._checking)

    def refresh_icons(self) -> None:
        """Icons in the palette's text colour (Send's on its accent fill): again after a theme change."""
        for button, name in ((self.attach_button, "attach"), (self.stop_button, "stop"), *self._docked):
            button.setIcon(icon(name))
            button.setIconSize(icon_size(18))
        self.send_button.setIcon(icon("send", self.palette().color(QPalette.ColorRole.HighlightedText)))
        self.send_button.setIconSize(icon_size(18))
        self.chips.refresh_icons()

    def dock(self, button: QAbstractButton, icon_name: str, *, icon_only: bool = True) -> None:
        """Move one of the window's chat tools (instructions, workspace, thinking) into the card's button row,
        after Attach, drawn as an icon (its name and tooltip stay: they say what it does)."""
        holder = button.parentWidget()
        held = holder.layout() if holder is not None else None
        if held is not None:
            held.removeWidget(button)  # out of the header it was put in
        button.setParent(self.card)
        self.tool_row.insertWidget(1 + len(self._docked), button)
        self._docked.append((button, icon_name))
        if icon_only and isinstance(button, QToolButton):
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
            button.setFixedHeight(BUTTON)
            button.setMinimumWidth(BUTTON)
        elif isinstance(button, QToolButton):
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            button.setFixedHeight(BUTTON)
        button.setIcon(icon(icon_name))
        button.setIconSize(icon_size(18))

    def set_wide(self, wide: bool) -> None:
        """The card follows the reading column: centred at its width, or the wide one."""
        self.card.setMaximumWidth(WIDE_COLUMN if wide else COLUMN)

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

    def add_files(self, paths: list[str]) -> list[str]:
        """Take the files into the draft at once, as "Checking…" chips, and check each in a worker thread; one
        that cannot be sent becomes an error chip (and attachment_refused says why). Returns the files taken."""
        taken = [p for p in dict.fromkeys(paths) if p not in self._files]
        for path in taken:
            self._take(path)
        self._show_attachments()
        return taken

    def _take(self, path: str, write: Callable[[], None] | None = None) -> None:
        self._refused.pop(path, None)
        self._added[path] = next(self._order)
        if self._checks is not None:
            self._checking[path] = self._checks.request(path, write)
            if write is not None:
                self._writing.add(path)
        elif write is not None:
            write()  # nothing runs checks here: written at once
        self._files.append(path)

    def _on_checked(self, result: CheckResult) -> None:
        if self._checking.get(result.path) != result.ticket:
            return  # removed, sent or added again meanwhile: this answer is for a file no longer here
        del self._checking[result.path]
        self._writing.discard(result.path)
        chip = self.chips.chips.get(result.path)
        if not result.refusal:
            if chip is not None:
                chip.show_checked(result.kind, result.thumbnail)
        else:
            self._files.remove(result.path)
            self._refused[result.path] = result.refusal
            self._show_attachments()  # its chip becomes the error chip
            self.attachment_refused.emit(self.tr("Cannot attach: {reason}").format(reason=result.refusal))
        if self._send_when_written and not self._writing:
            self._send_when_written = False
            self._submit()

    def remove_file(self, path: str) -> None:
        """One chip's ×: that file leaves the draft (a pasted image's temp file goes with it)."""
        if path in self._files or path in self._refused:
            if path in self._files:
                self._files.remove(path)
            self._refused.pop(path, None)
            self._checking.pop(path, None)
            self._writing.discard(path)
            self._drop_pasted([path])
            self._show_attachments()

    def _drop_pasted(self, paths: list[str]) -> None:
        for path in paths:
            if path in self._pasted:
                self._pasted.discard(path)
                with contextlib.suppress(OSError):
                    os.unlink(path)

    def add_image(self, image: QImage) -> None:
        """A pasted image becomes a PNG file in the temp folder, attached like any other file."""
        if image.isNull():
            return
        fd, name = tempfile.mkstemp(prefix="precis-paste-", suffix=".png")
        os.close(fd)
        self._pasted.add(name)
        picture = image.copy()  # its own pixels: encoded in a worker thread (a big screenshot takes a while)

        def write() -> None:
            if not picture.save(name, "PNG"):
                raise OSError("the pasted image could not be saved")

        self._take(name, write)  # refused later: its error chip's × (or the next send) removes the temp file
        self._show_attachments()

    def add_pasted_text(self, text: str) -> None:
        """A long paste becomes a chip: a text file (0600, in ``paste_folder``) attached like any other, sent whole
        as text; the draft keeps what was typed around it."""
        if self.paste_folder is None:
            self.paste_folder = tempfile.mkdtemp(prefix="precis-pastes-")  # 0700
        fd, name = tempfile.mkstemp(prefix=PASTED_TEXT_PREFIX, suffix=".txt", dir=self.paste_folder)  # 0600
        os.close(fd)
        self._pasted.add(name)
        data = text.encode("utf-8")

        def write() -> None:
            with open(name, "wb") as out:
                out.write(data)

        self._take(name, write)
        self._show_attachments()

    def clear_attachments(self) -> None:
        """Drop the attachments (sent, or removed by the user): pasted images' temp files go with them."""
        self._drop_pasted([*self._files, *self._refused])
        self._forget_checks()
        self._show_attachments()

    def take_draft(self) -> tuple[str, list[str]]:
        """The draft (text, attachments) leaves the composer to be kept for its chat; nothing is deleted."""
        draft = (self.edit.toPlainText(), list(self._files))
        self.edit.clear()
        self._drop_pasted(list(self._refused))
        self._forget_checks()
        self._show_attachments()
        return draft

    def set_draft(self, text: str, files: list[str]) -> None:
        self.edit.setPlainText(text)
        self._forget_checks()
        self.add_files(list(files))  # checked again: a file may have changed since the draft was kept

    def _forget_checks(self) -> None:
        self._files, self._refused, self._checking, self._writing = [], {}, {}, set()
        self._send_when_written = False

    def discard_pasted(self, keep: set[str] | None = None) -> None:
        """Temp files of pasted images no draft holds any more (the window closes)."""
        for path in self._pasted - (keep or set()):
            with contextlib.suppress(OSError):
                os.unlink(path)
        self._pasted.clear()

    def _show_attachments(self) -> None:
        # A refused file's chip stays where it was added.
        self.chips.set_files(sorted([*self._files, *self._refused], key=lambda p: self._added.get(p, 0)))
        for path, chip in self.chips.chips.items():
            if self._checks is None and chip.state == "pending":
                chip.show_checked("", None)  # nothing checks here: taken as it is
            elif path in self._refused and chip.state != "refused":
                chip.show_refused(self._refused[path])
        self.clear_attachments_button.setVisible(len(self._files) + len(self._refused) > 1)

    def _file_dialog(self) -> list[str]:
        from PySide6.QtWidgets import QFileDialog  # a dialog class, made when first opened

        pattern = " ".join(f"*.{ext}" for ext in ATTACHABLE)
        paths, _ = QFileDialog.getOpenFileNames(
            self,
            self.tr("Attach files"),
            "",
            self.tr("All files (*);;Images, PDFs, text and code ({p})").format(p=pattern),
        )
        return paths

    def _choose_files(self) -> None:
        if paths := self.file_picker():
            self.add_files(paths)

    def _submit(self) -> None:
        text = self.edit.toPlainText()
        if self._busy or (not text.strip() and not self._files):
            return
        if self._writing:  # a pasted image is still being written: sent as soon as it is
            self._send_when_written = True
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
