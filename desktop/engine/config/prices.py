"""The price table the user can update: ``prices.json`` in the config folder, over the catalog's built-in prices.

::

    {"date": "2026-12-01",
     "models": {"claude-opus-5-5": {"input": 4, "output": 20, "cache_write_5m": 5, "cache_write_1h": 8,
                                     "cache_read": 0.2},
                "claude-haiku-5-5": {"input": 0.1, "output": 0.5, "tiers": [{"above": 100000, "multiplier": 5}]}}}

Prices are USD per million tokens, as the provider's pricing page lists them; a field left out keeps the
catalog's figure (cache prices then follow the input price by the catalog's multipliers). Keys match model ids
like catalog keys (dated ids resolve). A bad file or value is skipped with one sentence in ``problems``; it never
stops the app.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from msgspec import Struct, field

FILE_NAME = "prices.json"
PRICE_FIELDS = {"input": "input_price", "output": "output_price"}
CACHE_FIELDS = {
    "cache_read": "read_multiplier",
    "cache_write_5m": "write_multiplier",
    "cache_write_1h": "write_1h_multiplier",
}
MAX_PRICE = 100_000.0


class ModelPrices(Struct, frozen=True):
    """One model's row: absolute prices (USD per million tokens), each None when the row leaves it out."""

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write_5m: float | None = None
    cache_write_1h: float | None = None
    tiers: tuple[tuple[int, float], ...] | None = None  # (above, multiplier); None: the catalog's


class PriceTable(Struct, frozen=True):
    """The prices file as read: its date, the prices per model and what could not be read."""

    date: str = ""  # "" : no file (the built-in prices apply)
    models: Mapping[str, ModelPrices] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    path: str = ""


def _price(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and 0 <= value <= MAX_PRICE else None


def _tiers(value: Any) -> tuple[tuple[int, float], ...] | None:
    if not isinstance(value, list):
        return None
    out = []
    for tier in value:
        if not isinstance(tier, Mapping):
            return None
        above, multiplier = tier.get("above"), _price(tier.get("multiplier"))
        if isinstance(above, bool) or not isinstance(above, int) or above < 1 or not multiplier:
            return None
        out.append((above, multiplier))
    return tuple(out)


def _row(name: str, value: Any, problems: list[str]) -> ModelPrices | None:
    if not isinstance(value, Mapping):
        problems.append(f"prices.json: the entry for {name} is not an object; it is ignored.")
        return None
    found: dict[str, Any] = {}
    for key in (*PRICE_FIELDS, *CACHE_FIELDS):
        if key in value:
            price = _price(value[key])
            if price is None:
                problems.append(
                    f"prices.json: {name}'s {key} is not a price in USD per million tokens; "
                    "the built-in figure is kept."
                )
            else:
                found[key] = price
    if "tiers" in value:
        tiers = _tiers(value["tiers"])
        if tiers is None:
            problems.append(
                f'prices.json: {name}\'s tiers must be a list of {{"above": tokens, "multiplier": '
                "number}; the built-in tiers are kept."
            )
        else:
            found["tiers"] = tiers
    return ModelPrices(**found)


def parse(data: Any, path: str = "") -> PriceTable:
    """The table ``data`` (a decoded prices.json) describes."""
    problems: list[str] = []
    if not isinstance(data, Mapping):
        return PriceTable(
            problems=("prices.json is not a JSON object; the built-in prices apply.",), path=path
        )
    date = data.get("date")
    if not isinstance(date, str) or not date.strip():
        problems.append('prices.json has no "date" (when its prices were checked); it is shown as unknown.')
        date = "?"
    models = data.get("models", {})
    if not isinstance(models, Mapping):
        problems.append('prices.json: "models" is not an object; the built-in prices apply.')
        models = {}
    rows = {str(k).strip().lower(): row for k, v in models.items() if (row := _row(str(k), v, problems))}
    return PriceTable(date.strip(), rows, tuple(problems), path)


def load(config_dir: Path | None) -> PriceTable:
    """The table in ``config_dir``; an empty one (built-in prices) when there is no file or it cannot be read."""
    if config_dir is None:
        return PriceTable()
    path = config_dir / FILE_NAME
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return PriceTable()
    except OSError as exc:
        return PriceTable(
            problems=(f"prices.json could not be read ({type(exc).__name__}); the built-in prices apply.",),
            path=str(path),
        )
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return PriceTable(
            problems=("prices.json is not valid JSON; the built-in prices apply.",), path=str(path)
        )
    return parse(data, str(path))
