"""Summaries cite their sources: each item ends with the ids of the messages it came from ([#123], [#12, #14]).

The summariser sees the ids (in the transcript, or in an index after a cached request's messages); a citation
is a message id of the chat, which the recall tool reads back verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from desktop.engine.compaction._shared import Message, content_of, id_of, role_of

RULE = (
    "Every message has an id (#123). End each item of the summary with the ids of the messages it comes "
    "from, in square brackets: [#123], or [#123, #140] for several."
)
CITATION = re.compile(r"\[#\d+(?:\s*(?:,|-|–|\.\.)\s*#?\d+)*\]")
_PART = re.compile(r"#?(\d+)(?:\s*(?:-|–|\.\.)\s*#?(\d+))?")
MAX_RANGE = 200  # a cited range wider than this names its ends only
INDEX_WORDS = 6
INDEX_LIMIT = 400  # messages an index lists (the newest of a longer head)


def cited_ids(text: str) -> list[int]:
    """The message ids a summary cites, in order of first citation (a range [#12-#15] gives each id)."""
    out: dict[int, None] = {}
    for found in CITATION.finditer(text or ""):
        for part in _PART.finditer(found.group(0)[1:-1]):
            lo = int(part.group(1))
            hi = int(part.group(2)) if part.group(2) else lo
            span = range(min(lo, hi), max(lo, hi) + 1) if abs(hi - lo) <= MAX_RANGE else (lo, hi)
            out.update(dict.fromkeys(span))
    return list(out)


def strip_citations(text: str) -> str:
    """``text`` without its citations (what an item says, whatever it cites)."""
    return " ".join(CITATION.sub("", text).split())


def label(msg: Message) -> str:
    """ " [#123]" for a stored message, "" for one without an id."""
    mid = id_of(msg)
    return f" [#{mid}]" if isinstance(mid, int) else ""


def message_index(messages: Sequence[Message], words: int = INDEX_WORDS, limit: int = INDEX_LIMIT) -> str:
    """One line per message with an id: its id, role and first words, for a summary request whose messages
    cannot carry their ids (the chat's own cached request)."""
    lines = []
    for msg in messages:
        mid = id_of(msg)
        if not isinstance(mid, int):
            continue
        text = " ".join(
            " ".join(str(b.get("text", "")) for b in content_of(msg) if b.get("type") == "text").split()
        )
        role = "tool" if any(b.get("type") == "tool_result" for b in content_of(msg)) else role_of(msg)
        lines.append(f"#{mid} {role}: «" + " ".join(text.split()[:words]) + "»")
    if not lines:
        return ""
    shown = lines[-limit:]
    skipped = f"(the {len(lines) - len(shown)} oldest not listed)\n" if len(shown) < len(lines) else ""
    return "The messages summarised, in order, with their ids:\n" + skipped + "\n".join(shown)
