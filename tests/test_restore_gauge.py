"""The gauge after a restart shows the figure it showed before: the reading at open (from the numbers stored per
row) counts what every request carries, the chat's tool definitions included, as the full reading does."""

from __future__ import annotations

import pytest

from tests.tools_helpers import make_workspace, tool_runtime

pytestmark = pytest.mark.in_process


async def test_a_chat_with_tools_reads_the_same_after_a_restart(fake_api, tmp_path):
    # No reply measured the chat yet (its request failed, or it was written by an import): the figure is the
    # estimate, and the tools' definitions (~1K tokens) are part of every request it will make.
    ws = make_workspace(tmp_path / "ws")
    async with tool_runtime(workspace=ws) as rt:
        sid = await rt.engine.new_session()
        await rt.store.add_message(sid, "user", [{"type": "text", "text": "hello " * 100}])
        before = await rt.engine.measure(sid)  # the reading the window showed while the chat was open
    assert before.source == "estimate" and before.breakdown["tools"] > 500
    async with tool_runtime(workspace=ws) as again:
        after = await again.engine.publish_context(sid)  # what the window shows when the chat opens again
    assert (after.used, after.next_turn) == (before.used, before.next_turn)  # on main 1,408 before, 348 after
    assert after.breakdown == before.breakdown


async def test_an_anchored_reading_keeps_its_breakdown_after_a_restart(fake_api, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    async with tool_runtime(workspace=ws) as rt:
        sid = await rt.engine.new_session()
        fake_api.queue_text("Done.")
        await rt.engine.send(sid, "hello there")
        before = await rt.engine.measure(sid)
    async with tool_runtime(workspace=ws) as again:
        after = await again.engine.publish_context(sid)
    assert before.source == after.source == "api"
    assert after.used == before.used
    assert (
        after.breakdown == before.breakdown
    )  # on main the tools' share (970) moved into "system" and "messages"
