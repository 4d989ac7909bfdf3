"""When a session's prompt cache lapses and what the next turn costs warm or cold: the hover card's countdown,
and the rule for preparing a summary just before the cache expires."""

from __future__ import annotations

import dataclasses

from desktop.engine.catalog import CACHE_READ_MULTIPLIER, CACHE_WRITE_MULTIPLIER, MILLION, ModelInfo
from desktop.engine.context import ContextSnapshot
from desktop.engine.session import CACHE_TTL, LONG_CACHE_TTL

LEAD = 45.0  # an idle session prepares its summary this long before the cache expires
EXPECTED_OUTPUT = 1_000  # tokens a next turn answers with, for the cost hint


def expires_at(last_request: float | None, long_ttl: bool) -> tuple[float | None, float]:
    """(clock time the cache lapses, its TTL); None when nothing was sent yet in this run."""
    ttl = LONG_CACHE_TTL if long_ttl else CACHE_TTL
    return (None if last_request is None else last_request + ttl), ttl


def turn_costs(info: ModelInfo, used: int) -> tuple[float | None, float | None]:
    """(warm, cold) USD of sending ``used`` tokens again plus a typical answer: a read of the cached prefix, or
    writing it all again. None when the model's price is unknown."""
    if info.input_price is None or info.output_price is None:
        return None, None
    out = EXPECTED_OUTPUT * info.output_price
    warm = (used * info.input_price * CACHE_READ_MULTIPLIER + out) / MILLION
    cold = (used * info.input_price * CACHE_WRITE_MULTIPLIER + out) / MILLION
    return round(warm, 6), round(cold, 6)


def annotate(snapshot: ContextSnapshot, *, info: ModelInfo, compact_at: int | None, last_request: float | None,
             long_ttl: bool) -> ContextSnapshot:
    expires, ttl = expires_at(last_request, long_ttl)
    warm, cold = turn_costs(info, snapshot.used)
    return dataclasses.replace(snapshot, compact_at_tokens=compact_at, cache_expires_at=expires, cache_ttl=ttl,
                               next_cost_warm=warm, next_cost_cold=cold)


def summary_pays(info: ModelInfo, *, saving_tokens: int, summary_cost: float) -> bool:
    """A summary made now, while the cache is warm, pays when the next (cold) turn writes ``saving_tokens``
    fewer tokens for more than the summary costs."""
    price = info.input_price if info.input_price is not None else 1.0
    return saving_tokens * price * CACHE_WRITE_MULTIPLIER / MILLION > summary_cost
