"""The window opens again as it was left: the same chat, each chat scrolled where it was, the window's size and
splitter, and the tool cards' outcomes. Real windows over a real store; reopening builds a new window (and, for
the tools, a new runtime) over the same home."""

from __future__ import annotations

import asyncio
import contextlib
import stat

import pytest

from desktop.engine.config.secrets import Credentials
from desktop.runtime import open_runtime, toolbox_factory
from tests.conftest import engine_of
from tests.test_window import message_rows, until
from tests.tools_helpers import make_workspace

pytestmark = pytest.mark.qt


async def reopen(window, qtbot):
    """Close ``window`` as the user does and build the window again over the same engine and state file."""
    from desktop.ui.bridge import Bridge
    from desktop.ui.window.main_window import MainWindow

    engine = engine_of(window)
    window.close()
    await window.bridge.close()
    bridge = Bridge(engine)
    again = MainWindow(bridge, engine.paths.config_dir / "window.ini")
    qtbot.addWidget(again)
    again.show()
    await again.start()
    return again


async def long_chat(store, title: str) -> int:
    sid = (await store.create_session(title)).id
    for i in range(30):
        await store.add_message(
            sid, "user", [{"type": "text", "text": f"question {i} " + "lorem ipsum " * 40}]
        )
        await store.add_message(
            sid, "assistant", [{"type": "text", "text": f"answer {i} " + "dolor sit " * 60}]
        )
    return sid


def top_message(win) -> tuple[int, int]:
    """The message at the top of the chat view and its top's y."""
    from PySide6.QtCore import QPoint

    index = win.chat.indexAt(QPoint(1, 1))
    row = index.row()
    return win.chat_model.row_at(row).key, win.chat.visualRect(index).top()


async def test_the_chat_open_at_close_opens_again(window, fake_api, qtbot):
    store = engine_of(window).store
    first = window.session_id
    await store.add_message(first, "user", [{"type": "text", "text": "the older chat"}])
    newer = (await store.create_session("the newer chat")).id
    await store.add_message(newer, "user", [{"type": "text", "text": "newer"}])
    await window.bridge.refresh_sessions()
    await window.bridge.open_session(first)  # the older one is open when the window closes
    again = await reopen(window, qtbot)
    try:
        assert again.session_id == first  # on main the newest chat opened instead
        ini = engine_of(window).paths.config_dir / "window.ini"
        assert stat.S_IMODE(ini.stat().st_mode) == 0o600
        assert b"chats" in ini.read_bytes()  # kept in the window's state file, not in the chats' rows
    finally:
        await again.bridge.close()
        again.close()


async def test_each_chat_keeps_its_scroll_place_across_switches_and_a_restart(window, fake_api, qtbot):
    store = engine_of(window).store
    window.resize(1000, 700)
    one = await long_chat(store, "one")
    two = await long_chat(store, "two")
    await window.bridge.open_session(one)
    bar = window.chat.verticalScrollBar()
    await until(lambda: bar.maximum() > 2000)
    bar.setValue(bar.maximum() // 2)
    await asyncio.sleep(0.05)
    place = top_message(window)
    assert not window.chat.is_at_bottom()
    await window.bridge.open_session(two)
    assert window.chat.is_at_bottom()  # a chat never scrolled opens at its newest message
    await window.bridge.open_session(one)
    key, y = top_message(window)
    assert key == place[0] and abs(y - place[1]) <= 4, (place, (key, y))  # on main: at the bottom
    bar.setValue(bar.maximum() // 3)
    await asyncio.sleep(0.05)
    place = top_message(window)
    again = await reopen(window, qtbot)
    try:
        assert again.session_id == one
        await asyncio.sleep(0.05)
        key, y = top_message(again)
        assert key == place[0] and abs(y - place[1]) <= 4, (place, (key, y))
        await again.bridge.open_session(two)
        assert again.chat.is_at_bottom()
    finally:
        await again.bridge.close()
        again.close()


async def test_window_size_and_splitter_come_back(window, fake_api, qtbot):
    window.resize(790, 570)  # within the offscreen platform's 800 x 600 screen (a larger one is cut to fit)
    window.splitter.setSizes([300, 490])
    await asyncio.sleep(0.05)
    sizes = window.splitter.sizes()
    again = await reopen(window, qtbot)
    try:
        assert (again.width(), again.height()) == (790, 570)
        assert again.splitter.sizes() == sizes
    finally:
        await again.bridge.close()
        again.close()


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


def call_line(win) -> str:
    model = win.chat_model
    row = next(
        i
        for i in range(model.rowCount())
        if model.row_at(i).message
        and any(b.get("type") == "tool_use" for b in model.row_at(i).message.content)
    )
    return model.row_at(row).segments[0].text


async def test_tool_cards_show_how_their_calls_ended_after_a_restart(qtbot, fake_api, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    async with tool_window(qtbot) as win:
        win.tools.set_workspace(str(ws))
        await until(lambda: win.tools._writing == 0)
        win.runtime.toolbox.policy.yes = True
        fake_api.queue_tool_use("run", {"command": "seq 1 5"}, id="tr")
        fake_api.queue_tool_use("read", {"file_path": "no/such/file.py"}, id="tf")
        fake_api.queue_text("counted")
        win._send("count")
        await until(lambda: not win.bridge.engine.busy(win.session_id) and len(message_rows(win)) == 6)
        before = call_line(win)
        sid = win.session_id
    assert "✓" in before
    async with tool_window(qtbot) as again:
        assert again.session_id == sid
        await until(lambda: "✓" in call_line(again))  # on main the reopened card showed no status at all
        lines = [
            again.chat_model.row_at(i).segments[0].text
            for i in range(again.chat_model.rowCount())
            if again.chat_model.row_at(i).message
            and again.chat_model.row_at(i).message.role == "assistant"
            and again.chat_model.row_at(i).message.content[0].get("type") == "tool_use"
        ]
        assert len(lines) == 2 and "✓" in lines[0] and "error" in lines[1], lines
        assert call_line(again) == before  # the same words and the same seconds


async def test_chats_hidden_with_ctrl_b_stay_hidden_after_a_restart(window, fake_api, qtbot):
    window.resize(1000, 700)
    await asyncio.sleep(0.05)
    assert window.look.sidebar_shown()
    window.look.toggle_action.trigger()  # View › Show chats, Ctrl+B
    assert not window.look.sidebar_shown()
    again = await reopen(window, qtbot)
    try:
        again.resize(1000, 700)
        await asyncio.sleep(0.05)
        assert not again.look.sidebar_shown()  # on main the chats came back at every start
        again.look.toggle_action.trigger()
        assert again.look.sidebar_shown()
    finally:
        await again.bridge.close()
        again.close()
