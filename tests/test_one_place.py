"""One place per rule: the text of a rule that lived in several modules now lives in one; these scans keep a
second copy from coming back."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = {p.relative_to(ROOT).as_posix(): p.read_text("utf-8") for p in (ROOT / "desktop").rglob("*.py")}


def where(pattern: str) -> list[str]:
    rx = re.compile(pattern)
    return sorted(name for name, text in SOURCES.items() if rx.search(text))


def test_million_is_defined_once_and_prices_divide_by_it():
    assert where(r"(?m)^\s*\w*M\w* = 1_000_000\b") == ["desktop/engine/catalog.py"]
    assert where(r"price\w* / 1_000_000|/ 1_000_000\)") == []


def test_the_usage_price_formula_is_written_once():
    assert where(r"cache_creation_input_tokens \*") == ["desktop/engine/catalog.py"]


def test_the_boundary_is_computed_in_one_function():
    assert where(r"\[-1\]\.covers_through_message_id") == ["desktop/engine/types.py"]


def test_the_sendable_statuses_are_listed_once():
    assert where(r"""["']complete["'],\s*(["']cut["'],\s*)?["']interrupted["']""") == ["desktop/engine/types.py"]


def test_the_threshold_ranges_are_written_once():
    assert where(r"5\.0,\s*99\.0") == ["desktop/engine/threshold.py"]
    assert where(r"1_000,\s*10_000_000") == ["desktop/engine/threshold.py"]


def test_a_chat_without_a_title_has_one_stored_name():
    assert where(r"""title=[^\n]*or ["']Untitled["']""") == []
