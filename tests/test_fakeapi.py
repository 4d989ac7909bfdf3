"""The loopback fake Anthropic API, exercised through the real anthropic SDK."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import math
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # no conftest / installed package yet

from tests.fakeapi import (  # noqa: E402
    SUMMARY_MARKER,
    FakeAnthropic,
    FakeClock,
    Fault,
    PromptCache,
    Reply,
    TokenCounter,
    count_request_tokens,
)

MODEL = "claude-sonnet-4-6"
KEY = "test-key"


@pytest.fixture
def srv() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(window=200_000, clock=FakeClock()) as server:
        yield server


def sync_client(srv: FakeAnthropic, **kw: Any) -> anthropic.Anthropic:
    kw.setdefault("max_retries", 0)
    return anthropic.Anthropic(base_url=srv.base_url, api_key=KEY, **kw)


def async_client(srv: FakeAnthropic, **kw: Any) -> anthropic.AsyncAnthropic:
    kw.setdefault("max_retries", 0)
    return anthropic.AsyncAnthropic(base_url=srv.base_url, api_key=KEY, **kw)


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def long_text(n_words: int, seed: str = "alpha") -> str:
    return " ".join(f"{seed}{i % 97}" for i in range(n_words))


def raw_post(
    srv: FakeAnthropic, path: str, body: dict[str, Any], key: str = KEY
) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(
        srv.base_url + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"x-api-key": key, "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, err.read()


def sse_events(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for chunk in data.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines() if ": " in line)
        if "event" in lines:
            out.append((lines["event"], json.loads(lines["data"])))
    return out


def png_b64(w: int, h: int) -> str:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (w, h), (200, 10, 10)).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


# -- streaming, non-streaming, block kinds -----------------------------------------------------------


@pytest.mark.asyncio
async def test_stream_text_event_order_and_final_message(srv: FakeAnthropic) -> None:
    text = "Hello there, this reply is streamed in several text deltas by the fake."
    srv.queue_text(text)
    client = async_client(srv)
    async with client.messages.stream(model=MODEL, max_tokens=200, messages=user("hi")) as stream:
        kinds = [event.type async for event in stream]
        final = await stream.get_final_message()
    assert kinds[0] == "message_start" and kinds[1] == "content_block_start"
    assert kinds[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert kinds.count("text") >= 3 and kinds.count("text") == kinds.count("content_block_delta")
    assert final.content[0].text == text
    assert final.stop_reason == "end_turn"
    assert final.model == MODEL


def test_raw_sse_has_ping_and_faithful_order(srv: FakeAnthropic) -> None:
    srv.queue_text("abcdefghij" * 5)
    status, headers, data = raw_post(
        srv, "/v1/messages", {"model": MODEL, "max_tokens": 100, "stream": True, "messages": user("x")}
    )
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    assert headers["request-id"].startswith("req_")
    names = [name for name, _ in sse_events(data)]
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[3:-3] == ["content_block_delta"] * len(names[3:-3]) and len(names[3:-3]) >= 3
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    start = sse_events(data)[0][1]["message"]
    assert start["content"] == [] and start["stop_reason"] is None


@pytest.mark.asyncio
async def test_usage_in_message_start_and_cumulative_message_delta(srv: FakeAnthropic) -> None:
    srv.queue_text("one two three four five six seven eight nine ten")
    client = async_client(srv)
    events = [
        ev
        async for ev in await client.messages.create(
            model=MODEL, max_tokens=100, messages=user("count me"), stream=True
        )
    ]
    start = events[0]
    delta = next(ev for ev in events if ev.type == "message_delta")
    assert start.type == "message_start"
    expected_prompt = count_request_tokens({"messages": user("count me")}, srv.counter)
    su = start.message.usage
    assert (
        su.input_tokens,
        su.cache_creation_input_tokens,
        su.cache_read_input_tokens,
        su.output_tokens,
    ) == (expected_prompt, 0, 0, 1)
    du = delta.usage
    assert du.input_tokens == expected_prompt and du.cache_read_input_tokens == 0
    assert du.cache_creation_input_tokens == 0
    assert du.output_tokens == srv.counter.count_output(
        [{"type": "text", "text": "one two three four five six seven eight nine ten"}]
    )
    assert delta.delta.stop_reason == "end_turn"
    async with client.messages.stream(model=MODEL, max_tokens=100, messages=user("count me")) as stream:
        final = await stream.get_final_message()
    assert final.usage.input_tokens == expected_prompt and final.usage.output_tokens > 1


def test_non_streaming_message_and_log(srv: FakeAnthropic) -> None:
    srv.queue_text("plain answer")
    msg = sync_client(srv).messages.create(model=MODEL, max_tokens=50, messages=user("q"))
    assert msg.content[0].text == "plain answer" and msg.stop_reason == "end_turn"
    rec = srv.message_requests()[-1]
    assert rec.body["messages"] == user("q") and rec.headers["authorization"] == f"Bearer {KEY}"
    assert "anthropic-version" in rec.headers and rec.stream is False
    assert rec.usage == msg.usage.model_dump(
        include={"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
    )
    assert rec.outcome == "ok" and rec.status == 200 and srv.request_count == 1


@pytest.mark.asyncio
async def test_tool_use_streams_input_json_in_chunks(srv: FakeAnthropic) -> None:
    args = {"path": "/src/app/main.py", "limit": 200, "flags": ["a", "b"], "nested": {"k": "v"}}
    srv.queue_tool_use("read_file", args, text="Let me look.")
    client = async_client(srv)
    async with client.messages.stream(model=MODEL, max_tokens=300, messages=user("read it")) as stream:
        partials = [ev.partial_json async for ev in stream if ev.type == "input_json"]
        final = await stream.get_final_message()
    assert len([p for p in partials if p]) >= 3
    assert "".join(partials) == json.dumps(args, separators=(",", ":"))
    tool = final.content[1]
    assert tool.type == "tool_use" and tool.name == "read_file" and tool.input == args
    assert tool.id.startswith("toolu_")
    assert final.stop_reason == "tool_use" and final.content[0].text == "Let me look."


@pytest.mark.asyncio
async def test_thinking_then_text(srv: FakeAnthropic) -> None:
    srv.queue_thinking("First I consider the question carefully, then answer.", "42")
    client = async_client(srv)
    async with client.messages.stream(model=MODEL, max_tokens=300, messages=user("why")) as stream:
        kinds = [ev.type async for ev in stream]
        final = await stream.get_final_message()
    assert "thinking" in kinds and kinds.count("signature") == 1
    assert kinds.index("signature") < kinds.index("text")
    thinking, text = final.content
    assert thinking.type == "thinking" and thinking.thinking.startswith("First I consider")
    assert thinking.signature and text.text == "42"


def test_scripted_stop_reasons_and_replay_order(srv: FakeAnthropic) -> None:
    client = sync_client(srv)
    srv.queue_text("partial", stop_reason="model_context_window_exceeded")
    assert client.messages.create(model=MODEL, max_tokens=50, messages=user("a")).stop_reason == (
        "model_context_window_exceeded"
    )
    srv.set_replay(
        [
            [{"type": "text", "text": "turn one"}],
            [{"type": "tool_use", "id": "toolu_r1", "name": "ls", "input": {}}],
        ]
    )
    first = client.messages.create(model=MODEL, max_tokens=50, messages=user("a"))
    summary = client.messages.create(model=MODEL, max_tokens=500, messages=user(f"{SUMMARY_MARKER} go"))
    second = client.messages.create(model=MODEL, max_tokens=50, messages=user("b"))
    after = client.messages.create(model=MODEL, max_tokens=50, messages=user("echo this"))
    assert first.content[0].text == "turn one"
    assert summary.content[0].text.startswith("<summary>")  # summary requests do not consume replay turns
    assert second.content[0].id == "toolu_r1" and second.stop_reason == "tool_use"
    assert after.content[0].text == "Echo: echo this" and srv.replay_remaining == 0


def test_max_tokens_and_window_truncation(srv: FakeAnthropic) -> None:
    client = sync_client(srv)
    srv.queue_text(long_text(400))
    msg = client.messages.create(model=MODEL, max_tokens=30, messages=user("long please"))
    assert msg.stop_reason == "max_tokens" and 0 < msg.usage.output_tokens <= 30
    assert long_text(400).startswith(msg.content[0].text)
    srv.window = count_request_tokens({"messages": user("tight")}, srv.counter) + 10
    srv.queue_text(long_text(400))
    msg = client.messages.create(model=MODEL, max_tokens=1000, messages=user("tight"))
    assert msg.stop_reason == "model_context_window_exceeded" and msg.usage.output_tokens <= 10


def test_default_echo_can_be_long(srv: FakeAnthropic) -> None:
    srv.default_reply_tokens = 500
    msg = sync_client(srv).messages.create(model=MODEL, max_tokens=4000, messages=user("say   something"))
    assert msg.content[0].text.startswith("Echo: say something Filler sentence 0")
    assert 500 <= msg.usage.output_tokens < 520 and msg.usage.output_tokens == srv.counter.count_text(
        msg.content[0].text
    )
    again = sync_client(srv).messages.create(model=MODEL, max_tokens=4000, messages=user("say   something"))
    assert again.content[0].text == msg.content[0].text


@pytest.mark.asyncio
async def test_reply_objects_from_script_json(srv: FakeAnthropic) -> None:
    redacted = {"type": "redacted_thinking", "data": "EncryptedBlob=="}
    srv.queue_reply(
        Reply.from_json({"content": [redacted, {"type": "text", "text": "done"}]}),
        Reply.from_json({"thinking": "hmm", "text": "ok", "stop_reason": "stop_sequence"}),
        "plain string",
    )
    client = async_client(srv)
    async with client.messages.stream(model=MODEL, max_tokens=100, messages=user("x")) as stream:
        first = await stream.get_final_message()
    second = await client.messages.create(model=MODEL, max_tokens=100, messages=user("x"))
    third = await client.messages.create(model=MODEL, max_tokens=100, messages=user("x"))
    assert first.content[0].type == "redacted_thinking" and first.content[0].data == "EncryptedBlob=="
    assert first.content[1].text == "done"
    assert second.stop_reason == "stop_sequence" and second.content[0].thinking == "hmm"
    assert third.content[0].text == "plain string" and srv.pending_replies == 0
    with pytest.raises(anthropic.BadRequestError, match="at least one message"):
        await client.messages.create(model=MODEL, max_tokens=100, messages=[])


# -- summariser ------------------------------------------------------------------------------------


def test_summariser_is_deterministic_and_sized(srv: FakeAnthropic) -> None:
    messages = []
    for i in range(30):
        messages.append({"role": "user", "content": f"Topic{i} " + long_text(200, seed=f"w{i}x")})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": long_text(100)}]})
    messages.append({"role": "user", "content": "Summarise please."})
    system = f"You compact conversations. {SUMMARY_MARKER}"
    client = sync_client(srv)
    one = client.messages.create(model=MODEL, max_tokens=8000, system=system, messages=messages)
    two = client.messages.create(model=MODEL, max_tokens=8000, system=system, messages=messages)
    text = one.content[0].text
    assert text == two.content[0].text
    prompt = one.usage.input_tokens
    assert math.ceil(0.1 * prompt) <= one.usage.output_tokens <= math.ceil(0.1 * prompt) + 30
    assert "Topic0 w0x0 w0x1" in text and "Topic29" in text and SUMMARY_MARKER not in text
    short = client.messages.create(model=MODEL, max_tokens=8000, messages=user(f"{SUMMARY_MARKER} tiny"))
    assert short.usage.output_tokens >= 50 and "tiny" in short.content[0].text


# -- token counting --------------------------------------------------------------------------------


def test_counter_formula() -> None:
    c = TokenCounter()
    assert c.count_text("a" * 33) == 10 and c.count_text("a" * 34) == 11
    assert c.count_text("中文字" * 13) == 30  # 39 CJK chars / 1.3
    assert c.count_text("ab中") == math.ceil(2 / 3.3) + math.ceil(1 / 1.3)
    assert c.count_json({"k": "v"}) == math.ceil(len('{"k":"v"}') / 2.2)
    assert c.count_block({"type": "text", "text": "a" * 33}) == 13
    img = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": png_b64(300, 200)},
    }
    assert c.count_block(img) == 3 + 80  # 300*200/750
    big = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": png_b64(1568, 1568)},
    }
    assert c.count_block(big) == 3 + 1600
    assert c.count_block({"type": "image", "source": {"type": "url", "url": "http://x"}}) == 3 + 1600
    tool_use = {"type": "tool_use", "id": "t", "name": "abc", "input": {"k": "v"}}
    assert c.count_block(tool_use) == 3 + 1 + math.ceil(9 / 2.2)
    body = {
        "system": "s" * 33,
        "tools": [{"name": "t", "input_schema": {}}],
        "messages": [{"role": "user", "content": "a" * 33}, {"role": "assistant", "content": [tool_use]}],
    }
    expected = (
        (5 + c.count_json({"name": "t", "input_schema": {}}))
        + (5 + 13)
        + (5 + 13)
        + (5 + c.count_block(tool_use))
    )
    assert count_request_tokens(body) == expected
    assert TokenCounter(text_ratio=4.0).count_text("a" * 400) == 100  # configurable ratio


def test_count_tokens_endpoint_matches_usage(srv: FakeAnthropic) -> None:
    client = sync_client(srv)
    system = [{"type": "text", "text": long_text(800), "cache_control": {"type": "ephemeral"}}]
    tools = [{"name": "grep", "description": "search", "input_schema": {"type": "object", "properties": {}}}]
    msgs = [
        {"role": "user", "content": "中文 and English"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"q": "x"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "found"}]},
    ]
    counted = client.messages.count_tokens(
        model=MODEL, system=system, tools=tools, messages=msgs
    ).input_tokens
    msg = client.messages.create(model=MODEL, max_tokens=20, system=system, tools=tools, messages=msgs)
    u = msg.usage
    assert counted == u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens
    assert counted == srv.count_request_tokens(srv.message_requests()[-1].body)
    assert srv.requests[0].path == "/v1/messages/count_tokens" and srv.requests[0].prompt_tokens == counted


def test_prompt_too_long(srv: FakeAnthropic) -> None:
    srv.window = 1000
    big = long_text(2000)
    n = count_request_tokens({"messages": user(big)}, srv.counter)
    with pytest.raises(anthropic.BadRequestError) as info:
        sync_client(srv).messages.create(model=MODEL, max_tokens=10, messages=user(big))
    err = info.value
    assert err.status_code == 400 and err.type == "invalid_request_error"
    assert err.api_message == f"prompt is too long: {n} tokens > 1000 maximum"
    assert re.search(r"prompt is too long: (\d+) tokens > (\d+)", str(err))
    assert err.request_id == srv.last_request.request_id
    status, headers, data = raw_post(
        srv, "/v1/messages", {"model": MODEL, "max_tokens": 10, "messages": user(big)}
    )
    payload = json.loads(data)
    assert status == 400 and set(payload) == {"type", "error", "request_id"} and payload["type"] == "error"
    assert payload["request_id"] == headers["request-id"]


def test_too_much_media(srv: FakeAnthropic) -> None:
    img = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png_b64(8, 8)}}
    nested = {"type": "tool_result", "tool_use_id": "t", "content": [img, img]}
    content = [img] * 99 + [{"type": "text", "text": "look"}]
    msgs = [{"role": "user", "content": content}]
    ok = sync_client(srv).messages.create(model=MODEL, max_tokens=10, messages=msgs)
    assert ok.stop_reason == "end_turn"
    msgs = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "shot", "input": {}}]},
        {"role": "user", "content": [nested, *content]},
    ]
    with pytest.raises(
        anthropic.BadRequestError, match=re.escape("Too much media: 0 document pages + 101 images > 100")
    ):
        sync_client(srv).messages.create(model=MODEL, max_tokens=10, messages=msgs)
    srv.media_wording = "too_many"
    with pytest.raises(
        anthropic.BadRequestError, match=re.escape("too many images and documents: 101 + 0 > 100")
    ):
        sync_client(srv).messages.create(model=MODEL, max_tokens=10, messages=msgs)


# -- prompt cache ----------------------------------------------------------------------------------


def _cached_call(
    client: anthropic.Anthropic, system_text: str, messages: list[dict[str, Any]], model: str = MODEL
) -> Any:
    system = [{"type": "text", "text": system_text, "cache_control": {"type": "ephemeral"}}]
    return client.messages.create(model=model, max_tokens=20, system=system, messages=messages).usage


def test_the_billed_equivalent_uses_each_models_own_cache_prices(srv: FakeAnthropic) -> None:
    """Opus 5.5 reads the cache at 0.05x its input price (not the old 0.1x): the benchmarks' bill says so."""
    from desktop.engine.config.catalog import ModelCatalog

    opus = ModelCatalog().info("claude-opus-5-5")
    assert opus.read_multiplier == 0.05
    if "claude-opus-5-5" not in srv.models:
        srv.models.append("claude-opus-5-5")
    client = sync_client(srv)
    sys_text = long_text(1200)
    first = _cached_call(client, sys_text, user("hello"), model="claude-opus-5-5")
    second = _cached_call(client, sys_text, user("hello"), model="claude-opus-5-5")
    assert first.cache_creation_input_tokens > 0 and second.cache_read_input_tokens > 0
    assert srv.stats.billed_input_equivalent() == pytest.approx(
        first.input_tokens
        + second.input_tokens
        + opus.write_multiplier * first.cache_creation_input_tokens
        + opus.read_multiplier * second.cache_read_input_tokens
    )


def test_cache_write_read_invalidate(srv: FakeAnthropic) -> None:
    client = sync_client(srv)
    sys_text = long_text(1200)
    c = srv.counter
    sys_tokens = 5 + 3 + c.count_text(sys_text)
    msg_tokens = 5 + 3 + c.count_text("hello")
    first = _cached_call(client, sys_text, user("hello"))
    assert (first.cache_creation_input_tokens, first.cache_read_input_tokens, first.input_tokens) == (
        sys_tokens,
        0,
        msg_tokens,
    )
    second = _cached_call(client, sys_text, user("hello"))
    assert (second.cache_creation_input_tokens, second.cache_read_input_tokens, second.input_tokens) == (
        0,
        sys_tokens,
        msg_tokens,
    )
    changed = _cached_call(client, "CHANGED " + sys_text, user("hello"))
    assert changed.cache_read_input_tokens == 0 and changed.cache_creation_input_tokens > 0
    assert srv.stats.requests == 3
    assert srv.stats.billed_input_equivalent() == pytest.approx(
        3 * msg_tokens + 1.25 * (sys_tokens + changed.cache_creation_input_tokens) + 0.1 * sys_tokens
    )


def test_cache_conversation_grows_reads_previous_prefix(srv: FakeAnthropic) -> None:
    client = sync_client(srv)
    history: list[dict[str, Any]] = []
    prompt_sizes = []
    reads = []
    for turn in range(4):
        history.append(
            {"role": "user", "content": [{"type": "text", "text": f"turn {turn} " + long_text(400)}]}
        )
        marked = [dict(m) for m in history]
        marked[-1] = {
            "role": "user",
            "content": [{**history[-1]["content"][0], "cache_control": {"type": "ephemeral"}}],
        }
        usage = client.messages.create(model=MODEL, max_tokens=20, messages=marked).usage
        prompt_sizes.append(
            usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
        )
        reads.append(usage.cache_read_input_tokens)
        history.append({"role": "assistant", "content": [{"type": "text", "text": f"reply {turn}"}]})
    # Turn 0 is below 1024 tokens: nothing is written, so turn 1 reads nothing either.
    assert reads[0] == 0 and reads[1] == 0
    assert reads[2] == prompt_sizes[1] and reads[3] == prompt_sizes[2]


def test_cache_min_tokens_and_automatic_caching(srv: FakeAnthropic) -> None:
    client = sync_client(srv)
    small = _cached_call(client, "short system", user("hi"))
    small2 = _cached_call(client, "short system", user("hi"))
    assert small.cache_creation_input_tokens == small2.cache_read_input_tokens == 0
    msgs = user(long_text(1000))
    auto1 = client.messages.create(
        model=MODEL, max_tokens=20, messages=msgs, cache_control={"type": "ephemeral"}
    ).usage
    auto2 = client.messages.create(
        model=MODEL, max_tokens=20, messages=msgs, cache_control={"type": "ephemeral"}
    ).usage
    total = count_request_tokens({"messages": msgs}, srv.counter)
    assert (auto1.cache_creation_input_tokens, auto1.input_tokens) == (total, 0)
    assert (auto2.cache_read_input_tokens, auto2.input_tokens) == (total, 0)


def test_cache_rejects_more_than_four_breakpoints(srv: FakeAnthropic) -> None:
    cc = {"type": "ephemeral"}
    content = [{"type": "text", "text": f"part {i}", "cache_control": cc} for i in range(5)]
    with pytest.raises(anthropic.BadRequestError) as info:
        sync_client(srv).messages.create(
            model=MODEL, max_tokens=10, messages=[{"role": "user", "content": content}]
        )
    assert info.value.api_message == "A maximum of 4 blocks with cache_control may be provided. Found 5."
    ok = sync_client(srv).messages.create(
        model=MODEL, max_tokens=10, messages=[{"role": "user", "content": content[:4]}]
    )
    assert ok.stop_reason == "end_turn"


def test_cache_ttl_with_injected_clock() -> None:
    clock = FakeClock()
    with FakeAnthropic(clock=clock) as srv:
        client = sync_client(srv)
        sys_text = long_text(1200)
        assert _cached_call(client, sys_text, user("a")).cache_creation_input_tokens > 0
        clock.advance(299)
        assert _cached_call(client, sys_text, user("a")).cache_read_input_tokens > 0
        clock.advance(299)  # the read refreshed the TTL
        assert _cached_call(client, sys_text, user("a")).cache_read_input_tokens > 0
        clock.advance(301)
        expired = _cached_call(client, sys_text, user("a"))
        assert expired.cache_read_input_tokens == 0 and expired.cache_creation_input_tokens > 0


def test_cache_lookback_is_twenty_blocks() -> None:
    counter = TokenCounter()
    cache = PromptCache(clock=FakeClock(), min_tokens=10)
    cc = {"type": "ephemeral"}
    base = [{"type": "text", "text": long_text(50, seed=f"b{i}")} for i in range(5)]
    first = {
        "model": "m",
        "messages": [{"role": "user", "content": [*base[:-1], {**base[-1], "cache_control": cc}]}],
    }
    cache.account(first, list(counter.units(first)))

    def grown(extra: int) -> dict[str, Any]:
        more = [{"type": "text", "text": f"x{i}"} for i in range(extra)]
        return {
            "model": "m",
            "messages": [{"role": "user", "content": [*base, *more[:-1], {**more[-1], "cache_control": cc}]}],
        }

    near = cache.account(grown(20), list(counter.units(grown(20))))
    assert near.cache_read_input_tokens == counter.count_request(first)
    cache.clear()
    cache.account(first, list(counter.units(first)))
    far = cache.account(grown(21), list(counter.units(grown(21))))
    assert far.cache_read_input_tokens == 0 and far.cache_creation_input_tokens == counter.count_request(
        grown(21)
    )


def test_tool_input_key_order_breaks_cache() -> None:
    counter = TokenCounter()
    cache = PromptCache(clock=FakeClock(), min_tokens=10)

    def body(inp: dict[str, Any]) -> dict[str, Any]:
        return {
            "model": "m",
            "messages": [
                {"role": "user", "content": long_text(100)},
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "t",
                            "name": "f",
                            "input": inp,
                            "cache_control": {"type": "ephemeral"},
                        }
                    ],
                },
            ],
        }

    cache.account(body({"a": 1, "b": 2}), list(counter.units(body({"a": 1, "b": 2}))))
    same = cache.account(body({"a": 1, "b": 2}), list(counter.units(body({"a": 1, "b": 2}))))
    swapped = cache.account(body({"b": 2, "a": 1}), list(counter.units(body({"b": 2, "a": 1}))))
    assert same.cache_read_input_tokens > 0 and swapped.cache_read_input_tokens < same.cache_read_input_tokens


def test_cache_fields_can_be_omitted() -> None:
    with FakeAnthropic(report_cache=False) as srv:
        system = [{"type": "text", "text": long_text(1200), "cache_control": {"type": "ephemeral"}}]
        body = {"model": MODEL, "max_tokens": 10, "system": system, "messages": user("x")}
        _, _, data = raw_post(srv, "/v1/messages", body)
        usage = json.loads(data)["usage"]
        assert set(usage) == {"input_tokens", "output_tokens"}
        assert usage["input_tokens"] == count_request_tokens(body, srv.counter)
        _, _, data = raw_post(srv, "/v1/messages", {**body, "stream": True})
        events = sse_events(data)
        assert "cache_read_input_tokens" not in events[0][1]["message"]["usage"]
        msg = sync_client(srv).messages.create(model=MODEL, max_tokens=10, system=system, messages=user("x"))
        assert msg.usage.cache_read_input_tokens is None


# -- faults ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "exc"),
    [
        (Fault.rate_limit(retry_after=0), anthropic.RateLimitError),
        (Fault.overloaded(), anthropic.OverloadedError),
        (Fault.api_error(), anthropic.InternalServerError),
    ],
)
def test_status_faults_without_retries(srv: FakeAnthropic, fault: Fault, exc: type[Exception]) -> None:
    srv.queue_text("kept for the next request")
    srv.queue_fault(fault)
    with pytest.raises(exc) as info:
        sync_client(srv).messages.create(model=MODEL, max_tokens=10, messages=user("x"))
    assert info.value.status_code == fault.status and info.value.type == fault.error_type
    assert srv.request_count == 1
    if fault.status == 429:
        assert info.value.response.headers["retry-after"] == "0"
    ok = sync_client(srv).messages.create(model=MODEL, max_tokens=10, messages=user("x"))
    assert ok.content[0].text == "kept for the next request"


def test_sdk_retries_429_and_529(srv: FakeAnthropic) -> None:
    srv.queue_fault(Fault.overloaded(), Fault.rate_limit(retry_after=0.01))
    srv.queue_text("finally")
    client = anthropic.Anthropic(base_url=srv.base_url, api_key=KEY)  # default max_retries=2
    msg = client.messages.create(model=MODEL, max_tokens=10, messages=user("x"))
    assert msg.content[0].text == "finally"
    reqs = srv.message_requests()
    assert [r.status for r in reqs] == [529, 429, 200]
    assert [r.headers.get("x-stainless-retry-count") for r in reqs] == ["0", "1", "2"]
    assert reqs[0].body == reqs[2].body


@pytest.mark.asyncio
async def test_drop_mid_stream_and_retry_gets_same_reply(srv: FakeAnthropic) -> None:
    text = "abcdefghijklmnopqrstuvwxyz" * 4
    srv.queue_text(text)
    srv.queue_fault(Fault.drop(after=2))
    client = async_client(srv)
    seen: list[str] = []
    with pytest.raises((httpx2.RemoteProtocolError, anthropic.APIConnectionError)):
        async with client.messages.stream(model=MODEL, max_tokens=200, messages=user("x")) as stream:
            async for chunk in stream.text_stream:
                seen.append(chunk)
    assert "".join(seen) == text[: 2 * srv.chunk_chars]
    assert srv.last_request.outcome == "dropped"
    async with client.messages.stream(model=MODEL, max_tokens=200, messages=user("x")) as stream:
        assert (await stream.get_final_message()).content[0].text == text


def test_drop_non_streaming_is_connection_error(srv: FakeAnthropic) -> None:
    srv.queue_fault(Fault.drop())
    with pytest.raises(anthropic.APIConnectionError):
        sync_client(srv).messages.create(model=MODEL, max_tokens=10, messages=user("x"))


@pytest.mark.asyncio
async def test_sse_error_event_mid_stream(srv: FakeAnthropic) -> None:
    srv.queue_fault(Fault.sse_error(after=1))
    client = async_client(srv, max_retries=2)
    with pytest.raises(anthropic.APIStatusError) as info:
        async with client.messages.stream(
            model=MODEL, max_tokens=200, messages=user("tell me a story")
        ) as stream:
            await stream.get_final_message()
    err = info.value
    assert not isinstance(err, anthropic.OverloadedError)
    assert (err.status_code, err.type, err.api_message) == (200, "overloaded_error", "Overloaded")
    assert srv.request_count == 1  # not retried


@pytest.mark.asyncio
async def test_malformed_sse(srv: FakeAnthropic) -> None:
    srv.queue_fault(Fault.malformed(after=1))
    client = async_client(srv)
    with pytest.raises(ValueError):  # json.JSONDecodeError from the SDK's SSE decoder
        async with client.messages.stream(
            model=MODEL, max_tokens=200, messages=user("tell me a story")
        ) as stream:
            await stream.get_final_message()


@pytest.mark.asyncio
async def test_slow_stream_completes(srv: FakeAnthropic) -> None:
    srv.queue_fault(Fault.slow(0.005))
    srv.queue_text("slow but complete reply text")
    async with async_client(srv).messages.stream(model=MODEL, max_tokens=200, messages=user("x")) as stream:
        assert await stream.get_final_text() == "slow but complete reply text"
    assert srv.last_request.fault == "slow"


@pytest.mark.asyncio
async def test_hold_until_released(srv: FakeAnthropic) -> None:
    fault = Fault.hold(after=1)
    srv.queue_fault(fault)
    text = "first chunk of text and then the rest"
    srv.queue_text(text)
    client = async_client(srv)
    async with client.messages.stream(model=MODEL, max_tokens=200, messages=user("x")) as stream:
        chunks = stream.text_stream.__aiter__()
        first = await chunks.__anext__()
        assert await asyncio.to_thread(fault.reached.wait, 10)
        assert first == text[: srv.chunk_chars]
        fault.release.set()
        rest = [c async for c in chunks]
    assert first + "".join(rest) == text


@pytest.mark.asyncio
async def test_hold_then_client_abandons_stream(srv: FakeAnthropic) -> None:
    fault = Fault.hold(after=1)
    srv.queue_fault(fault)
    srv.queue_text(long_text(300))
    client = async_client(srv)
    async with client.messages.stream(model=MODEL, max_tokens=2000, messages=user("x")) as stream:
        await stream.text_stream.__anext__()
        assert await asyncio.to_thread(fault.reached.wait, 10)
    fault.release.set()  # the client is gone; the server must cope and keep serving
    msg = await client.messages.create(model=MODEL, max_tokens=50, messages=user("after"))
    assert msg.content[0].text in {"Echo: after", long_text(300)[: len(msg.content[0].text)]}


def test_custom_and_foreign_errors(srv: FakeAnthropic) -> None:
    openai_msg = "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens."
    srv.queue_fault(Fault.custom(400, "invalid_request_error", openai_msg))
    with pytest.raises(anthropic.BadRequestError) as info:
        sync_client(srv).messages.create(model=MODEL, max_tokens=10, messages=user("x"))
    assert info.value.api_message == openai_msg
    llama = {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 9000,
            "n_ctx": 8192,
        }
    }
    srv.queue_fault(Fault.raw(400, llama))
    with pytest.raises(anthropic.BadRequestError) as info:
        sync_client(srv).messages.create(model=MODEL, max_tokens=10, messages=user("x"))
    assert info.value.body == llama


# -- auth, models, CLI -----------------------------------------------------------------------------


def test_auth(srv: FakeAnthropic) -> None:
    bad = anthropic.Anthropic(base_url=srv.base_url, api_key="wrong", max_retries=0)
    with pytest.raises(anthropic.AuthenticationError) as info:
        bad.messages.create(model=MODEL, max_tokens=10, messages=user("x"))
    assert info.value.type == "authentication_error" and info.value.request_id.startswith("req_")
    status, _, data = raw_post(
        srv, "/v1/messages", {"model": MODEL, "max_tokens": 1, "messages": user("x")}, key=""
    )
    assert status == 401 and json.loads(data)["error"]["type"] == "authentication_error"
    bearer = anthropic.Anthropic(base_url=srv.base_url, auth_token=KEY, max_retries=0)
    assert bearer.messages.create(model=MODEL, max_tokens=10, messages=user("x")).content
    assert srv.requests[-1].headers["authorization"] == f"Bearer {KEY}"


def test_models_endpoint(srv: FakeAnthropic) -> None:
    client = sync_client(srv)
    info = client.models.retrieve("claude-haiku-4-5")
    assert (info.id, info.type, info.max_input_tokens) == ("claude-haiku-4-5", "model", 200_000)
    assert info.display_name and info.created_at.year >= 2024 and info.max_tokens == srv.max_output_tokens
    srv.window = 1_000_000
    ids = [m.id for m in client.models.list()]
    assert MODEL in ids and client.models.retrieve(MODEL).max_input_tokens == 1_000_000


def test_cli_serves_script(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["scripted hello", {"tool_use": {"name": "ls", "input": {"p": "."}}}]))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakeapi",
            "--port",
            "0",
            "--window",
            "5000",
            "--script",
            str(script),
            "--reply",
            "fixed",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)
        client = anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0)
        texts = [
            client.messages.create(model=MODEL, max_tokens=10, messages=user("x")).content[0]
            for _ in range(3)
        ]
        assert texts[0].text == "scripted hello" and texts[1].name == "ls" and texts[2].text == "fixed"
        assert client.models.retrieve(MODEL).max_input_tokens == 5000
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert json.loads(out.strip().splitlines()[-1])["requests"] == 3
