"""When a session's prompt cache lapses and what the next turn costs warm or cold: the hover card's countdown,
and the rule for preparing a summary just before the cache expires."""

from __future__ import annotations

from msgspec import structs

from desktop.engine.compaction.threshold import Rule
from desktop.engine.config.catalog import ModelInfo
from desktop.engine.metering.context import ContextSnapshot
from desktop.engine.turn.session import CACHE_TTL, LONG_CACHE_TTL
from desktop.engine.types import Usage

LEAD = 45.0  # an idle session prepares its summary this long before the cache expires
EXPECTED_OUTPUT = 1_000  # tokens a next turn answers with, for the cost hint


def expires_at(last_request: float | None, long_ttl: bool) -> tuple[float | None, float]:
    """(clock time the cache lapses, its TTL); None when nothing was sent yet in this run."""
    ttl = LONG_CACHE_TTL if long_ttl else CACHE_TTL
    return (None if last_request is None else last_request + ttl), ttl


def turn_costs(info: ModelInfo, used: int) -> tuple[float | None, float | None]:
    """(warm, cold) USD of sending ``used`` tokens again plus a typical answer: a read of the cached prefix, or
    writing it all again, at the model's own prices. None when the model's price is unknown."""
    warm = info.cost(Usage(cache_read_input_tokens=used, output_tokens=EXPECTED_OUTPUT))
    cold = info.cost(Usage(cache_creation_input_tokens=used, output_tokens=EXPECTED_OUTPUT))
    if warm is None or cold is None:
        return None, None
    return round(warm, 6), round(cold, 6)


def annotate(
    snapshot: ContextSnapshot,
    *,
    info: ModelInfo,
    compact_at: Rule | None,
    last_request: float | None,
    long_ttl: bool,
) -> ContextSnapshot:
    expires, ttl = expires_at(last_request, long_ttl)
    warm, cold = turn_costs(info, snapshot.used)
    return structs.replace(
        snapshot,
        compact_at_tokens=compact_at.at if compact_at else None,
        compact_percent=compact_at.percent if compact_at else None,
        compact_capped=bool(compact_at and compact_at.capped),
        cache_expires_at=expires,
        cache_ttl=ttl,
        next_cost_warm=warm,
        next_cost_cold=cold,
    )


def summary_pays(info: ModelInfo, *, saving_tokens: int, summary_cost: float) -> bool:
    """A summary made now, while the cache is warm, pays when the next (cold) turn writes ``saving_tokens``
    fewer tokens for more than the summary costs (unknown prices count as 1 per million input tokens)."""
    return (info.priced().cost(Usage(cache_creation_input_tokens=saving_tokens)) or 0.0) > summary_cost
