from desktop.engine.compaction.normalize import flatten
from desktop.engine.types import StoredMessage


def _m(mid, role, content, **meta):
    return StoredMessage(id=mid, session_id=1, role=role, content=content, meta=meta)


def test_flatten_renders_markers_not_prose():
    messages = [
        _m(1, "user", [{"type": "text", "text": '<!--files:[{"name":"a"}]-->Fix the bug'}], imported=True),
        _m(
            2,
            "assistant",
            [
                {"type": "thinking", "thinking": "long reasoning " * 50, "signature": "s"},
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Read",
                    "input": {"file_path": "/src/app.py", "note": 'say "hi" & <bye>\nnow' + "x" * 100},
                },
            ],
        ),
        _m(
            3,
            "user",
            [
                {"type": "tool_result", "tool_use_id": "t1", "content": "line1\n" * 200, "is_error": True},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}},
            ],
        ),
        _m(4, "user", [{"type": "document", "title": "spec.pdf", "source": {"type": "base64", "data": "x"}}]),
    ]
    text = flatten(messages)
    assert text.startswith(
        'User: Fix the bug\n\nAssistant: [thinking]\nLet me look.\n<prior-tool-call name="Read"'
    )
    assert "files:" not in text and "imported" not in text and "signature" not in text
    call = text.split("<prior-tool-call ")[1].split("/>")[0]
    assert "&quot;file_path&quot;:&quot;/src/app.py&quot;" in call
    assert "&amp;" in call and "&lt;bye&gt;" in call and "\n" not in call
    raw_input = call.split('input="')[1].split('"')[0]
    assert raw_input.endswith("…")
    assert '<prior-tool-result name="Read" chars="1200" is_error="true">' in text
    result_body = text.split('is_error="true">')[1].split("</prior-tool-result>")[0]
    assert len(result_body) <= 501
    assert "[image]" in text and "[document: spec.pdf]" in text
    assert "(used" not in text


def test_flatten_accepts_dicts_and_string_content():
    text = flatten(
        [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": []},
            {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
        ]
    )
    assert text == "User: hello\n\nAssistant: hi"


def test_unknown_tool_result_name():
    text = flatten(
        [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz", "content": "x"}]}]
    )
    assert 'name="unknown_tool" chars="1"' in text
