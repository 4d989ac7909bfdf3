"""The request body encoded message by message is byte for byte what the SDK sends, call after call, as
messages are added and breakpoint marks move; anything unusual is left to the SDK."""

from __future__ import annotations

import json

from anthropic._utils._json import openapi_dumps

from desktop.engine.providers.wire import ORDER, BodyEncoder


def _sdk_bytes(request: dict) -> bytes:
    # The body messages.stream builds: its own key order, omitted keys dropped, then "stream": true.
    return openapi_dumps({**{k: request[k] for k in ORDER if k in request}, "stream": True})


def test_the_body_is_the_sdks_bytes_as_the_conversation_grows():
    encoder = BodyEncoder()
    messages: list[dict] = []
    system = [
        {"type": "text", "text": "You are helpful. «ünïcode» 中文", "cache_control": {"type": "ephemeral"}}
    ]
    tools = [{"name": "read", "description": "Read a file", "input_schema": {"type": "object"}}]
    for n in range(30):
        messages.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"t{n}",
                        "content": f'line {n}\n"quoted" \\ tab\t' * 20,
                    }
                ],
            }
        )
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"step {n}"},
                    {
                        "type": "tool_use",
                        "id": f"t{n + 1}",
                        "name": "read",
                        "input": {"file_path": f"src/{n}.py", "n": n / 3},
                    },
                ],
            }
        )
        marked = [
            *messages[:-1],
            {
                **messages[-1],
                "content": [
                    *messages[-1]["content"][:-1],
                    {**messages[-1]["content"][-1], "cache_control": {"type": "ephemeral"}},
                ],
            },
        ]  # the mark on a new copy
        request = {
            "model": "claude-sonnet-4-6",
            "max_tokens": 8192,
            "system": system,
            "messages": marked,
            "tools": tools,
        }
        body = encoder.encode(request)
        assert body == _sdk_bytes(request)
        assert json.loads(body)["messages"] == marked


def test_a_message_changed_for_a_new_copy_is_encoded_anew():
    encoder = BodyEncoder()
    first = {"role": "user", "content": [{"type": "text", "text": "a"}]}
    encoder.encode({"model": "m", "max_tokens": 1, "messages": [first]})
    again = {**first, "content": [{"type": "text", "text": "b"}]}
    body = encoder.encode({"model": "m", "max_tokens": 1, "messages": [again]})
    assert json.loads(body)["messages"][0]["content"][0]["text"] == "b"


def test_unknown_keys_or_values_are_left_to_the_sdk():
    encoder = BodyEncoder()
    assert (
        encoder.encode({"model": "m", "max_tokens": 1, "messages": [], "extra_headers": {"x": "y"}}) is None
    )
    assert (
        encoder.encode({"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": object()}]})
        is None
    )
    assert encoder.encode({"model": "m", "max_tokens": 1, "messages": [{"x": float("nan")}]}) is None
