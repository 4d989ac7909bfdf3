"""Per-model correction of the token estimator, learned from real usage.

After each response the engine knows what it estimated for (part of) the request and what the API
counted. The ratio actual/estimated is smoothed per model and multiplies later estimates of the
*estimated* part only (a real usage anchor is never scaled).

Smoothing is an EWMA of the two sums rather than of the ratios, so a 30,000-token observation
weighs more than a 40-token one whose ratio is mostly noise (hidden reminders, rounding).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MIN_FACTOR = 0.5
MAX_FACTOR = 2.0
ALPHA = 0.25  # weight of the newest observation
MIN_OBSERVED_TOKENS = 1000  # below this, framing and hidden extras dominate the ratio
MAX_PLAUSIBLE_RATIO = 4.0  # beyond this the two numbers did not describe the same content


@dataclass(slots=True)
class _ModelState:
    actual: float = 0.0  # EWMA of actual tokens
    estimated: float = 0.0  # EWMA of estimated tokens
    samples: int = 0

    @property
    def factor(self) -> float:
        if self.samples == 0 or self.estimated <= 0:
            return 1.0
        return min(MAX_FACTOR, max(MIN_FACTOR, self.actual / self.estimated))


class Calibration:
    """Correction factors per model id; ``to_dict()``/``from_dict()`` for persistence."""

    def __init__(self, alpha: float = ALPHA, min_tokens: int = MIN_OBSERVED_TOKENS) -> None:
        self.alpha = alpha
        self.min_tokens = min_tokens
        self._models: dict[str, _ModelState] = {}

    def factor(self, model: str | None) -> float:
        state = self._models.get(model or "")
        return state.factor if state else 1.0

    def apply(self, model: str | None, estimated: int | float) -> int:
        """An estimate corrected by the model's factor."""
        return round(estimated * self.factor(model))

    def observe(self, model: str | None, estimated: int | float, actual: int | float) -> bool:
        """Learn from one (estimate, real count) pair of the same content. Returns whether it was used.

        Pairs are ignored when the estimate is tiny or the ratio is implausible (the real count
        then included something the estimate did not know about, e.g. a compaction in between).
        """
        if estimated < self.min_tokens or actual <= 0:
            return False
        ratio = actual / estimated
        if not (1 / MAX_PLAUSIBLE_RATIO <= ratio <= MAX_PLAUSIBLE_RATIO):
            return False
        state = self._models.setdefault(model or "", _ModelState())
        if state.samples == 0:
            state.actual, state.estimated = float(actual), float(estimated)
        else:
            a = self.alpha
            state.actual = (1 - a) * state.actual + a * actual
            state.estimated = (1 - a) * state.estimated + a * estimated
        state.samples += 1
        return True

    def models(self) -> list[str]:
        return sorted(self._models)

    def samples(self, model: str | None) -> int:
        state = self._models.get(model or "")
        return state.samples if state else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": 1,
            "models": {m: {"actual": s.actual, "estimated": s.estimated, "samples": s.samples}
                       for m, s in self._models.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, **kwargs: Any) -> Calibration:
        """Inverse of :meth:`to_dict`; malformed entries are dropped rather than trusted."""
        cal = cls(**kwargs)
        for model, raw in ((data or {}).get("models") or {}).items():
            try:
                state = _ModelState(float(raw["actual"]), float(raw["estimated"]), int(raw["samples"]))
            except (KeyError, TypeError, ValueError):
                continue
            if state.samples > 0 and state.actual > 0 and state.estimated > 0:
                cal._models[str(model)] = state
        return cal
