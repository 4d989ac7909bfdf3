"""What keeps a streamed reply bounded and readable whatever the server does (issue 35).

The SDK waits as long as bytes keep coming (a ping every second, a header line every second) and, on a stream that
breaks the protocol, fails with a bare ``AssertionError``, ``IndexError`` or ``UnicodeDecodeError``. Here:

- ``Deadline``: the reply's first event must come within the first-byte time of the request (headers and the SDK's
  retries included), and after it no more than the idle time may pass without one; keep-alive pings do not count
  (the SDK drops them before they reach us). A live generation that keeps sending deltas never trips either.
- ``next_event`` and ``refuse_non_stream``: what the server sent instead of a Messages stream, named in words
  (``ProviderViolation``, worded "The provider sent …").
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from typing import Any, TypeVar

from desktop.engine import messages as M
from desktop.engine.providers.errors import ProviderViolation, StreamStalled, readable

T = TypeVar("T")

JSON_HEAD = 65_536  # bytes of a JSON body read to say what it is
JSON_EXCERPT = 160  # characters of it in the sentence
# Where the exceptions of reading a stream's data (not its transport) come from: the stream's decoding and parsing.
_PARSING = frozenset({"builtins", "json", "pydantic", "pydantic_core", "jiter"})


class Deadline:
    """When a stream's next event is due: ``first_byte`` after the start until its first event (``progress``),
    then ``idle`` after each wait for one begins (the time the caller spends on an event is not the server's).
    ``wait`` raises ``StreamStalled`` when it passes."""

    def __init__(self, first_byte: float, idle: float):
        self._loop = asyncio.get_running_loop()
        self.first_byte, self.idle = first_byte, idle
        self.started = False
        self._first_due = self._loop.time() + first_byte

    def progress(self) -> None:
        self.started = True

    async def wait(self, awaitable: Awaitable[T]) -> T:
        """``awaitable``'s result, if it comes before the deadline."""
        due = self._loop.time() + self.idle if self.started else self._first_due
        scope = asyncio.timeout(max(0.0, due - self._loop.time()))
        try:
            async with scope:
                return await awaitable
        except TimeoutError:
            if not scope.expired():  # the awaitable's own timeout (the SDK's): not ours to word
                raise
            seconds = self.idle if self.started else self.first_byte
            raise StreamStalled(seconds, started=self.started) from None


async def next_event(stream: Any) -> Any | None:
    """The SDK message stream's next event (None at its end). A failure to read the stream's data, as opposed to
    its transport, becomes a ``ProviderViolation`` naming what was sent."""
    try:
        return await anext(stream)
    except StopAsyncIteration:
        return None
    except Exception as exc:
        what = unreadable(exc)
        if what is None:
            raise
        raise ProviderViolation(what) from exc


def unreadable(exc: BaseException) -> str | None:
    """What the server sent, when ``exc`` comes from decoding or parsing the stream (None: any other failure,
    such as the SDK's own errors and the connection's, which are worded as they are)."""
    if type(exc).__module__.split(".")[0] not in _PARSING or isinstance(exc, OSError):
        return None
    if isinstance(exc, UnicodeDecodeError):
        return M.say(M.SENT_BAD_UTF8)
    if isinstance(exc, json.JSONDecodeError):
        return M.say(M.SENT_BAD_JSON)
    if isinstance(exc, LookupError):  # the SDK indexes the blocks it has by the event's index
        return M.say(M.SENT_UNKNOWN_BLOCK)
    if isinstance(exc, ValueError) and "tool parameter JSON" in str(exc):
        return M.say(M.SENT_BAD_TOOL_INPUT)
    return M.say(M.SENT_UNREADABLE)


def content_type(response: Any) -> str:
    headers = getattr(response, "headers", None)
    value = headers.get("content-type", "") if headers is not None else ""
    return str(value).split(";")[0].strip().lower()


async def refuse_non_stream(response: Any, deadline: Deadline) -> None:
    """A 200 that is plainly no event stream (a JSON body, an HTML page) is refused before it is parsed as one."""
    kind = content_type(response)
    if kind == "application/json" or kind.endswith("+json"):
        head = await deadline.wait(_head(response, JSON_HEAD))
        raise ProviderViolation(M.say(M.SENT_JSON, text=readable(_json_words(head), JSON_EXCERPT)))
    if kind in ("text/html", "application/xhtml+xml"):
        raise ProviderViolation(M.say(M.SENT_NOT_STREAM, kind=kind))


def no_events(response: Any) -> str:
    """What a response that ended without a single Messages event was."""
    kind = content_type(response)
    if kind and kind != "text/event-stream":
        return M.say(M.SENT_NOT_STREAM, kind=kind)
    return M.say(M.SENT_NO_EVENTS)


async def _head(response: Any, limit: int) -> bytes:
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= limit:
            break
    return bytes(data[:limit])


def _json_words(head: bytes) -> str:
    """A JSON body in a few words: its error message when it is an error, else its start."""
    text = head.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except ValueError:
        return text
    err = body.get("error") if isinstance(body, dict) else None
    message = err.get("message") if isinstance(err, dict) else err
    return message if isinstance(message, str) and message.strip() else text
