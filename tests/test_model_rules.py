"""The newest models' request rules, end to end through the real engine and SDK against the loopback server:
another model's thinking is not sent back after a switch, no forced tool use reaches a model that rejects it,
and the text between tool calls is asked to be shown where the model hides it by default."""

from __future__ import annotations

from desktop.engine.compaction import request_shape as cp
from desktop.engine.config.catalog import ModelCatalog
from desktop.engine.providers.model_rules import fit_request, tool_choice_for
from desktop.engine.types import StoredMessage
from tests.test_compaction_engine import chat_requests

SIGNATURE = "a" * 80


def _thinking_in(body: dict) -> list[str]:
    return [
        b.get("thinking", "")
        for m in body["messages"]
        if m["role"] == "assistant"
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "thinking"
    ]


async def test_a_chat_that_switches_model_does_not_send_the_other_models_thinking(engine, fake_api):
    sid = await engine.new_session("claude-sonnet-4-6")
    fake_api.queue_thinking("Sonnet's own reasoning", "First answer.")
    await engine.send(sid, "First question")
    fake_api.queue_text("Second answer.")
    await engine.send(sid, "Second question")
    same = chat_requests(fake_api)[-1].body
    assert _thinking_in(same) == ["Sonnet's own reasoning"]  # the same model gets its thinking back

    await engine.set_chat_model(sid, "claude-opus-5-5")
    fake_api.queue_text("Third answer.")
    await engine.send(sid, "Third question")
    switched = chat_requests(fake_api)[-1].body
    assert switched["model"] == "claude-opus-5-5"
    assert _thinking_in(switched) == []
    assert any(
        b.get("text") == "First answer."
        for m in switched["messages"]
        if m["role"] == "assistant"
        for b in m["content"]
    )  # the reply itself stays
    # Opus 5.5 hides the text between tool calls unless asked: the request asks (adaptive, its only mode).
    assert switched["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert "thinking" not in same  # a model that shows it by default is left as it was

    # Back on Sonnet: its own thinking is its again, Opus's (none here) would not be.
    await engine.set_chat_model(sid, "claude-sonnet-4-6")
    fake_api.queue_text("Fourth answer.")
    await engine.send(sid, "Fourth question")
    assert _thinking_in(chat_requests(fake_api)[-1].body) == ["Sonnet's own reasoning"]


def test_repair_drops_only_thinking_written_by_another_model():
    rows = [
        StoredMessage(1, 1, "user", [{"type": "text", "text": "q"}]),
        StoredMessage(
            2,
            1,
            "assistant",
            [{"type": "thinking", "thinking": "t", "signature": SIGNATURE}, {"type": "text", "text": "a"}],
            model="claude-sonnet-4-6",
        ),
        StoredMessage(3, 1, "user", [{"type": "text", "text": "q2"}]),
    ]
    kinds = [b["type"] for b in cp.repair(rows, "claude-opus-5-5")[1]["content"]]
    assert kinds == ["text"]
    assert [b["type"] for b in cp.repair(rows, "claude-sonnet-4-6")[1]["content"]] == ["thinking", "text"]
    assert [b["type"] for b in cp.repair(rows)[1]["content"]] == ["thinking", "text"]  # no model: unchanged
    repairer = cp.Repairer()  # the incremental form redoes its rows when the model changes
    assert [b["type"] for b in repairer.update(rows, "claude-sonnet-4-6")[1]["content"]] == [
        "thinking",
        "text",
    ]
    assert [b["type"] for b in repairer.update(rows, "claude-opus-5-5")[1]["content"]] == ["text"]


def test_no_forced_tool_choice_reaches_a_model_that_rejects_it():
    catalog = ModelCatalog()
    opus55, sonnet46 = catalog.info("claude-opus-5-5"), catalog.info("claude-sonnet-4-6")
    for forced in ({"type": "any"}, {"type": "tool", "name": "read_file"}):
        assert tool_choice_for(forced, opus55) == {"type": "auto"}
        assert tool_choice_for(forced, sonnet46) == forced
    assert tool_choice_for({"type": "any", "disable_parallel_tool_use": True}, opus55) == {
        "type": "auto",
        "disable_parallel_tool_use": True,
    }
    request = {
        "model": "claude-fable-5-2",
        "messages": [],
        "tool_choice": {"type": "tool", "name": "x"},
        "thinking": {"type": "enabled", "budget_tokens": 4096},
    }
    fitted = fit_request(request, catalog.info("claude-fable-5-2"))
    assert fitted["tool_choice"] == {"type": "auto"}
    assert fitted["thinking"] == {"type": "adaptive", "display": "summarized"}  # a budget is rejected there
    assert request["tool_choice"] == {"type": "tool", "name": "x"}  # the caller's request is not changed
