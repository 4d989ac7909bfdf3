"""The hover card's bill rows: the last turn's cost and the session's by kind (cache reads, cache writes, uncached
input, output), and why the last turn was cold. The engine decides (desktop/engine/metering/bill.py); these rows word it."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from desktop.ui.api import Bill, Cold, ContextSnapshot, TurnBill
from desktop.ui.look.format import fmt_cost

ROWS = ("bill_read", "bill_write", "bill_input", "bill_output", "bill_cold")
_KINDS = {
    "bill_read": "cache_read",
    "bill_write": "cache_write",
    "bill_input": "input",
    "bill_output": "output",
}


def labels() -> dict[str, str]:
    # Literal translate calls: lupdate reads only those.
    return {
        "bill_read": QCoreApplication.translate("HoverCard", "Cache reads $"),
        "bill_write": QCoreApplication.translate("HoverCard", "Cache writes $"),
        "bill_input": QCoreApplication.translate("HoverCard", "Uncached input $"),
        "bill_output": QCoreApplication.translate("HoverCard", "Output $"),
        "bill_cold": QCoreApplication.translate("HoverCard", "Cold turn"),
    }


def tooltip() -> str:
    return QCoreApplication.translate(
        "HoverCard", "What the last turn cost / what this chat has cost, by kind"
    )


def reason(turn: TurnBill) -> str:
    """Why a cold turn wrote its prompt to the cache again."""
    if turn.cold == Cold.EXPIRED:
        return QCoreApplication.translate("HoverCard", "cache expired after {n} min").format(
            n=turn.idle_minutes or 0
        )
    words = {
        Cold.FIRST: QCoreApplication.translate("HoverCard", "first turn of the chat"),
        Cold.MODEL_SWITCH: QCoreApplication.translate("HoverCard", "model switch"),
        Cold.COMPACTION: QCoreApplication.translate("HoverCard", "re-write after a compaction"),
        Cold.EDIT: QCoreApplication.translate("HoverCard", "an edit"),
    }
    return words.get(turn.cold, "") if turn.cold is not None else ""


def _of(bill: Bill | None, kind: str) -> float | None:
    return None if bill is None else float(getattr(bill, kind))


def values(snap: ContextSnapshot) -> dict[str, str | None]:
    """Each row's text, None to hide the row."""
    out: dict[str, str | None] = {key: None for key in ROWS}
    turn = snap.last_turn
    if turn is None and snap.session_bill is None:
        return out
    last = turn.bill if turn is not None else None
    for key, kind in _KINDS.items():
        out[key] = f"{fmt_cost(_of(last, kind))} / {fmt_cost(_of(snap.session_bill, kind))}"
    if turn is not None and turn.cold is not None:
        out["bill_cold"] = reason(turn)
    return out
