"""The window's tools: the workspace picker in the chat header, the inline permission prompt, live status on
the tool cards (Enter, Space or a double click expands a card to its full input and output), the MCP page.

Attached to the main window after it is built, so the window's own code stays about chatting.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeyEvent
from PySide6.QtWidgets import QMainWindow, QMenu, QToolButton, QWidget

from desktop.ui.api import Page, PermissionRequest, display, events, tool_events
from desktop.ui.bridge import Bridge
from desktop.ui.look import icons
from desktop.ui.transcript.chat_model import Roles

if TYPE_CHECKING:
    from desktop.ui.settings.mcp_page import McpDialog
    from desktop.ui.tools.permission_prompt import PermissionPrompt
    from desktop.ui.window.window_parts import OpenChat


class WorkspaceButton(QToolButton):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("workspace_button")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.folder = ""
        menu = QMenu(self)
        self.choose_action = menu.addAction(self.tr("Choose workspace folder…"))
        self.clear_action = menu.addAction(self.tr("No workspace (no built-in tools)"))
        self.setMenu(menu)
        self.show_folder("")

    def show_folder(self, folder: str) -> None:
        self.folder = folder
        name = Path(folder).name if folder else ""
        self.setText(self.tr("Workspace: {name}").format(name=name) if name else self.tr("No workspace"))
        self.setToolTip(
            folder
            or self.tr(
                "Pick a folder so the model can read, search, edit and run commands "
                "in it (each call asks first)."
            )
        )
        self.setAccessibleName(self.text())
        self.clear_action.setEnabled(bool(folder))


class ToolsUi(QObject):
    def __init__(self, host: QMainWindow, view: OpenChat, header: Any, pane: Any):
        super().__init__(host)
        self.host = host
        self.view = view
        self.bridge: Bridge = view.bridge
        self.workspace = WorkspaceButton(host)
        self.workspace.setVisible(self.bridge.has_tools)
        header.insertWidget(1, self.workspace)
        self._pane = pane
        self._prompt: PermissionPrompt | None = (
            None  # built with the first permission request (after first paint)
        )
        self.dialog: McpDialog | None = None
        self._waiting_note = ""  # the status line's note about another chat's waiting request
        self._picked = 0  # workspace choices made, so a slower read of the old one never wins
        self._writing = 0  # workspace writes under way
        self.mcp_action = QAction(self.tr("&MCP servers and tool permissions…"), host)
        self.mcp_action.triggered.connect(self.open_mcp)
        file_menu = host.menuBar().actions()[0].menu()
        if isinstance(file_menu, QMenu):
            file_menu.insertAction(file_menu.actions()[-2], self.mcp_action)  # before the separator and Quit
        self.workspace.choose_action.triggered.connect(self.choose_workspace)
        self.workspace.clear_action.triggered.connect(lambda: self.set_workspace(""))
        self.bridge.engine_event.connect(self._on_event)
        self.bridge.session_opened.connect(self._on_opened)
        view.chat.installEventFilter(self)
        # A click opens or folds a tool card (a drag that selects its text is not a click; a double click is one
        # click here, so it does not fold the card straight back).
        view.chat.clicked.connect(lambda index: view.chat_model.toggle_expanded(index.row()))
        self.bridge.spawn(self.bridge.start_mcp_servers())  # in the background: a slow server never blocks

    @property
    def prompt(self) -> PermissionPrompt:
        """The permission prompt above the status line, built when first needed."""
        if self._prompt is None:
            from desktop.ui.tools.permission_prompt import PermissionPrompt

            self._prompt = PermissionPrompt(self.host)
            self._pane.insertWidget(self._pane.indexOf(self.view.status), self._prompt)
            self._prompt.answered.connect(self.bridge.answer_permission)
            self._prompt.show_session(self.view.session_id)
        return self._prompt

    def _waiting(self, session_id: int) -> int:
        return self._prompt.waiting(session_id) if self._prompt is not None else 0

    # --- workspace ------------------------------------------------------------------------------------------
    def _on_opened(self, page: Page) -> None:
        if self._prompt is not None:
            self._prompt.show_session(page.session.id)  # only the open chat's permission requests show
        self.bridge.spawn(self._load_workspace(page.session.id))

    async def _load_workspace(self, session_id: int) -> None:
        picked = self._picked
        folder = await self.bridge.engine.workspace(session_id)
        # A folder picked while this read was under way is newer than what it read.
        if session_id == self.view.session_id and picked == self._picked and not self._writing:
            self.workspace.show_folder(folder)

    def choose_workspace(self) -> None:
        from PySide6.QtWidgets import QFileDialog  # a dialog class, made when first opened

        folder = QFileDialog.getExistingDirectory(
            self.host, self.tr("Workspace folder"), self.workspace.folder or str(Path.home())
        )
        if folder:
            self.set_workspace(folder)

    def set_workspace(self, folder: str) -> None:
        session_id = self.view.session_id
        if session_id is None:
            return
        self._picked += 1
        self.workspace.show_folder(folder)
        self.bridge.spawn(self._write_workspace(session_id, folder))

    async def _write_workspace(self, session_id: int, folder: str) -> None:
        # A read that starts after the pick but before this write lands would show the old folder: none
        # is shown while a write is under way.
        self._writing += 1
        try:
            await self.bridge.engine.set_workspace(session_id, folder)
        finally:
            self._writing -= 1

    # --- events ---------------------------------------------------------------------------------------------
    def _on_event(self, event: events.EngineEvent) -> None:
        model = self.view.chat_model
        if isinstance(event, tool_events.PermissionAsked):
            model.set_tool_state(event.request.tool_use_id, display.ToolState.ASKING)
            self.prompt.ask(event.request)
            if event.request.session_id != self.view.session_id:
                self.bridge.spawn(self._tell_waiting(event.request))
        elif isinstance(event, tool_events.PermissionSettled):
            if self._prompt is not None:
                self._prompt.settled(event.request_id)
            if (
                self._waiting_note
                and self.view.status.text() == self._waiting_note
                and not self._waiting(event.session_id)
            ):
                self.view.status.clear()
        elif isinstance(event, tool_events.ToolCallStarted):
            model.set_tool_state(event.tool_use_id, display.ToolState.RUNNING)
        elif isinstance(event, tool_events.ToolCallFinished):
            model.set_tool_state(event.tool_use_id, display.ToolState(event.status), event.duration)
        elif (
            isinstance(event, tool_events.McpChanged) and self.dialog is not None and self.dialog.isVisible()
        ):
            self.dialog.page.fill(list(event.servers))

    async def _tell_waiting(self, request: PermissionRequest) -> None:
        """A chat that is not open asks: say so in the status line (its prompt shows when it is opened)."""
        title = await self.bridge.chat_title(request.session_id)
        if request.session_id == self.view.session_id or self._waiting(request.session_id) == 0:
            return
        self._waiting_note = self.tr(
            "“{title}” is waiting for your answer: may {tool} run? Open that chat to answer."
        ).format(title=title, tool=request.spec.name)
        self.view.status.setText(self._waiting_note)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if (
            event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and not event.modifiers()
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space)
        ):
            index = self.view.chat.currentIndex()
            if index.isValid() and index.data(Roles.Kind) == "tool":
                return self.view.chat_model.toggle_expanded(index.row())
        return False

    # --- MCP ------------------------------------------------------------------------------------------------
    def open_mcp(self) -> McpDialog:
        if self.dialog is None:
            from desktop.ui.settings.mcp_page import McpDialog  # dialogs load when first opened

            self.dialog = McpDialog(self.bridge, self.host)
        else:
            self.bridge.spawn(self.dialog.page.reload())
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def refresh_icons(self) -> None:
        """The workspace button's icon, drawn in the palette's text colour (again after a theme change)."""
        self.workspace.setIcon(icons.icon("folder"))
        self.workspace.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)

    def close(self) -> None:
        if self._prompt is not None:
            self._prompt.close_all()
