from desktop.engine.compaction.summary_prompt import (
    MARKER,
    build_summary_request,
    detect_language,
    drop_oldest_groups,
    extract_summary,
    validate_summary,
)
from desktop.engine.types import StoredMessage


def _m(mid, role, content):
    return StoredMessage(id=mid, session_id=1, role=role, content=content)


def _u(mid, text):
    return _m(mid, "user", [{"type": "text", "text": text}])


def _a(mid, text):
    return _m(mid, "assistant", [{"type": "text", "text": text}])


def test_request_shape_sections_previous_summary_focus():
    msgs = [
        _u(1, "Refactor the parser"),
        _a(2, "Done"),
        _m(
            3,
            "user",
            [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A"}}],
        ),
    ]
    req = build_summary_request(
        msgs, previous_summary="Earlier: set up repo", focus="the parser API", max_tokens=4096, model="m"
    )
    assert set(req) == {"model", "system", "messages", "max_tokens"} and req["max_tokens"] == 4096
    assert MARKER in req["system"]
    for section in (
        "Goal",
        "User instructions and constraints",
        "Decisions and why",
        "Current state",
        "Errors and fixes",
        "Next step",
    ):
        assert f"## {section} — " in req["system"]
    body = req["messages"][0]["content"][0]["text"]
    assert req["messages"][0]["role"] == "user"
    assert "Update this existing summary" in body and "Earlier: set up repo" in body
    assert "User [#1]: Refactor the parser" in body and "[image]" in body  # ids, for the summary to cite
    assert "focus on: the parser API" in body
    assert body.endswith("in the language the user writes in (English if the user mixes languages).")


def test_no_previous_summary_no_focus():
    body = build_summary_request([_u(1, "hi")], previous_summary=None, focus=" ", max_tokens=10)["messages"][
        0
    ]["content"][0]["text"]
    assert "Update this existing summary" not in body and "focus on" not in body


def test_language_detection():
    assert detect_language([_u(1, "请帮我重构这个解析器，保持接口不变。")]) == "zh"
    assert detect_language([_u(1, "このパーサーをリファクタリングしてください。")]) == "ja"
    assert detect_language([_u(1, "이 파서를 리팩터링해 주세요.")]) == "ko"
    assert detect_language([_u(1, "Please fix src/app.py 谢谢")]) == "en"
    # Assistant text does not count: the user's language decides.
    assert detect_language([_u(1, "Fix it"), _a(2, "好的，我来修复这个问题，马上就好。")]) == "en"
    body = build_summary_request(
        [_u(1, "请帮我重构这个解析器")], previous_summary=None, focus=None, max_tokens=1
    )["messages"][0]["content"][0]["text"]
    assert body.endswith("in Chinese (in the same script, simplified or traditional, that the user writes).")


def test_validate_summary():
    assert "too short" in validate_summary("  ok  ", 1000)
    assert "not smaller" in validate_summary("x" * 4000, 500)
    assert "refused" in validate_summary("I'm sorry, but I can't help with summarising this.", 10_000)
    assert "refused" in validate_summary("抱歉，我无法完成这个请求。", 10_000)
    assert validate_summary("## Primary goal\nShip the parser refactor.", 10_000) is None


def test_extract_summary():
    assert extract_summary("<analysis>think</analysis>\n<summary>\nThe goal\n</summary>") == "The goal"
    assert extract_summary("plain text summary") == "plain text summary"
    assert extract_summary("<summary>cut off") == "cut off"


def test_drop_oldest_groups_never_splits_pairs():
    msgs = [
        _u(1, "a"),
        _a(2, "b"),
        _u(3, "c"),
        _m(4, "assistant", [{"type": "tool_use", "id": "t", "name": "X", "input": {}}]),
        _m(5, "user", [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]),
        _a(6, "d"),
        _u(7, "e"),
    ]
    assert [m.id for m in drop_oldest_groups(msgs, 1)] == [3, 4, 5, 6, 7]
    assert [m.id for m in drop_oldest_groups(msgs, 2)] == [7]
    assert drop_oldest_groups(msgs, 3) == []
    assert drop_oldest_groups(msgs, 0) == msgs
