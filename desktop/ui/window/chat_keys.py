"""The keyboard's way to what otherwise needs the pointer: switching chats (Ctrl+Tab, Ctrl+PgDown/PgUp,
Ctrl+1…9), regenerating the last reply, attaching files and flipping a message's versions. The keys come from the
one table (shortcuts.py) the Help sheet lists; each runs the same path as its button or link. Wired into the window
by one line."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow

from desktop.ui.sidebar.sidebar import ID_ROLE, Sidebar
from desktop.ui.window.shortcuts import shortcut

if TYPE_CHECKING:
    from desktop.ui.window.window_parts import OpenChat


class ChatKeys(QObject):
    def __init__(self, host: QMainWindow, view: OpenChat, sidebar: Sidebar) -> None:
        super().__init__(host)
        self.host = host
        self.view = view
        self.sidebar = sidebar
        self.actions: dict[str, QAction] = {}
        self._bind("next_chat", lambda: self.step_chat(1))
        self._bind("previous_chat", lambda: self.step_chat(-1))
        for n, key in enumerate(shortcut("chat_number").keys, start=1):
            self._bind("chat_number", functools.partial(self.open_nth, n), keys=(key,), name=f"chat_{n}")
        self._bind("regenerate", self.regenerate_last)
        self._bind("attach", self.view.composer.attach_button.click)  # the button's own path and dialog
        self._bind("previous_version", lambda: self.flip_version(-1))
        self._bind("next_version", lambda: self.flip_version(1))

    def _bind(
        self, command: str, slot: Callable[[], object], *, keys: tuple[str, ...] | None = None, name: str = ""
    ) -> None:
        entry = shortcut(command)
        action = QAction(self.host)  # no menu entry, so no words of its own: the sheet describes it
        action.setObjectName(f"{name or command}_action")
        action.setShortcuts(entry.sequences() if keys is None else [QKeySequence(k) for k in keys])
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(lambda _checked=False: slot())
        self.host.addAction(action)  # window-wide, with no menu entry
        self.actions[name or command] = action

    # --- chats ----------------------------------------------------------------------------------------------
    def chat_ids(self) -> list[int]:
        """The chats in the order the sidebar lists them."""
        items = (self.sidebar.list.item(i) for i in range(self.sidebar.list.count()))
        return [int(item.data(ID_ROLE)) for item in items if item is not None]

    def _open_row(self, row: int) -> None:
        self.sidebar.list.setCurrentRow(row)  # the sidebar's selection opens the chat, as a click does

    def step_chat(self, delta: int) -> None:
        """The next (1) or previous (-1) chat in the list, round at either end."""
        ids = self.chat_ids()
        if not ids:
            return
        at = ids.index(self.view.session_id) if self.view.session_id in ids else -1 if delta > 0 else 0
        self._open_row((at + delta) % len(ids))

    def open_nth(self, n: int) -> None:
        if 1 <= n <= len(self.chat_ids()):
            self._open_row(n - 1)

    # --- messages -------------------------------------------------------------------------------------------
    def _message_rows(self) -> list[int]:
        model = self.view.chat_model
        return [i for i in range(model.rowCount()) if model.row_at(i).message is not None]

    def regenerate_last(self) -> None:
        """Answer again in place of the newest reply (the window's own Regenerate: a new version)."""
        model = self.view.chat_model
        for i in reversed(self._message_rows()):
            message = model.row_at(i).message
            if message is not None and message.role == "assistant":
                self.view.chat.regenerate_requested.emit(message.id)
                return

    def flip_version(self, delta: int) -> None:
        """‹ / › of the selected message, or of the newest one that has other versions."""
        chat, model = self.view.chat, self.view.chat_model
        current = chat.currentIndex()
        rows = [current.row()] if current.isValid() and chat.hasFocus() else []
        rows += [i for i in reversed(self._message_rows()) if model.row_at(i).versions is not None]
        for i in rows:
            row = model.row_at(i)
            if row.versions is not None and isinstance(row.key, int):
                position, count = row.versions
                if 1 <= position + delta <= count:
                    chat.version_requested.emit(row.key, delta)
                return
