"""Finding and organising chats from the window: search across chats (Ctrl+K) that opens a chat at the message
found, chat instructions, export and copy, the keyboard shortcuts (bound from one table and listed in Help),
`/` commands with completion, ↑ to edit the last message, Ctrl+Shift+C to copy the last reply.

Attached to the main window after it is built, so the window's own code stays about chatting.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QToolButton

from desktop.ui.api import SearchHit
from desktop.ui.bridge import Bridge
from desktop.ui.composer.slash_commands import WINDOW_COMMANDS, SlashCompleter, parse
from desktop.ui.window.shortcuts import SHORTCUTS, shortcut

if TYPE_CHECKING:
    from desktop.ui.settings.instructions_dialog import ChatInstructionsDialog
    from desktop.ui.sidebar.search_dialog import SearchDialog
    from desktop.ui.window.shortcuts_dialog import ShortcutsDialog
    from desktop.ui.window.window_parts import ChatCommands, OpenChat


class OrganiseUi(QObject):
    """``file_menu`` gets Search and Export above its Quit; ``bound_actions`` are the window's own actions whose
    shortcuts the table sets (New chat, Settings)."""

    def __init__(
        self,
        host: QMainWindow,
        view: OpenChat,
        commands: ChatCommands,
        header: Any,
        *,
        file_menu: QMenu,
        bound_actions: dict[str, QAction],
    ):
        super().__init__(host)
        self.host = host
        self.view = view
        self.commands = commands
        self.bridge: Bridge = view.bridge
        self.search_dialog: SearchDialog | None = None
        self.shortcuts_dialog: ShortcutsDialog | None = None
        self.instructions_dialog: ChatInstructionsDialog | None = None
        self.actions: dict[str, QAction] = {}

        self.instructions_button = QToolButton(host)
        self.instructions_button.setObjectName("instructions_button")
        self.instructions_button.setText(self.tr("Instructions"))
        self.instructions_button.setToolTip(self.tr("Instructions for this chat (sent with every request)"))
        self.instructions_button.setAccessibleName(self.tr("Chat instructions"))
        self.instructions_button.clicked.connect(self.edit_instructions)
        header.insertWidget(1, self.instructions_button)

        self._build_menus(file_menu, bound_actions)
        self._bind_shortcuts()
        self.slash = SlashCompleter(view.composer.edit)
        view.composer.edit.installEventFilter(self)

    # --- menus and shortcuts ----------------------------------------------------------------------------
    def _action(self, command: str, text: str, slot: Any) -> QAction:
        action = QAction(text, self.host)
        action.setObjectName(f"{command}_action")
        action.triggered.connect(slot)
        self.actions[command] = action
        return action

    def _build_menus(self, file_menu: QMenu, bound_actions: dict[str, QAction]) -> None:
        quit_at = next((a for a in file_menu.actions() if a.isSeparator()), None)  # above Quit
        for action in (
            self._action("search", self.tr("&Search all chats…"), self.open_search),
            self._action("export", self.tr("&Export chat…"), self.export_chat),
        ):
            if quit_at is not None:
                file_menu.insertAction(quit_at, action)
            else:
                file_menu.addAction(action)
        chat_menu = self.host.menuBar().addMenu(self.tr("&Chat"))
        chat_menu.setObjectName("chat_menu")
        chat_menu.addAction(self._action("instructions", self.tr("&Instructions…"), self.edit_instructions))
        chat_menu.addSeparator()
        chat_menu.addAction(
            self._action("copy_last_reply", self.tr("Copy the last &reply"), self.copy_last_reply)
        )
        chat_menu.addAction(
            self._action("copy_chat", self.tr("Copy chat as &Markdown"), lambda: self.copy_chat("md"))
        )
        chat_menu.addAction(
            self._action("copy_chat_json", self.tr("Copy chat as &JSON"), lambda: self.copy_chat("json"))
        )
        help_menu = self.host.menuBar().addMenu(self.tr("&Help"))
        help_menu.setObjectName("help_menu")
        help_menu.addAction(self._action("shortcuts", self.tr("&Keyboard shortcuts"), self.show_shortcuts))
        self.actions.update(bound_actions)

    def _bind_shortcuts(self) -> None:
        """Every shortcut the table says is bound here goes on its action (one table, one binding)."""
        for entry in SHORTCUTS:
            action = self.actions.get(entry.command)
            if action is None or not entry.bound_here:
                continue
            keys = entry.sequences()
            for platform_key in action.shortcuts():  # a platform's own key (⌘, on macOS) stays as well
                if platform_key not in keys and not platform_key.isEmpty():
                    keys.append(platform_key)
            action.setShortcuts(keys)
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            if action.parent() is self.host and action not in self.host.actions():
                self.host.addAction(action)  # window-wide even when its menu is closed

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        w = self.view
        if watched is w.composer.edit and isinstance(event, QKeyEvent):
            if event.type() == QEvent.Type.ShortcutOverride and self._is_window_key(event):
                event.ignore()  # the text edit would take Ctrl+K (delete to end of line) before the window
                return True
            if (
                event.type() == QEvent.Type.KeyPress
                and event.key() == Qt.Key.Key_Up
                and not event.modifiers()
                and not w.composer.edit.toPlainText()
                and not self.slash.popup_visible()
            ):
                return self.edit_last_message()
        return super().eventFilter(watched, event)

    def _is_window_key(self, event: QKeyEvent) -> bool:
        pressed = QKeySequence(event.keyCombination())
        return any(
            pressed.matches(seq) == QKeySequence.SequenceMatch.ExactMatch
            for entry in SHORTCUTS
            if entry.bound_here
            for seq in entry.sequences()
        )

    # --- commands typed in the composer -----------------------------------------------------------------
    def run_command(self, text: str) -> bool:
        """A composer text the window runs itself: True when it was one (the composer is cleared)."""
        if self.slash.popup_visible():
            typed = parse(text)
            if typed is None or typed[0] != text.strip():
                self.slash.take_current()  # Enter in the popup picks the command; Enter again runs it
                return True
            self.slash.hide_popup()  # the whole name was typed: it runs now
        command = parse(text)
        if command is None or command[0] not in WINDOW_COMMANDS:
            return False
        name, arg = command
        w = self.view
        w.composer.clear()
        if name == "/help":
            self.show_shortcuts()
        elif name == "/clear":
            self.commands.clear_history()
        elif name == "/model":
            if arg:
                w.model_picker.setEditText(arg)
                self.commands.pick_model()
            else:
                w.model_picker.setFocus()
                w.model_picker.showPopup()
        return True

    # --- search -----------------------------------------------------------------------------------------
    def open_search(self) -> SearchDialog:
        if self.search_dialog is None:
            from desktop.ui.sidebar.search_dialog import SearchDialog  # dialogs load when first opened

            dialog = SearchDialog(self.host)
            dialog.query_changed.connect(lambda q: self.bridge.spawn(self._search(q)))
            dialog.hit_chosen.connect(lambda hit: self.bridge.spawn(self.jump_to(hit)))
            self.search_dialog = dialog
        self.search_dialog.show()
        self.search_dialog.raise_()
        self.search_dialog.activateWindow()
        self.search_dialog.edit.setFocus()
        self.search_dialog.edit.selectAll()
        return self.search_dialog

    async def _search(self, query: str) -> None:
        hits = await self.bridge.engine.library.search(query) if query.strip() else []
        if self.search_dialog is not None:
            self.search_dialog.show_results(query, hits)

    async def jump_to(self, hit: SearchHit) -> int:
        """Open the hit's chat and scroll to its message (older pages are loaded until it is there; one under
        a summary is shown with the originals). Returns the row shown (-1: the message is gone)."""
        w, model = self.view, self.view.chat_model
        await self.bridge.open_session(hit.session_id)
        if w.session_id != hit.session_id:  # the chat was deleted since the search
            self.view.toast.show_message(self.tr("That chat no longer exists."), "warning")
            return -1
        if hit.kind == "message":  # a message of a version not shown now: that version is shown first
            where = await self.bridge.show_message(hit.session_id, hit.message_id)
            if where == "busy":
                self.view.toast.show_message(
                    self.tr(
                        "That message is in another version: it can be shown when the reply has finished."
                    ),
                    "warning",
                )
                return -1
            if where == "missing":
                self.view.toast.show_message(self.tr("That message no longer exists."), "warning")
                return -1
            if where == "switched":
                await self.bridge.open_session(hit.session_id)
        if hit.kind == "message" and w.hidden_through and hit.message_id <= w.hidden_through:
            await self.bridge.open_session(hit.session_id, originals=True)
        if hit.kind == "summary":
            row = self._card_row(hit.compaction_id)
            if row < 0 and w.hidden_through:
                await self.bridge.open_session(hit.session_id, originals=True)
                row = self._card_row(hit.compaction_id)
        else:
            while model.row_of(hit.message_id) < 0:
                oldest = model.oldest_message_id()
                if oldest is not None and oldest <= hit.message_id:
                    break  # in range but not a row of its own (a tool result shown on its call's card)
                if model.release_held():
                    continue
                if not model.store_has_older or oldest is None:
                    break
                before = model.rowCount()
                await self.bridge.load_older(hit.session_id, oldest, w.hidden_through)
                if model.rowCount() == before and model.oldest_message_id() == oldest:
                    break
            row = model.row_of(hit.message_id)
            if row < 0:  # the nearest row before it (its tool call's card)
                ids = [m for m in model.message_ids() if m <= hit.message_id]
                row = model.row_of(ids[-1]) if ids else -1
        if row >= 0:
            index = model.index(row)
            w.chat.doItemsLayout()
            w.chat.scrollTo(index, w.chat.ScrollHint.PositionAtCenter)
            w.chat.setCurrentIndex(index)
            w.chat.setFocus()
        return row

    def _card_row(self, compaction_id: int | None) -> int:
        model = self.view.chat_model
        return next(
            (
                i
                for i in range(model.rowCount())
                if model.row_at(i).kind == "compaction"
                and model.row_at(i).detail.get("record_id") == compaction_id
            ),
            -1,
        )

    # --- instructions -----------------------------------------------------------------------------------
    def edit_instructions(self) -> None:
        if self.view.session_id is not None:
            self.bridge.spawn(self._edit_instructions(self.view.session_id))

    async def _edit_instructions(self, session_id: int) -> None:
        from desktop.ui.settings.instructions_dialog import (
            ChatInstructionsDialog,  # dialogs load when first opened
        )

        current = await self.bridge.engine.instructions(session_id)
        dialog = ChatInstructionsDialog(current, self.bridge.settings.instructions, self.host)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.bridge.spawn(self._save_instructions(session_id, dialog.text())))
        dialog.finished.connect(lambda _r: setattr(self, "instructions_dialog", None))
        self.instructions_dialog = dialog
        dialog.open()

    async def _save_instructions(self, session_id: int, text: str) -> None:
        await self.bridge.engine.set_instructions(session_id, text)
        self.view.toast.show_message(
            self.tr("This chat's instructions were saved.")
            if text
            else self.tr("This chat has no instructions of its own now.")
        )

    # --- export and copy --------------------------------------------------------------------------------
    def export_chat(self) -> None:
        from PySide6.QtWidgets import QFileDialog  # a dialog class, made when first opened

        sid = self.view.session_id
        if sid is None:
            return
        name = "".join(
            ch if ch.isalnum() or ch in " -_" else "_" for ch in self.view.title_label.text()
        ).strip()
        path, chosen = QFileDialog.getSaveFileName(
            self.host,
            self.tr("Export chat"),
            str(Path.home() / f"{name or 'chat'}.md"),
            self.tr("Markdown (*.md)") + ";;" + self.tr("JSON (*.json)"),
        )
        if path:
            fmt = "json" if path.endswith(".json") or "json" in chosen.lower() else "md"
            self.bridge.spawn(self.write_export(sid, Path(path), fmt))

    async def write_export(self, session_id: int, path: Path, fmt: str) -> None:
        try:
            await self.bridge.export_chat_to(session_id, path, fmt)
        except OSError as exc:
            self.view.toast.show_message(
                self.tr("Cannot write {path}: {reason}").format(path=path, reason=exc.strerror or exc),
                "error",
                8000,
            )
            return
        self.view.status.flash(self.tr("Exported to {path}").format(path=path))

    def copy_chat(self, fmt: str = "md") -> None:
        if self.view.session_id is not None:
            self.bridge.spawn(self._copy_chat(self.view.session_id, fmt))

    async def _copy_chat(self, session_id: int, fmt: str) -> None:
        QGuiApplication.clipboard().setText(await self.bridge.engine.library.export(session_id, fmt))
        self.view.toast.show_message(self.tr("Copied the whole chat"))

    def copy_last_reply(self) -> bool:
        model = self.view.chat_model
        for i in range(model.rowCount() - 1, -1, -1):
            row = model.row_at(i)
            if (
                row.kind == "message"
                and row.message is not None
                and row.message.role == "assistant"
                and row.plain_text.strip()
            ):
                QGuiApplication.clipboard().setText(row.plain_text)
                self.view.toast.show_message(self.tr("Copied"))
                return True
        self.view.toast.show_message(self.tr("No reply to copy yet"))
        return False

    def edit_last_message(self) -> bool:
        """↑ in an empty composer: the last message you wrote goes back into the composer to edit."""
        model = self.view.chat_model
        for i in range(model.rowCount() - 1, -1, -1):
            row = model.row_at(i)
            if row.is_user_bubble and row.shown is not None and row.shown.has_text:
                self.commands.edit_message(row.shown.id)
                return True
        return False

    # --- help -------------------------------------------------------------------------------------------
    def show_shortcuts(self) -> ShortcutsDialog:
        if self.shortcuts_dialog is None:
            from desktop.ui.window.shortcuts_dialog import ShortcutsDialog

            self.shortcuts_dialog = ShortcutsDialog(self.host)
        self.shortcuts_dialog.show()
        self.shortcuts_dialog.raise_()
        return self.shortcuts_dialog


__all__ = ["OrganiseUi", "shortcut"]
