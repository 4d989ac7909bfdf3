"""The MCP page's add and edit form in the real window (pytest-qt): a stdio server (command, args, env, cwd) and
an HTTP one (url, headers), each checked before it is saved with a clear error, secrets masked in the form and
kept in the keyring, never in mcp.json; the saved server starts. And "Allow for this chat" approvals listed
with the others and revoked there."""

from __future__ import annotations

import json
import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from desktop.tools.mcp_config import KEYRING, SERVICE
from tests.test_tools_mcp import _repo, server_config, write_mcp
from tests.test_tools_window import tool_window
from tests.test_window import until

pytestmark = pytest.mark.qt


def _saved(home) -> dict:
    return json.loads((home / "config" / "mcp.json").read_text())["mcpServers"]


def _click(qtbot, button) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


async def test_add_a_stdio_server_with_validation_and_secrets_in_the_keyring(
    qtbot, fake_api, precis_home, memory_keyring
):
    async with tool_window(qtbot) as win:
        page = win.tools.open_mcp().page
        _click(qtbot, page.add_button)
        form = page.form
        assert form is not None and form.isVisible() and form.windowTitle() == "Add an MCP server"
        # Nothing filled: the form says what is missing and stays open.
        _click(qtbot, form.save_button)
        assert form.isVisible() and form.error.text() == "Give the server a name."
        form.name.setText("calc")
        _click(qtbot, form.save_button)
        assert form.error.text() == "A stdio server needs a command to start."
        form.command.setText(sys.executable)
        form.args.setText("-m tests.mcp_server")
        form.cwd.setText(str(_repo() / "no-such-folder"))
        _click(qtbot, form.save_button)
        assert form.error.text().startswith("The working folder does not exist")
        form.cwd.setText(str(_repo()))
        form.env.add_row("BAD KEY", "x")
        _click(qtbot, form.save_button)
        assert form.error.text() == "“BAD KEY” is not a valid environment variable name."
        form.env.set_rows({"CALC_TOKEN": "s3cret-env"})
        key, value = form.env.rows()[0]
        assert value.echoMode() == QLineEdit.EchoMode.Password  # a secret is masked as it is typed
        assert not (precis_home / "config" / "mcp.json").exists()
        _click(qtbot, form.save_button)
        toolbox = win.runtime.toolbox
        await until(lambda: "calc" in toolbox.servers and toolbox.servers["calc"].state == "ready", 30)
        await until(lambda: page.servers.count() == 1 and "[ready]" in page.servers.item(0).text())
        assert not form.isVisible()
        saved = _saved(precis_home)["calc"]
        assert saved == {
            "command": sys.executable,
            "args": ["-m", "tests.mcp_server"],
            "env": {"CALC_TOKEN": KEYRING},
            "cwd": str(_repo()),
        }
        assert "s3cret-env" not in (precis_home / "config" / "mcp.json").read_text()
        assert memory_keyring.passwords[(SERVICE, "calc:env:CALC_TOKEN")] == "s3cret-env"
        assert toolbox.servers["calc"].config.env == {"CALC_TOKEN": "s3cret-env"}  # the server gets the value
        # A second server cannot take the same name.
        _click(qtbot, page.add_button)
        page.form.name.setText("calc")
        page.form.command.setText("srv")
        _click(qtbot, page.form.save_button)
        assert page.form.error.text() == "A server named “calc” already exists."
        page.form.close()


async def test_edit_a_server_into_an_http_one_with_headers(qtbot, fake_api, precis_home, memory_keyring):
    write_mcp(
        precis_home,
        {
            "calc": server_config(env={"OLD": "gone"}),
            "other": {"command": "x", "disabled": True, "autoApprove": ["a"]},
        },
    )
    async with tool_window(qtbot) as win:
        toolbox = win.runtime.toolbox
        await until(lambda: toolbox.servers["calc"].state == "ready", 30)
        page = win.tools.open_mcp().page
        await until(lambda: page.servers.count() == 2)
        page.servers.setCurrentRow(1)  # "other", sorted by name
        _click(qtbot, page.edit_button)
        form = page.form
        assert form.windowTitle() == "Edit the MCP server “other”"
        assert form.name.text() == "other" and form.command.text() == "x"
        form.transport.setCurrentIndex(form.transport.findData("http"))
        assert not form.command.isVisible() and form.url.isVisible()
        form.url.setText("ftp://example.test/mcp")
        _click(qtbot, form.save_button)
        assert form.error.text() == "The URL must start with http:// or https:// and name a host."
        form.url.setText("https://example.test/mcp")
        form.headers.set_rows({"Authorization": "Bearer tok-123", "Bad Header": "v"})
        _click(qtbot, form.save_button)
        assert form.error.text() == "“Bad Header” is not a valid header name."
        form.headers.set_rows({"Authorization": "Bearer tok-123"})
        assert all(v.echoMode() == QLineEdit.EchoMode.Password for _k, v in form.headers.rows())
        _click(qtbot, form.save_button)
        await until(lambda: not form.isVisible())
        await until(lambda: toolbox.servers["other"].config.url == "https://example.test/mcp")
        saved = _saved(precis_home)
        assert saved["other"] == {
            "autoApprove": ["a"],
            "url": "https://example.test/mcp",
            "headers": {"Authorization": KEYRING},
            "disabled": True,
        }
        assert "tok-123" not in (precis_home / "config" / "mcp.json").read_text()
        assert memory_keyring.passwords[(SERVICE, "other:header:Authorization")] == "Bearer tok-123"
        # Renaming a server moves its secrets: nothing is left under the old name.
        page.servers.setCurrentRow(0)
        _click(qtbot, page.edit_button)
        form = page.form
        env = dict((k.text(), v.text()) for k, v in form.env.rows())
        assert env == {"OLD": "gone"}  # the stored value is in the form, masked
        form.name.setText("calc2")
        form.env.set_rows({"NEW": "fresh"})
        _click(qtbot, form.save_button)
        await until(lambda: "calc2" in toolbox.servers and toolbox.servers["calc2"].state == "ready", 30)
        assert "calc" not in toolbox.servers and set(_saved(precis_home)) == {"calc2", "other"}
        assert (SERVICE, "calc:env:OLD") not in memory_keyring.passwords
        assert memory_keyring.passwords[(SERVICE, "calc2:env:NEW")] == "fresh"


async def test_allow_for_this_chat_is_listed_with_the_saved_approvals_and_revoked_there(qtbot, fake_api):
    async with tool_window(qtbot) as win:
        log = win.runtime.tool_log
        await log.save_approval("builtin", "read", "o-1")
        await log.save_chat_approval(win.session_id, "builtin", "run", "o-2")
        page = win.tools.open_mcp().page
        await until(lambda: page.approvals.count() == 2)
        texts = [page.approvals.item(i).text() for i in range(2)]
        assert "read" in texts[0] and "always" in texts[0]
        assert "run" in texts[1] and "for the chat “New chat”" in texts[1]
        page.approvals.setCurrentRow(1)
        _click(qtbot, page.revoke_button)
        await until(lambda: page.approvals.count() == 1)
        assert await log.chat_approvals() == [] and len(await log.approvals()) == 1


async def test_remove_a_server_stops_it_and_drops_its_secrets(qtbot, fake_api, precis_home, memory_keyring):
    write_mcp(
        precis_home,
        {"calc": server_config(env={"TOKEN": "t0k"}), "other": {"command": "x", "disabled": True}},
    )
    async with tool_window(qtbot) as win:
        toolbox = win.runtime.toolbox
        await until(lambda: toolbox.servers["calc"].state == "ready", 30)
        page = win.tools.open_mcp().page
        await until(lambda: page.servers.count() == 2)
        win.runtime.toolbox.save_config()  # the secret moves to the keyring, as the page saves it
        assert memory_keyring.passwords[(SERVICE, "calc:env:TOKEN")] == "t0k"
        page.servers.setCurrentRow(0)
        _click(qtbot, page.remove_button)
        # The list can refill from the server's status event before the removal has finished: wait for its word.
        await until(lambda: page.message.text() == "Removed calc")
        assert page.servers.count() == 1
        assert "calc" not in toolbox.servers and set(_saved(precis_home)) == {"other"}
        assert (SERVICE, "calc:env:TOKEN") not in memory_keyring.passwords
