"""Per-model correction of the token estimator, learned from real usage, kept per provider profile.

After each response the engine knows what it estimated for (part of) the request and what the API
counted. Two corrections are learned per model:

* a *factor* (actual/estimated) that multiplies later estimates of the *estimated* part only (a real
  usage anchor is never scaled). It is an EWMA of the two sums rather than of the ratios, so a
  30,000-token observation weighs more than a 40-token one whose ratio is mostly noise;
* an additive *bias* per request, learned from anchored predictions (previous real prompt + estimate
  of what was added): content the API counts on every request that no message shows (a client's
  hidden reminders, per-request framing the estimator lacks). A factor cannot learn a constant; in
  Précis, which sends only what it stores, the bias stays near zero.

Both updates have bounded influence, so one odd request (hidden attachments, a rewind the transcript
does not record) moves them only a little: the factor counts an observation as at most
``MAX_STEP_RATIO`` times the current factor, the bias moves by at most ``BIAS_ALPHA * BIAS_STEP``.

Each provider profile learns its own (``ProfileCalibrations``): the same model id served by two servers is
counted by each its own way, and a chat's compaction decisions use its own profile's correction only.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

MIN_FACTOR = 0.5
MAX_FACTOR = 2.0
ALPHA = 0.25  # weight of the newest observation
MIN_OBSERVED_TOKENS = 1000  # below this, framing and hidden extras dominate the ratio
MIN_ANCHORED_TOKENS = 300  # the same with the bias taken out first: smaller pairs become usable
MAX_PLAUSIBLE_RATIO = 4.0  # beyond this the two numbers did not describe the same content
MAX_STEP_RATIO = 1.2  # once learned, one observation counts as at most 1.2x (or 1/1.2x) the factor
BIAS_ALPHA = 0.1  # weight of the newest residual in the bias
BIAS_STEP = 75  # tokens: a residual is clipped to ±this before it moves the bias (Huber-like)
MAX_BIAS = 2000  # tokens: a safety clamp; a bias this large means the anchor is not comparable


class _ModelState(Struct):
    """One model's running averages of actual against estimated tokens."""

    actual: float = 0.0  # EWMA of actual tokens
    estimated: float = 0.0  # EWMA of estimated tokens
    samples: int = 0
    bias: float = 0.0  # tokens every anchored request carries beyond the estimate
    bias_samples: int = 0

    @property
    def factor(self) -> float:
        if self.samples == 0 or self.estimated <= 0:
            return 1.0
        return min(MAX_FACTOR, max(MIN_FACTOR, self.actual / self.estimated))


def _clip(value: float, low: float, high: float) -> float:
    return min(high, max(low, value))


class Calibration:
    """Correction factor and bias per model id; ``to_dict()``/``from_dict()`` for persistence."""

    def __init__(self, alpha: float = ALPHA, min_tokens: int = MIN_OBSERVED_TOKENS) -> None:
        self.alpha = alpha
        self.min_tokens = min_tokens
        self._models: dict[str, _ModelState] = {}

    def factor(self, model: str | None) -> float:
        state = self._models.get(model or "")
        return state.factor if state else 1.0

    def bias(self, model: str | None) -> int:
        """Tokens to add to an anchored estimate (anchor + factor × added) of this model's next request."""
        state = self._models.get(model or "")
        return round(state.bias) if state else 0

    def apply(self, model: str | None, estimated: int | float) -> int:
        """An estimate corrected by the model's factor."""
        return round(estimated * self.factor(model))

    def observe(self, model: str | None, estimated: int | float, actual: int | float) -> bool:
        """Learn the factor from one (estimate, real count) pair of the same content. Returns whether it was used.

        Pairs are ignored when the estimate is tiny or the ratio is implausible (the real count
        then included something the estimate did not know about, e.g. a compaction in between).
        """
        if estimated < self.min_tokens or actual <= 0:
            return False
        return self._learn_factor(model, estimated, actual)

    def observe_anchored(
        self,
        model: str | None,
        anchor: int,
        added: int | float,
        actual: int,
        *,
        anchor_model: str | None = None,
        learn_factor: bool = True,
    ) -> bool:
        """Learn from one anchored prediction. Returns whether it was used.

        ``anchor`` is the previous request's real prompt size, ``added`` the *uncalibrated* estimate of
        what changed since (negative when more was removed than added), ``actual`` this request's real
        prompt size. The residual ``actual - anchor - factor × added - bias`` moves the bias; with
        ``learn_factor`` the pair ``(added, actual - anchor - bias)`` also feeds the factor, the bias
        taken out first so a per-request constant does not inflate it. Skipped: a context that shrank
        although the estimate said it grew (a rewind or a compaction the caller did not see) and a
        model switch (the system prompt and tokenizer change).
        """
        if anchor <= 0 or actual <= 0 or (actual < anchor and added >= 0):
            return False
        if anchor_model is not None and (anchor_model or "") != (model or ""):
            return False
        state = self._models.setdefault(model or "", _ModelState())
        bias = state.bias
        residual = actual - anchor - state.factor * added - bias
        state.bias = _clip(bias + BIAS_ALPHA * _clip(residual, -BIAS_STEP, BIAS_STEP), -MAX_BIAS, MAX_BIAS)
        state.bias_samples += 1
        if learn_factor and added >= MIN_ANCHORED_TOKENS:
            self._learn_factor(model, added, actual - anchor - bias)
        return True

    def _learn_factor(self, model: str | None, estimated: float, actual: float) -> bool:
        ratio = actual / estimated
        if not (1 / MAX_PLAUSIBLE_RATIO <= ratio <= MAX_PLAUSIBLE_RATIO):
            return False
        state = self._models.setdefault(model or "", _ModelState())
        if state.samples == 0:
            state.actual, state.estimated = float(actual), float(estimated)
        else:
            # Bounded influence: an outlier pulls the factor at most ALPHA × 20 % of the way.
            f = state.factor
            actual = _clip(actual, estimated * f / MAX_STEP_RATIO, estimated * f * MAX_STEP_RATIO)
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

    def bias_samples(self, model: str | None) -> int:
        state = self._models.get(model or "")
        return state.bias_samples if state else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": 2,
            "models": {
                m: {
                    "actual": s.actual,
                    "estimated": s.estimated,
                    "samples": s.samples,
                    "bias": s.bias,
                    "bias_samples": s.bias_samples,
                }
                for m, s in self._models.items()
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, **kwargs: Any) -> Calibration:
        """Inverse of :meth:`to_dict` (version 1 dicts have no bias: it starts at 0).

        Malformed entries are dropped rather than trusted; a malformed bias alone is reset to 0.
        """
        cal = cls(**kwargs)
        for model, raw in ((data or {}).get("models") or {}).items():
            try:
                state = _ModelState(float(raw["actual"]), float(raw["estimated"]), int(raw["samples"]))
            except (KeyError, TypeError, ValueError):
                continue
            try:
                bias, bias_samples = float(raw.get("bias", 0.0)), int(raw.get("bias_samples", 0))
            except (TypeError, ValueError):
                bias, bias_samples = 0.0, 0
            if bias_samples > 0 and abs(bias) <= MAX_BIAS:  # NaN fails the comparison and is dropped
                state.bias, state.bias_samples = bias, bias_samples
            factor_ok = state.samples > 0 and state.actual > 0 and state.estimated > 0
            if not factor_ok:
                state.actual = state.estimated = 0.0
                state.samples = 0
            if factor_ok or state.bias_samples:
                cal._models[str(model)] = state
        return cal


CALIBRATION_KEY = (
    "calibration"  # the store's kv key: {"version": 3, "profiles": {profile: Calibration.to_dict()}}
)


class ProfileCalibrations:
    """Each provider profile's own :class:`Calibration`, by profile name.

    A model id served by two profiles (a local server's "local-model" on llama.cpp and on another server, a
    Claude id through a proxy that counts differently) is counted by each server its own way: what one
    profile's usage taught says nothing of the other's, and a chat's compaction decisions use its own
    profile's correction only. The objects are kept for the engine's life: a route made again for a profile
    (a new configuration) corrects with what that profile learned so far.
    """

    def __init__(self) -> None:
        self._profiles: dict[str, Calibration] = {}

    def of(self, profile: str) -> Calibration:
        """The profile's calibration (made empty on first use: nothing learned, factor 1.0)."""
        calibration = self._profiles.get(profile)
        if calibration is None:
            calibration = self._profiles[profile] = Calibration()
        return calibration

    def put(self, profile: str, calibration: Calibration) -> None:
        """``calibration`` is the profile's from now on."""
        self._profiles[profile] = calibration

    def profiles(self) -> list[str]:
        """The profiles that learned something."""
        return sorted(p for p, c in self._profiles.items() if c.models())

    @classmethod
    def read(cls, stored: Any, active: str) -> ProfileCalibrations:
        """The stored value (malformed parts dropped, see :meth:`Calibration.from_dict`). Before profiles had
        their own, one calibration keyed by model alone was kept for all of them: it is read as the active
        profile's, the profile most chats that taught it ran on (as ``LearnedWindows.read`` does for windows)."""
        out = cls()
        if not isinstance(stored, dict):
            return out
        profiles = stored.get("profiles")
        if isinstance(profiles, dict):
            for profile, data in profiles.items():
                if isinstance(data, dict) and isinstance(data.get("models"), dict):
                    out._profiles[str(profile)] = Calibration.from_dict(data)
        elif isinstance(stored.get("models"), dict):  # version 1 or 2: one calibration for every profile
            out._profiles[active] = Calibration.from_dict(stored)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"version": 3, "profiles": {p: self._profiles[p].to_dict() for p in self.profiles()}}
