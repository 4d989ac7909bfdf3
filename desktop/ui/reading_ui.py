"""Reading the chat: text selection and copy with feedback, the Ctrl+F find bar, hover actions on a message and
expandable thinking. Wired into the window by one line, like the tools' UI."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QBoxLayout, QWidget

from desktop.ui.chat_model import Roles
from desktop.ui.find_bar import FindBar
from desktop.ui.message_actions import MessageActions
from desktop.ui.text_select import TextSelector
from desktop.ui.thinking_toggle import ThinkingToggle

if TYPE_CHECKING:
    from desktop.ui.main_window import MainWindow

COPIED_MS = 1500


class ReadingUi(QObject):
    def __init__(self, window: MainWindow, header: QBoxLayout, pane: QBoxLayout) -> None:
        super().__init__(window)
        self.window = window
        chat = window.chat
        self.selector = TextSelector(chat)
        self.selector.copied.connect(lambda _text: self.say_copied())
        chat.code_copied.connect(lambda _n: self.say_copied())
        self.find_bar = FindBar(chat, window)
        pane.insertWidget(max(pane.indexOf(window.status), 0), self.find_bar)
        self.find_shortcut = QShortcut(QKeySequence(QKeySequence.StandardKey.Find), window, self.open_find,
                                       context=Qt.ShortcutContext.WindowShortcut)
        self.actions = MessageActions(chat)
        regenerate = getattr(window.bridge, "regenerate", None)  # the versions work adds it to the bridge
        self.actions.can_regenerate = callable(regenerate)
        self.actions.copy_requested.connect(self._copy)
        self.actions.edit_requested.connect(chat.edit_requested)
        self.actions.regenerate_requested.connect(self._regenerate)
        QWidget.setTabOrder(chat, self.actions.copy_button)
        QWidget.setTabOrder(self.actions.copy_button, self.actions.edit_button)
        QWidget.setTabOrder(self.actions.edit_button, self.actions.regenerate_button)
        window.chat_model.modelReset.connect(self._on_reset)
        self.thinking = ThinkingToggle(window, window)
        header.insertWidget(max(header.indexOf(window.model_picker), 0), self.thinking)
        chat.card_action.connect(self._on_card_action)
        chat.installEventFilter(self)

    def _on_card_action(self, key: str, action: str) -> None:
        if action == "thinking" and key.isdigit():  # a message's own "Show thinking" link
            model = self.window.chat_model
            model.toggle_thinking(model.row_of(int(key)))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        # Enter on a message with thinking shows or hides it (on a tool card, Enter expands the card).
        if watched is self.window.chat and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) \
                and not event.modifiers() and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            index = self.window.chat.currentIndex()
            if index.isValid() and index.data(Roles.Kind) == "message":
                return self.window.chat_model.toggle_thinking(index.row())
        return False

    def say_copied(self) -> None:
        self.window.toast.show_message(self.tr("Copied"), "info", COPIED_MS)

    def open_find(self) -> None:
        chosen = self.selector.selection_text()
        if chosen and "\n" not in chosen:
            self.find_bar.edit.setText(chosen)
        self.find_bar.open_bar()

    def _copy(self, message_id: int) -> None:
        row = self.window.chat_model.row_of(message_id)
        if row >= 0:
            self.window.chat.copy_message(self.window.chat_model.index(row, 0))
            self.say_copied()

    def _regenerate(self, message_id: int) -> None:
        window = self.window
        regenerate: Any = getattr(window.bridge, "regenerate", None)
        if callable(regenerate) and window.session_id is not None:
            window.bridge.spawn(regenerate(message_id))

    def _on_reset(self) -> None:
        """Another chat (or a reload): marks of the old rows mean nothing; an open find bar searches again."""
        self.selector.clear()
        self.actions.show_for(self.window.chat.currentIndex())
        if self.find_bar.isVisible():
            self.find_bar.search()
        else:
            self.find_bar.matches = []
            self.window.chat.delegate.marks.matches = {}
            self.window.chat.delegate.marks.current = None
