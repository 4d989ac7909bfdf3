"""MCP servers and saved tool approvals: list, add, edit, enable, restart, log; revoke a saved approval."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.api import McpServerConfig, SavedApproval, ServerStatus
from desktop.ui.bridge import Bridge
from desktop.ui.settings.mcp_form import McpServerForm

SERVER_STATES: dict[str, object] = {  # marked for lupdate (context "McpPage")
    "disabled": QT_TRANSLATE_NOOP("McpPage", "disabled"),
    "stopped": QT_TRANSLATE_NOOP("McpPage", "stopped"),
    "starting": QT_TRANSLATE_NOOP("McpPage", "starting"),
    "ready": QT_TRANSLATE_NOOP("McpPage", "ready"),
    "failed": QT_TRANSLATE_NOOP("McpPage", "failed"),
}


def server_line(status: ServerStatus) -> str:
    tools = (
        " — "
        + QCoreApplication.translate("McpPage", "{n} tools: {names}").format(
            n=len(status.tools), names=", ".join(status.tools)
        )
        if status.tools
        else ""
    )
    error = f" — {status.error}" if status.error else ""
    state = QCoreApplication.translate("McpPage", str(SERVER_STATES.get(status.state, status.state)))
    return f"{status.name}  [{state}]  {status.where}{tools}{error}"


class McpPage(QWidget):
    def __init__(self, bridge: Bridge, parent: QWidget | None = None):
        super().__init__(parent)
        self.bridge = bridge
        self.servers = QListWidget(self)
        self.servers.setObjectName("mcp_servers")
        self.servers.setAccessibleName(self.tr("MCP servers (check to enable)"))
        self.add_button = QPushButton(self.tr("A&dd…"), self)
        self.edit_button = QPushButton(self.tr("&Edit…"), self)
        self.remove_button = QPushButton(self.tr("Re&move"), self)
        self.form: McpServerForm | None = None
        self.restart_button = QPushButton(self.tr("&Restart"), self)
        self.refresh_button = QPushButton(self.tr("Re&fresh"), self)
        self.import_button = QPushButton(self.tr("&Import from Claude Desktop"), self)
        self.message = QLabel(self)
        self.message.setObjectName("mcp_message")
        self.log = QPlainTextEdit(self)
        self.log.setObjectName("mcp_log")
        self.log.setReadOnly(True)
        self.log.setAccessibleName(self.tr("Server log (stderr)"))
        self.approvals = QListWidget(self)
        self.approvals.setObjectName("saved_approvals")
        self.revoke_button = QPushButton(self.tr("Re&voke"), self)
        config = QLabel(
            self.tr(
                'Servers come from mcp.json in the config folder ({"mcpServers": …}), or '
                "from Claude Desktop's configuration. Check a server to enable it."
            ),
            self,
        )
        config.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.add_button)
        row.addWidget(self.edit_button)
        row.addWidget(self.remove_button)
        row.addWidget(self.restart_button)
        row.addWidget(self.refresh_button)
        row.addWidget(self.import_button)
        row.addWidget(self.message, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(self.tr("<b>MCP servers</b>"), self))
        layout.addWidget(config)
        layout.addWidget(self.servers, 2)
        layout.addLayout(row)
        layout.addWidget(QLabel(self.tr("Log of the selected server"), self))
        layout.addWidget(self.log, 2)
        layout.addWidget(
            QLabel(self.tr('<b>Saved approvals</b> ("Always for this tool" and "Allow for this chat")'), self)
        )
        layout.addWidget(self.approvals, 1)
        layout.addWidget(self.revoke_button, 0, Qt.AlignmentFlag.AlignLeft)
        self._filling = False
        self.servers.currentRowChanged.connect(lambda _r: self._show_log())
        self.servers.itemChanged.connect(self._toggled)
        self.restart_button.clicked.connect(self._restart)
        self.add_button.clicked.connect(lambda: self.open_form(None))
        self.edit_button.clicked.connect(lambda: self.open_form(self.selected()))
        self.remove_button.clicked.connect(self._remove)
        self.servers.itemDoubleClicked.connect(lambda _item: self.open_form(self.selected()))
        self.refresh_button.clicked.connect(lambda: bridge.spawn(self.reload()))
        self.revoke_button.clicked.connect(self._revoke)
        self.import_button.clicked.connect(lambda: bridge.spawn(self.import_claude_desktop()))

    # --- add and edit -------------------------------------------------------------------------------------
    def open_form(self, name: str | None) -> McpServerForm | None:
        """The add form (``name`` None) or the edit form of that server."""
        original = self.bridge.mcp_config(name) if name is not None else None
        if name is not None and original is None:
            return None
        if self.form is not None:
            self.form.close()
            self.form.deleteLater()
        taken = {s.name for s in self.bridge.mcp_servers()}
        self.form = McpServerForm(taken, original, self)
        self.form.saved.connect(lambda previous, config: self.bridge.spawn(self._save(previous, config)))
        self.form.show()
        self.form.name.setFocus()
        return self.form

    async def _save(self, previous: str | None, config: McpServerConfig) -> None:
        form = self.form
        if form is not None:
            form.save_button.setEnabled(False)
        problems = await self.bridge.save_mcp_server(previous, config)
        if form is not None:
            form.accept()
        self.message.setText(problems or self.tr("Saved {name}").format(name=config.name))
        await self.reload()

    def _remove(self) -> None:
        if (name := self.selected()) is not None:
            self.bridge.spawn(self._removed(name))

    async def _removed(self, name: str) -> None:
        problems = await self.bridge.remove_mcp_server(name)
        self.message.setText(problems or self.tr("Removed {name}").format(name=name))
        await self.reload()

    async def import_claude_desktop(self, path: str = "") -> None:
        self.message.setText(await self.bridge.import_claude_desktop(path))
        await self.reload()

    async def reload(self) -> None:
        self.fill(self.bridge.mcp_servers())
        approvals = await self.bridge.approvals()
        titles = {
            sid: await self.bridge.chat_title(sid)
            for sid in {a.session_id for a in approvals}
            if sid is not None
        }
        self.fill_approvals(approvals, titles)

    def fill(self, statuses: list[ServerStatus]) -> None:
        current = self.selected()
        self._filling = True
        self.servers.clear()
        for status in statuses:
            item = QListWidgetItem(server_line(status), self.servers)
            item.setData(Qt.ItemDataRole.UserRole, status.name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(
                Qt.CheckState.Unchecked if status.state == "disabled" else Qt.CheckState.Checked
            )
            if status.name == current:
                self.servers.setCurrentItem(item)
        self._filling = False
        if self.servers.currentRow() < 0 and self.servers.count():
            self.servers.setCurrentRow(0)
        self._show_log()

    def fill_approvals(self, approvals: list[SavedApproval], titles: dict[int, str] | None = None) -> None:
        self.approvals.clear()
        for a in approvals:
            server = self.tr("built-in") if a.server == "builtin" else a.server
            if a.session_id is None:
                text = self.tr("{tool}  ({server}, origin {origin}) — always").format(
                    tool=a.tool, server=server, origin=a.origin[:12]
                )
            else:
                text = self.tr("{tool}  ({server}) — for the chat “{title}”").format(
                    tool=a.tool,
                    server=server,
                    title=(titles or {}).get(a.session_id, "")
                    or self.tr("chat {id}").format(id=a.session_id),
                )
            item = QListWidgetItem(text, self.approvals)
            item.setData(Qt.ItemDataRole.UserRole, (a.id, a.session_id))
        self.revoke_button.setEnabled(bool(approvals))

    def selected(self) -> str | None:
        item = self.servers.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def _show_log(self) -> None:
        name = self.selected()
        self.log.setPlainText(self.bridge.mcp_log(name) if name else "")
        self.log.verticalScrollBar().setValue(self.log.verticalScrollBar().maximum())

    def _toggled(self, item: QListWidgetItem) -> None:
        if self._filling:
            return
        name = str(item.data(Qt.ItemDataRole.UserRole))
        enabled = item.checkState() == Qt.CheckState.Checked
        self.bridge.spawn(self._after(self.bridge.set_mcp_enabled(name, enabled)))

    def _restart(self) -> None:
        if (name := self.selected()) is not None:
            self.bridge.spawn(self._after(self.bridge.restart_mcp_server(name)))

    def _revoke(self) -> None:
        item = self.approvals.currentItem()
        if item is not None:
            approval_id, session_id = item.data(Qt.ItemDataRole.UserRole)
            self.bridge.spawn(self._after(self.bridge.revoke_approval(int(approval_id), session_id)))

    async def _after(self, work: Any) -> None:
        await work
        await self.reload()


class McpDialog(QDialog):
    def __init__(self, bridge: Bridge, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("MCP servers and tool permissions"))
        self.resize(760, 620)
        self.page = McpPage(bridge, self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.page)
        layout.addWidget(buttons)
        bridge.spawn(self.page.reload())
