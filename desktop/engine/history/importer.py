"""Import a Claude Code session transcript into a new Précis session.

Rows are stored faithfully (the transcript's content blocks, usage on assistant rows): the engine's request
repair makes them API-valid when the user continues the conversation. The last compaction Claude Code made is
recorded as a compaction row covering everything before its summary message, so continuing sends the summary
instead of the 150K+ tokens of history it replaced.

Pure engine code: no Qt, no SQL. Writing goes through the Storage protocol, in one transaction.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from msgspec import Struct

from desktop.engine import messages as M
from desktop.engine.history.claude_code import ImportedMessage, Transcript, read_transcript
from desktop.engine.history.storage import ImportPlan, Storage
from desktop.engine.metering.measure import new_row_estimate
from desktop.engine.types import one_line

__all__ = [
    "ImportFailed",
    "ImportPlan",
    "ImportResult",
    "import_claude_code",
    "load_transcript",
    "plan_import",
]

IMPORTED_TITLE = "Imported Claude Code session"


class ImportFailed(Exception):
    """The file cannot be imported; the message is one line meant for the user."""


class ImportResult(Struct):
    session_id: int
    title: str
    model: str | None
    messages: int
    skipped_malformed: int
    skipped: dict[str, int]
    compaction_id: int | None = None
    covers_through_message_id: int | None = None

    def status_lines(self) -> list[str]:
        """Human-readable counts for the CLI's stderr and the window's status line."""
        lines: list[str] = [
            M.say(M.IMPORTED, count=self.messages, session=self.session_id, title=self.title),
            M.say(M.SKIPPED_MALFORMED, count=self.skipped_malformed),
        ]
        if self.skipped:
            reasons = ", ".join(
                f"{k} {v}" for k, v in sorted(self.skipped.items(), key=lambda kv: (-kv[1], kv[0]))
            )
            lines.append(M.say(M.SKIPPED_RECORDS, reasons=reasons))
        if self.compaction_id is not None:
            lines.append(M.say(M.IMPORTED_SUMMARY, through=self.covers_through_message_id))
        return lines


def load_transcript(path: str | Path) -> Transcript:
    """Read and parse ``path``; any reason it cannot be imported becomes ImportFailed (one line)."""
    p = Path(path)
    try:
        # A device or a pipe would be read forever (or block waiting for a writer): refused from stat.
        if p.exists() and not p.is_dir() and not p.is_file():
            raise ImportFailed(M.say(M.IMPORT_NOT_REGULAR, path=str(p)))
        transcript = read_transcript(p)
    except FileNotFoundError:
        raise ImportFailed(M.say(M.IMPORT_NO_FILE, path=str(p))) from None
    except IsADirectoryError:
        raise ImportFailed(M.say(M.IMPORT_DIRECTORY, path=str(p))) from None
    except OSError as exc:
        raise ImportFailed(M.say(M.IMPORT_UNREADABLE, path=str(p), error=str(exc.strerror or exc))) from None
    if not transcript.messages:
        if transcript.skipped_malformed:
            raise ImportFailed(
                M.say(M.IMPORT_NOT_TRANSCRIPT, path=str(p), count=transcript.skipped_malformed)
            )
        raise ImportFailed(M.say(M.IMPORT_EMPTY, path=str(p)))
    return transcript


def _row(m: ImportedMessage) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "imported": True,
        "api_message_id": m.api_message_id,
        "is_compact_summary": m.is_compact_summary,
    }
    return {
        "role": m.role,
        "content": m.content,
        "status": "complete",
        "model": m.model if m.role == "assistant" else None,
        "usage": m.usage if m.role == "assistant" else None,
        "meta": meta,
    }


def _text_of(m: ImportedMessage) -> str:
    return "\n\n".join(
        b["text"] for b in m.content if b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def _last_model(t: Transcript) -> str | None:
    """The model of the last assistant reply (``Transcript.models`` is in first-seen order)."""
    for m in reversed(t.messages):
        if m.role == "assistant" and m.model:
            return m.model
    return t.models[-1] if t.models else None


def plan_import(transcript: Transcript, title: str | None = None) -> ImportPlan:
    t = transcript
    plan = ImportPlan(
        title=one_line(title or "") or one_line(t.title or "") or IMPORTED_TITLE,
        model=_last_model(t),
        rows=[_row(m) for m in t.messages],
    )
    for row in plan.rows:  # the gauge of an imported session is summed from these when it first opens
        row["estimate"] = new_row_estimate(row["content"], plan.model)
    for mark in reversed(t.compactions):
        # The summary message Claude Code injected right after the boundary; nothing to cover at index 0.
        at = mark.index
        if (
            0 < at < len(t.messages)
            and t.messages[at].is_compact_summary
            and _text_of(t.messages[at]).strip()
        ):
            plan.summary_index = at
            plan.summary = _text_of(t.messages[at])
            plan.compaction_stats = {
                "imported": True,
                "pre_tokens": mark.pre_tokens,
                "source_trigger": mark.trigger,
            }
            break
    return plan


async def import_claude_code(store: Storage, path: str | Path, title: str | None = None) -> ImportResult:
    """Parse ``path`` off the event loop's thread, then write it in one transaction: a crash or a failure
    leaves the new session complete or absent, never partial."""
    transcript = await asyncio.to_thread(load_transcript, path)
    plan = plan_import(transcript, title)
    session, compaction = await store.import_session(plan)
    return ImportResult(
        session_id=session.id,
        title=plan.title,
        model=plan.model,
        messages=len(plan.rows),
        skipped_malformed=transcript.skipped_malformed,
        skipped=dict(transcript.skipped),
        compaction_id=compaction.id if compaction else None,
        covers_through_message_id=compaction.covers_through_message_id if compaction else None,
    )
