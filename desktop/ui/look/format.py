"""Number formatting and state colours shared by the gauge, the hover card and text views.

Pure Python (no Qt): the separators follow the window's locale through ``use_locale`` (called with the
QLocale's when the language is chosen; English until then).
"""

from __future__ import annotations

import math

DASH = "—"
_style = {"group": ",", "point": ".", "percent": "%"}
_swap: dict[int, str] = {}


def use_locale(group: str, point: str, percent: str = "%") -> None:
    """Digit grouping, decimal point and percent sign of the locale numbers are shown in."""
    global _swap
    _style.update(group=group, point=point, percent=percent)
    _swap = str.maketrans({",": group, ".": point}) if (group, point) != (",", ".") else {}


def _local(text: str) -> str:
    """A number Python formatted the English way ("31,234.5"), in the locale's separators."""
    return text.translate(_swap)


def fmt_count(n: int) -> str:
    """12345 -> "12,345" in the locale's grouping."""
    return _local(f"{int(n):,}")


def _compact(value: float, suffix: str) -> str:
    text = f"{value:.1f}"
    if text.endswith(".0"):
        text = text[:-2]
    return _local(text) + suffix


def fmt_tokens(n: int | None) -> str:
    """31234 -> "31.2K", 1_000_000 -> "1M", 950 -> "950"; one decimal, trailing ".0" dropped."""
    if n is None:
        return DASH
    sign = "-" if n < 0 else ""
    n = abs(int(n))
    if n < 1000:
        return f"{sign}{n}"
    # Round first, then pick the unit, so 999_960 reads "1M" rather than "1000K".
    if round(n / 1000, 1) < 1000:
        return sign + _compact(n / 1000, "K")
    return sign + _compact(n / 1_000_000, "M")


def fmt_tokens_exact(n: int | None) -> str:
    """31234 -> "31,234" (for tooltips and accessible text where precision matters)."""
    return DASH if n is None else fmt_count(n)


def fmt_percent(p: float | None, decimals: int = 1) -> str:
    """15.649 -> "15.6%"; None (capacity unknown) -> "—"."""
    if p is None or math.isnan(p):
        return DASH
    return _local(f"{p:.{decimals}f}") + _style["percent"]


def gauge_label(p: float | None) -> str:
    """The short number in the middle of the ring: rounded like the card's "82.0%", but never "100"
    before the window is actually full, and never "0" when something is there."""
    if p is None or math.isnan(p):
        return "?"
    if 0 < p < 0.5:
        return "<1"
    shown = math.floor(p + 0.5)
    if p < 100:
        shown = min(shown, 99)
    return str(shown)


def gauge_text(p: float | None) -> str:
    """The ring's number with its unit: "42%", "<1%", "100%"; "?" when the capacity is unknown."""
    label = gauge_label(p)
    return label if label == "?" else label + "%"


def gauge_line(used: int, window: int | None, percent: float | None) -> str:
    """The one-line figure beside the ring on wide windows: "42 % · 84K / 200K" (no window: "84K used")."""
    if not window or percent is None:
        return f"{fmt_tokens(used)} used"
    return f"{gauge_label(percent)} % · {fmt_tokens(used)} / {fmt_tokens(window)}"


def fmt_cost(usd: float | None) -> str:
    """$0.0123 / $0.42 below a dollar (API turns are cheap), $1.23 above; None -> "—"."""
    if usd is None or math.isnan(usd):
        return DASH
    if usd == 0:
        return _local("$0.00")
    if 0 < usd < 0.0001:
        return _local("<$0.0001")
    if abs(usd) < 1:
        # Four decimals, trailing zeros trimmed down to cents: $0.0123, $0.1234, $0.42.
        text = f"{usd:.4f}".rstrip("0")
        whole, _, frac = text.partition(".")
        return _local(f"${whole}.{frac.ljust(2, '0')}")
    return _local(f"${usd:,.2f}")


# State colours as hex so text views and the painted ring agree. Amber and red come in two shades:
# the light-theme shade is dark enough to read as text on a light background, the dark-theme one is lighter.
_STATE_HEX: dict[str, tuple[str, str]] = {
    # state: (light theme, dark theme)
    "normal": ("#3b82c4", "#6aa8e0"),
    "warning": ("#c27c00", "#f0b43c"),
    "critical": ("#d1342f", "#f26b63"),
    "summary": ("#2e8540", "#5cc172"),
}


def state_color_hex(state: str, dark: bool = False) -> str:
    """Colour for a gauge state ("normal" / "warning" / "critical") or the "summary" badge."""
    light_hex, dark_hex = _STATE_HEX.get(state, _STATE_HEX["normal"])
    return dark_hex if dark else light_hex
