"""Model catalog: context window, output ceiling, tokenizer family, prices, cache minimum, media limit, and the
request rules of the newest models.

Facts are Anthropic's published windows, limits and prices as of ``PRICES_DATE``; entries marked
``verified=False`` are inferred from a documented sibling or from secondary sources and should be confirmed.
Every price decision reads a model's own figures through ``ModelInfo`` (cache multipliers, price cliffs): one
formula, ``ModelInfo.cost``. The user's ``prices.json`` (``desktop.engine.config.prices``) goes over the built-in prices;
per-model settings overrides go over both.
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
from typing import Any, Literal

from msgspec import Struct
from msgspec.structs import replace

from desktop.engine.config.prices import CACHE_FIELDS, ModelPrices, PriceTable
from desktop.engine.metering.tokens import V3, V47, Family, family_for_model
from desktop.engine.types import Usage

MILLION = 1_000_000  # prices are USD per million tokens (and the 1M windows)
ENV_WINDOW = "PRECIS_CONTEXT_WINDOW"
# The standard prompt-cache multipliers of the input price; a model whose published figures differ carries its own.
STANDARD_READ = 0.1
STANDARD_WRITE_5M = 1.25
STANDARD_WRITE_1H = 2.0
# The date the built-in prices were last checked against the provider's published pages.
PRICES_DATE = "2026-12-01"

WindowSource = Literal["catalog", "override", "env", "learned", "api", "unknown"]
CacheTTL = Literal["5m", "1h"]


class PriceTier(Struct, frozen=True):
    """A price cliff: a request whose prompt (input, cache reads and cache writes) is over ``above`` tokens
    pays ``multiplier`` times every price on every token of that request, output included."""

    above: int
    multiplier: float


class ModelInfo(Struct, frozen=True):
    """What the catalog knows of a model: window, output limit, tokenizer family, prices."""

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
    # Prompt-cache prices as multiples of the input price (the model's own published figures).
    read_multiplier: float = STANDARD_READ
    write_multiplier: float = STANDARD_WRITE_5M
    write_1h_multiplier: float = STANDARD_WRITE_1H
    tiers: tuple[PriceTier, ...] = ()
    # Request behaviour. Forced tool use (tool_choice "any" / "tool") is an error on some models; their thinking
    # blocks are bound to the model that wrote them; and they stream the text between tool calls as thinking
    # blocks left empty unless the request asks for a ``display`` that returns it (None: nothing to ask).
    forced_tool_choice: bool = True
    model_bound_thinking: bool = False
    thinking_display: str | None = None

    @property
    def cache_write_price(self) -> float | None:
        """USD per million tokens written to the 5-minute cache (below any price cliff)."""
        return None if self.input_price is None else self.input_price * self.write_multiplier

    @property
    def cache_write_1h_price(self) -> float | None:
        return None if self.input_price is None else self.input_price * self.write_1h_multiplier

    @property
    def cache_read_price(self) -> float | None:
        return None if self.input_price is None else self.input_price * self.read_multiplier

    @property
    def price_cliff(self) -> int | None:
        """Prompt tokens above which the request costs more per token (the lowest tier), None: no cliff."""
        return min((t.above for t in self.tiers), default=None)

    def prompt_room(self, allow_price_tiers: bool) -> int | None:
        """The window a request may fill: the whole window, or up to the first price cliff unless the user
        allows crossing it."""
        cliff = self.price_cliff
        if allow_price_tiers or cliff is None:
            return self.window
        return cliff if self.window is None else min(self.window, cliff)

    def tier_multiplier(self, prompt_tokens: int) -> float:
        """What every price of a request with this many prompt tokens is multiplied by."""
        multiplier = 1.0
        for tier in sorted(self.tiers, key=lambda t: t.above):
            if prompt_tokens > tier.above:
                multiplier = tier.multiplier
        return multiplier

    def priced(self) -> ModelInfo:
        """These facts with unknown prices as 1 and 5 per million (relative units, so costs still compare)."""
        if self.input_price is not None and self.output_price is not None:
            return self
        return replace(
            self,
            input_price=1.0 if self.input_price is None else self.input_price,
            output_price=5.0 if self.output_price is None else self.output_price,
        )

    def cost(self, usage: Usage, ttl: CacheTTL = "5m", prompt_tokens: int | None = None) -> float | None:
        """USD one request costs by its usage (None when the prices are unknown): the sum of ``costs_by_kind``."""
        kinds = self.costs_by_kind(usage, ttl, prompt_tokens)
        return None if kinds is None else sum(kinds)

    def costs_by_kind(
        self, usage: Usage, ttl: CacheTTL = "5m", prompt_tokens: int | None = None
    ) -> tuple[float, float, float, float] | None:
        """USD of one request's (cache reads, cache writes, uncached input, output): the only price formula
        (None when the prices are unknown).

        Cache writes are priced at ``ttl``'s rate (``Usage`` does not split them); a prompt over a price cliff
        pays the tier's multiple on every token, output included. ``usage`` may be the sum of several requests
        whose prompts were each at most ``prompt_tokens`` (the tier is picked by that, not by the sum).
        """
        if self.input_price is None or self.output_price is None:
            return None
        write = self.write_1h_multiplier if ttl == "1h" else self.write_multiplier
        per_token = (
            self.tier_multiplier(usage.prompt_tokens if prompt_tokens is None else prompt_tokens) / MILLION
        )
        return (
            usage.cache_read_input_tokens * self.read_multiplier * self.input_price * per_token,
            usage.cache_creation_input_tokens * write * self.input_price * per_token,
            usage.input_tokens * self.input_price * per_token,
            usage.output_tokens * self.output_price * per_token,
        )


_K = 200_000


def _e(
    window: int | None,
    max_output: int,
    family: Family,
    price: tuple[float, float] | None,
    min_cache: int,
    keeps_thinking: bool,
    verified: bool = True,
    *,
    read: float = STANDARD_READ,
    tiers: tuple[PriceTier, ...] = (),
    current: bool = False,
) -> dict[str, Any]:
    """One entry. ``current``: the 5.5 generation's request rules (no forced tool use, thinking bound to the
    model, text between tool calls shown only on request)."""
    return {
        "window": window,
        "max_output": max_output,
        "family": family,
        "input_price": price[0] if price else None,
        "output_price": price[1] if price else None,
        "min_cache_tokens": min_cache,
        "media_limit": 600 if window and window >= MILLION else 100,
        "keeps_thinking": keeps_thinking,
        "verified": verified,
        "read_multiplier": read,
        "tiers": tiers,
        "forced_tool_choice": not current,
        "model_bound_thinking": current,
        "thinking_display": "summarized" if current else None,
    }


# Keys are matched against the id and its dated / provider variants (see _lookup). Prices are USD per million
# tokens from the provider's pricing and model pages (checked on PRICES_DATE); cache writes are 1.25x (5 min)
# and 2x (1 h) the input price on every model listed, cache reads 0.1x unless an entry says otherwise.
CATALOG: dict[str, dict[str, Any]] = {
    # The 5.5 generation and Fable 5.1+: 1M windows, 128K output.
    # Opus 5.5: $4/$20, writes $5/$8, reads $0.20 (0.05x). The cache minimum follows Opus 5 (unconfirmed).
    "claude-opus-5-5": _e(MILLION, 128_000, V47, (4, 20), 512, True, read=0.05, current=True),
    # Sonnet 5.5: $2/$10, writes $2.50/$4. Reads: the model page lists $0.20 (0.1x), price trackers reading
    # the pricing page report a cut to $0.10 (0.05x) on 2026-10-07; the later figure is used, unconfirmed.
    "claude-sonnet-5-5": _e(
        MILLION, 128_000, V47, (2, 10), 1024, True, verified=False, read=0.05, current=True
    ),
    # Haiku 5.5: $0.10/$0.50 for prompts up to 100,000 tokens, every price 5x above (output included).
    # The cache minimum is not published: Haiku 4.5's sibling figure is assumed.
    "claude-haiku-5-5": _e(MILLION, 128_000, V47, (0.1, 0.5), 2048, True, tiers=(PriceTier(100_000, 5.0),)),
    # Fable 5.1 / Mythos 5.1: $10/$50, reads $0.25 (0.025x).
    "claude-fable-5-1": _e(MILLION, 128_000, V47, (10, 50), 2048, True, read=0.025, current=True),
    "claude-mythos-5-1": _e(MILLION, 128_000, V47, (10, 50), 2048, True, read=0.025, current=True),
    # Fable 5.2 (released 2026-11-09): $8/$40, reads $0.20 (0.025x), writes $10/$16. Not yet on the pages in
    # reach: figures from resellers quoting the list price, unconfirmed.
    "claude-fable-5-2": _e(
        MILLION, 128_000, V47, (8, 40), 2048, True, verified=False, read=0.025, current=True
    ),
    # 1M models at standard pricing.
    "claude-opus-5": _e(MILLION, 128_000, V47, (5, 25), 512, True),
    "claude-sonnet-5": _e(
        MILLION, 128_000, V47, (2, 10), 1024, True
    ),  # the planned rise to $3/$15 was cancelled
    "claude-fable-5": _e(MILLION, 128_000, V47, (10, 50), 2048, True),
    "claude-mythos-5": _e(MILLION, 128_000, V47, (10, 50), 2048, True),
    "claude-opus-4-8": _e(MILLION, 128_000, V47, (5, 25), 4096, True),
    "claude-opus-4-7": _e(MILLION, 128_000, V47, (5, 25), 4096, True),
    "claude-opus-4-6": _e(MILLION, 128_000, V3, (5, 25), 4096, True),
    # Max output: 128K in the Jul 2026 model list; older lists said 64K, so the larger figure is unconfirmed.
    "claude-sonnet-4-6": _e(MILLION, 128_000, V3, (3, 15), 2048, True),
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
    # Nothing published for these: capacity and price unknown, only the tokenizer is a safe guess.
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
            if before_ok and _SUFFIX.fullmatch(m[pos + len(k) :]):
                return key, table[key]
            pos = m.find(k, pos + 1)
    return None


def _positive(value: Any) -> bool:
    """A finite count of at least 1 (not a bool, NaN, infinity or a fraction that would truncate to 0)."""
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and value >= 1 and math.isfinite(value)
    )


def _price(value: Any) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 and math.isfinite(value)
    )


def _apply_prices(info: ModelInfo, row: ModelPrices) -> ModelInfo:
    """``info`` with a prices.json row over it: absolute cache prices become multiples of the input price."""
    changes: dict[str, Any] = {}
    if row.input is not None:
        changes["input_price"] = row.input
    if row.output is not None:
        changes["output_price"] = row.output
    base = row.input if row.input is not None else info.input_price
    for key, attr in CACHE_FIELDS.items():
        price = getattr(row, key)
        if price is not None and base:
            changes[attr] = price / base
    if row.tiers is not None:
        changes["tiers"] = tuple(PriceTier(above, multiplier) for above, multiplier in row.tiers)
    return replace(info, **changes)


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

    def __init__(
        self,
        overrides: Mapping[str, Any] | None = None,
        learned: Mapping[str, int] | None = None,
        reported: Iterable[str] | None = None,
        provided: Mapping[str, int] | None = None,
        prices: PriceTable | None = None,
    ) -> None:
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
        self.prices = prices if isinstance(prices, PriceTable) else PriceTable()

    def for_profile(
        self,
        overrides: Mapping[str, Any] | None,
        provided: Mapping[str, int] | None,
        learned: Mapping[str, int] | None = None,
        reported: Iterable[str] | None = None,
    ) -> ModelCatalog:
        """A catalog of another profile: its own overrides, provider reports and learned windows (an overflow
        error is a fact of the model as that profile's server serves it), the same prices."""
        return ModelCatalog(overrides, learned, reported, provided, self.prices)

    @property
    def prices_date(self) -> str:
        """When the prices in use were checked: the user's prices.json's date, else the built-in table's."""
        return self.prices.date or PRICES_DATE

    def info(self, model: str | None) -> ModelInfo:
        name = (model or "").strip()
        hit = _lookup(name, CATALOG) if name else None
        info = ModelInfo(model=name, **(hit[1] if hit else _UNKNOWN))
        if not hit:
            info = replace(info, window_source="unknown", family=family_for_model(name))
        provided = self._provided.get(name.lower())
        if provided:
            info = replace(info, window=provided, window_source="api")
        row = _lookup(name, self.prices.models) if name else None
        if row:
            info = _apply_prices(info, row[1])
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

    def cost(self, model: str | None, usage: Usage | None, ttl: CacheTTL = "5m") -> float | None:
        """USD for one response: 0.0 without usage, else the model's own price (``ModelInfo.cost``), None when
        its prices are unknown."""
        if usage is None:
            return 0.0
        return self.info(model).cost(usage, ttl)

    @staticmethod
    def known_models() -> list[str]:
        return sorted(CATALOG)
