"""Reading the chat: text selection and copy with feedback, the Ctrl+F find bar, hover actions on a message and
expandable thinking. Wired into the window by one line, like the tools' UI."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QBoxLayout, QWidget

from desktop.ui.transcript.chat_model import Roles
from desktop.ui.transcript.message_actions import MessageActions
from desktop.ui.transcript.text_select import TextSelector
from desktop.ui.window.thinking_toggle import ThinkingToggle

if TYPE_CHECKING:
    from desktop.ui.transcript.find_bar import FindBar
    from desktop.ui.window.window_parts import OpenChat

COPIED_MS = 1500


class ReadingUi(QObject):
    def __init__(self, host: QWidget, view: OpenChat, header: QBoxLayout, pane: QBoxLayout) -> None:
        super().__init__(host)
        self.view = view
        chat = view.chat
        self.selector = TextSelector(chat)
        self.selector.copied.connect(lambda _text: self.say_copied())
        chat.code_copied.connect(lambda _n: self.say_copied())
        self._host, self._pane = host, pane
        self._find_bar: FindBar | None = None  # built when first opened (Ctrl+F), after the first paint
        self.find_shortcut = QShortcut(
            QKeySequence(QKeySequence.StandardKey.Find),
            host,
            self.open_find,
            context=Qt.ShortcutContext.WindowShortcut,
        )
        self.actions = MessageActions(chat)
        self.actions.copy_requested.connect(self._copy)
        self.actions.edit_requested.connect(chat.edit_requested)
        self.actions.regenerate_requested.connect(self._regenerate)
        QWidget.setTabOrder(chat, self.actions.copy_button)
        QWidget.setTabOrder(self.actions.copy_button, self.actions.edit_button)
        QWidget.setTabOrder(self.actions.edit_button, self.actions.regenerate_button)
        view.chat_model.modelReset.connect(self._on_reset)
        self.thinking = ThinkingToggle(view, host)
        header.insertWidget(max(header.indexOf(view.model_picker), 0), self.thinking)
        chat.card_action.connect(self._on_card_action)
        chat.installEventFilter(self)

    @property
    def find_bar(self) -> FindBar:
        if self._find_bar is None:
            from desktop.ui.transcript.find_bar import FindBar

            self._find_bar = FindBar(self.view.chat, self._host)
            self._pane.insertWidget(max(self._pane.indexOf(self.view.status), 0), self._find_bar)
        return self._find_bar

    def _on_card_action(self, key: str, action: str) -> None:
        if action == "thinking" and key.isdigit():  # a message's own "Show thinking" link
            model = self.view.chat_model
            model.toggle_thinking(model.row_of(int(key)))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if (
            watched is self.view.chat
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and self._type_into_composer(event)
        ):
            return True
        # Enter on a message with thinking shows or hides it (on a tool card, Enter expands the card).
        if (
            watched is self.view.chat
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and not event.modifiers()
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            index = self.view.chat.currentIndex()
            if index.isValid() and index.data(Roles.Kind) == "message":
                return self.view.chat_model.toggle_thinking(index.row())
        return False

    def _type_into_composer(self, event: QKeyEvent) -> bool:
        """Text typed while the transcript has the focus goes to the composer (the focus with it): a tool prompt
        takes no focus, and what was typed after a click in the chat was dropped. Keys with Ctrl, Alt or Meta,
        and a lone space or Tab, stay the list's."""
        text = event.text()
        held = event.modifiers() & ~(Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.KeypadModifier)
        if held or not text or not text.isprintable() or not text.strip():
            return False
        edit = self.view.composer.edit
        if not edit.isEnabled() or not edit.isVisibleTo(self._host):
            return False
        edit.setFocus(Qt.FocusReason.OtherFocusReason)
        edit.insertPlainText(text)
        return True

    def say_copied(self) -> None:
        self.view.toast.show_message(self.tr("Copied"), "info", COPIED_MS)

    def open_find(self) -> None:
        chosen = self.selector.selection_text()
        if chosen and "\n" not in chosen:
            self.find_bar.edit.setText(chosen)
        self.find_bar.open_bar()

    def _copy(self, message_id: int) -> None:
        row = self.view.chat_model.row_of(message_id)
        if row >= 0:
            self.view.chat.copy_message(self.view.chat_model.index(row, 0))
            self.say_copied()

    def _regenerate(self, message_id: int) -> None:
        if self.view.session_id is not None:
            self.view.bridge.spawn(self.view.bridge.regenerate(message_id))

    def _on_reset(self) -> None:
        """Another chat (or a reload): marks of the old rows mean nothing; an open find bar searches again."""
        self.selector.clear()
        self.actions.show_for(self.view.chat.currentIndex())
        if self._find_bar is not None and self._find_bar.isVisible():
            self._find_bar.search()
        else:
            if self._find_bar is not None:
                self._find_bar.matches = []
            self.view.chat.delegate.marks.matches = {}
            self.view.chat.delegate.marks.current = None
