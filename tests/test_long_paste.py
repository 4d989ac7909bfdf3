"""A long paste is the user's own text: it is sent whole while it fits, refused before sending when it cannot,
and no path of the user's machine ever goes into a request (the ingest cap is for tool output only)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from desktop.engine.turn.chat import MessageTooLong
from tests.conftest import engine_of
from tests.test_window import message_rows, until


def no_local_paths(fake_api, *roots: Path) -> None:
    """No request body the test server received names a folder of this machine."""
    places = {str(r) for r in roots} | {os.path.expanduser("~")}
    for rec in fake_api.requests:
        body = json.dumps(rec.body)
        for place in places:
            assert place not in body, f"{place} reached request {rec.seq} ({rec.path})"


@pytest.mark.qt
async def test_a_long_paste_is_sent_whole_and_unmarked(window, fake_api, qtbot, precis_home, tmp_path):
    from desktop.ui.transcript.chat_delegate import TRIMMED_TAG

    big = "\n".join(f"log line {i}: " + "x" * 60 for i in range(800))  # ~57K characters, over the 50K cap
    fake_api.queue_text("I read all of it.")
    window.composer.edit.setPlainText(big)
    window.composer.send_button.click()
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    sent = fake_api.message_requests()[-1].body["messages"][0]["content"][0]["text"]
    assert sent == big  # the model receives every character
    stored = await engine_of(window).store.messages(window.session_id)
    assert stored[0].content[0]["text"] == big
    await until(lambda: window.gauge.snapshot() is not None)
    model = window.chat_model
    assert window.chat.delegate._tag(model.index(model.row_of(stored[0].id))) != TRIMMED_TAG
    no_local_paths(fake_api, precis_home, tmp_path)


@pytest.mark.qt
async def test_a_paste_that_cannot_fit_the_window_is_refused_and_the_draft_stays(
    window, fake_api, qtbot, monkeypatch
):
    engine = engine_of(window)
    await until(lambda: window.gauge.snapshot() is not None)  # start-up has loaded the learned facts
    engine.catalog.learn_window(engine.settings.model, 16_000)  # a small window: ~80K characters cannot fit
    big = "word " * 20_000
    window.composer.edit.setPlainText(big)
    window.composer.send_button.click()
    await until(lambda: window.toast.isVisible() and "Nothing was sent" in window.toast.text())
    assert window.composer.edit.toPlainText() == big  # the draft is kept
    assert await engine.store.messages(window.session_id) == []  # nothing was stored
    assert fake_api.message_requests() == []


@pytest.mark.in_process  # engine behaviour, not HTTP (tests/scripted_provider.py)
async def test_only_tool_output_is_capped_and_its_marker_names_no_local_path(
    engine, fake_api, precis_home, tmp_path
):
    sid = await engine.new_session()
    fake_api.queue_tool_use("read", {"path": "notes.txt"}, id="toolu_1")
    await engine.send(sid, "read my notes")
    huge = "\n".join(f"output line {i} " + "y" * 70 for i in range(1_000))  # ~86K characters
    fake_api.queue_text("done")
    await engine.send_content(sid, [{"type": "tool_result", "tool_use_id": "toolu_1", "content": huge}])
    result = fake_api.message_requests()[-1].body["messages"][-1]["content"][0]
    assert len(result["content"]) < 5_000 and "full text saved to @spill/" in result["content"]
    assert any(p.read_text() == huge for p in engine.paths.spill_dir(sid).iterdir())
    no_local_paths(fake_api, precis_home, tmp_path)
    with pytest.raises(MessageTooLong):
        engine.catalog.learn_window(engine.settings.model, 10_000)
        await engine.send(sid, "z " * 40_000)
