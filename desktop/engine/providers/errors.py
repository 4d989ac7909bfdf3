"""Turn SDK and transport exceptions into typed, user-readable errors.

Whatever a server sends, the user reads one bounded sentence: an error body is cut to its first
``TEXT_LIMIT`` characters of text (an HTML page to its title), and a stream that stalls or breaks the protocol
raises one of the two exceptions below, raised by the provider and worded here.
"""

from __future__ import annotations

import html
import json
import re
import sys
from collections.abc import Iterable
from typing import Any, Literal, get_args

from msgspec import Struct, field
from msgspec.structs import replace

from desktop.engine import messages as M
from desktop.engine import redact
from desktop.engine.lazy_re import LazyPattern
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


TEXT_LIMIT = 300  # characters of a provider's own words in a sentence: enough to say what, never a page
_SCAN = 200_000  # of a huge body only the start is looked at (the title of a 5 MB error page is near the top)
_TITLE = LazyPattern(r"<title[^>]*>(.*?)</title\s*>", re.I | re.S)
_HIDDEN = LazyPattern(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.I | re.S)
_TAG = LazyPattern(r"<[^>]*>")
_HTML = LazyPattern(r"\s*(?:<!doctype\s+html|<html|<head|<body|<\?xml|<title|<h1)", re.I)
_CONTROL = LazyPattern(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def readable(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` as at most ``limit`` characters of plain text on one line: an HTML page as its title (else its
    visible text), control characters and runs of whitespace as single spaces, the rest cut with an ellipsis."""
    sample = text[:_SCAN]
    if _HTML.match(sample):
        title = _TITLE.search(sample)
        found = title.group(1) if title is not None else ""
        if not found.strip():
            found = _TAG.sub(" ", _HIDDEN.sub(" ", sample))
        sample = html.unescape(found)
    flat = " ".join(_CONTROL.sub(" ", sample).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class StreamStalled(Exception):  # noqa: N818 - named for what happened
    """The provider sent nothing (or only keep-alive pings) for ``seconds``: before the reply started
    (``started`` False: the first-byte time) or in its middle (the idle time)."""

    def __init__(self, seconds: float, *, started: bool):
        super().__init__(f"no reply event for {seconds:g} s ({'idle' if started else 'first byte'})")
        self.seconds = seconds
        self.started = started


class ProviderViolation(Exception):  # noqa: N818 - named for what happened
    """The provider broke the Messages stream's protocol; ``what`` says what it sent (an engine message that
    completes "The provider sent …")."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


class ChatError(Struct, frozen=True):
    """A failed request, classified: its kind, the sentence to show and whether a retry may work."""

    kind: ErrorKind
    message: str
    retryable: bool = True
    status: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)


def _api_message(exc: Any) -> str:
    """The provider's own words about the error, bounded (a 5 MB page or a 100 KB message is cut)."""
    return readable(_api_text(exc))


def _api_text(exc: Any) -> str:
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
    if isinstance(body, str) and body.strip():
        return body
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
    if isinstance(exc, StreamStalled):
        said = M.STALLED if exc.started else M.NO_FIRST_BYTE
        return ChatError("network", M.say(said, seconds=_seconds(exc.seconds)), True)
    if isinstance(exc, ProviderViolation):
        return ChatError("protocol", M.say(M.PROVIDER_SENT, what=exc.what), True)
    found = overflow.from_exception(exc)
    if found is not None:
        if found.kind == "media":
            return ChatError(
                "media",
                M.say(M.MEDIA_LIMIT, raw=readable(found.raw_message)),
                True,
                getattr(exc, "status_code", None),
                {"overflow": found},
            )
        return ChatError(
            "overflow",
            M.say(M.OVERFLOW, raw=readable(found.raw_message)),
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
    return ChatError("unknown", M.say(M.UNEXPECTED, name=name, error=readable(str(exc))), True)


def _seconds(value: float) -> int | float:
    """A number of seconds as written in settings: whole when it is whole."""
    return int(value) if float(value).is_integer() else round(value, 1)


def _transport_cause(exc: BaseException) -> ChatError | None:
    """A connection failure the SDK reports only as "could not connect", told apart by its cause: a redirect
    loop, or response headers too large to read."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        name, text = type(current).__name__, str(current).lower()
        if name == "TooManyRedirects":
            return ChatError("network", M.say(M.REDIRECT_LOOP), True)
        if name in ("RemoteProtocolError", "LocalProtocolError") and (
            "receive buffer too long" in text or ("header" in text and "too" in text)
        ):
            return ChatError("protocol", M.say(M.HEADERS_TOO_LARGE), True)
        current = current.__cause__ or current.__context__
    return None


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
        return _transport_cause(exc) or ChatError("network", M.say(M.UNREACHABLE), True)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ChatError("protocol", M.say(M.MALFORMED), True)
    return None
