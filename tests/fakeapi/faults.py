"""Faults injected into the next /v1/messages request(s), one fault per request, in queue order.

Status faults answer before any reply is chosen. Stream faults (drop, sse_error, malformed) fire
after ``after`` content_block_delta events; with ``stream: false`` they degrade to: drop -> close
the socket without a response, sse_error -> 529 overloaded_error, malformed -> a truncated JSON body.
A request that fails this way does not consume the scripted/replay reply: the retry gets it.
``slow`` and ``hold`` only shape timing and deliver the reply normally.

A hostile server (issue 35) breaks the protocol on purpose: ``cut`` ends the stream cleanly after the last
``content_block_stop`` (no ``message_delta``, no ``message_stop``); ``usage`` puts out-of-range numbers in the
usage the stream reports; ``wire`` writes raw bytes instead of any HTTP response (a script of bytes and pauses,
then a close, a hang, or one part repeated for ever): silence, endless headers, pings only, garbage, JSON where a
stream was asked, a delta for a block never started, invalid UTF-8, headers too large, a redirect loop.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Literal

FaultKind = Literal["status", "drop", "sse_error", "malformed", "slow", "hold", "cut", "usage", "wire"]
# What a wire fault does after its script: close the connection, keep it open and silent, or send ``repeat``
# again and again (until the client leaves, the fault is released or ``hold_timeout`` passes).
WireEnd = Literal["close", "hang", "repeat"]
REDIRECT_LOOP = "/redirect-loop"  # the server answers every request here with a redirect to itself


@dataclass
class Fault:
    kind: FaultKind
    status: int = 500
    error_type: str = "api_error"
    message: str = "Internal server error"
    # Raw body (str or JSON-able) replacing the Anthropic error shape, e.g. an OpenAI/llama.cpp error.
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    after: int = 0  # content_block_delta events sent before a stream fault fires
    delay: float = 0.0  # "slow": seconds between deltas
    # "hold": the server sets ``reached`` after ``after`` deltas, then waits for ``release``.
    reached: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    hold_timeout: float = 30.0
    usage: dict[str, Any] = field(default_factory=dict)  # "usage": fields put in the stream's usage
    # "wire": bytes written as they are, and floats (seconds to pause), then ``end``
    script: list[bytes | float] = field(default_factory=list)
    repeat: list[bytes | float] = field(default_factory=list)
    end: WireEnd = "close"

    # -- HTTP status faults -----------------------------------------------------------------------

    @classmethod
    def rate_limit(cls, retry_after: float = 0, message: str = "Rate limited") -> Fault:
        return cls("status", 429, "rate_limit_error", message, headers={"retry-after": _num(retry_after)})

    @classmethod
    def overloaded(cls, message: str = "Overloaded") -> Fault:
        return cls("status", 529, "overloaded_error", message)

    @classmethod
    def api_error(cls, message: str = "Internal server error") -> Fault:
        return cls("status", 500, "api_error", message)

    @classmethod
    def custom(
        cls, status: int, error_type: str, message: str, headers: dict[str, str] | None = None
    ) -> Fault:
        """Any Anthropic-shaped error, e.g. custom(400, "invalid_request_error", "...")."""
        return cls("status", status, error_type, message, headers=dict(headers or {}))

    @classmethod
    def raw(cls, status: int, body: Any, headers: dict[str, str] | None = None) -> Fault:
        """A foreign error body, e.g. raw(400, {"error": {"message": "maximum context length is 8192 tokens"}})."""
        return cls("status", status, body=body, headers=dict(headers or {}))

    # -- stream faults ----------------------------------------------------------------------------

    @classmethod
    def drop(cls, after: int = 1) -> Fault:
        """Close the socket after ``after`` deltas, without message_stop or the final chunk."""
        return cls("drop", after=after)

    @classmethod
    def sse_error(
        cls, after: int = 1, error_type: str = "overloaded_error", message: str = "Overloaded"
    ) -> Fault:
        """An ``event: error`` after ``after`` deltas (HTTP status stays 200)."""
        return cls("sse_error", 200, error_type, message, after=after)

    @classmethod
    def malformed(cls, after: int = 1) -> Fault:
        """A garbage ``data:`` line after ``after`` deltas, then the connection closes."""
        return cls("malformed", after=after)

    @classmethod
    def slow(cls, delay: float) -> Fault:
        return cls("slow", delay=delay)

    @classmethod
    def hold(cls, after: int = 1, timeout: float = 30.0) -> Fault:
        """Stop after ``after`` deltas until ``fault.release.set()`` (``fault.reached`` says we got there)."""
        return cls("hold", after=after, hold_timeout=timeout)

    # -- a hostile server ------------------------------------------------------------------------------

    @classmethod
    def cut(cls) -> Fault:
        """The reply streams whole, then the body ends cleanly with no message_delta and no message_stop."""
        return cls("cut")

    @classmethod
    def usage_numbers(cls, **usage: Any) -> Fault:
        """The stream's usage (message_start and message_delta) carries these values, e.g. output_tokens=1e30."""
        return cls("usage", usage=usage)

    @classmethod
    def wire(
        cls,
        script: list[bytes | float],
        end: WireEnd = "close",
        repeat: list[bytes | float] | None = None,
        timeout: float = 30.0,
    ) -> Fault:
        """Raw bytes on the socket in place of an HTTP response (``reached`` is set once the script is out)."""
        return cls("wire", script=list(script), end=end, repeat=list(repeat or []), hold_timeout=timeout)

    @classmethod
    def silent(cls, timeout: float = 30.0) -> Fault:
        """The request is read and never answered: not a byte back."""
        return cls.wire([], "hang", timeout=timeout)

    @classmethod
    def start_then_silent(cls, timeout: float = 30.0) -> Fault:
        """Headers and message_start, then nothing (the connection stays open)."""
        return cls.wire([SSE_HEAD, message_start()], "hang", timeout=timeout)

    @classmethod
    def text_then_silent(cls, text: str = "partial ", timeout: float = 30.0) -> Fault:
        """Headers, message_start and some text, then nothing (the connection stays open)."""
        return cls.wire([SSE_HEAD, message_start(), *text_block_start(text)], "hang", timeout=timeout)

    @classmethod
    def pings_only(cls, every: float = 0.05, *, started: bool = False, timeout: float = 30.0) -> Fault:
        """Headers (and message_start when ``started``), then only pings, every ``every`` seconds, for ever."""
        head: list[bytes | float] = [SSE_HEAD, message_start()] if started else [SSE_HEAD]
        return cls.wire(head, "repeat", [sse("ping", {"type": "ping"}), every], timeout)

    @classmethod
    def slow_headers(cls, every: float = 0.05, timeout: float = 30.0) -> Fault:
        """A status line, then one more header line every ``every`` seconds, never the blank line."""
        return cls.wire([b"HTTP/1.1 200 OK\r\n"], "repeat", [b"X-Slow: still coming\r\n", every], timeout)

    @classmethod
    def live_deltas(cls, every: float, count: int) -> Fault:
        """A long, live generation: ``count`` text deltas ``every`` seconds apart, then a proper end."""
        parts: list[bytes | float] = [SSE_HEAD, message_start(), *text_block_start("")]
        for n in range(count):
            parts += [every, delta(0, {"type": "text_delta", "text": f"{n} "})]
        return cls.wire([*parts, *message_end()], "close")

    @classmethod
    def garbage(cls) -> Fault:
        """A 200 whose body is not an event stream at all (an HTML page from a captive portal or a proxy)."""
        body = b"<html><body>\x00\x01 not an event stream @@@ \n\n%%%\n</body></html>\n" * 20
        return cls.wire([head(200, "text/html", len(body)), body])

    @classmethod
    def json_body(cls) -> Fault:
        """A whole JSON message, as for ``stream: false``, where the stream was asked for."""
        body = json.dumps(
            {
                "id": "msg_json",
                "type": "message",
                "role": "assistant",
                "model": "claude-test",
                "content": [{"type": "text", "text": "a whole message"}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 5, "output_tokens": 3},
            }
        ).encode()
        return cls.wire([head(200, "application/json", len(body)), body])

    @classmethod
    def orphan_delta(cls) -> Fault:
        """A delta for content block 3, which was never started."""
        return cls.wire([SSE_HEAD, message_start(), delta(3, {"type": "text_delta", "text": "lost"})])

    @classmethod
    def invalid_utf8(cls) -> Fault:
        """A text delta holding bytes that are not UTF-8."""
        bad = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":'
        bad += b'{"type":"text_delta","text":"caf\xe9 \xff\xfe"}}\n\n'
        return cls.wire([SSE_HEAD, message_start(), *text_block_start("ok "), bad])

    @classmethod
    def huge_headers(cls, size: int = 200_000) -> Fault:
        """A response header line of ``size`` bytes."""
        return cls.wire([b"HTTP/1.1 200 OK\r\nX-Huge: " + b"h" * size + b"\r\n\r\n"])

    @classmethod
    def redirect_loop(cls) -> Fault:
        """A redirect to a path that redirects to itself, for ever."""
        return cls.wire([redirect(REDIRECT_LOOP, close=True)])

    @classmethod
    def html_error(
        cls, status: int = 500, size: int = 5_250_000, title: str = "Internal Server Error"
    ) -> Fault:
        """An error status with a large HTML page as its body (a proxy's error page)."""
        filler = b"<p>" + b"lorem ipsum dolor sit amet " * 40 + b"</p>\n"
        body = (
            f"<!DOCTYPE html><html><head><title>{status} {title}</title><style>p {{color: red}}</style>"
            f"<script>var x = 1;</script></head><body><h1>{title}</h1>"
        ).encode()
        body += filler * max(1, (size - len(body)) // len(filler)) + b"</body></html>"
        return cls.wire([head(status, "text/html", len(body)), body])


# --- raw bytes of a response (wire faults) -------------------------------------------------------------------
SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"


def head(status: int, content_type: str, length: int) -> bytes:
    return (
        f"HTTP/1.1 {status} Whatever\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()


def redirect(location: str, *, close: bool = False) -> bytes:
    return (
        f"HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\n"
        + ("Connection: close\r\n" if close else "")
        + "\r\n"
    ).encode()


def sse(name: str, payload: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()


def message_start() -> bytes:
    message = {
        "id": "msg_wire",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    return sse("message_start", {"type": "message_start", "message": message})


def delta(index: int, payload: dict[str, Any]) -> bytes:
    return sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": payload})


def text_block_start(text: str) -> list[bytes | float]:
    start = sse(
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    )
    return [start, delta(0, {"type": "text_delta", "text": text})] if text else [start]


def message_end() -> list[bytes | float]:
    return [
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
        sse("message_stop", {"type": "message_stop"}),
    ]


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
