from desktop.engine.compaction.request_shape import MISSING_RESULT, problems, repair
from desktop.engine.types import StoredMessage


def _t(text):
    return {"type": "text", "text": text}


def test_valid_input_passes_through_unchanged():
    msgs = [
        {"role": "user", "content": [_t("hi")]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"p": 1}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}, _t("and")],
        },
    ]
    assert problems(msgs) == []
    assert repair(msgs) == msgs


def test_repairs_everything_listed():
    msgs = [
        StoredMessage(
            id=1, session_id=1, role="assistant", content=[_t("leading")], meta={"stop_reason": "x"}
        ),
        {
            "role": "user",
            "content": [_t("   "), {"type": "tool_result", "tool_use_id": "ghost", "content": "orphan"}],
        },
        {"role": "user", "content": "plain string"},
        {
            "role": "assistant",
            "stop_reason": "tool_use",
            "content": [
                {"type": "thinking", "thinking": "no signature"},
                _t("calling"),
                {"type": "tool_use", "id": "a1", "name": "Read", "input": {}, "_precis": 1},
                {"type": "tool_use", "id": "a2", "name": "Bash", "input": '{"command": "ls"'},
            ],
        },
        {
            "role": "user",
            "content": [
                _t("typed while waiting"),
                {"type": "tool_result", "tool_use_id": "a2", "content": "out", "is_error": False, "extra": 1},
            ],
        },
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a1", "name": "Read", "input": {}}]},
    ]
    out = repair(msgs)
    assert problems(out) == []
    assert out[0] == {"role": "user", "content": [_t("(continued)")]}
    assert out[1] == {"role": "assistant", "content": [_t("leading")]}
    user = out[2]["content"]
    assert (
        user[0]["type"] == "text" and "orphan" in user[0]["text"] and "prior-tool-result" in user[0]["text"]
    )
    assert user[1] == _t("plain string")
    call = out[3]["content"]
    assert [b["type"] for b in call] == ["text", "tool_use", "tool_use"]
    assert call[1] == {"type": "tool_use", "id": "a1", "name": "Read", "input": {}}
    assert call[2]["input"] == {}  # partial JSON from an interrupted stream
    answer = out[4]["content"]
    assert answer[0] == {
        "type": "tool_result",
        "tool_use_id": "a1",
        "is_error": True,
        "content": MISSING_RESULT,
    }
    assert answer[1] == {"type": "tool_result", "tool_use_id": "a2", "content": "out", "is_error": False}
    assert answer[2] == _t("typed while waiting")
    # A duplicate tool_use id becomes a marker, and the conversation still ends with a user message.
    assert "prior-tool-call" in out[5]["content"][0]["text"]
    assert out[-1]["role"] == "user"


def test_empty_and_degenerate():
    assert repair([]) == []
    assert repair([{"role": "user", "content": [_t(" ")]}]) == [{"role": "user", "content": [_t("(empty)")]}]
    out = repair(
        [{"role": "assistant", "content": [{"type": "tool_use", "id": "x", "name": "R", "input": {}}]}]
    )
    assert problems(out) == [] and out[-1]["content"][0]["content"] == MISSING_RESULT


def test_problems_names_each_rule():
    bad = [
        {"role": "assistant", "content": [_t("")]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "R", "input": {}}]},
        {"role": "user", "content": [_t("x"), {"type": "tool_result", "tool_use_id": "zz"}], "meta": 1},
    ]
    text = "\n".join(problems(bad))
    for needle in (
        "expected 'user'",
        "empty text block",
        "without tool_result",
        "without tool_use",
        "must come first",
        "unknown keys ['meta']",
    ):
        assert needle in text
    assert problems([]) == ["no messages"]


def test_problems_reports_unhashable_ids_instead_of_raising():
    msgs = [
        {"role": "user", "content": [_t("go")]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": ["t"], "name": "x", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": ["t"], "content": "a"}]},
    ]
    found = problems(msgs)
    assert any("malformed tool_use" in p for p in found)
    assert problems(repair(msgs)) == []
