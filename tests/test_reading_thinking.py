"""Issue 13 item 4: a per-chat extended-thinking switch with a budget setting; thinking blocks keep their
signatures (stored, and sent back unchanged); the chat shows a thinking block's full text on request."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from desktop.engine.turn.thinking import supports_thinking, thinking_param
from desktop.engine.types import StoredMessage
from desktop.ui.transcript.chat_model import ChatModel

THOUGHT = "Let me think.\nFirst, the premise.\nThen the conclusion."


async def _chat(engine) -> int:
    # A model whose thinking the chat's toggle turns on with a budget (the newest models think adaptively and
    # are always asked for it: tests/test_model_rules.py).
    return await engine.new_session("claude-sonnet-4-6")


@pytest.mark.in_process  # engine behaviour, not HTTP (tests/scripted_provider.py)
async def test_a_chat_with_thinking_on_asks_for_it_and_keeps_the_signature(engine, fake_api):
    sid = await _chat(engine)
    await engine.update_state(sid, {"thinking": True})
    fake_api.queue_thinking(THOUGHT, "the answer")
    await engine.send(sid, "why?")
    first = fake_api.message_requests()[-1].body
    budget = engine.settings.thinking_budget_tokens
    assert first["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert first["max_tokens"] > budget
    stored = (await engine.store.messages(sid))[-1]
    thinking = stored.content[0]
    assert thinking["type"] == "thinking" and thinking["thinking"] == THOUGHT
    assert len(thinking["signature"]) >= 64  # the server's signature, as streamed (signature_delta)
    fake_api.queue_text("more")
    await engine.send(sid, "and then?")
    second = fake_api.message_requests()[-1].body
    sent_back = second["messages"][1]["content"][0]
    assert sent_back == thinking  # unchanged: the API checks the signature


@pytest.mark.in_process  # engine behaviour, not HTTP (tests/scripted_provider.py)
async def test_thinking_off_by_default_and_for_models_without_it(engine, fake_api):
    sid = await _chat(engine)
    fake_api.queue_text("plain")
    await engine.send(sid, "hi")
    assert "thinking" not in fake_api.message_requests()[-1].body
    assert supports_thinking("claude-sonnet-4-6") and supports_thinking("anthropic/claude-3.7-sonnet")
    assert not supports_thinking("claude-3-5-haiku-latest") and not supports_thinking("deepseek-chat")
    assert thinking_param({"thinking": True}, "deepseek-chat", 8000, 16000) is None


def test_the_budget_fits_inside_the_output_limit():
    on = {"thinking": True}
    assert thinking_param(on, "claude-opus-4-1", 8000, 4096) == {"type": "enabled", "budget_tokens": 3072}
    assert thinking_param(on, "claude-opus-4-1", 100, 16000) == {"type": "enabled", "budget_tokens": 1024}
    assert thinking_param(on, "claude-opus-4-1", 8000, 1500) is None  # no room for the API's minimum
    assert thinking_param({"thinking": False}, "claude-opus-4-1", 8000, 16000) is None


def test_a_budget_in_settings_json_is_kept_in_range(tmp_path):
    import json

    from desktop.engine.config.settings import Paths, Settings

    paths = Paths.resolve({"PRECIS_HOME": str(tmp_path)})
    paths.ensure()
    paths.settings_file.write_text(json.dumps({"thinking_budget_tokens": 10}))
    settings = Settings.load(paths, env={})
    assert settings.thinking_budget_tokens == 1024 and settings.problems


def test_a_thinking_block_expands_to_its_full_text(qtbot):
    model = ChatModel()
    content = [
        {"type": "thinking", "thinking": THOUGHT, "signature": "s" * 64},
        {"type": "text", "text": "hi"},
    ]
    model.set_messages([StoredMessage(1, 1, "assistant", content)], has_older=False)  # type: ignore[arg-type]
    collapsed = model.row_at(0).segments[0]
    assert collapsed.kind == "thinking" and "premise" not in collapsed.text
    assert model.toggle_thinking(0)
    full = model.row_at(0).segments[0]
    assert full.kind == "thinking" and THOUGHT in full.text
    assert model.toggle_thinking(0)
    assert "premise" not in model.row_at(0).segments[0].text
    assert not model.toggle_thinking(5)


def test_the_settings_dialog_sets_the_thinking_budget(qtbot):
    from desktop.engine.config.settings import Settings
    from desktop.ui.settings.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings(), None, "keyring")
    qtbot.addWidget(dialog)
    assert dialog.form.thinking_budget.value() == Settings().thinking_budget_tokens
    dialog.form.thinking_budget.setValue(6_000)
    assert dialog.form.choice().settings.thinking_budget_tokens == 6_000
