"""What a full-text search across all chats finds: one hit per message or summary, with its snippet.

The index itself is the store's (SQLite FTS5, ``desktop/store/search.py``); the engine, the CLI and the window
share these types.
"""

from __future__ import annotations

from typing import Literal

from msgspec import Struct

# The store marks the matched words of a snippet with these two characters (never typed by a person).
MARK_START = "\x02"
MARK_END = "\x03"


class SearchHit(Struct, frozen=True):
    """One match of a history search: a message or a summary, with its snippet."""

    kind: Literal["message", "summary"]
    session_id: int
    session_title: str
    message_id: int  # the message found; for a summary, the last message it covers
    compaction_id: int | None  # set for a summary
    role: str  # user | assistant | tool (a row of tool results) | summary
    snippet: str  # the text around the match, matched words between MARK_START and MARK_END
    created_at: float

    def parts(self) -> list[tuple[str, bool]]:
        """The snippet as (text, matched) pieces, in order."""
        out: list[tuple[str, bool]] = []
        rest = self.snippet
        while rest:
            start = rest.find(MARK_START)
            if start < 0:
                out.append((rest, False))
                break
            if start:
                out.append((rest[:start], False))
            end = rest.find(MARK_END, start)
            end = len(rest) if end < 0 else end
            out.append((rest[start + 1 : end], True))
            rest = rest[end + 1 :]
        return [(t, m) for t, m in out if t]

    @property
    def plain(self) -> str:
        return self.snippet.replace(MARK_START, "").replace(MARK_END, "")

    def marked(self, start: str, end: str) -> str:
        return self.snippet.replace(MARK_START, start).replace(MARK_END, end)

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "session_id": self.session_id,
            "session_title": self.session_title,
            "message_id": self.message_id,
            "compaction_id": self.compaction_id,
            "role": self.role,
            "snippet": self.plain,
            "matches": [t for t, matched in self.parts() if matched],
            "created_at": self.created_at,
        }


class RecallHit(Struct, frozen=True):
    """One message of a chat's own history that a recall search found (best first)."""

    message_id: int
    role: str  # user | assistant | tool (a row of tool results)
    snippet: str  # the words around the match
    rank: float  # bm25: lower is better
    created_at: float

    def to_json(self) -> dict[str, object]:
        return {
            "message_id": self.message_id,
            "role": self.role,
            "snippet": self.snippet,
            "rank": round(self.rank, 4),
            "created_at": self.created_at,
        }
