"""Where automatic compaction starts: the user's percent of the input room and absolute cap, per profile and
model (kept in the model overrides, which a profile carries), else the global ratio as before.

A cap matters for 1M windows: a summary at half of one is a 500K-token request on every turn before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec import Struct

PERCENT = "compact_percent"  # share of the input room (window less the output reserve), in percent
CAP = "compact_at_tokens"  # absolute tokens; the smaller of the two wins
PERCENT_RANGE = (5.0, 99.0)
CAP_RANGE = (1_000, 10_000_000)


def override_for(overrides: Mapping[str, Mapping[str, Any]], model: str) -> Mapping[str, Any]:
    name = model.strip().lower()
    return next((v for k, v in overrides.items() if k.strip().lower() == name), {})


def ratio(overrides: Mapping[str, Mapping[str, Any]], model: str, default: float) -> float:
    percent = override_for(overrides, model).get(PERCENT)
    if isinstance(percent, int | float) and not isinstance(percent, bool):
        return min(max(float(percent), PERCENT_RANGE[0]), PERCENT_RANGE[1]) / 100.0
    return default


class Rule(Struct, frozen=True):
    """Where automatic compaction starts, as every view says it: the tokens, the percent of the input room the
    user set (Settings shows the same figure) and whether the absolute cap is what applies."""

    at: int
    percent: float
    capped: bool = False


def rule(budget: int, overrides: Mapping[str, Mapping[str, Any]], model: str, default: float) -> Rule:
    """The rule for ``model``: its percent of the input room ``budget`` (the window less the output reserve, up
    to a price cliff), lowered to its cap when that is smaller."""
    share = ratio(overrides, model, default)
    at = int(budget * share)
    cap = override_for(overrides, model).get(CAP)
    capped = isinstance(cap, int | float) and not isinstance(cap, bool) and cap >= CAP_RANGE[0] and cap < at
    return Rule(max(1, int(cap) if capped and cap is not None else at), round(100 * share, 1), capped)


def compact_at(budget: int, overrides: Mapping[str, Mapping[str, Any]], model: str, default: float) -> int:
    """Tokens at which a request triggers an automatic summary."""
    return rule(budget, overrides, model, default).at


def percent(value: float) -> int:
    """A ratio of the input room as Settings and the hover card show it (0.5: 50)."""
    return round(100 * value)
