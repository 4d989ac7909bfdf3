"""Tell a context-window overflow (or too much media) apart from every other provider error, precisely.

Only exact, known shapes count; loose substrings such as "max_tokens" or "context window" do not (they also
appear in unrelated 400s, e.g. an invalid ``max_tokens`` value). The numbers in the message are parsed so the
caller learns the true window and by how much the request overshot it.

The shapes are the error bodies the providers actually return (Anthropic, Bedrock, OpenAI-compatible servers,
llama.cpp); each is quoted next to its pattern below. Pure Python: no Qt, no SDK import.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from msgspec import Struct

from desktop.engine.lazy_re import LazyPattern

__all__ = [
    "Overflow",
    "OverflowKind",
    "detect",
    "detect_stop_reason",
    "from_exception",
    "is_request_too_large",
]

OverflowKind = Literal["context", "media", "truncated"]

_N = r"(\d[\d,]*)"  # a count, possibly written with thousands separators

# --- Anthropic: "prompt is too long: 208310 tokens > 200000 maximum".
_PTL = LazyPattern(rf"prompt is too long:\s*{_N}\s*tokens?\s*>\s*{_N}\s*maximum", re.I)
# Same error where a proxy or older model drops the numbers; the phrase itself is specific enough.
_PTL_BARE = LazyPattern(r"\bprompt is too long\b", re.I)
# --- Anthropic, pre-4.5 models, input + max_tokens > window:
# "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or ..."
_INPUT_PLUS_MAX = LazyPattern(
    rf"input length and `?max_tokens`? exceed context limit:\s*{_N}\s*\+\s*{_N}\s*>\s*{_N}", re.I
)
# --- AWS Bedrock: "Input is too long for requested model."
_BEDROCK = LazyPattern(r"\binput is too long for requested model\b", re.I)
# --- OpenAI wire (OpenAI, DeepSeek, vLLM, OpenRouter):
# "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens
#  (130000 in the messages, 10000 in the completion). Please reduce ..."
# "... However, your messages resulted in 140000 tokens. Please reduce ..."
# "This endpoint's maximum context length is 1000000 tokens. However, you requested about 1200000 tokens
#  (1100000 of text input, 100000 in the output). ..."            (OpenRouter)
# "... maximum context length is 4096 tokens and your request has 100 input tokens (4000 > 4096 - 100)" (vLLM)
_OAI_LIMIT = LazyPattern(rf"maximum context length is\s*{_N}\s*tokens", re.I)
_OAI_REQUESTED = LazyPattern(rf"(?:you requested|resulted in)\s*(?:about\s*)?{_N}\s*tokens", re.I)
_OAI_INPUT = LazyPattern(rf"your request has\s*{_N}\s*input tokens", re.I)
_OAI_COMPLETION = LazyPattern(rf"{_N}\s*(?:in the completion|in the output)", re.I)
_OAI_TOO_LARGE = LazyPattern(rf"max_(?:completion_)?tokens'?.{{0,40}}?is too large:\s*{_N}", re.I)
# OpenAI's machine-readable code for the same error (error.code / error.type).
_OAI_CODE = "context_length_exceeded"
# --- llama.cpp's server: type "exceed_context_size_error", fields n_prompt_tokens / n_ctx,
# "request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it"
_LLAMA = LazyPattern(rf"request \({_N} tokens\) exceeds the available context size \({_N} tokens\)", re.I)
_LLAMA_TYPE = "exceed_context_size_error"
# --- Anthropic media caps (too many images or document pages in one request); recoverable by dropping old media:
# "Too much media: 0 document pages + 102 images > 100"
_MEDIA_PAGES = LazyPattern(
    rf"too much media:\s*{_N}\s*document pages?\s*\+\s*{_N}\s*images?\s*>\s*{_N}", re.I
)
# "too many images and documents: 104 + 1 > 100"
_MEDIA_COUNT = LazyPattern(rf"too many images and documents:\s*{_N}\s*\+\s*{_N}\s*>\s*{_N}", re.I)

# Statuses / types that are never an overflow even when they talk about tokens: rate limits ("Number of
# request tokens has exceeded your per-minute rate limit"), overload, auth, and 413 (bytes, not tokens).
# Other 5xx stay eligible: some proxies relay an upstream prompt-too-long with a 500.
_NOT_OVERFLOW_STATUS = {401, 402, 403, 413, 429, 529}
_NOT_OVERFLOW_TYPES = {
    "rate_limit_error",
    "overloaded_error",
    "request_too_large",
    "authentication_error",
    "permission_error",
    "billing_error",
}
# --- HTTP 413 from Anthropic's edge (body over its byte limit): "Request exceeds the maximum size".
_TOO_LARGE = LazyPattern(r"request exceeds the maximum size|request_too_large|request entity too large", re.I)

STOP_REASON_WINDOW = "model_context_window_exceeded"


class Overflow(Struct, frozen=True):
    """A provider's context-overflow error, with the numbers it reported."""

    kind: OverflowKind
    raw_message: str
    tokens: int | None = None  # prompt size the provider reported
    limit: int | None = None  # the true window (context) learned from the numbers
    overshoot: int | None = None  # tokens - limit, or input + max_tokens - limit; media: count - limit
    max_tokens: int | None = None  # output reservation that counted against the window, when reported
    media_count: int | None = None
    media_limit: int | None = None
    shape: str = ""  # which known error shape matched (for logs and tests)


def detect(
    status_code: int | None,
    error_type: str | None,
    message: str | None,
    body: dict[str, Any] | str | None = None,
) -> Overflow | None:
    """Classify one provider error. ``body`` is the parsed (or raw) response body; proxies' wrapped upstream
    errors (OpenRouter ``error.metadata.raw``) are looked into."""
    if status_code in _NOT_OVERFLOW_STATUS or (error_type or "").lower() in _NOT_OVERFLOW_TYPES:
        return None
    texts: list[str] = [message] if isinstance(message, str) and message else []
    fields: dict[str, Any] = {}
    types: list[str] = [error_type] if isinstance(error_type, str) else []
    _walk_body(body, texts, fields, types, depth=0)
    if any(t.lower() in _NOT_OVERFLOW_TYPES for t in types):
        return None
    raw = next((t for t in texts if t.strip()), "")
    for text in texts:
        found = _match_text(text)
        if found is not None:
            return found
    if _LLAMA_TYPE in types:  # numbers only in the n_prompt_tokens / n_ctx fields
        tokens, limit = _int(fields.get("n_prompt_tokens")), _int(fields.get("n_ctx"))
        return Overflow("context", raw, tokens, limit, _minus(tokens, limit), shape="llama.cpp")
    if _OAI_CODE in types:
        return Overflow("context", raw, shape="openai-code")
    return None


def detect_stop_reason(stop_reason: str | None) -> Overflow | None:
    """A 4.5+ model (or GLM) filled the window mid-answer: the reply is cut off, not failed."""
    if stop_reason == STOP_REASON_WINDOW:
        return Overflow("truncated", STOP_REASON_WINDOW, shape="stop_reason")
    return None


def from_exception(exc: BaseException) -> Overflow | None:
    """Classify an exception: ``anthropic.APIStatusError`` (read defensively) or any exception with a message.
    Follows ``__cause__`` so errors re-raised by our own layers are still recognised."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 8:
        seen.add(id(current))
        status, etype, message, body = _exception_fields(current)
        found = detect(status, etype, message, body)
        if found is not None:
            return found
        current = current.__cause__
    return None


def is_request_too_large(
    status_or_exc: int | BaseException | None, error_type: str | None = None, message: str | None = None
) -> bool:
    """HTTP 413 request_too_large: the request BODY is too many bytes (32 MB on Messages). Not a token
    overflow, so ``detect`` returns None for it; the fix is dropping or shrinking big attachments."""
    if isinstance(status_or_exc, BaseException):
        status, etype, msg, _ = _exception_fields(status_or_exc)
        return is_request_too_large(status, etype, msg)
    if status_or_exc == 413 or (error_type or "").lower() == "request_too_large":
        return True
    return bool(message and status_or_exc in (None, 200, 400) and _TOO_LARGE.search(message))


# ---------------------------------------------------------------- internals


def _match_text(text: str) -> Overflow | None:
    if m := _PTL.search(text):
        tokens, limit = _num(m.group(1)), _num(m.group(2))
        return Overflow("context", text, tokens, limit, tokens - limit, shape="anthropic-ptl")
    if m := _INPUT_PLUS_MAX.search(text):
        tokens, max_tokens, limit = _num(m.group(1)), _num(m.group(2)), _num(m.group(3))
        over = tokens + max_tokens - limit
        return Overflow("context", text, tokens, limit, over, max_tokens, shape="anthropic-input-max")
    if m := _MEDIA_PAGES.search(text):
        count, limit = _num(m.group(1)) + _num(m.group(2)), _num(m.group(3))
        return Overflow(
            "media", text, overshoot=count - limit, media_count=count, media_limit=limit, shape="media"
        )
    if m := _MEDIA_COUNT.search(text):
        count, limit = _num(m.group(1)) + _num(m.group(2)), _num(m.group(3))
        return Overflow(
            "media", text, overshoot=count - limit, media_count=count, media_limit=limit, shape="media"
        )
    if m := _LLAMA.search(text):
        tokens, limit = _num(m.group(1)), _num(m.group(2))
        return Overflow("context", text, tokens, limit, tokens - limit, shape="llama.cpp")
    if m := _OAI_LIMIT.search(text):
        return _openai(text, _num(m.group(1)))
    if _PTL_BARE.search(text):
        return Overflow("context", text, shape="anthropic-ptl")
    if _BEDROCK.search(text):
        return Overflow("context", text, shape="bedrock")
    return None


def _openai(text: str, limit: int) -> Overflow:
    requested = _OAI_REQUESTED.search(text)
    completion = _OAI_COMPLETION.search(text)
    max_tokens = _num(completion.group(1)) if completion else None
    if requested:
        total = _num(requested.group(1))
        # "you requested N tokens (A in the messages, B in the completion)": N counts the completion too.
        tokens = total - max_tokens if max_tokens is not None else total
        return Overflow("context", text, tokens, limit, total - limit, max_tokens, shape="openai")
    if m := _OAI_INPUT.search(text):
        tokens = _num(m.group(1))
        too_large = _OAI_TOO_LARGE.search(text)
        max_tokens = _num(too_large.group(1)) if too_large else None
        over = tokens + (max_tokens or 0) - limit
        return Overflow("context", text, tokens, limit, over, max_tokens, shape="openai")
    return Overflow("context", text, limit=limit, shape="openai")


def _walk_body(body: Any, texts: list[str], fields: dict[str, Any], types: list[str], depth: int) -> None:
    """Collect messages, error types and llama.cpp count fields from a (possibly wrapped) error body."""
    if depth > 4 or body is None:
        return
    if isinstance(body, str):
        parsed = _json(body)
        if parsed is None:
            texts.append(body)
        else:
            _walk_body(parsed, texts, fields, types, depth + 1)
        return
    if not isinstance(body, dict):
        return
    err = body.get("error")
    node = err if isinstance(err, dict) else body
    if isinstance(err, str):
        texts.append(err)
    for key in ("message", "detail"):
        if isinstance(node.get(key), str):
            texts.append(node[key])
    for key in ("type", "code"):
        if isinstance(node.get(key), str):
            types.append(node[key])
    for key in ("n_prompt_tokens", "n_ctx"):
        if key in node:
            fields[key] = node[key]
    # OpenRouter wraps the upstream error: {"error": {"message": "Provider returned error",
    # "metadata": {"raw": "<upstream body as a JSON string or plain text>"}}}; some proxies do the same.
    meta = node.get("metadata")
    if isinstance(meta, dict) and meta.get("raw") is not None:
        _walk_body(meta["raw"], texts, fields, types, depth + 1)


def _exception_fields(exc: BaseException) -> tuple[int | None, str | None, str | None, Any]:
    status = getattr(exc, "status_code", None)
    etype = getattr(exc, "type", None)
    # api_message is error.message alone (SDK 2.x); .message is "Error code: 400 - {...}"; else str(exc).
    message = getattr(exc, "api_message", None) or getattr(exc, "message", None) or str(exc)
    return (
        status if isinstance(status, int) else None,
        etype if isinstance(etype, str) else None,
        message if isinstance(message, str) else None,
        getattr(exc, "body", None),
    )


def _json(text: str) -> Any:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def _num(text: str) -> int:
    return int(text.replace(",", ""))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _minus(a: int | None, b: int | None) -> int | None:
    return a - b if a is not None and b is not None else None
