"""Tools in the real window (pytest-qt on the qasync loop) against the loopback server: the inline permission
prompt and each of its answers, tool cards with status and expansion, the workspace picker, the MCP page."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest
from PySide6.QtCore import Qt

from desktop.engine.config.secrets import Credentials
from desktop.runtime import open_runtime, toolbox_factory
from tests.test_tools_mcp import server_config, write_mcp
from tests.test_window import message_rows, until
from tests.tools_helpers import make_workspace

pytestmark = pytest.mark.qt


@contextlib.asynccontextmanager
async def tool_window(qtbot):
    from desktop.ui.bridge import Bridge
    from desktop.ui.window.main_window import MainWindow

    async with open_runtime(
        credentials=Credentials(api_key="test-key", source="env"), toolbox=toolbox_factory()
    ) as rt:
        bridge = Bridge(rt.engine, rt.toolbox)
        win = MainWindow(bridge, rt.paths.config_dir / "window.ini")
        qtbot.addWidget(win)
        win.show()
        await win.start()
        win.runtime = rt
        try:
            yield win
        finally:
            await bridge.close()
            win.close()


async def _with_workspace(win, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    win.tools.set_workspace(str(ws))
    for _ in range(200):
        if await win.bridge.engine.workspace(win.session_id) == str(ws):
            return ws
        await asyncio.sleep(0.02)
    raise AssertionError("the workspace was not stored")


def _results(win):
    return {
        b["tool_use_id"]: b
        for m in message_rows(win)
        if m.role == "user"
        for b in m.content
        if b.get("type") == "tool_result"
    }


EDIT = {"file_path": "src/config.py", "old_string": "open(path).read()", "new_string": "open(path).read(10)"}


@pytest.mark.parametrize(
    ("press", "allowed"),
    [
        ("once", True),
        ("chat", True),
        ("always", True),
        ("deny", False),
        ("ctrl-return", True),
        ("ctrl-shift-return", True),
        ("ctrl-shift-d", False),
        ("always-cancelled", False),
    ],
)
async def test_each_answer_of_the_inline_prompt(qtbot, fake_api, tmp_path, press, allowed):
    async with tool_window(qtbot) as win:
        ws = await _with_workspace(win, tmp_path)
        fake_api.queue_tool_use("edit", EDIT, id="te")
        fake_api.queue_text("done")
        win._send("Read ten characters.")
        prompt = win.tools.prompt
        await until(lambda: prompt.isVisible())
        # The prompt shows the tool, its server and the diff; the shortcuts are in the buttons' tooltips.
        assert "edit" in prompt.title.text() and "built-in" in prompt.title.text()
        details = prompt.details.toPlainText()
        assert "-    return open(path).read()" in details and "+    return open(path).read(10)" in details
        assert "Ctrl+Return" in prompt.once.toolTip() and "Ctrl+Shift+Return" in prompt.chat.toolTip()
        assert "Ctrl+Shift+D" in prompt.deny.toolTip()
        edit = win.composer.edit
        keys = {
            "ctrl-return": (Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier),
            "ctrl-shift-return": (
                Qt.Key.Key_Return,
                Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
            ),
            "ctrl-shift-d": (
                Qt.Key.Key_D,
                Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
            ),
        }
        if press in keys:
            qtbot.keyClick(edit, *keys[press])
        elif press.startswith("always"):
            # "Always" is two steps: the first click asks to confirm, and answers nothing yet.
            qtbot.mouseClick(prompt.always, Qt.MouseButton.LeftButton)
            assert prompt.isVisible() and prompt.confirm_always.isVisible() and win.runtime.toolbox.pending()
            second = prompt.confirm_always if press == "always" else prompt.deny
            qtbot.mouseClick(second, Qt.MouseButton.LeftButton)
        else:
            qtbot.mouseClick(getattr(prompt, press), Qt.MouseButton.LeftButton)
        await until(lambda: not win.bridge.engine.busy(win.session_id) and len(message_rows(win)) == 4)
        result = _results(win)["te"]
        saved = await win.runtime.tool_log.approvals()
        chat_grants = win.runtime.toolbox.policy._chat.get(win.session_id, set())
    assert not prompt.isVisible()
    assert ("read(10)" in (ws / "src" / "config.py").read_text()) is allowed
    assert bool(result.get("is_error")) is not allowed
    assert [a.tool for a in saved] == (["edit"] if press == "always" else [])
    assert bool(chat_grants) is (press in ("chat", "ctrl-shift-return"))


async def test_typing_in_the_composer_never_answers_the_prompt(qtbot, fake_api, tmp_path):
    # The model calls a tool while the user types: the prompt shows, the focus stays in the composer, and no
    # key typed there (a space, Up, Enter, Esc's neighbours) answers it; nothing is a default button.
    from PySide6.QtWidgets import QApplication, QPushButton

    async with tool_window(qtbot) as win:
        await _with_workspace(win, tmp_path)
        fake_api.queue_tool_use("edit", EDIT, id="te")
        fake_api.queue_text("done")
        edit = win.composer.edit
        edit.setFocus()
        win._send("Read ten characters.")
        prompt = win.tools.prompt
        await until(lambda: prompt.isVisible())
        assert QApplication.focusWidget() is edit
        assert not any(b.isDefault() or b.autoDefault() for b in prompt.findChildren(QPushButton))
        qtbot.keyClicks(edit, "a b")
        for key in (Qt.Key.Key_Space, Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_Tab, Qt.Key.Key_Space):
            qtbot.keyClick(edit, key)
        edit.clear()
        qtbot.keyClick(edit, Qt.Key.Key_Up)
        qtbot.keyClick(edit, Qt.Key.Key_Return)
        qtbot.keyClick(edit, Qt.Key.Key_Space)
        for _ in range(5):
            await asyncio.sleep(0.02)  # give a wrongly delivered answer the loop turns it would need
        assert prompt.isVisible() and prompt.current is not None and win.runtime.toolbox.pending()
        assert (
            QApplication.focusWidget() is not None
            and prompt.isAncestorOf(QApplication.focusWidget()) is False
        )
        qtbot.mouseClick(prompt.deny, Qt.MouseButton.LeftButton)
        await until(lambda: not win.bridge.engine.busy(win.session_id) and len(message_rows(win)) == 4)
    assert _results(win)["te"].get("is_error")


async def test_the_prompt_says_what_changed_in_a_server_allowed_before(
    qtbot, fake_api, precis_home, monkeypatch
):
    from desktop.tools import mcp_host
    from desktop.tools.mcp_config import McpServerConfig

    monkeypatch.setattr(mcp_host, "START_TIMEOUT", 300.0)  # a loaded machine starts the server slowly

    write_mcp(precis_home, {"calc": server_config(env={"MODE": "new"})})
    async with tool_window(qtbot) as win:
        toolbox = win.runtime.toolbox
        before = McpServerConfig.from_json(
            "calc", server_config(env={"MODE": "old"})
        )  # what "Always" was given to
        await toolbox.policy.approvals.save_approval("calc", "echo", before.origin)
        toolbox.policy.forget_saved()
        await until(lambda: toolbox.servers["calc"].state in ("ready", "failed"), 300)  # the window starts it
        assert toolbox.servers["calc"].state == "ready", toolbox.servers["calc"].error
        fake_api.queue_tool_use("mcp__calc__echo", {"text": "hi"}, id="te")
        fake_api.queue_text("done")
        win._send("echo")
        prompt = win.tools.prompt
        await until(lambda: prompt.isVisible())
        assert prompt.changed.isVisible() and "environment" in prompt.changed.text(), prompt.changed.text()
        qtbot.mouseClick(prompt.deny, Qt.MouseButton.LeftButton)
        await until(lambda: not win.bridge.engine.busy(win.session_id) and len(message_rows(win)) == 4)


async def test_tool_cards_show_status_and_expand_to_full_input_and_output(qtbot, fake_api, tmp_path):
    async with tool_window(qtbot) as win:
        await _with_workspace(win, tmp_path)
        win.runtime.toolbox.policy.yes = True
        fake_api.queue_tool_use("run", {"command": "seq 1 50"}, id="tr")
        fake_api.queue_text("counted")
        win._send("count")
        await until(lambda: not win.bridge.engine.busy(win.session_id) and len(message_rows(win)) == 4)
        model = win.chat_model
        call = next(
            i
            for i in range(model.rowCount())
            if model.row_at(i).message
            and any(b.get("type") == "tool_use" for b in model.row_at(i).message.content)
        )
        line = model.row_at(call).segments[0].text
        assert line.startswith("⚙ run seq 1 50") and "✓" in line and line.endswith(" s")
        result_row = call + 1
        assert (
            model.row_at(result_row).kind == "tool"
            and "+50 lines" in model.row_at(result_row).segments[0].text
        )
        win.chat.setFocus()
        win.chat.setCurrentIndex(model.index(result_row, 0))
        qtbot.keyClick(win.chat, Qt.Key.Key_Return)
        assert model.row_at(result_row).detail.get("expanded")
        full = model.row_at(result_row).segments[1].text
        assert "1\n2\n3" in full and "50\n[exit code 0]" in full
        qtbot.keyClick(win.chat, Qt.Key.Key_Space)
        assert not model.row_at(result_row).detail.get("expanded")


async def test_the_workspace_picker_sets_the_chats_tools(qtbot, fake_api, tmp_path):
    async with tool_window(qtbot) as win:
        button = win.tools.workspace
        assert button.isVisible() and button.text() == "No workspace"
        fake_api.queue_text("no tools")
        win._send("hi")
        await until(lambda: not win.bridge.engine.busy(win.session_id) and len(message_rows(win)) == 2)
        assert "tools" not in fake_api.message_requests()[-1].body
        ws = await _with_workspace(win, tmp_path)
        assert button.text() == "Workspace: ws"
        fake_api.queue_text("tools now")
        win._send("again")
        await until(lambda: not win.bridge.engine.busy(win.session_id) and len(message_rows(win)) == 4)
        assert [t["name"] for t in fake_api.message_requests()[-1].body["tools"]][0] == "read"
        assert await win.bridge.engine.workspace(win.session_id) == str(ws)
        # Another chat has its own workspace (none yet).
        await win.bridge.new_session()
        await until(lambda: button.text() == "No workspace")


async def test_the_mcp_page_lists_restarts_and_shows_the_log(qtbot, fake_api, precis_home):
    write_mcp(precis_home, {"calc": server_config()})
    async with tool_window(qtbot) as win:
        toolbox = win.runtime.toolbox
        await until(lambda: toolbox.servers["calc"].state == "ready", 30)
        await toolbox.policy.approvals.save_approval("calc", "add", toolbox.servers["calc"].config.origin)
        dialog = win.tools.open_mcp()
        page = dialog.page
        await until(lambda: page.servers.count() == 1 and page.approvals.count() == 1)
        assert "calc  [ready]" in page.servers.item(0).text() and "add" in page.servers.item(0).text()
        assert "precis-test MCP server starting" in page.log.toPlainText()
        qtbot.mouseClick(page.restart_button, Qt.MouseButton.LeftButton)
        await until(lambda: page.log.toPlainText().count("starting") >= 2, 30)
        page.approvals.setCurrentRow(0)
        qtbot.mouseClick(page.revoke_button, Qt.MouseButton.LeftButton)
        await until(lambda: page.approvals.count() == 0)
        page.servers.item(0).setCheckState(Qt.CheckState.Unchecked)
        await until(lambda: toolbox.servers["calc"].state == "disabled")
        saved = json.loads((precis_home / "config" / "mcp.json").read_text())
        assert saved["mcpServers"]["calc"]["disabled"] is True
        source = precis_home / "claude_desktop_config.json"
        source.write_text(json.dumps({"mcpServers": {"calc2": server_config()}}))
        await page.import_claude_desktop(str(source))
        assert page.message.text() == "Imported 1 server(s): calc2"
        await until(lambda: page.servers.count() == 2 and toolbox.servers["calc2"].state == "ready", 30)
        dialog.close()


@pytest.mark.parametrize("dark", [False, True])
def test_an_edits_diff_is_readable_on_both_themes(qtbot, dark):
    """On main the diff's added and removed lines were the light theme's green and red on the dark theme's text
    field too (3.3:1 and 3.0:1): both are at least 4.5:1 against the field they sit on."""
    import re

    from PySide6.QtGui import QColor, QPalette

    from desktop.ui.look.theme import palette_for
    from desktop.ui.tools.permission_prompt import diff_html
    from tests.test_focus_ring import contrast

    field = palette_for(dark).color(QPalette.ColorRole.Base)
    colours = re.findall(
        r"color:(#[0-9a-fA-F]{6})", diff_html("--- a/x\n+++ b/x\n-old line\n+new line", dark)
    )
    assert len(colours) == 2
    assert all(contrast(QColor(c), field) >= 4.5 for c in colours), colours
