"""The form that adds or edits one MCP server: stdio (command, arguments, environment, working folder) or HTTP
(URL, headers). Checked before it is saved, with one sentence saying what is wrong; environment values and
header values are typed masked (they are secrets, kept in the keyring when saved).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from urllib.parse import urlsplit

from msgspec import structs
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.api import McpServerConfig

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP token


class KeyValueRows(QWidget):
    """Name/value rows whose values are masked; an empty row is ignored."""

    def __init__(self, key_label: str, parent: QWidget | None = None):
        super().__init__(parent)
        self._key_label = key_label
        self._rows: list[tuple[QLineEdit, QLineEdit, QPushButton]] = []
        self._grid = QGridLayout()
        self._grid.setContentsMargins(0, 0, 0, 0)
        self.add_button = QPushButton(self.tr("Add"), self)
        self.add_button.clicked.connect(lambda: self.add_row("", "").setFocus())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._grid)
        layout.addWidget(self.add_button)

    def add_row(self, key: str, value: str) -> QLineEdit:
        key_edit = QLineEdit(key, self)
        key_edit.setPlaceholderText(self._key_label)
        key_edit.setAccessibleName(self._key_label)
        value_edit = QLineEdit(value, self)
        value_edit.setEchoMode(QLineEdit.EchoMode.Password)
        value_edit.setPlaceholderText(self.tr("value (kept in the keyring)"))
        value_edit.setAccessibleName(self.tr("Value of {name}").format(name=key or self._key_label))
        remove = QPushButton(self.tr("Remove"), self)
        row = (key_edit, value_edit, remove)
        remove.clicked.connect(lambda: self._remove(row))
        n = self._grid.rowCount()
        for column, widget in enumerate(row):
            self._grid.addWidget(widget, n, column)
        self._rows.append(row)
        return key_edit

    def _remove(self, row: tuple[QLineEdit, QLineEdit, QPushButton]) -> None:
        self._rows.remove(row)
        for widget in row:
            self._grid.removeWidget(widget)
            widget.deleteLater()

    def set_rows(self, values: dict[str, str]) -> None:
        for row in list(self._rows):
            self._remove(row)
        for key, value in values.items():
            self.add_row(key, value)

    def rows(self) -> list[tuple[QLineEdit, QLineEdit]]:
        return [(k, v) for k, v, _remove in self._rows]

    def pairs(self) -> list[tuple[str, str]]:
        return [(k.text().strip(), v.text()) for k, v in self.rows() if k.text().strip() or v.text()]


class McpServerForm(QDialog):
    saved = Signal(object, object)  # the name it had (None: a new server), McpServerConfig

    def __init__(
        self, taken: set[str], original: McpServerConfig | None = None, parent: QWidget | None = None
    ):
        super().__init__(parent)
        self.original = original
        self.taken = taken - ({original.name} if original is not None else set())
        self.setWindowTitle(
            self.tr("Edit the MCP server “{name}”").format(name=original.name)
            if original
            else self.tr("Add an MCP server")
        )
        self.name = QLineEdit(self)
        self.transport = QComboBox(self)
        self.transport.addItem(self.tr("Local program (stdio)"), "stdio")
        self.transport.addItem(self.tr("Remote (streamable HTTP)"), "http")
        self.command = QLineEdit(self)
        self.command.setPlaceholderText(self.tr("e.g. npx or /usr/bin/python3"))
        self.args = QLineEdit(self)
        self.args.setPlaceholderText(self.tr("arguments, quoted as in a shell"))
        self.cwd = QLineEdit(self)
        self.cwd.setPlaceholderText(self.tr("optional"))
        self.env = KeyValueRows(self.tr("variable"), self)
        self.url = QLineEdit(self)
        self.url.setPlaceholderText(self.tr("https://example.com/mcp"))
        self.headers = KeyValueRows(self.tr("header"), self)
        self.error = QLabel(self)
        self.error.setObjectName("mcp_form_error")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #cf222e")
        self.form = QFormLayout()
        self.form.addRow(self.tr("&Name"), self.name)
        self.form.addRow(self.tr("&Type"), self.transport)
        self.form.addRow(self.tr("&Command"), self.command)
        self.form.addRow(self.tr("A&rguments"), self.args)
        self.form.addRow(self.tr("&Working folder"), self.cwd)
        self.form.addRow(self.tr("&Environment"), self.env)
        self.form.addRow(self.tr("&URL"), self.url)
        self.form.addRow(self.tr("&Headers"), self.headers)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        save = buttons.button(QDialogButtonBox.StandardButton.Save)
        assert save is not None
        self.save_button = save
        save.clicked.connect(self.submit)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(self.form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.transport.currentIndexChanged.connect(lambda _i: self._show_transport())
        if original is not None:
            self._fill(original)
        self._show_transport()
        self.resize(560, 420)

    def _fill(self, config: McpServerConfig) -> None:
        self.name.setText(config.name)
        self.transport.setCurrentIndex(self.transport.findData(config.transport))
        self.command.setText(config.command)
        self.args.setText(shlex.join(config.args))
        self.cwd.setText(config.cwd or "")
        self.env.set_rows(config.env)
        self.url.setText(config.url)
        self.headers.set_rows(config.headers)

    def _show_transport(self) -> None:
        http = self.transport.currentData() == "http"
        for widget, shown in (
            (self.command, not http),
            (self.args, not http),
            (self.cwd, not http),
            (self.env, not http),
            (self.url, http),
            (self.headers, http),
        ):
            self.form.setRowVisible(widget, shown)

    def check(self) -> McpServerConfig | str:
        """The server as filled in, or what is wrong with it in one sentence."""
        name = self.name.text().strip()
        if not name:
            return self.tr("Give the server a name.")
        if name in self.taken:
            return self.tr("A server named “{name}” already exists.").format(name=name)
        base = self.original or McpServerConfig(name)
        if self.transport.currentData() == "http":
            url = self.url.text().strip()
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                return self.tr("The URL must start with http:// or https:// and name a host.")
            headers: dict[str, str] = {}
            for key, value in self.headers.pairs():
                if not _HEADER_NAME.fullmatch(key):
                    return self.tr("“{name}” is not a valid header name.").format(name=key)
                headers[key] = value
            return structs.replace(
                base,
                name=name,
                url=url,
                headers=headers,
                command="",
                args=[],
                env={},
                cwd=None,
                extra=dict(base.extra),
            )
        command = self.command.text().strip()
        if not command:
            return self.tr("A stdio server needs a command to start.")
        try:
            args = shlex.split(self.args.text())
        except ValueError as exc:
            return self.tr("The arguments cannot be read ({reason}).").format(reason=str(exc))
        cwd = self.cwd.text().strip()
        if cwd and not Path(cwd).expanduser().is_dir():
            return self.tr("The working folder does not exist: {folder}").format(folder=cwd)
        env: dict[str, str] = {}
        for key, value in self.env.pairs():
            if not _ENV_NAME.fullmatch(key):
                return self.tr("“{name}” is not a valid environment variable name.").format(name=key)
            env[key] = value
        return structs.replace(
            base,
            name=name,
            command=command,
            args=args,
            cwd=cwd or None,
            env=env,
            url="",
            headers={},
            extra=dict(base.extra),
        )

    def submit(self) -> None:
        result = self.check()
        if isinstance(result, str):
            self.error.setText(result)
            return
        self.error.clear()
        self.saved.emit(self.original.name if self.original is not None else None, result)
