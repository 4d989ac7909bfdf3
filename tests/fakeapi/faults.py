"""Faults injected into the next /v1/messages request(s), one fault per request, in queue order.

Status faults answer before any reply is chosen. Stream faults (drop, sse_error, malformed) fire
after ``after`` content_block_delta events; with ``stream: false`` they degrade to: drop -> close
the socket without a response, sse_error -> 529 overloaded_error, malformed -> a truncated JSON body.
A request that fails this way does not consume the scripted/replay reply: the retry gets it.
``slow`` and ``hold`` only shape timing and deliver the reply normally.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Literal

FaultKind = Literal["status", "drop", "sse_error", "malformed", "slow", "hold"]


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


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
