"""Turn SDK and transport exceptions into typed, user-readable errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any, Literal, get_args

from msgspec import Struct, field
from msgspec.structs import replace

from desktop.engine import messages as M
from desktop.engine import redact
from desktop.engine.providers import overflow

# Every kind a failed turn can have (the window and the CLI compare these words: never rename one). "storage": the
# database failed; "tool_permission": a tool needed an answer nobody could give (a TurnError, never a ChatError).
ErrorKind = Literal[
    "auth",
    "rate_limit",
    "overloaded",
    "network",
    "bad_request",
    "overflow",
    "media",
    "server",
    "protocol",
    "storage",
    "unknown",
    "tool_permission",
]
ERROR_KINDS: tuple[ErrorKind, ...] = get_args(ErrorKind)


class ChatError(Struct, frozen=True):
    """A failed request, classified: its kind, the sentence to show and whether a retry may work."""

    kind: ErrorKind
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
        message = err.get("message") if isinstance(err, dict) else None
        if isinstance(message, str):
            return message
    return str(exc)


def classify(exc: BaseException, secrets: Iterable[str | None] = ()) -> ChatError:
    """Map an exception raised while talking to the provider to a ChatError.

    The message never repeats a credential: ``secrets`` (the key or token in use), every key the app has
    loaded (see ``redact.remember``) and anything shaped like a key or bearer token are removed, since
    providers echo the key they rejected.
    """
    error = _classify(exc)
    known = [*secrets, *redact.known_secrets()]
    return replace(error, message=M.rewrite(error.message, lambda text: redact.redact(text, known)))


def _classify(exc: BaseException) -> ChatError:
    found = overflow.from_exception(exc)
    if found is not None:
        if found.kind == "media":
            return ChatError(
                "media",
                M.say(M.MEDIA_LIMIT, raw=found.raw_message),
                True,
                getattr(exc, "status_code", None),
                {"overflow": found},
            )
        return ChatError(
            "overflow",
            M.say(M.OVERFLOW, raw=found.raw_message),
            True,
            getattr(exc, "status_code", None),
            {"overflow": found},
        )
    # Before the SDK is loaded no error can be one of its own, and importing it here would stall the loop.
    if "anthropic" in sys.modules and (error := _classify_sdk(exc)) is not None:
        return error
    if isinstance(exc, json.JSONDecodeError):
        return ChatError("protocol", M.say(M.MALFORMED), True)
    name = type(exc).__name__
    module = type(exc).__module__
    if module.startswith(("httpx", "httpcore", "httpx2", "h11")) or isinstance(
        exc, ConnectionError | OSError
    ):
        return ChatError("network", M.say(M.DROPPED, name=name), True)
    return ChatError("unknown", M.say(M.UNEXPECTED, name=name, error=exc), True)


def _classify_sdk(exc: BaseException) -> ChatError | None:
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        text = _api_message(exc)
        etype = getattr(exc, "type", None) or ""
        if isinstance(exc, anthropic.AuthenticationError | anthropic.PermissionDeniedError):
            return ChatError("auth", M.say(M.AUTH_REJECTED, status=status, text=text), True, status)
        if isinstance(exc, anthropic.RateLimitError):
            return ChatError("rate_limit", M.say(M.RATE_LIMITED, text=text), True, status)
        if status == 529 or etype == "overloaded_error":
            return ChatError("overloaded", M.say(M.OVERLOADED), True, status)
        if status >= 500 or etype == "api_error":
            return ChatError("server", M.say(M.SERVER_ERROR, status=status, text=text), True, status)
        if status in (400, 413, 422):
            return ChatError("bad_request", M.say(M.BAD_REQUEST, status=status, text=text), True, status)
        return ChatError("unknown", M.say(M.PROVIDER_ERROR, status=status, text=text), True, status)
    if isinstance(exc, anthropic.APITimeoutError):
        return ChatError("network", M.say(M.TIMED_OUT), True)
    if isinstance(exc, anthropic.APIConnectionError):
        return ChatError("network", M.say(M.UNREACHABLE), True)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ChatError("protocol", M.say(M.MALFORMED), True)
    return None
