"""The engine's read API for the window (desktop/engine/history/library.py): what the bridge reads and the whole-chat
edits it makes, over a real store; the bridge itself never names the store."""

from __future__ import annotations

import pathlib

import pytest

from desktop.engine.types import DEFAULT_TITLE

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.qt
async def test_a_blank_rename_names_the_chat_as_a_new_chat_is_named(engine, qtbot):
    from desktop.ui.bridge import Bridge

    bridge = Bridge(engine)
    sid = await engine.new_session()
    await bridge.engine.library.rename(sid, "Parser fix")
    assert (await engine.store.get_session(sid)).title == "Parser fix"
    await bridge.engine.library.rename(sid, "   ")
    # One word for a chat without a title: the one a new chat has (it then takes its first message's words).
    assert (await engine.store.get_session(sid)).title == DEFAULT_TITLE
    await bridge.close()


@pytest.mark.qt
async def test_the_bridge_reads_drafts_pages_and_exports_through_the_engine(engine, qtbot, tmp_path):
    from desktop.ui.bridge import Bridge

    bridge = Bridge(engine)
    sid = await engine.new_session()
    await engine.store.add_user_message(sid, [{"type": "text", "text": "hello there"}])
    picture = str(tmp_path / "a.png")
    bridge.save_drafts({sid: ("half a thought", [picture])})
    await bridge._draft_save
    assert await bridge.engine.library.load_drafts() == {sid: ("half a thought", [picture])}
    assert await engine.library.load_drafts() == {sid: ("half a thought", [picture])}
    assert "hello there" in await bridge.engine.library.export(sid, "md")
    assert await bridge.engine.library.export(sid + 99, "md") == ""
    assert await bridge.chat_title(sid) == (await engine.store.get_session(sid)).title
    page = await engine.library.page(sid, size=10)
    assert page is not None and [m.session_id for m in page.messages] == [sid]
    assert await engine.library.session_of_message(page.messages[0].id) == sid
    await bridge.close()


def test_the_bridge_never_names_the_engines_store():
    source = (ROOT / "desktop" / "ui" / "bridge.py").read_text("utf-8")
    assert "engine.store" not in source and "_engine.store" not in source
