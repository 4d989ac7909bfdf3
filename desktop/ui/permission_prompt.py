"""The inline permission prompt: server, tool and arguments (a diff for write and edit), four answers.

Keyboard first: it takes the focus when it opens, each answer has a mnemonic (Alt+O/C/A/D), Esc denies. Deny
has the focus, so a stray Enter never approves. Requests queue per chat: one prompt at a time, in the order
asked, and only the open chat's (another chat's request waits for that chat to be opened, or for its timeout).
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QTextEdit, QVBoxLayout, QWidget

from desktop.ui.bridge import Answer, PermissionRequest


def _diff_html(diff: str) -> str:
    lines = []
    for line in diff.splitlines():
        color = "#1a7f37" if line.startswith("+") and not line.startswith("+++") else \
            "#cf222e" if line.startswith("-") and not line.startswith("---") else ""
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
        self.details.setMaximumHeight(220)
        self.details.setAccessibleName(self.tr("Arguments of the tool call"))
        self.once = QPushButton(self.tr("Allow &once"), self)
        self.chat = QPushButton(self.tr("Allow for this &chat"), self)
        self.always = QPushButton(self.tr("&Always for this tool"), self)
        self.deny = QPushButton(self.tr("&Deny"), self)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button, answer in ((self.once, Answer.ONCE), (self.chat, Answer.CHAT), (self.always, Answer.ALWAYS),
                               (self.deny, Answer.DENY)):
            button.setAutoDefault(True)
            button.clicked.connect(lambda _checked=False, a=answer: self._answer(a))
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(self.title)
        layout.addWidget(self.details)
        layout.addLayout(buttons)
        for child in (self.details, self.once, self.chat, self.always, self.deny):
            child.installEventFilter(self)
        self.hide()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        # Esc denies wherever the focus is inside the prompt (a button would otherwise swallow it).
        if event.type() in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride) and isinstance(event, QKeyEvent) \
                and event.key() == Qt.Key.Key_Escape:
            if event.type() == QEvent.Type.KeyPress:
                self._answer(Answer.DENY)
            event.accept()
            return True
        return False

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        if event.key() == Qt.Key.Key_Escape:  # reaches here from any of the prompt's widgets
            self._answer(Answer.DENY)
            return
        super().keyPressEvent(event)

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
        self.title.setText(self.tr("<b>{tool}</b> ({server}) wants to run. Allow it?")
                           .format(tool=html.escape(spec.name), server=html.escape(server)))
        body = f"<pre style='margin:0'>{html.escape(request.arguments_text())}</pre>"
        if request.diff:
            body = _diff_html(request.diff)
        elif request.spec.tool in ("write", "edit"):
            body += "<p>" + html.escape(self.tr("(no diff: the file cannot be read or the text is not in it)")) + "</p>"
        self.details.setHtml(body)
        self.show()
        self.deny.setFocus(Qt.FocusReason.OtherFocusReason)

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
