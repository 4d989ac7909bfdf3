"""Turn SDK and transport exceptions into typed, user-readable errors."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from desktop.engine import overflow, redact


@dataclass(frozen=True, slots=True)
class ChatError:
    kind: str  # auth | rate_limit | overloaded | network | bad_request | overflow | media | server | protocol | unknown
    message: str
    retryable: bool = True
    status: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)


def _api_message(exc: Any) -> str:
    for attr in ("api_message",):
        value = getattr(exc, attr, None)
        if isinstance(value, str) and value:
            return value
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
    return str(exc)


def classify(exc: BaseException, secrets: Iterable[str | None] = ()) -> ChatError:
    """Map an exception raised while talking to the provider to a ChatError.

    The message never repeats a credential: ``secrets`` (the key or token in use), every key the app has
    loaded (see ``redact.remember``) and anything shaped like a key or bearer token are removed, since
    providers echo the key they rejected.
    """
    error = _classify(exc)
    return replace(error, message=redact.redact(error.message, [*secrets, *redact.known_secrets()]))


def _classify(exc: BaseException) -> ChatError:
    import anthropic  # imported on first use: the SDK costs most of the app's start-up time

    found = overflow.from_exception(exc)
    if found is not None:
        if found.kind == "media":
            return ChatError("media", f"Too many images or documents for this model: {found.raw_message}",
                             True, getattr(exc, "status_code", None), {"overflow": found})
        return ChatError("overflow", "The conversation no longer fits the model's context window "
                         f"({found.raw_message}).", True, getattr(exc, "status_code", None), {"overflow": found})
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        text = _api_message(exc)
        etype = getattr(exc, "type", None) or ""
        if isinstance(exc, anthropic.AuthenticationError | anthropic.PermissionDeniedError):
            return ChatError("auth", f"The provider rejected the API key ({status}): {text}. "
                             "Check the key in Settings.", True, status)
        if isinstance(exc, anthropic.RateLimitError):
            return ChatError("rate_limit", f"Rate limited by the provider: {text}. Wait a moment and retry.",
                             True, status)
        if status == 529 or etype == "overloaded_error":
            return ChatError("overloaded", "The provider is overloaded right now. Retry in a moment.", True, status)
        if status >= 500 or etype == "api_error":
            return ChatError("server", f"The provider had an internal error ({status}): {text}", True, status)
        if status in (400, 413, 422):
            return ChatError("bad_request", f"The provider refused the request ({status}): {text}", True, status)
        return ChatError("unknown", f"Provider error ({status}): {text}", True, status)
    if isinstance(exc, anthropic.APITimeoutError):
        return ChatError("network", "The request timed out. Check the connection and retry.", True)
    if isinstance(exc, anthropic.APIConnectionError):
        return ChatError("network", "Could not reach the provider. Check the base URL and your connection.", True)
    if isinstance(exc, json.JSONDecodeError | anthropic.APIResponseValidationError):
        return ChatError("protocol", "The provider sent a malformed response. Retry; if it keeps happening, "
                         "check the base URL.", True)
    name = type(exc).__name__
    module = type(exc).__module__
    if module.startswith(("httpx", "httpcore", "httpx2", "h11")) or isinstance(exc, ConnectionError | OSError):
        return ChatError("network", f"The connection dropped while receiving the reply ({name}).", True)
    return ChatError("unknown", f"Unexpected error: {name}: {exc}", True)
