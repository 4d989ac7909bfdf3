"""Messages the user pinned (whole or a selected part): carried verbatim beside the summary once a compaction
covers them, whatever later summaries keep.

Pins live in the session's stored state (``STATE_KEY``), so they survive a restart and need no table of their
own. They are read live, not frozen in a compaction row: unpinning takes a pin out of the very next request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import Struct, structs

from desktop.engine.metering.tokens import estimate_text
from desktop.engine.types import CompactionRecord, StoredMessage

STATE_KEY = "pins"
STATS_KEY = "user_pins"  # the rendered pins on the record requests see (never stored: read from the state)
HEADER = "Messages the user pinned (verbatim):"
LIMIT_TOKENS = 8_000  # one pin at most; a longer message is pinned by selecting the part that matters


class Pin(Struct, frozen=True):
    """A message (or a part of one) the user pinned to survive compaction."""

    message_id: int
    role: str
    text: str
    part: bool = False  # a selected part of the message, not all of it
    at: float = 0.0  # when it was pinned

    def to_json(self) -> dict[str, Any]:
        return structs.asdict(self)


def message_text(msg: StoredMessage) -> str:
    """What pinning the whole message keeps: its text, and the text of the tool results it carries."""
    parts: list[str] = []
    for block in msg.content:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "tool_result":
            inner = block.get("content")
            if isinstance(inner, str):
                parts.append(inner)
            elif isinstance(inner, list):
                parts.extend(
                    str(b.get("text", "")) for b in inner if isinstance(b, dict) and b.get("type") == "text"
                )
    return "\n\n".join(p for p in parts if p.strip()).strip()


def make(msg: StoredMessage | None, text: str | None, now: float) -> Pin:
    """A pin of ``msg`` (whole, or the part ``text`` the user selected in it); ValueError says why not."""
    if msg is None:
        raise ValueError("There is no message with that id in this chat.")
    whole = message_text(msg)
    part = (text or "").strip()
    if part and " ".join(part.split()) not in " ".join(whole.split()):
        raise ValueError("The selected text is not part of that message; select it again and pin it.")
    kept = part or whole
    if not kept:
        raise ValueError("That message has no text to pin.")
    size = estimate_text(kept)
    if size > LIMIT_TOKENS:
        raise ValueError(
            f"That message is too long to pin (about {size:,} tokens; a pin holds up to "
            f"{LIMIT_TOKENS:,}): select the part to keep and pin that."
        )
    return Pin(msg.id, msg.role, kept, part=bool(part) and part != whole, at=now)


def check_room(pins: Sequence[Pin], pin: Pin, budget: int) -> None:
    """ValueError when ``pin`` would take the pins past ``budget`` tokens (they ride along with every request)."""
    held = sum(estimate_text(p.text) for p in pins if p.message_id != pin.message_id)
    if held + estimate_text(pin.text) > budget:
        raise ValueError(
            f"The pins already hold about {held:,} tokens of the {budget:,} they may take: unpin one, "
            "or pin a shorter part."
        )


def pins_of(state: Mapping[str, Any]) -> list[Pin]:
    """The session's pins, oldest message first (rows that do not read as a pin are skipped)."""
    out: list[Pin] = []
    for raw in state.get(STATE_KEY) or []:
        try:
            out.append(
                Pin(
                    int(raw["message_id"]),
                    str(raw.get("role", "")),
                    str(raw["text"]),
                    bool(raw.get("part")),
                    float(raw.get("at") or 0.0),
                )
            )
        except (KeyError, TypeError, ValueError):
            continue
    return sorted(out, key=lambda p: p.message_id)


def with_pin(pins: Sequence[Pin], pin: Pin) -> list[dict[str, Any]]:
    """The state's pin list with ``pin`` added (replacing an earlier pin of the same message)."""
    kept = [p for p in pins if p.message_id != pin.message_id]
    return [p.to_json() for p in sorted([*kept, pin], key=lambda p: p.message_id)]


def without_pin(pins: Sequence[Pin], message_id: int) -> list[dict[str, Any]]:
    return [p.to_json() for p in pins if p.message_id != message_id]


def covered(pins: Sequence[Pin], through: int) -> tuple[Pin, ...]:
    """The pins a compaction covering messages up to ``through`` takes out of the verbatim rows."""
    return tuple(p for p in pins if p.message_id <= through)


def render(pins: Sequence[Pin]) -> str:
    """One block for the model, oldest first, each pin naming its message (recall can read it whole)."""
    if not pins:
        return ""
    parts = [f"[#{p.message_id} {p.role}{', part' if p.part else ''}]\n{p.text}" for p in pins]
    return HEADER + "\n\n" + "\n\n".join(parts)


def decorate(record: CompactionRecord, pins: Sequence[Pin]) -> CompactionRecord:
    """The active record as requests see it: with the pins it covers rendered (a stale copy replaced)."""
    text = render(covered(pins, record.covers_through_message_id))
    stats = {k: v for k, v in record.stats.items() if k != STATS_KEY}
    if text:
        stats[STATS_KEY] = text
    return structs.replace(record, stats=stats)
