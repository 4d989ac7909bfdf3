"""The inline permission prompt: server, tool and arguments (a diff for write and edit), four answers.

It can never be answered by accident: it shows while the user may be typing, so it never takes the focus (the
buttons take none), has no default button, and answers only to a click or a deliberate shortcut (Ctrl+Return
allows once, Ctrl+Shift+Return for the chat, Ctrl+Shift+D denies; shown in the tooltips). "Always" has no
shortcut and takes two clicks: the first asks to confirm. Requests queue per chat: one prompt at a time, in the
order asked, and only the open chat's (another chat's request waits for that chat to be opened, or its timeout).
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QKeySequence, QPalette, QResizeEvent, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QBoxLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.api import Answer, PermissionRequest
from desktop.ui.look.theme import BAD, GOOD, is_dark
from desktop.ui.window.reading_column import COLUMN

DETAILS_MAX = 220  # px: the arguments box grows with its text up to this, then scrolls


def diff_html(diff: str, dark: bool) -> str:
    lines = []
    for line in diff.splitlines():
        color = (
            GOOD[dark]
            if line.startswith("+") and not line.startswith("+++")
            else BAD[dark]
            if line.startswith("-") and not line.startswith("---")
            else ""
        )
        text = html.escape(line) or "&nbsp;"
        lines.append(f'<span style="color:{color}">{text}</span>' if color else text)
    return "<pre style='margin:0'>" + "<br>".join(lines) + "</pre>"


class PermissionPrompt(QFrame):
    answered = Signal(str, object)  # request id, Answer | None (closed)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("permission_prompt")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("#permission_prompt { border: 1px solid #d4a72c; border-radius: 6px; }")
        self._queues: dict[int, list[PermissionRequest]] = {}  # per chat, in the order asked
        self.session_id: int | None = None  # the open chat: only its requests show
        self.title = QLabel(self)
        self.title.setObjectName("permission_title")
        self.title.setWordWrap(True)
        self.details = QTextEdit(self)
        self.details.setObjectName("permission_details")
        self.details.setReadOnly(True)
        self.details.setMaximumHeight(DETAILS_MAX)
        self.details.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.details.setAccessibleName(self.tr("Arguments of the tool call"))
        self.changed = QLabel(self)
        self.changed.setObjectName("permission_changed")
        self.changed.setWordWrap(True)
        self.changed.setStyleSheet("color: #cf222e;")
        self.changed.hide()
        self.once = QPushButton(self.tr("Allow once"), self)
        self.chat = QPushButton(self.tr("Allow for this chat"), self)
        self.always = QPushButton(self.tr("Always for this tool…"), self)
        self.confirm_always = QPushButton(self.tr("Yes, always allow it"), self)
        self.deny = QPushButton(self.tr("Deny"), self)
        self.confirm_note = QLabel(
            self.tr("Allow this tool in every chat from now on, without asking?"), self
        )
        self.confirm_note.setWordWrap(True)
        self.shortcuts: list[QShortcut] = []
        buttons = QHBoxLayout()
        buttons.addWidget(self.confirm_note, 1)
        buttons.addStretch(1)
        for button, answer, keys in (
            (self.once, Answer.ONCE, "Ctrl+Return"),
            (self.chat, Answer.CHAT, "Ctrl+Shift+Return"),
            (self.always, None, ""),
            (self.confirm_always, Answer.ALWAYS, ""),
            (self.deny, Answer.DENY, "Ctrl+Shift+D"),
        ):
            # No focus and no default: a key typed in the composer never reaches a button.
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.setAutoDefault(False)
            button.setDefault(False)
            buttons.addWidget(button)
            if answer is None:
                button.clicked.connect(self._ask_confirm)
                button.setToolTip(self.tr("Asks to confirm first"))
                continue
            button.clicked.connect(lambda _checked=False, a=answer: self._answer(a))
            if keys:
                sequence = QKeySequence(keys)
                shortcut = QShortcut(sequence, self, context=Qt.ShortcutContext.WindowShortcut)
                shortcut.activated.connect(lambda a=answer: self._answer(a))
                self.shortcuts.append(shortcut)
                button.setToolTip(sequence.toString(QKeySequence.SequenceFormat.NativeText))
        self.details.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # selectable with the mouse, never tabbed into
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(self.title)
        layout.addWidget(self.changed)
        layout.addWidget(self.details)
        layout.addLayout(buttons)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        # As wide as the reading column, centred under the messages it is about (it spanned a 1920 px window).
        self.setMaximumWidth(COLUMN)
        self._confirming(False)
        self.hide()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        # The column's width: centred in its layout (see showEvent), a widget is given its preferred width.
        return QSize(COLUMN, super().sizeHint().height())

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        # Centred in the window's column of parts: a box layout left-aligns a widget narrower than itself.
        parent = self.parentWidget()
        holder = parent.layout() if parent is not None else None
        if isinstance(holder, QBoxLayout) and holder.indexOf(self) >= 0:
            holder.setAlignment(self, Qt.AlignmentFlag.AlignHCenter)
        super().showEvent(event)
        self._fit_details()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._fit_details()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_details()

    def _fit_details(self) -> None:
        """The arguments box as tall as its text at its width (three lines of JSON sat in a 150 px box), up to
        DETAILS_MAX, where it scrolls."""
        doc = self.details.document()
        width = self.details.viewport().width()
        if width > 0:
            doc.setTextWidth(width)
        frame = 2 * self.details.frameWidth()
        self.details.setFixedHeight(min(DETAILS_MAX, max(int(doc.size().height()) + frame + 2, 28)))

    def changed_text(self, changed: tuple[str, ...]) -> str:
        """The sentence that says a server allowed before is not the same any more ('' when it is)."""
        if not changed:
            return ""
        words = {
            "command": self.tr("command"),
            "args": self.tr("arguments"),
            "cwd": self.tr("folder"),
            "env": self.tr("environment"),
            "url": self.tr("URL"),
            "headers": self.tr("headers"),
            "definition": self.tr("definition"),
        }
        return self.tr(
            "This server changed since you allowed it (its {parts}): the approval given then does not "
            "cover it."
        ).format(parts=", ".join(words.get(name, name) for name in changed))

    def network_text(self) -> str:
        """What a command that asks for the network opens (commands have none otherwise)."""
        return self.tr(
            "This command asks for the network: it could reach the internet, your local network and the "
            "services listening on this machine (the display, the session bus, agents' sockets)."
        )

    def _confirming(self, on: bool) -> None:
        self.confirm_note.setVisible(on)
        self.confirm_always.setVisible(on)
        self.always.setVisible(not on)

    def _ask_confirm(self) -> None:
        self._confirming(True)

    @property
    def _queue(self) -> list[PermissionRequest]:
        return self._queues.get(self.session_id, []) if self.session_id is not None else []

    @property
    def current(self) -> PermissionRequest | None:
        return self._queue[0] if self._queue else None

    def waiting(self, session_id: int) -> int:
        """How many requests of that chat wait for an answer."""
        return len(self._queues.get(session_id, []))

    def ask(self, request: PermissionRequest) -> None:
        queue = self._queues.setdefault(request.session_id, [])
        queue.append(request)
        if len(queue) == 1 and request.session_id == self.session_id:
            self._show(request)

    def show_session(self, session_id: int | None) -> None:
        """The window opened that chat: its first waiting request shows, another chat's hides."""
        if session_id == self.session_id:
            return
        self.session_id = session_id
        if self.current is not None:
            self._show(self.current)
        else:
            self.hide()

    def settled(self, request_id: str) -> None:
        """The request was answered or withdrawn elsewhere (timeout, Stop): drop it."""
        was_current = self.current is not None and self.current.id == request_id
        for sid, queue in list(self._queues.items()):
            self._queues[sid] = [r for r in queue if r.id != request_id]
            if not self._queues[sid]:
                del self._queues[sid]
        if was_current:
            self._next()

    def _show(self, request: PermissionRequest) -> None:
        spec = request.spec
        server = self.tr("built-in") if request.server_label == "built-in" else request.server_label
        self.title.setText(
            self.tr("<b>{tool}</b> ({server}) wants to run. Allow it?").format(
                tool=html.escape(spec.name), server=html.escape(server)
            )
        )
        body = f"<pre style='margin:0'>{html.escape(request.arguments_text())}</pre>"
        if request.diff:
            body = diff_html(request.diff, is_dark(self.details.palette(), QPalette.ColorRole.Base))
        elif request.spec.tool in ("write", "edit"):
            body += (
                "<p>"
                + html.escape(self.tr("(no diff: the file cannot be read or the text is not in it)"))
                + "</p>"
            )
        self.details.setHtml(body)
        self._fit_details()
        note = self.changed_text(request.changed) or (self.network_text() if request.asks_network else "")
        self.changed.setText(note)
        self.changed.setVisible(bool(note))
        self._confirming(False)
        self.show()  # never focused: the user may be typing

    def _answer(self, answer: Answer | None) -> None:
        request = self.current
        if request is None:
            return
        self.settled(request.id)
        self.answered.emit(request.id, answer)

    def _next(self) -> None:
        if self._queue:
            self._show(self._queue[0])
        else:
            self.hide()

    def close_all(self) -> None:
        """Closing denies everything still asked, in every chat."""
        for queue in list(self._queues.values()):
            for request in queue:
                self.answered.emit(request.id, None)
        self._queues.clear()
        self.hide()
