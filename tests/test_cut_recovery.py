"""A reply the provider stopped because the window filled up (stop reason ``model_context_window_exceeded``):
the next request, after the summary this forces, must be smaller than the one that filled the window."""

from __future__ import annotations

import pytest


def _chat_requests(fake_api):  # noqa: ANN001, ANN202
    return [
        r
        for r in fake_api.message_requests()
        if "precis-summary-request" not in str(r.body.get("system", "")) + str(r.body["messages"][-1])
    ]


@pytest.mark.parametrize("history", [1, 3, 5])
async def test_the_request_after_a_full_window_is_smaller_than_the_one_that_filled_it(
    small_engine, fake_api, history
):
    sid = await small_engine.new_session()
    for i in range(history):
        fake_api.queue_text(f"answer {i}: " + "words of an answer " * 60)
        await small_engine.send(sid, f"question {i}: " + "words of a question " * 60)
    fake_api.queue_text(
        "a long reply that fills the window " * 75, stop_reason="model_context_window_exceeded"
    )
    cut = await small_engine.send(sid, "one more question, please answer at length")
    assert (
        cut is not None and cut.status == "cut" and cut.meta["stop_reason"] == "model_context_window_exceeded"
    )
    filled = _chat_requests(fake_api)[-1].prompt_tokens
    fake_api.queue_text("ok")
    await small_engine.send(sid, "and then?")
    after = _chat_requests(fake_api)[-1].prompt_tokens
    assert filled and after and after < filled, (filled, after)
