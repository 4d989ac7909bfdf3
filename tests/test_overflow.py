"""Overflow / size-error classification: every known shape, and the look-alikes that must not match."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import pytest

from desktop.engine.providers.overflow import (
    Overflow,
    detect,
    detect_stop_reason,
    from_exception,
    is_request_too_large,
)

INVALID = "invalid_request_error"


def _anthropic_body(message: str, etype: str = INVALID) -> dict[str, Any]:
    return {"type": "error", "error": {"type": etype, "message": message}}


def _sdk_error(status: int, body: dict[str, Any] | str) -> anthropic.APIStatusError:
    """The exception the real SDK raises for this HTTP response (served in-process, no network)."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        if isinstance(body, str):
            return httpx2.Response(status, text=body)
        return httpx2.Response(status, json=body)

    client = anthropic.Anthropic(
        api_key="test", http_client=httpx2.Client(transport=httpx2.MockTransport(handler)), max_retries=0
    )
    with pytest.raises(anthropic.APIStatusError) as info:
        client.messages.create(
            model="claude-opus-4-6", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
        )
    return info.value


# ---------------------------------------------------------------- shapes that ARE overflow


def test_anthropic_prompt_too_long() -> None:
    msg = "prompt is too long: 208310 tokens > 200000 maximum"
    o = detect(400, INVALID, msg, _anthropic_body(msg))
    assert o == Overflow("context", msg, tokens=208310, limit=200000, overshoot=8310, shape="anthropic-ptl")
    # 1M-window wording and the old "199999 maximum" both parse.
    assert detect(400, INVALID, "prompt is too long: 1000500 tokens > 1000000 maximum").limit == 1_000_000
    assert detect(400, INVALID, "prompt is too long: 200100 tokens > 199999 maximum").overshoot == 101


def test_anthropic_input_plus_max_tokens() -> None:
    msg = (
        "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, "
        "decrease input length or `max_tokens` and try again"
    )
    o = detect(400, INVALID, msg)
    assert o is not None and o.kind == "context"
    assert (o.tokens, o.max_tokens, o.limit, o.overshoot) == (178959, 64000, 200000, 42959)


def test_openai_style_requested_with_breakdown() -> None:
    msg = (
        "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens "
        "(130000 in the messages, 10000 in the completion). Please reduce the length of the messages or completion."
    )
    o = detect(400, "invalid_request_error", msg)
    assert o is not None and o.kind == "context"
    assert (o.tokens, o.max_tokens, o.limit, o.overshoot) == (130000, 10000, 131072, 8928)


def test_openai_style_variants() -> None:
    # DeepSeek (OpenAI wire) without a completion part.
    o = detect(
        400, None, "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens."
    )
    assert (o.tokens, o.limit, o.overshoot, o.max_tokens) == (70000, 65536, 4464, None)
    # "your messages resulted in M tokens".
    o = detect(
        400,
        None,
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. "
        "Please reduce the length of the messages.",
    )
    assert (o.tokens, o.limit, o.overshoot) == (9000, 8192, 808)
    # OpenRouter's own endpoint wording with "about".
    o = detect(
        400,
        None,
        "This endpoint's maximum context length is 1000000 tokens. However, you requested about 1200000 tokens "
        "(1100000 of text input, 100000 in the output). Please reduce the length of either one.",
    )
    assert (o.tokens, o.max_tokens, o.limit, o.overshoot) == (1100000, 100000, 1000000, 200000)
    # vLLM: prompt + max_tokens over the window.
    o = detect(
        400,
        "BadRequestError",
        "'max_tokens' or 'max_completion_tokens' is too large: 4000. This model's maximum context length is "
        "4096 tokens and your request has 100 input tokens (4000 > 4096 - 100).",
    )
    assert (o.tokens, o.max_tokens, o.limit, o.overshoot) == (100, 4000, 4096, 4)
    # Number only in the limit: still an overflow, sizes unknown.
    o = detect(400, None, "maximum context length is 32768 tokens")
    assert o is not None and (o.limit, o.tokens) == (32768, None)
    # OpenAI's machine code with an unparseable message.
    body = {
        "error": {
            "message": "Input too big.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    }
    assert detect(400, None, "Input too big.", body).kind == "context"


def test_llama_cpp_server() -> None:
    msg = "request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it"
    body = {
        "error": {
            "code": 400,
            "message": msg,
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 4476,
            "n_ctx": 4096,
        }
    }
    o = detect(400, "exceed_context_size_error", msg, body)
    assert (o.kind, o.tokens, o.limit, o.overshoot) == ("context", 4476, 4096, 380)
    # Fields alone (message reworded by a proxy) still give the numbers.
    body["error"]["message"] = "context overflow"
    o = detect(400, None, None, body)
    assert (o.kind, o.tokens, o.limit) == ("context", 4476, 4096)


def test_openrouter_wrapped_upstream_json_and_text() -> None:
    upstream = _anthropic_body("prompt is too long: 210000 tokens > 200000 maximum")
    wrapped = {
        "error": {
            "message": "Provider returned error",
            "code": 400,
            "metadata": {"raw": json.dumps(upstream)},
        }
    }
    o = detect(400, None, "Provider returned error", wrapped)
    assert (o.tokens, o.limit, o.overshoot) == (210000, 200000, 10000)
    # Raw as plain text, and the whole body handed over as a JSON string.
    text_raw = {
        "error": {
            "message": "Provider returned error",
            "metadata": {"raw": "Too much media: 2 document pages + 99 images > 100"},
        }
    }
    assert detect(400, None, None, json.dumps(text_raw)).kind == "media"
    # An upstream rate limit inside the wrapper is not an overflow.
    limited = {
        "error": {
            "message": "Provider returned error",
            "metadata": {
                "raw": json.dumps(
                    _anthropic_body(
                        "Number of request tokens has exceeded your per-minute rate limit", "rate_limit_error"
                    )
                )
            },
        }
    }
    assert detect(400, None, "Provider returned error", limited) is None


def test_media_shapes() -> None:
    o = detect(400, INVALID, "Too much media: 0 document pages + 102 images > 100")
    assert (o.kind, o.media_count, o.media_limit, o.overshoot) == ("media", 102, 100, 2)
    o = detect(400, INVALID, "too many images and documents: 104 + 1 > 100")
    assert (o.kind, o.media_count, o.media_limit, o.overshoot) == ("media", 105, 100, 5)


def test_bedrock_and_bare_ptl() -> None:
    assert detect(400, "ValidationException", "Input is too long for requested model.").kind == "context"
    o = detect(400, INVALID, "prompt is too long")
    assert o.kind == "context" and o.tokens is None


def test_stop_reason() -> None:
    o = detect_stop_reason("model_context_window_exceeded")
    assert o is not None and o.kind == "truncated"
    for other in ("max_tokens", "end_turn", "tool_use", None, ""):
        assert detect_stop_reason(other) is None


# ---------------------------------------------------------------- look-alikes that are NOT overflow


@pytest.mark.parametrize(
    ("status", "etype", "message"),
    [
        (
            400,
            INVALID,
            "max_tokens: 300000 > 128000, which is the maximum allowed number of output tokens for claude-opus-4-6",
        ),
        (400, INVALID, "max_tokens must be at least 1"),
        (400, INVALID, "max_tokens: Field required"),
        (400, INVALID, "Your context window is fine"),
        (
            400,
            INVALID,
            "context window is 200000 tokens; thinking.budget_tokens must be less than max_tokens",
        ),
        (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
        (429, None, "prompt is too long: 208310 tokens > 200000 maximum"),  # status wins: a rate limit
        (529, "overloaded_error", "Overloaded: too many tokens in flight"),
        (413, "request_too_large", "Request exceeds the maximum size"),
        (
            400,
            INVALID,
            "messages.19.content.27.image.source.base64.data: At least one of the image dimensions exceed max "
            "allowed size for many-image requests: 2000 pixels",
        ),
        (
            400,
            INVALID,
            "messages.3.content.0.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels",
        ),
        (
            400,
            INVALID,
            "messages.46.content.9.image.source.base64: image exceeds 5 MB maximum: 6096280 bytes > 5242880 bytes",
        ),
        (
            400,
            INVALID,
            "messages.6: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01",
        ),
        (401, "authentication_error", "invalid x-api-key"),
        (None, None, None),
        (400, INVALID, ""),
    ],
)
def test_not_overflow(status: int | None, etype: str | None, message: str | None) -> None:
    assert (
        detect(status, etype, message, _anthropic_body(message, etype) if message and etype else None) is None
    )


def test_request_too_large_helper() -> None:
    assert is_request_too_large(413)
    assert is_request_too_large(None, "request_too_large")
    assert is_request_too_large(None, None, "Request exceeds the maximum size")
    assert not is_request_too_large(400, INVALID, "prompt is too long: 208310 tokens > 200000 maximum")
    assert not is_request_too_large(429, "rate_limit_error", "slow down")


# ---------------------------------------------------------------- exceptions


def test_from_real_sdk_exceptions() -> None:
    ptl = _sdk_error(400, _anthropic_body("prompt is too long: 208310 tokens > 200000 maximum"))
    assert isinstance(ptl, anthropic.BadRequestError)
    o = from_exception(ptl)
    assert (o.kind, o.tokens, o.limit, o.overshoot) == ("context", 208310, 200000, 8310)

    media = from_exception(_sdk_error(400, _anthropic_body("too many images and documents: 104 + 1 > 100")))
    assert media.kind == "media"

    wrapped = {
        "error": {
            "message": "Provider returned error",
            "code": 400,
            "metadata": {
                "raw": json.dumps(_anthropic_body("prompt is too long: 250000 tokens > 200000 maximum"))
            },
        }
    }
    assert from_exception(_sdk_error(400, wrapped)).overshoot == 50000

    too_large = _sdk_error(413, _anthropic_body("Request exceeds the maximum size", "request_too_large"))
    assert from_exception(too_large) is None and is_request_too_large(too_large)

    limited = _sdk_error(
        429,
        _anthropic_body(
            "Number of request tokens has exceeded your per-minute rate limit", "rate_limit_error"
        ),
    )
    assert from_exception(limited) is None and not is_request_too_large(limited)

    # A non-JSON body from a proxy: the SDK keeps the text as the message.
    text = _sdk_error(
        400, "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens."
    )
    assert from_exception(text).limit == 131072


def test_from_plain_and_chained_exceptions() -> None:
    assert from_exception(RuntimeError("prompt is too long: 300 tokens > 200 maximum")).overshoot == 100
    assert from_exception(ValueError("something else")) is None
    try:
        try:
            raise RuntimeError("Too much media: 1 document pages + 100 images > 100")
        except RuntimeError as inner:
            raise ConnectionError("turn failed") from inner
    except ConnectionError as outer:
        assert from_exception(outer).media_count == 101


def test_numbers_with_separators_and_case() -> None:
    o = detect(400, None, "Prompt is too long: 1,000,500 tokens > 1,000,000 maximum")
    assert (o.tokens, o.limit) == (1_000_500, 1_000_000)
