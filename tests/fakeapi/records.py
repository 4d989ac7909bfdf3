"""What the fake server remembers about each request, and helpers shared by its handler parts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.fakeapi.cache import CacheResult
from tests.fakeapi.counting import Block


@dataclass
class RecordedRequest:
    """One received request, as the server saw it. ``usage`` is what it reported (or would have)."""

    seq: int
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any  # parsed JSON, or None
    request_id: str
    status: int = 0
    usage: dict[str, int] | None = None
    prompt_tokens: int | None = None
    fault: str | None = None
    outcome: str = "pending"  # ok | error | dropped | client_gone | pending
    reply: list[Block] | None = None
    stream: bool = False


class Failed(Exception):
    """A fault fired mid-response: the reply was not delivered (and goes back to its queue)."""


def usage_json(result: CacheResult, output_tokens: int, report_cache: bool) -> dict[str, Any]:
    usage: dict[str, Any] = {"input_tokens": result.input_tokens}
    if report_cache:
        usage["cache_creation_input_tokens"] = result.cache_creation_input_tokens
        usage["cache_read_input_tokens"] = result.cache_read_input_tokens
    usage["output_tokens"] = output_tokens
    return usage
