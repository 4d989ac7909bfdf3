"""Model catalog: context window, output ceiling, tokenizer family, prices, cache minimum, media limit.

Facts are Anthropic's published windows, limits and prices as of Nov 2026; entries marked ``verified=False``
are inferred from a documented sibling and should be confirmed with ``client.models.retrieve``.
An unknown model has window ``None`` ("capacity unknown"): never a made-up 200K.

Precedence of the window: env ``PRECIS_CONTEXT_WINDOW`` (all models) > the user's override (per profile) > what
the chat's provider reports for the model (``models.retrieve``: source "api") > a window learned from a
prompt-too-long error > the catalog. The provider's own error is its latest word: a learned window also lowers
what it reported (never the user's override); a larger learned window leaves a smaller report or catalog entry.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from desktop.engine.tokens import V3, V47, Family, family_for_model
from desktop.engine.types import Usage

ENV_WINDOW = "PRECIS_CONTEXT_WINDOW"
CACHE_WRITE_MULTIPLIER = 1.25  # 5-minute TTL; a 1-hour write costs 2x
CACHE_READ_MULTIPLIER = 0.1

WindowSource = Literal["catalog", "override", "env", "learned", "api", "unknown"]


@dataclass(frozen=True, slots=True)
class ModelInfo:
    model: str
    window: int | None  # None: capacity unknown
    max_output: int
    family: Family  # tokenizer family for the estimator
    input_price: float | None  # USD per million tokens; None: unknown
    output_price: float | None
    min_cache_tokens: int  # shorter prefixes are silently not cached
    media_limit: int  # images + PDF pages per request
    keeps_thinking: bool  # earlier turns' thinking stays in context (else the API drops it)
    verified: bool = True
    window_source: WindowSource = "catalog"

    @property
    def cache_write_price(self) -> float | None:
        return None if self.input_price is None else self.input_price * CACHE_WRITE_MULTIPLIER

    @property
    def cache_read_price(self) -> float | None:
        return None if self.input_price is None else self.input_price * CACHE_READ_MULTIPLIER


MILLION = 1_000_000  # prices are USD per million tokens (and the 1M windows)
_K = 200_000


def _e(window: int | None, max_output: int, family: Family, price: tuple[float, float] | None,
       min_cache: int, keeps_thinking: bool, verified: bool = True) -> dict[str, Any]:
    return {
        "window": window, "max_output": max_output, "family": family,
        "input_price": price[0] if price else None, "output_price": price[1] if price else None,
        "min_cache_tokens": min_cache, "media_limit": 600 if window and window >= MILLION else 100,
        "keeps_thinking": keeps_thinking, "verified": verified,
    }


# Keys are matched against the id and its dated / provider variants (see _lookup).
CATALOG: dict[str, dict[str, Any]] = {
    # 1M models at standard pricing.
    "claude-opus-4-8": _e(MILLION, 128_000, V47, (5, 25), 4096, True),
    "claude-opus-4-7": _e(MILLION, 128_000, V47, (5, 25), 4096, True),
    "claude-opus-4-6": _e(MILLION, 128_000, V3, (5, 25), 4096, True),
    # Max output: 128K in the Jul 2026 model list; older lists said 64K, so the larger figure is unconfirmed.
    "claude-sonnet-4-6": _e(MILLION, 128_000, V3, (3, 15), 2048, True),
    "claude-sonnet-5": _e(MILLION, 128_000, V47, (3, 15), 1024, True, verified=False),  # price, cache min: inferred
    "claude-fable-5": _e(MILLION, 128_000, V47, (10, 50), 2048, True),
    # 200K models.
    "claude-haiku-4-5": _e(_K, 64_000, V3, (1, 5), 4096, False),
    "claude-opus-4-5": _e(_K, 64_000, V3, (5, 25), 4096, True),
    "claude-sonnet-4-5": _e(_K, 64_000, V3, (3, 15), 1024, False),  # 1M beta retired 2026-04-30
    "claude-sonnet-4": _e(_K, 64_000, V3, (3, 15), 1024, False),
    "claude-sonnet-4-0": _e(_K, 64_000, V3, (3, 15), 1024, False),
    "claude-opus-4-1": _e(_K, 32_000, V3, (15, 75), 1024, False, verified=False),
    "claude-opus-4": _e(_K, 32_000, V3, (15, 75), 1024, False, verified=False),
    "claude-opus-4-0": _e(_K, 32_000, V3, (15, 75), 1024, False, verified=False),
    "claude-3-7-sonnet": _e(_K, 64_000, V3, (3, 15), 1024, False),
    "claude-3-5-haiku": _e(_K, 8_192, V3, (0.8, 4), 2048, False),
    # 5.x ids from the SDK 2.10 Model literal: windows follow the documented 1M siblings
    # (Sonnet 5, Fable 5, Opus 4.6+); prices follow the tier. Unverified.
    "claude-opus-5": _e(MILLION, 128_000, V47, (5, 25), 512, True, verified=False),
    "claude-opus-5-5": _e(MILLION, 128_000, V47, (5, 25), 512, True, verified=False),
    "claude-sonnet-5-5": _e(MILLION, 128_000, V47, (3, 15), 1024, True, verified=False),
    "claude-fable-5-1": _e(MILLION, 128_000, V47, (10, 50), 2048, True, verified=False),
    "claude-fable-5-2": _e(MILLION, 128_000, V47, (10, 50), 2048, True, verified=False),
    # Nothing published for these: capacity and price unknown, only the tokenizer is a safe guess.
    "claude-haiku-5-5": _e(None, 64_000, V47, None, 2048, True, verified=False),
    "claude-mythos-5": _e(None, 128_000, V47, None, 2048, True, verified=False),
    "claude-mythos-5-1": _e(None, 128_000, V47, None, 2048, True, verified=False),
    "claude-mythos-5-2": _e(None, 128_000, V47, None, 2048, True, verified=False),
    "claude-mythos-preview": _e(None, 128_000, V47, None, 2048, True, verified=False),
}

_UNKNOWN = _e(None, 32_000, V3, None, 1024, True, verified=False)

# What may follow a catalog key in a real id: a date, a version suffix, a provider tag.
_SUFFIX = re.compile(r"(?:-\d{8}|-latest|-v\d+(?::\d+)?|@\d{8}|\[1m\])*(?::\d+)?$")


def _lookup(model: str, table: Mapping[str, Any]) -> tuple[str, Any] | None:
    """Exact id, else the longest key found in the id followed only by a date/version suffix.

    ``claude-sonnet-4-5-20250929`` and ``us.anthropic.claude-opus-4-7-v1:0`` resolve; a future
    ``claude-opus-4-9`` does not fall back to ``claude-opus-4``.
    """
    m = model.strip().lower()
    if m in table:
        return m, table[m]
    for key in sorted(table, key=len, reverse=True):
        k = key.lower()
        pos = m.find(k)
        while pos >= 0:
            before_ok = pos == 0 or not m[pos - 1].isalnum()
            if before_ok and _SUFFIX.fullmatch(m[pos + len(k):]):
                return key, table[key]
            pos = m.find(k, pos + 1)
    return None


def _positive(value: Any) -> bool:
    """A finite count of at least 1 (not a bool, NaN, infinity or a fraction that would truncate to 0)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 1 and math.isfinite(value)


def _price(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 and math.isfinite(value)


def _env_window() -> int | None:
    raw = os.environ.get(ENV_WINDOW, "").strip().replace("_", "")
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        return None
    return value if value > 0 else None


class ModelCatalog:
    """Model facts with user overrides and windows learned from overflow errors.

    ``overrides`` (from settings): ``{model: window}`` or ``{model: {"window", "max_output",
    "input_price", "output_price", "min_cache_tokens", "media_limit", "family"}}``; ``"input"`` /
    ``"output"`` are accepted for the prices (the spelling ``Settings.model_overrides`` documents). Counts
    must be positive numbers (a 0 left by a cleared field means "no override"). Keys match like catalog
    keys (dated ids resolve). ``learned``: ``{model: window}`` as returned by :meth:`learned`.
    """

    def __init__(self, overrides: Mapping[str, Any] | None = None,
                 learned: Mapping[str, int] | None = None, reported: Iterable[str] | None = None,
                 provided: Mapping[str, int] | None = None) -> None:
        # Anything but a mapping (a list left in settings.json, a corrupt stored value) means "none".
        overrides = overrides if isinstance(overrides, Mapping) else {}
        learned = learned if isinstance(learned, Mapping) else {}
        self._overrides = {str(k).lower(): v for k, v in overrides.items()}
        self._learned: dict[str, int] = {str(k).lower(): int(v) for k, v in learned.items() if _positive(v)}
        # Learned windows the provider's API reported (not an overflow error): the hover card says which.
        given = reported if isinstance(reported, (list, tuple, set, frozenset)) else ()
        self._reported: set[str] = {str(k).lower() for k in given} & set(self._learned)
        # What this catalog's provider reported per model (models.retrieve): a catalog serves one profile.
        provided = provided if isinstance(provided, Mapping) else {}
        self._provided: dict[str, int] = {str(k).lower(): int(v) for k, v in provided.items() if _positive(v)}

    def for_profile(self, overrides: Mapping[str, Any] | None, provided: Mapping[str, int] | None) -> ModelCatalog:
        """A catalog of another profile: its own overrides and provider reports, the same learned windows (an
        overflow error is a fact of the model, kept once)."""
        out = ModelCatalog(overrides, provided=provided)
        out._learned, out._reported = self._learned, self._reported
        return out

    def info(self, model: str | None) -> ModelInfo:
        name = (model or "").strip()
        hit = _lookup(name, CATALOG) if name else None
        info = ModelInfo(model=name, **(hit[1] if hit else _UNKNOWN))
        if not hit:
            info = replace(info, window_source="unknown", family=family_for_model(name))
        provided = self._provided.get(name.lower())
        if provided:
            info = replace(info, window=provided, window_source="api")
        over = _lookup(name, self._overrides) if name else None
        if over:
            info = self._apply_override(info, over[1])
        env = _env_window()
        if env:
            info = replace(info, window=env, window_source="env")
        learned = self._learned.get(name.lower())
        if learned and info.window_source != "override" and (info.window is None or learned < info.window):
            source: WindowSource = "api" if name.lower() in self._reported else "learned"
            info = replace(info, window=learned, window_source=source)
        return info

    def provide_window(self, model: str, window: int) -> bool:
        """Record what the provider reported for the model (models.retrieve). Returns whether it changed."""
        key = model.strip().lower()
        if window <= 0 or self._provided.get(key) == window:
            return False
        self._provided[key] = int(window)
        return True

    def provided(self) -> dict[str, int]:
        """Serialisable provider reports (the caller persists them, per profile)."""
        return dict(self._provided)

    @staticmethod
    def _apply_override(info: ModelInfo, value: Any) -> ModelInfo:
        if _positive(value):
            return replace(info, window=int(value), window_source="override")
        if not isinstance(value, Mapping):
            return info
        changes: dict[str, Any] = {}
        for field in ("window", "max_output", "min_cache_tokens", "media_limit"):
            if _positive(value.get(field)):
                changes[field] = int(value[field])
        for field, alias in (("input_price", "input"), ("output_price", "output")):
            price = value.get(field, value.get(alias))
            if _price(price):
                changes[field] = float(price)
        if isinstance(value.get("family"), str) and value["family"] in (V3, V47):
            changes["family"] = value["family"]
        if "window" in changes:
            changes["window_source"] = "override"
        return replace(info, **changes)

    def learn_window(self, model: str, window: int, *, reported: bool = False) -> bool:
        """Record a window the server told: in an overflow error ("N tokens > M maximum"), or ``reported`` by
        its models API. Returns whether it changed."""
        key = model.strip().lower()
        if window <= 0 or (self._learned.get(key) == window and (key in self._reported) == reported):
            return False
        self._learned[key] = int(window)
        (self._reported.add if reported else self._reported.discard)(key)
        return True

    def reported(self) -> list[str]:
        """The models whose learned window came from the provider's API (the caller persists them)."""
        return sorted(self._reported)

    def learned(self) -> dict[str, int]:
        """Serialisable learned windows (the caller persists them)."""
        return dict(self._learned)

    def cost(self, model: str | None, usage: Usage | None) -> float | None:
        """USD for one response: 0.0 without usage, else None when the model's prices are unknown.

        Cache writes are priced at the 5-minute rate (1.25x input); 1-hour writes (2x) are not
        distinguished in ``Usage``.
        """
        if usage is None:
            return 0.0
        return usage_cost(self.info(model), usage)

    @staticmethod
    def known_models() -> list[str]:
        return sorted(CATALOG)


def usage_cost(info: ModelInfo, usage: Usage) -> float | None:
    """USD a call cost by its usage (None: the model's price is unknown). Cache writes at the 5-minute rate."""
    if info.input_price is None or info.output_price is None:
        return None
    price_in = info.input_price
    return (usage.input_tokens * price_in + usage.cache_creation_input_tokens * price_in * CACHE_WRITE_MULTIPLIER
            + usage.cache_read_input_tokens * price_in * CACHE_READ_MULTIPLIER
            + usage.output_tokens * info.output_price) / MILLION
