"""A server that breaks the protocol on purpose gets one sentence, never a hang, a lost reply or an exception name
(issue 35): the real SDK against the loopback server, whose faults (tests/fakeapi/faults.py) misbehave.

The hang cases run with small timeouts (first byte and idle: 1 s) and are bounded in the test's own clock.
"""

from __future__ import annotations

import json
import logging
import time

import pytest

from desktop.engine import lazy_imports
from desktop.engine.compaction.request_shape import problems
from desktop.engine.events import Notice, TurnError
from desktop.engine.providers.provider import STREAM_ENDED
from desktop.engine.types import CUT_STOP_REASONS
from tests.conftest import _open_engine
from tests.fakeapi import Fault, Reply
from tests.tools_helpers import make_workspace, tool_runtime

pytestmark = pytest.mark.loopback

QUICK = {"first_byte_timeout": 1.0, "idle_timeout": 1.0, "max_retries": 0}
BOUND = 4.0  # seconds a 1 s timeout may take to be said on a loaded machine (two shared cores)
EXCEPTION_NAMES = ("AssertionError", "IndexError", "UnicodeDecodeError", "KeyError", "Traceback", "Error:")


@pytest.fixture
async def hostile(fake_api):
    """An engine with 1 s first-byte and idle times and no SDK retries, against the loopback server (the SDK
    imported first: a cold import takes seconds of the test's clock)."""
    await lazy_imports.load(lazy_imports.SDK)
    async with _open_engine(QUICK) as eng:
        yield eng


async def _send(engine, text: str = "hello there"):
    sid = await engine.new_session()
    started = time.monotonic()
    reply = await engine.send(sid, text)
    return sid, reply, time.monotonic() - started


def _error(engine, sid: int) -> TurnError:
    errors = [e for e in engine.events if isinstance(e, TurnError) and e.session_id == sid]
    assert len(errors) == 1, errors
    return errors[0]


async def _kept_only_the_users_message(engine, sid: int, text: str = "hello there") -> None:
    stored = await engine.store.messages(sid)
    assert [m.role for m in stored] == ["user"] and stored[0].content[0]["text"] == text


def _one_sentence(message: str, limit: int = 700) -> None:
    assert message and "\n" not in message and len(message) <= limit, message
    assert not any(name in message for name in EXCEPTION_NAMES), message


# --- hangs: bounded by the first-byte and idle times --------------------------------------------------------------
@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(Fault.silent(), id="never-answers"),
        pytest.param(Fault.pings_only(), id="pings-only"),
        pytest.param(Fault.slow_headers(), id="endless-headers"),
    ],
)
async def test_a_reply_that_never_starts_is_one_sentence_within_the_first_byte_time(hostile, fake_api, fault):
    fake_api.queue_fault(fault)
    sid, reply, took = await _send(hostile)
    assert reply is None and took < BOUND, took
    error = _error(hostile, sid)
    assert error.kind == "network" and error.retryable and "no reply within 1 s" in error.message
    _one_sentence(error.message)
    await _kept_only_the_users_message(hostile, sid)
    fault.release.set()
    fake_api.queue_text("second time lucky")
    again = await hostile.retry(sid)
    assert again is not None and again.content[0]["text"] == "second time lucky"


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(Fault.start_then_silent(), id="message-start-then-nothing"),
        pytest.param(Fault.pings_only(started=True), id="pings-after-the-start"),
    ],
)
async def test_a_reply_that_stalls_is_one_sentence_within_the_idle_time(hostile, fake_api, fault):
    fake_api.queue_fault(fault)
    sid, reply, took = await _send(hostile)
    assert reply is None and took < BOUND, took
    error = _error(hostile, sid)
    assert error.kind == "network" and "stopped sending the reply for 1 s" in error.message
    _one_sentence(error.message)
    await _kept_only_the_users_message(hostile, sid)  # nothing arrived: no empty reply is left behind
    fault.release.set()


async def test_a_reply_that_stalls_mid_text_keeps_what_arrived(hostile, fake_api):
    fault = Fault.text_then_silent("the first words ")
    fake_api.queue_fault(fault)
    sid, reply, took = await _send(hostile)
    assert reply is None and took < BOUND, took
    assert "stopped sending the reply" in _error(hostile, sid).message
    stored = await hostile.store.messages(sid)
    assert [m.status for m in stored] == ["complete", "error"]
    assert stored[1].content[0]["text"] == "the first words "
    fault.release.set()


async def test_a_long_live_generation_never_trips_the_timeouts(hostile, fake_api):
    """Deltas 0.3 s apart for 4 s: longer than both times, but never idle for one."""
    fake_api.queue_fault(Fault.live_deltas(0.3, 14))
    sid, reply, took = await _send(hostile)
    assert took > 2 * QUICK["idle_timeout"] + QUICK["first_byte_timeout"]
    assert reply is not None and reply.status == "complete"
    assert reply.content[0]["text"] == "".join(f"{n} " for n in range(14))
    assert not [e for e in hostile.events if isinstance(e, TurnError)]


# --- a stream that ends without message_stop -------------------------------------------------------------------
async def test_a_stream_without_message_stop_is_kept_and_marked_cut(hostile, fake_api):
    fake_api.queue_fault(Fault.cut())
    fake_api.queue_text("an answer that may go on")
    sid, reply, _took = await _send(hostile)
    assert reply is not None and reply.status == "cut", reply
    assert reply.meta["stop_reason"] == STREAM_ENDED
    assert reply.content == [{"type": "text", "text": "an answer that may go on"}]
    stored = await hostile.store.messages(sid)
    assert [m.status for m in stored] == ["complete", "cut"]
    notices = [e for e in hostile.events if isinstance(e, Notice) and e.session_id == sid]
    assert [n.level for n in notices] == ["warning"] and "no message_stop" in notices[0].text
    assert not [e for e in hostile.events if isinstance(e, TurnError)]
    # The cut reply is part of the chat: the next request carries it.
    fake_api.queue_text("next")
    await hostile.send(sid, "and then?")
    sent = fake_api.message_requests()[-1].body["messages"]
    assert sent[1] == {"role": "assistant", "content": [{"type": "text", "text": "an answer that may go on"}]}


async def test_a_stream_without_message_stop_can_be_continued(hostile, fake_api):
    assert STREAM_ENDED in CUT_STOP_REASONS
    from desktop.engine.turn.continuation import is_cut

    fake_api.queue_fault(Fault.cut())
    fake_api.queue_text("half of it")
    sid, reply, _took = await _send(hostile)
    assert is_cut(reply)
    # The server gives a reply whose delivery failed back to its queue (a failed summary is asked again): the
    # continuation is answered with it, and it is stored as the continuation of the cut reply.
    rest = await hostile.continue_reply(sid)
    assert rest is not None and rest.meta["continues"] == reply.id and rest.status == "complete"
    sent = fake_api.message_requests()[-1].body["messages"]
    assert sent[-1] == {"role": "assistant", "content": [{"type": "text", "text": "half of it"}]}


# --- usage numbers out of range ------------------------------------------------------------------------------
async def test_usage_numbers_out_of_range_are_ignored_and_the_reply_saved(hostile, fake_api, caplog):
    fake_api.queue_fault(Fault.usage_numbers(output_tokens=1e30, input_tokens=-5))
    fake_api.queue_text("saved whatever the numbers")
    with caplog.at_level(logging.WARNING, "desktop.engine.providers.provider"):
        sid, reply, _took = await _send(hostile)
    assert reply is not None and reply.status == "complete"
    stored = await hostile.store.messages(sid)
    assert stored[1].status == "complete" and stored[1].content[0]["text"] == "saved whatever the numbers"
    assert stored[1].usage is None or stored[1].usage.output_tokens < 10**12
    assert not [e for e in hostile.events if isinstance(e, TurnError)]
    noted = " ".join(r.getMessage() for r in caplog.records)
    assert "output_tokens = 1e+30" in noted and "input_tokens = -5" in noted


# --- protocol violations: one sentence naming what was sent ----------------------------------------------------
@pytest.mark.parametrize(
    ("fault", "said"),
    [
        pytest.param(Fault.garbage(), "a text/html page where", id="not-sse"),
        pytest.param(Fault.json_body(), "a JSON body where", id="json-body"),
        pytest.param(Fault.orphan_delta(), "content block it never started", id="unknown-block"),
        pytest.param(Fault.invalid_utf8(), "not valid UTF-8", id="invalid-utf8"),
    ],
)
async def test_a_stream_that_breaks_the_protocol_is_named_in_one_sentence(hostile, fake_api, fault, said):
    fake_api.queue_fault(fault)
    sid, reply, took = await _send(hostile)
    assert reply is None and took < BOUND
    error = _error(hostile, sid)
    assert error.kind == "protocol" and error.retryable
    assert error.message.startswith("The provider sent ") and said in error.message, error.message
    _one_sentence(error.message)
    stored = await hostile.store.messages(sid)
    assert stored[0].content[0]["text"] == "hello there" and all(m.status != "complete" for m in stored[1:])
    fake_api.queue_text("all good now")
    again = await hostile.retry(sid)
    assert again is not None and again.content[0]["text"] == "all good now"


# --- bounded error texts --------------------------------------------------------------------------------------
async def test_a_huge_html_error_page_is_reduced_to_its_title(hostile, fake_api):
    fake_api.queue_fault(Fault.html_error(500, 5_250_000, "Internal Server Error"))
    sid, reply, _took = await _send(hostile)
    error = _error(hostile, sid)
    assert reply is None and error.kind == "server" and "(500)" in error.message
    assert "500 Internal Server Error" in error.message and "<" not in error.message, error.message
    _one_sentence(error.message, 400)


async def test_a_huge_error_event_is_cut_to_a_few_hundred_characters(hostile, fake_api):
    fake_api.queue_fault(Fault.sse_error(after=2, error_type="api_error", message="boom " * 20_000))
    sid, _reply, _took = await _send(hostile)
    error = _error(hostile, sid)
    assert error.message.count("boom") < 80 and error.message.count("…") == 1, len(error.message)
    _one_sentence(error.message, 500)


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        pytest.param(Fault.redirect_loop(), "redirects in a loop", id="redirect-loop"),
        pytest.param(Fault.huge_headers(), "response headers too large", id="oversized-headers"),
    ],
)
async def test_transport_faults_are_named_not_unreachable(hostile, fake_api, fault, said):
    fake_api.queue_fault(fault)
    sid, _reply, took = await _send(hostile)
    error = _error(hostile, sid)
    assert said in error.message and "Could not reach" not in error.message, error.message
    assert took < BOUND + 4  # a loop of 20 redirects on fresh connections
    _one_sentence(error.message)


# --- two tool calls with one id ------------------------------------------------------------------------------
async def test_a_second_tool_call_with_the_same_id_is_answered_with_an_error(fake_api, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    call = {"type": "tool_use", "id": "toolu_same", "name": "read"}
    fake_api.queue_reply(
        Reply(
            [
                {**call, "input": {"file_path": "src/config.py"}},
                {**call, "input": {"file_path": "src/main.py"}},
            ]
        )
    )
    fake_api.queue_text("read one of them")
    async with tool_runtime(workspace=ws, allow=["read"]) as rt:
        sid = await rt.engine.new_session()
        reply = await rt.engine.send(sid, "read both")
        stored = await rt.store.messages(sid)
    assert reply is not None and reply.content[0]["text"] == "read one of them"
    calls = [b for b in stored[1].content if b["type"] == "tool_use"]
    assert [c["id"] for c in calls] == ["toolu_same", "toolu_same_dup2"]
    results = {b["tool_use_id"]: b for b in stored[2].content if b["type"] == "tool_result"}
    assert "parse_config" in json.dumps(results["toolu_same"]["content"])
    second = results["toolu_same_dup2"]
    assert second["is_error"] and "Not run" in second["content"] and "toolu_same" in second["content"]
    # The request after the tool round is valid: one result per call, every id once.
    sent = fake_api.message_requests()[-1].body["messages"]
    assert problems(sent) == []
    assert [b.get("tool_use_id") for b in sent[2]["content"]] == ["toolu_same", "toolu_same_dup2"]


# --- the summariser's requests (and Test connection's) are bounded the same way --------------------------------
async def test_a_summary_request_stalls_or_ends_early_in_one_sentence(fake_api):
    from desktop.engine.config.secrets import Credentials
    from desktop.engine.config.settings import Settings
    from desktop.engine.providers.errors import ProviderViolation, StreamStalled, classify
    from desktop.engine.providers.provider import AnthropicProvider

    await lazy_imports.load(lazy_imports.SDK)
    settings = Settings(base_url=fake_api.base_url, **QUICK)
    provider = AnthropicProvider(settings, Credentials(api_key="test-key", source="env"))
    request = {"model": "claude-test", "max_tokens": 200, "messages": [{"role": "user", "content": "sum up"}]}
    try:
        fault = Fault.pings_only(started=True)
        fake_api.queue_fault(fault)
        started = time.monotonic()
        with pytest.raises(StreamStalled) as stalled:
            await provider.complete(request)
        assert time.monotonic() - started < BOUND
        assert "stopped sending the reply for 1 s" in classify(stalled.value).message
        fault.release.set()
        fake_api.queue_fault(Fault.cut())
        fake_api.queue_summary("a summary that may stop mid-way")
        with pytest.raises(ProviderViolation) as unfinished:
            await provider.complete({**request, "system": "<precis-summary-request>"})
        assert "no message_stop" in classify(unfinished.value).message
        # A failed delivery gives the reply back to the server's queue: the next request gets it whole.
        text, _usage, stop = await provider.complete({**request, "system": "<precis-summary-request>"})
        assert (text, stop) == ("a summary that may stop mid-way", "end_turn")
    finally:
        await provider.close()
