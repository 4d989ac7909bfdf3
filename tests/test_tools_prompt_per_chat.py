"""The permission prompt belongs to the chat that asked: a request from chat A while chat B is open is not shown
in B, switching back to A shows it (and its answer goes to A's call); a request left waiting in a chat that is
not open still times out and denies."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt

from tests.fakeapi import Fault
from tests.test_tools_window import EDIT, _results, _with_workspace, tool_window
from tests.test_window import message_rows, until

pytestmark = pytest.mark.qt


async def _ask_in_a_then_open_b(win, fake_api, tmp_path):
    """Chat A sends; its reply (an edit) is held until chat B is open, then asks. Returns (a, b, workspace)."""
    ws = await _with_workspace(win, tmp_path)
    a = win.session_id
    hold = Fault.hold(after=1, timeout=30)
    fake_api.queue_fault(hold)
    fake_api.queue_tool_use("edit", EDIT, text="Editing the config.", id="te")
    fake_api.queue_text("done")
    win._send("Read ten characters.")
    await until(lambda: hold.reached.is_set())
    b = await win.bridge.new_session()
    await until(lambda: win.session_id == b)
    hold.release.set()
    await until(lambda: bool(win.runtime.toolbox.pending()))  # A's call is waiting for an answer
    return a, b, ws


async def test_a_request_from_another_chat_waits_for_it_and_shows_there(qtbot, fake_api, tmp_path):
    async with tool_window(qtbot) as win:
        a, b, ws = await _ask_in_a_then_open_b(win, fake_api, tmp_path)
        prompt = win.tools.prompt
        await asyncio.sleep(0.1)
        assert not prompt.isVisible() and prompt.current is None  # not in chat B
        await until(lambda: "is waiting for your answer: may edit run?" in win.status.text())  # B is told
        await win.bridge.open_session(a)
        await until(lambda: prompt.isVisible())
        assert "edit" in prompt.title.text() and prompt.current.session_id == a
        assert "+    return open(path).read(10)" in prompt.details.toPlainText()
        await win.bridge.open_session(b)
        await until(lambda: not prompt.isVisible())
        await win.bridge.open_session(a)
        await until(lambda: prompt.isVisible())
        qtbot.mouseClick(prompt.once, Qt.MouseButton.LeftButton)
        await until(lambda: not win.bridge.engine.busy(a) and len(message_rows(win)) == 4)
        assert not _results(win)["te"].get("is_error")
    assert "read(10)" in (ws / "src" / "config.py").read_text()


async def test_a_request_waiting_in_a_closed_chat_still_times_out_and_denies(qtbot, fake_api, tmp_path):
    async with tool_window(qtbot) as win:
        win.runtime.toolbox.policy.timeout = 1.0
        a, _b, ws = await _ask_in_a_then_open_b(win, fake_api, tmp_path)
        await until(lambda: not win.bridge.engine.busy(a), 15)
        prompt = win.tools.prompt
        assert not prompt.isVisible() and "waiting for your answer" not in win.status.text()
        await win.bridge.open_session(a)
        await until(lambda: len(message_rows(win)) == 4)
        assert not prompt.isVisible() and prompt.current is None  # the timed-out request is gone
        assert _results(win)["te"].get("is_error")
    assert "read(10)" not in (ws / "src" / "config.py").read_text()
