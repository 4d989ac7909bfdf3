"""Where automatic compaction starts: the user's percent of the input room and absolute cap, per profile and
model (kept in the model overrides, which a profile carries), else the global ratio as before.

A cap matters for 1M windows: a summary at half of one is a 500K-token request on every turn before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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


def compact_at(budget: int, overrides: Mapping[str, Mapping[str, Any]], model: str, default: float) -> int:
    """Tokens at which a request triggers an automatic summary."""
    at = int(budget * ratio(overrides, model, default))
    cap = override_for(overrides, model).get(CAP)
    if isinstance(cap, int | float) and not isinstance(cap, bool) and cap >= CAP_RANGE[0]:
        at = min(at, int(cap))
    return max(1, at)
