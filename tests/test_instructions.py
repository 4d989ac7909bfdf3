"""Instructions: the default ones (Settings) and a chat's own go out in the static system block (inside the
cached prefix), show as their own part of the breakdown, and the built-in prompt only calls a Claude model
Claude."""

from __future__ import annotations

import json

import pytest

from desktop.engine.config.settings import Paths, Settings
from desktop.engine.turn import assemble
from tests.conftest import _open_engine

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process


def system_of(fake_api) -> list[dict]:
    return fake_api.message_requests()[-1].body["system"]


async def test_a_model_that_is_not_claude_is_not_told_it_is_claude(engine, fake_api):
    sid = await engine.new_session(model="deepseek-chat")
    fake_api.queue_text("hi")
    await engine.send(sid, "hello")
    static = system_of(fake_api)[0]["text"]
    assert "Claude" not in static and static.startswith("You are a helpful assistant")
    other = await engine.new_session(model="claude-sonnet-4-6")
    fake_api.queue_text("hi")
    await engine.send(other, "hello")
    assert system_of(fake_api)[0]["text"].startswith("You are Claude")
    assert assemble.is_claude("anthropic/claude-opus-4.1") and not assemble.is_claude("glm-4.6")


@pytest.mark.parametrize("where", ["default", "chat", "both"])
async def test_instructions_are_sent_in_the_cached_static_block(fake_api, where):
    # Long enough for the cache's minimum length, so the second request reads the prefix the first wrote.
    long = " Keep each answer to the point, with examples." * 300
    default = "Always answer in haiku." + long if where in ("default", "both") else ""
    async with _open_engine({"instructions": default}) as engine:
        sid = await engine.new_session()
        if where in ("chat", "both"):
            await engine.update_state(sid, {"instructions": "Use metric units." + long})
        fake_api.queue_text("ok")
        await engine.send(sid, "hello")
        fake_api.queue_text("ok again")
        await engine.send(sid, "and again")
        first, second = fake_api.message_requests()[-2:]
        static = second.body["system"][0]
        assert "cache_control" in static  # the first breakpoint: instructions are in the cached prefix
        assert ("Always answer in haiku." in static["text"]) == bool(default)
        assert ("Use metric units." in static["text"]) == (where != "default")
        if where == "both":  # the default first, the chat's own after it
            assert static["text"].index("haiku") < static["text"].index("metric")
        # Stable: the second request starts with the same bytes (the cache is read, not written again).
        assert json.dumps(first.body["system"]) == json.dumps(second.body["system"])
        assert second.usage and second.usage.get("cache_read_input_tokens", 0) > 0
        snap = await engine.measure(sid)
        assert snap.breakdown["instructions"] > 0 and snap.breakdown["system"] > 0


async def test_without_instructions_the_breakdown_has_none(engine, fake_api):
    sid = await engine.new_session()
    fake_api.queue_text("ok")
    await engine.send(sid, "hello")
    snap = await engine.measure(sid)
    assert snap.breakdown["instructions"] == 0 and snap.breakdown["system"] > 0
    assert "<user-instructions>" not in system_of(fake_api)[0]["text"]


def test_default_instructions_are_saved_and_a_wrong_type_is_a_problem(tmp_path):
    paths = Paths(tmp_path / "c", tmp_path / "d", tmp_path / "k")
    settings = Settings(instructions="Be brief.")
    settings.save(paths)
    assert Settings.load(paths, env={}).instructions == "Be brief."
    paths.settings_file.write_text(json.dumps({"instructions": 42}), "utf-8")
    loaded = Settings.load(paths, env={})
    assert loaded.instructions == "" and any("instructions" in p for p in loaded.problems)
