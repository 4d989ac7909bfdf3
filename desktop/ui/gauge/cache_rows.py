"""The hover card's compaction and cache rows: where automatic compaction starts, a countdown to the prompt
cache's expiry, and what the next turn costs while the cache is warm and once it is cold."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication

from desktop.ui.api import ContextSnapshot
from desktop.ui.look.format import fmt_cost, fmt_tokens

ROWS = ("compact_at", "cache_expiry", "next_cost")


def labels() -> dict[str, str]:
    # Literal translate calls: lupdate reads only those.
    return {
        "compact_at": QCoreApplication.translate("HoverCard", "Compacts at"),
        "cache_expiry": QCoreApplication.translate("HoverCard", "Cache expires in"),
        "next_cost": QCoreApplication.translate("HoverCard", "Warm / cold turn"),
    }


def countdown(seconds: float) -> str:
    """mm:ss (h:mm:ss from an hour up) of what is left; never negative."""
    left = max(0, int(seconds + 0.999))
    hours, rest = divmod(left, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def values(snap: ContextSnapshot, now: Callable[[], float] = time.time) -> dict[str, str | None]:
    """Each row's text, None to hide the row."""
    out: dict[str, str | None] = {key: None for key in ROWS}
    if snap.compact_at_tokens:
        # The rule as Settings sets it (a percent of the input room, or the cap), not a share of the whole window.
        text = "~" + fmt_tokens(snap.compact_at_tokens)
        if snap.compact_capped:
            text += " (" + QCoreApplication.translate("HoverCard", "your cap") + ")"
        elif snap.compact_percent is not None:
            text += f" ({snap.compact_percent:.0f} %)"
        out["compact_at"] = text
    if snap.cache_expires_at is not None:
        left = snap.cache_expires_at - now()
        expiry = countdown(left) if left > 0 else QCoreApplication.translate("HoverCard", "expired (cold)")
        if (
            snap.cache_ttl
        ):  # which lifetime the last request bought: the hour-long one only after a long pause
            lifetime = (
                QCoreApplication.translate("HoverCard", "1 h cache")
                if snap.cache_ttl >= 3600
                else QCoreApplication.translate("HoverCard", "5 min cache")
            )
            expiry += f" · {lifetime}"
        out["cache_expiry"] = expiry
    if snap.next_cost_warm is not None and snap.next_cost_cold is not None:
        out["next_cost"] = f"{fmt_cost(snap.next_cost_warm)} / {fmt_cost(snap.next_cost_cold)}"
    return out


def ticking(snap: ContextSnapshot | None, now: Callable[[], float] = time.time) -> bool:
    """Whether the countdown still moves (the card refreshes it every second only then)."""
    return snap is not None and snap.cache_expires_at is not None and snap.cache_expires_at > now()
