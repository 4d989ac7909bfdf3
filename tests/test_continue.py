"""Replies the provider cut short (max_tokens, a full window) are marked, and Continue resumes them."""

from __future__ import annotations

import asyncio
import json

import pytest

from desktop.engine.compaction.request_shape import problems
from desktop.engine.turn.continuation import NothingToContinue
from tests.test_cli import cli_env, run  # noqa: F401 - the fixture is used by name

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process


@pytest.mark.parametrize("reason", ["max_tokens", "model_context_window_exceeded"])
async def test_a_cut_reply_is_marked_and_continue_resumes_the_same_turn(engine, fake_api, reason):
    sid = await engine.new_session()
    fake_api.queue_text("The three steps are: first, open the ", stop_reason=reason)
    cut = await engine.send(sid, "How do I do it?")
    assert cut is not None and cut.meta["stop_reason"] == reason  # stored with its marker
    assert cut.status == "cut"  # never "complete": the reply is not whole
    stored = await engine.store.messages(sid)
    assert stored[-1].status == "cut"
    fake_api.queue_text("file; second, edit it; third, save.")
    rest = await engine.continue_reply(sid)
    assert rest is not None and rest.meta["continues"] == cut.id and rest.status == "complete"
    sent = fake_api.message_requests()[-1].body["messages"]
    # The request ends with the cut reply itself (no whitespace at its end, no synthetic user turn after it).
    assert sent[-1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "The three steps are: first, open the"}],
    }
    assert sent[-2]["role"] == "user"
    # The next request carries both parts as one valid assistant turn.
    fake_api.queue_text("ok")
    await engine.send(sid, "thanks")
    body = fake_api.message_requests()[-1].body["messages"]
    assert problems(body) == []
    assert [m["role"] for m in body] == ["user", "assistant", "user"]
    assert "".join(b["text"] for b in body[1]["content"]).startswith("The three steps are: first, open the")
    assert body[1]["content"][-1]["text"] == "file; second, edit it; third, save."


async def test_continue_refuses_a_whole_reply_and_retry_after_a_failed_continue_resumes(engine, fake_api):
    from tests.fakeapi import Fault

    sid = await engine.new_session()
    fake_api.queue_text("all done")
    await engine.send(sid, "hi")
    with pytest.raises(NothingToContinue):
        await engine.continue_reply(sid)
    fake_api.queue_text("half of it", stop_reason="max_tokens")
    cut = await engine.send(sid, "more")
    fake_api.queue_fault(Fault.custom(400, "invalid_request_error", "nope"))
    assert await engine.continue_reply(sid) is None  # reported as a turn error
    fake_api.queue_text(" and the other half")
    rest = await engine.retry(sid)  # the banner's Retry resumes the cut reply again
    assert rest is not None and rest.meta["continues"] == cut.id


@pytest.mark.loopback  # precis in a subprocess
def test_cli_says_a_reply_was_cut_and_continue_resumes_it(cli_env, fake_api):  # noqa: F811
    fake_api.queue_text("Part one is", stop_reason="max_tokens")
    res = run(["chat", "--new", "tell me"], cli_env)
    assert res.returncode == 1, res.stderr  # a cut reply is not a finished one: scripts must see it
    assert res.stdout == "Part one is\n"
    errors = [line for line in res.stderr.splitlines() if line.startswith("precis: error:")]
    assert errors == ["precis: error: reply cut by max_tokens; run `precis chat --session 1 --continue`"]
    fake_api.queue_text(" finished here.")
    res = run(["chat", "--session", "1", "--continue"], cli_env)
    assert res.returncode == 0, res.stderr
    assert res.stdout == " finished here.\n" and "cut" not in res.stderr
    assert fake_api.message_requests()[-1].body["messages"][-1]["role"] == "assistant"
    res = run(["chat", "--session", "1", "--continue"], cli_env)
    assert res.returncode == 1 and "nothing to continue" in res.stderr
    data = json.loads(run(["export", "1", "--format", "json"], cli_env).stdout)
    assert [m["role"] for m in data["messages"]] == ["user", "assistant", "assistant"]


@pytest.mark.qt
async def test_the_window_marks_a_cut_reply_and_its_continue_link_resumes_it(window, fake_api, qtbot):
    from PySide6.QtCore import QPoint, Qt

    from tests.test_window import message_rows, ready, until

    fake_api.queue_text("The answer starts here and", stop_reason="max_tokens")
    window.composer.edit.setPlainText("question")
    window.composer.send_button.click()
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "cut")
    await ready(window)
    model, view = window.chat_model, window.chat
    cut = message_rows(window)[1]
    index = model.index(model.row_of(cut.id))
    assert model.continuable_message_id() == cut.id
    assert "Cut off: output limit reached" in view.delegate.document(index).toPlainText()
    view.scrollTo(index)
    await asyncio.sleep(0.05)
    rect = view.visualRect(index)
    point = next(
        QPoint(x, y)
        for y in range(rect.top(), rect.bottom(), 2)
        for x in range(rect.left(), rect.right(), 3)
        if view.anchor_at(QPoint(x, y)).endswith("continue")
    )
    fake_api.queue_text(" it ends here.")
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    await until(lambda: len(message_rows(window)) == 3 and message_rows(window)[2].status == "complete")
    rest = message_rows(window)[2]
    assert rest.meta["continues"] == cut.id and rest.content == [{"type": "text", "text": " it ends here."}]
    assert model.continuable_message_id() is None  # the whole reply has no Continue any more
    assert "Continue" not in view.delegate.document(model.index(model.row_of(cut.id))).toPlainText()
    assert fake_api.message_requests()[-1].body["messages"][-1]["role"] == "assistant"
