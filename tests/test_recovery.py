"""Recovery and cost through the engine: media cap, cache breakpoints, media-count errors, attachments."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys

import pytest
from PIL import Image

from desktop.engine.compaction import count_breakpoints, problems
from desktop.engine.events import TurnError
from tests.fakeapi import Fault

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process


def png(color: tuple[int, int, int], size: tuple[int, int] = (8, 8)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, "PNG")
    return buf.getvalue()


def image_block(i: int) -> dict:
    data = base64.b64encode(png((i % 256, (i * 7) % 256, 3))).decode()
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def media_in(body: dict) -> int:
    count = 0
    for msg in body["messages"]:
        for block in msg["content"]:
            if block.get("type") in ("image", "document"):
                count += 1
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                count += sum(1 for b in block["content"] if b.get("type") in ("image", "document"))
    return count


async def test_120_images_go_through_as_100_and_a_note(engine, fake_api):
    sid = (await engine.store.create_session("pics", "claude-haiku-4-5")).id  # a 200K model: limit 100
    fake_api.queue_text("I see them")
    reply = await engine.send(sid, "what is in these?", [image_block(i) for i in range(120)])
    assert reply is not None and reply.status == "complete"
    body = fake_api.message_requests()[-1].body
    assert media_in(body) == 100
    assert "20 older images" in json.dumps(body)
    stored = await engine.store.messages(sid)
    assert sum(1 for b in stored[0].content if b["type"] == "image") == 120  # the originals are kept


async def test_media_count_error_is_recovered_by_capping_harder(engine, fake_api):
    sid = (await engine.store.create_session("pics", "claude-haiku-4-5")).id
    fake_api.queue_fault(
        Fault.custom(400, "invalid_request_error", "Too much media: 0 document pages + 30 images > 20")
    )
    fake_api.queue_text("fine now")
    reply = await engine.send(sid, "look", [image_block(i) for i in range(30)])
    assert reply is not None and reply.content[0]["text"] == "fine now"
    assert not [e for e in engine.events if isinstance(e, TurnError)]
    assert media_in(fake_api.message_requests()[-1].body) < 30


async def test_media_across_history_and_tool_results_is_counted(engine, fake_api):
    sid = (await engine.store.create_session("pics", "claude-haiku-4-5")).id
    await engine.store.add_message(
        sid, "user", [image_block(i) for i in range(60)] + [{"type": "text", "text": "a"}]
    )
    await engine.store.add_message(
        sid, "assistant", [{"type": "tool_use", "id": "t1", "name": "Screenshot", "input": {}}]
    )
    await engine.store.add_message(
        sid,
        "user",
        [{"type": "tool_result", "tool_use_id": "t1", "content": [image_block(i) for i in range(60, 90)]}],
    )
    fake_api.queue_text("ok")
    await engine.send(sid, "and these", [image_block(i) for i in range(90, 110)])
    body = fake_api.message_requests()[-1].body
    assert media_in(body) == 100
    assert problems(body["messages"]) == []


async def test_breakpoints_never_exceed_four_and_the_prefix_is_read_from_cache(engine, fake_api):
    sid = (await engine.store.create_session("cache", "claude-sonnet-4-6")).id
    long_text = "The quick brown fox jumps over the lazy dog. " * 200
    for i in range(8):
        fake_api.queue_tool_use("Read", {"path": f"f{i}.py"}, text="reading")
        reply = await engine.send(sid, f"step {i}: {long_text}")
        assert reply.content[-1]["type"] == "tool_use"
        await engine.send_content(
            sid,
            [
                {
                    "type": "tool_result",
                    "tool_use_id": reply.content[-1]["id"],
                    "content": f"contents of f{i}.py\n" + long_text,
                }
            ],
        )
    requests = fake_api.message_requests()
    for r in requests:
        assert count_breakpoints(r.body.get("system"), r.body.get("tools"), r.body["messages"]) <= 4
    reads = [r.usage.get("cache_read_input_tokens", 0) for r in requests[2:]]
    assert all(reads), "every later request reads the prefix the previous one wrote"
    total_in = sum(r.prompt_tokens for r in requests[2:])
    assert sum(reads) / total_in > 0.8


async def test_providers_without_cache_fields_work_unchanged(engine, fake_api):
    fake_api.report_cache = False
    sid = (await engine.store.create_session("nocache", "claude-sonnet-4-6")).id
    fake_api.queue_text("plain")
    reply = await engine.send(sid, "hello")
    assert reply.status == "complete" and reply.usage.prompt_tokens > 0
    snap = await engine.measure(sid)
    assert snap.source == "api" and snap.used >= reply.usage.prompt_tokens


@pytest.mark.loopback  # precis in a subprocess
def test_cli_attach_sends_images(fake_api, precis_home, tmp_path):
    path = tmp_path / "shot.png"
    path.write_bytes(png((200, 10, 10), (32, 16)))
    fake_api.queue_text("a red rectangle")
    env = dict(
        os.environ,
        PRECIS_HOME=str(precis_home),
        ANTHROPIC_BASE_URL=fake_api.base_url,
        ANTHROPIC_API_KEY="test-key",
    )
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "desktop",
            "chat",
            "--attach",
            str(path),
            "--attach",
            str(path),
            "what is this?",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout == "a red rectangle\n"
    assert media_in(fake_api.message_requests()[-1].body) == 2
    bad = subprocess.run(
        [sys.executable, "-m", "desktop", "chat", "--attach", str(tmp_path / "missing.png"), "x"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 1 and "cannot attach" in bad.stderr
