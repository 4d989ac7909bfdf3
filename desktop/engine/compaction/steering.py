"""The user steering compaction: an edited summary (a new row over the same messages, undoable like any
compaction), a hand-off text for a new chat, and the cut for "Summarise up to here"."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from desktop.engine.compaction import cut_points, validate_summary
from desktop.engine.metering import tokens
from desktop.engine.types import CompactionRecord, StoredMessage

HANDOFF_HEADER = "Context carried over from an earlier chat, “{title}”:"
_CONTINUED = re.compile(r"^(?P<title>.*?) \(continued(?: (?P<n>\d+))?\)$")


def continued_title(title: str) -> str:
    """The title of a chat a hand-off starts: "<title> (continued)", counting on for a hand-off of a hand-off
    ("… (continued 2)") instead of repeating the word."""
    found = _CONTINUED.match(title)
    if found is None:
        return f"{title} (continued)"
    return f"{found['title']} (continued {int(found['n'] or 1) + 1})"


def edited_stats(record: CompactionRecord, text: str) -> dict[str, Any]:
    """The stats of an edited summary: the pins, ledger and counts of the one it replaces, marked edited."""
    stats = {k: v for k, v in record.stats.items() if k != "user_pins"}  # pins are read live, never stored
    return {**stats, "edited": True, "edited_from": record.id, "summary_tokens": tokens.estimate_text(text)}


def edit_problem(text: str, covered: Sequence[StoredMessage]) -> str | None:
    """Why an edited summary cannot stand in for the messages it covers (None: it can): the check every summary
    gets, against what those messages cost."""
    return validate_summary(text, sum(tokens.estimate_message(m.content) for m in covered))


def handoff_text(record: CompactionRecord, title: str) -> str:
    """What a new chat's composer starts with: the summary, then the user's pinned instructions and the
    artifact ledger (and re-read files) exactly as requests carry them."""
    parts = [HANDOFF_HEADER.format(title=title or "untitled"), record.summary.strip()]
    pins = "\n\n".join(
        str(record.stats.get(key) or "").strip()
        for key in ("pins_text", "user_pins")
        if record.stats.get(key)
    ).strip()  # the user's instructions, then the pinned messages
    if pins:
        parts.append(pins)
    return "\n\n".join(parts)


def head_before(
    rows: Sequence[StoredMessage], message_id: int, cuts: Sequence[int] | None = None
) -> list[StoredMessage]:
    """The rows a summary may replace so that the message ``message_id`` and everything after it stay verbatim:
    up to the latest valid cut at or before that message ([] when there is none)."""
    index = next((i for i, m in enumerate(rows) if m.id >= message_id), len(rows))
    cut = max((c for c in (cuts if cuts is not None else cut_points(rows)) if c <= index), default=0)
    return list(rows[:cut])
