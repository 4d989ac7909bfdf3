"""Prompt-cache accounting modelled on the real API's documented prompt-caching rules.

* Prefix order tools -> system -> messages; every unit (tool, system block, message block) is a
  block boundary. The key of a prefix is a SHA-256 over the model name and the canonical JSON of
  every unit up to and including it, cache_control removed (tool_use ``input`` keeps the key order
  the client sent: a reordered input is a real-world silent cache breaker).
* Breakpoints: blocks carrying ``cache_control``, plus the last cacheable message block when the
  request has a top-level ``cache_control`` (automatic caching). More than 4 is an error (the
  server turns :class:`TooManyBreakpoints` into a 400).
* For each breakpoint the cache looks back over up to ``lookback`` (20) earlier boundaries for the
  longest live entry: that prefix is ``cache_read_input_tokens`` and its TTL is refreshed.
* Tokens from the read point through the last breakpoint are ``cache_creation_input_tokens``; every
  breakpoint prefix of at least ``min_tokens`` is written. If the last breakpoint's prefix is
  shorter than ``min_tokens`` nothing is written and creation is 0.
* Everything after the last breakpoint is plain ``input_tokens``.
* TTL 300 s ("5m", default) or 3600 s ("1h"), measured on an injectable clock.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from desktop.engine.config.catalog import MILLION, ModelCatalog
from desktop.engine.types import Usage
from tests.fakeapi.counting import Block, Unit, strip_cache_control

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
MAX_BREAKPOINTS = 4
_UNCACHEABLE = {"thinking", "redacted_thinking", "_empty"}


class TooManyBreakpoints(ValueError):
    def __init__(self, found: int) -> None:
        super().__init__(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {found}."
        )
        self.found = found


class FakeClock:
    """Manual clock for tests and benchmarks: ``clock.advance(301)`` expires 5-minute entries."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass(slots=True)
class CacheResult:
    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    cache_creation_1h_tokens: int = 0  # part of cache_creation_input_tokens written with ttl "1h"
    breakpoints: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


@functools.cache
def _catalog() -> ModelCatalog:
    """The app's own catalog (built-in prices): benchmark bills follow the current price list."""
    return ModelCatalog()


@dataclass
class CacheStats:
    """Running totals over all /v1/messages requests, for benchmarks."""

    requests: int = 0
    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_creation_1h_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0
    billed: float = 0.0  # see billed_input_equivalent

    def add(self, result: CacheResult, output_tokens: int = 0, model: str | None = None) -> None:
        """Count one request; its prompt is billed at ``model``'s own cache multipliers and price tier (the
        catalog's figures; a model it does not know gets the standard ones)."""
        # Through the app's one price formula (ModelInfo.cost), in units of the model's input price; the 1-hour
        # writes are priced apart at their rate, the tier picked by the whole prompt.
        info = _catalog().info(model).priced()
        five_min = result.cache_creation_input_tokens - result.cache_creation_1h_tokens
        at_5m = Usage(result.input_tokens, 0, five_min, result.cache_read_input_tokens)
        at_1h = Usage(0, 0, result.cache_creation_1h_tokens, 0)
        usd = sum(
            info.cost(u, ttl, prompt_tokens=result.total) or 0.0 for u, ttl in ((at_5m, "5m"), (at_1h, "1h"))
        )
        self.billed += usd * MILLION / (info.input_price or 1.0)
        self.requests += 1
        self.input_tokens += result.input_tokens
        self.cache_creation_input_tokens += result.cache_creation_input_tokens
        self.cache_creation_1h_tokens += result.cache_creation_1h_tokens
        self.cache_read_input_tokens += result.cache_read_input_tokens
        self.output_tokens += output_tokens

    def billed_input_equivalent(self) -> float:
        """Prompt cost in base-input-token units, each request at its model's figures: input*1 + 5m writes*w5
        + 1h writes*w1h + reads*r, times the price tier of the request's prompt (e.g. Opus 5.5 reads at 0.05)."""
        return self.billed

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_creation_1h_tokens": self.cache_creation_1h_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "output_tokens": self.output_tokens,
            "billed_input_equivalent": self.billed_input_equivalent(),
        }


def canonical_unit(unit: Unit) -> bytes:
    """Bytes that identify one prefix position (role changes are part of the prefix)."""
    block = strip_cache_control(unit.block)
    if block.get("type") == "tool_use" and "input" in block:
        head = {k: v for k, v in block.items() if k != "input"}
        text = json.dumps(head, sort_keys=True, ensure_ascii=False) + json.dumps(
            block["input"], ensure_ascii=False
        )
    else:
        text = json.dumps(block, sort_keys=True, ensure_ascii=False)
    prefix = unit.section[0]
    if unit.first_in_message:
        prefix += f"|{unit.msg_index}|{unit.role}"
    return f"\x1e{prefix}\x1f{text}".encode()


def find_breakpoints(body: dict[str, Any], units: Sequence[Unit]) -> list[tuple[int, float]]:
    """(unit index, ttl seconds) of every breakpoint, explicit and automatic, in prefix order."""
    points: dict[int, float] = {}
    for i, unit in enumerate(units):
        cc = unit.block.get("cache_control")
        if isinstance(cc, dict):
            points[i] = TTL_SECONDS.get(str(cc.get("ttl", "5m")), 300.0)
    top = body.get("cache_control")
    if isinstance(top, dict):
        for i in range(len(units) - 1, -1, -1):
            if _cacheable(units[i].block):
                points.setdefault(i, TTL_SECONDS.get(str(top.get("ttl", "5m")), 300.0))
                break
    return sorted(points.items())


def _cacheable(block: Block) -> bool:
    kind = block.get("type")
    if kind in _UNCACHEABLE:
        return False
    return not (kind == "text" and not block.get("text"))


@dataclass
class PromptCache:
    clock: Callable[[], float] = time.monotonic
    min_tokens: int = 1024
    lookback: int = 20
    # digest -> (expires_at, ttl)
    _entries: dict[bytes, tuple[float, float]] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        now = self.clock()
        with self._lock:
            return sum(1 for exp, _ in self._entries.values() if exp > now)

    def account(self, body: dict[str, Any], units: Sequence[Unit]) -> CacheResult:
        """Usage split of one request, updating the cache. Raises TooManyBreakpoints."""
        total = sum(u.tokens for u in units)
        points = find_breakpoints(body, units)
        if len(points) > MAX_BREAKPOINTS:
            raise TooManyBreakpoints(len(points))
        if not points:
            return CacheResult(total, 0, 0)
        last_bp = points[-1][0]
        model = str(body.get("model", ""))
        wanted = {j for bp, _ in points for j in range(max(0, bp - self.lookback), bp + 1)}
        digests: dict[int, bytes] = {}
        cum: list[int] = []
        running = 0
        hasher = hashlib.sha256(model.encode())
        for i in range(last_bp + 1):
            hasher.update(canonical_unit(units[i]))
            running += units[i].tokens
            cum.append(running)
            if i in wanted:
                digests[i] = hasher.copy().digest()

        now = self.clock()
        with self._lock:
            hit = -1
            for bp, _ in points:
                for j in range(bp, max(-1, bp - self.lookback - 1), -1):
                    entry = self._entries.get(digests[j])
                    if entry and entry[0] > now:
                        hit = max(hit, j)
                        break
            if hit >= 0:  # a read refreshes the TTL at no cost
                key = digests[hit]
                self._entries[key] = (now + self._entries[key][1], self._entries[key][1])
            read = cum[hit] if hit >= 0 else 0

            creation = creation_1h = 0
            if cum[last_bp] >= self.min_tokens and last_bp > hit:
                creation = cum[last_bp] - read
                last_1h = max((bp for bp, ttl in points if ttl > 300.0), default=-1)
                if last_1h > hit:
                    creation_1h = cum[last_1h] - read
                for bp, ttl in points:
                    if cum[bp] >= self.min_tokens:
                        old = self._entries.get(digests[bp])
                        self._entries[digests[bp]] = (now + ttl, max(ttl, old[1] if old else 0.0))
            if len(self._entries) > 4096:  # keep memory bounded in long benchmarks
                self._entries = {k: v for k, v in self._entries.items() if v[0] > now}
        return CacheResult(total - read - creation, creation, read, creation_1h, len(points))
