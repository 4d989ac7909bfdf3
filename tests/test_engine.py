"""The engine: turns, stop, faults, retry (in-process; the stream faults and the SDK's retries through the real SDK
against the loopback server)."""

from __future__ import annotations

import asyncio

import pytest

from desktop.engine.events import MessageAdded, TextDelta, TurnDone, TurnError, UsageUpdate
from tests.fakeapi import Fault

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process


async def new_session(engine):
    return (await engine.store.create_session("New chat", "claude-sonnet-4-6")).id


def texts(events, session_id):
    return "".join(e.text for e in events if isinstance(e, TextDelta) and e.session_id == session_id)


async def test_turn_streams_persists_and_reports_usage(engine, fake_api):
    sid = await new_session(engine)
    fake_api.queue_text("Here is code:\n```python\nprint('hi')\n```")
    reply = await engine.send(sid, "Show me code")
    assert reply.status == "complete"
    assert texts(engine.events, sid) == "Here is code:\n```python\nprint('hi')\n```"
    stored = await engine.store.messages(sid)
    assert [m.role for m in stored] == ["user", "assistant"]
    assert stored[1].content == [{"type": "text", "text": "Here is code:\n```python\nprint('hi')\n```"}]
    served = fake_api.message_requests()[-1]
    assert stored[1].usage.prompt_tokens == served.usage["input_tokens"] + served.usage.get(
        "cache_read_input_tokens", 0
    ) + served.usage.get("cache_creation_input_tokens", 0)
    assert any(isinstance(e, UsageUpdate) for e in engine.events)
    assert (await engine.store.get_session(sid)).title == "Show me code"
    # The user's message was committed before the request went out.
    added = [e for e in engine.events if isinstance(e, MessageAdded)]
    assert added[0].message.role == "user" and added[0].message.id < added[1].message.id


async def test_history_is_sent_back_in_order(engine, fake_api):
    sid = await new_session(engine)
    fake_api.queue_text("first answer")
    await engine.send(sid, "one")
    fake_api.queue_text("second answer")
    await engine.send(sid, "two")
    body = fake_api.message_requests()[-1].body
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user"]
    assert body["messages"][1]["content"][0]["text"] == "first answer"


async def test_tool_use_reply_is_stored_as_blocks(engine, fake_api):
    sid = await new_session(engine)
    fake_api.queue_tool_use("Read", {"file_path": "src/app.py"}, text="Let me look.")
    reply = await engine.send(sid, "read it")
    kinds = [b["type"] for b in reply.content]
    assert kinds == ["text", "tool_use"]
    assert reply.content[1]["input"] == {"file_path": "src/app.py"}
    assert reply.meta["stop_reason"] == "tool_use"


async def test_stop_keeps_partial_reply_interrupted(engine, fake_api):
    sid = await new_session(engine)
    hold = Fault.hold(after=3)
    fake_api.queue_fault(hold)
    fake_api.queue_text("a" * 400)
    task = asyncio.ensure_future(engine.send(sid, "long please"))
    await asyncio.get_running_loop().run_in_executor(None, hold.reached.wait, 10)
    while not texts(engine.events, sid):
        await asyncio.sleep(0.01)
    assert engine.stop(sid)
    reply = await task
    hold.release.set()
    assert reply.status == "interrupted"
    stored = await engine.store.get_message(reply.id)
    assert stored.status == "interrupted"
    assert stored.content and stored.content[0]["text"].startswith("a")
    assert not engine.busy(sid)


@pytest.mark.loopback  # SSE errors, dropped and malformed streams
@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (Fault.sse_error(after=2), "overloaded"),
        (Fault.drop(after=2), "network"),
        (Fault.malformed(after=2), "protocol"),
        (Fault.custom(401, "authentication_error", "invalid x-api-key"), "auth"),
        (Fault.custom(400, "invalid_request_error", "messages: bad"), "bad_request"),
    ],
)
async def test_faults_become_typed_errors_and_retry_recovers(engine, fake_api, fault, kind):
    sid = await new_session(engine)
    fake_api.queue_fault(fault)  # the faulted request streams the server's default (echo) reply
    assert await engine.send(sid, "hello " * 20) is None
    errors = [e for e in engine.events if isinstance(e, TurnError)]
    assert errors and errors[-1].kind == kind and errors[-1].retryable
    assert errors[-1].message
    stored = await engine.store.messages(sid)
    assert stored[0].role == "user" and stored[0].content[0]["text"] == "hello " * 20
    fake_api.queue_text("recovered")
    reply = await engine.retry(sid)
    assert reply.status == "complete" and reply.content[0]["text"] == "recovered"
    # The failed attempt's partial text is not resent: the retried request ends with the user's message.
    body = fake_api.message_requests()[-1].body
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert body["messages"][0]["content"][-1]["text"] == "hello " * 20


@pytest.mark.loopback  # the SDK's retries
@pytest.mark.parametrize("fault", [Fault.rate_limit(retry_after=0), Fault.overloaded(), Fault.api_error()])
async def test_sdk_retries_transient_status_errors(engine, fake_api, fault):
    sid = await new_session(engine)
    fake_api.queue_fault(fault)
    fake_api.queue_text("ok after retry")
    reply = await engine.send(sid, "hi")
    assert reply.status == "complete"
    assert len(fake_api.message_requests()) == 2
    assert not [e for e in engine.events if isinstance(e, TurnError)]


@pytest.mark.loopback  # the SDK's retries
async def test_persistent_rate_limit_reaches_user_as_rate_limit(engine, fake_api):
    sid = await new_session(engine)
    fake_api.queue_fault(*[Fault.rate_limit(retry_after=0)] * 3)
    assert await engine.send(sid, "hi") is None
    err = [e for e in engine.events if isinstance(e, TurnError)][-1]
    assert err.kind == "rate_limit"


async def test_two_sends_after_failure_are_merged_into_one_user_turn(engine, fake_api):
    sid = await new_session(engine)
    fake_api.queue_fault(Fault.custom(400, "invalid_request_error", "nope"))
    await engine.send(sid, "first")
    fake_api.queue_text("fine")
    await engine.send(sid, "second")
    body = fake_api.message_requests()[-1].body
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert [b["text"] for b in body["messages"][0]["content"]] == ["first", "second"]


async def test_turn_done_event_carries_final_message(engine, fake_api):
    sid = await new_session(engine)
    fake_api.queue_thinking("pondering", "answer")
    await engine.send(sid, "think")
    done = [e for e in engine.events if isinstance(e, TurnDone)][-1]
    assert [b["type"] for b in done.message.content] == ["thinking", "text"]


async def test_retry_clicked_the_moment_the_error_shows_is_accepted(engine, fake_api):
    """The window shows the banner on TurnError; a Retry at once must not meet 'a reply is still streaming'."""
    sid = await new_session(engine)
    fake_api.queue_fault(Fault.custom(401, "authentication_error", "invalid x-api-key"))
    retried: list[asyncio.Task] = []

    def on_event(event) -> None:
        if isinstance(event, TurnError) and not retried:
            fake_api.queue_text("now it works")
            retried.append(asyncio.ensure_future(engine.retry(sid)))

    engine.subscribe(on_event)
    assert await engine.send(sid, "please work") is None
    reply = await retried[0]
    assert reply is not None and reply.content[0]["text"] == "now it works"
