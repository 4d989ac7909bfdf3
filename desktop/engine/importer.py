"""Import a Claude Code session transcript into a new Précis session.

Rows are stored faithfully (the transcript's content blocks, usage on assistant rows): the engine's request
repair makes them API-valid when the user continues the conversation. The last compaction Claude Code made is
recorded as a compaction row covering everything before its summary message, so continuing sends the summary
instead of the 150K+ tokens of history it replaced.

Pure engine code: no Qt, no SQL. Writing goes through the store's Repo methods on the database thread.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.engine.claude_code import ImportedMessage, Transcript, read_transcript

__all__ = [
    "ImportFailed",
    "ImportPlan",
    "ImportResult",
    "import_claude_code",
    "load_transcript",
    "plan_import",
    "write_import",
]

DEFAULT_TITLE = "Imported Claude Code session"


class ImportFailed(Exception):
    """The file cannot be imported; the message is one line meant for the user."""


@dataclass(slots=True)
class ImportPlan:
    """What will be written: rows for ``Repo.add_messages`` and the compaction to record, if any."""

    title: str
    model: str | None
    rows: list[dict[str, Any]]
    # Index in ``rows`` of the summary message of the last compaction; rows before it are covered.
    summary_index: int | None = None
    summary: str = ""
    compaction_stats: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ImportResult:
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
        lines = [
            f"imported {self.messages} messages into session {self.session_id} ({self.title})",
            f"skipped {self.skipped_malformed} malformed lines",
        ]
        if self.skipped:
            reasons = ", ".join(f"{k} {v}" for k, v in sorted(self.skipped.items(), key=lambda kv: (-kv[1], kv[0])))
            lines.append(f"skipped records: {reasons}")
        if self.compaction_id is not None:
            lines.append(f"compacted history kept as a summary (covers messages up to {self.covers_through_message_id})")
        return lines


def load_transcript(path: str | Path) -> Transcript:
    """Read and parse ``path``; any reason it cannot be imported becomes ImportFailed (one line)."""
    p = Path(path)
    try:
        transcript = read_transcript(p)
    except FileNotFoundError:
        raise ImportFailed(f"no such file: {p}") from None
    except IsADirectoryError:
        raise ImportFailed(f"{p} is a directory, not a .jsonl file") from None
    except OSError as exc:
        raise ImportFailed(f"cannot read {p}: {exc.strerror or exc}") from None
    if not transcript.messages:
        if transcript.skipped_malformed:
            raise ImportFailed(f"{p} is not a Claude Code JSONL transcript "
                               f"({transcript.skipped_malformed} lines are not JSON records)")
        raise ImportFailed(f"{p} holds no conversation messages to import")
    return transcript


def _row(m: ImportedMessage) -> dict[str, Any]:
    meta: dict[str, Any] = {"imported": True, "api_message_id": m.api_message_id,
                            "is_compact_summary": m.is_compact_summary}
    return {
        "role": m.role,
        "content": m.content,
        "status": "complete",
        "model": m.model if m.role == "assistant" else None,
        "usage": m.usage if m.role == "assistant" else None,
        "meta": meta,
    }


def _text_of(m: ImportedMessage) -> str:
    return "\n\n".join(b["text"] for b in m.content if b.get("type") == "text" and isinstance(b.get("text"), str))


def _last_model(t: Transcript) -> str | None:
    """The model of the last assistant reply (``Transcript.models`` is in first-seen order)."""
    for m in reversed(t.messages):
        if m.role == "assistant" and m.model:
            return m.model
    return t.models[-1] if t.models else None


def plan_import(transcript: Transcript, title: str | None = None) -> ImportPlan:
    t = transcript
    plan = ImportPlan(
        title=(title or "").strip() or t.title or DEFAULT_TITLE,
        model=_last_model(t),
        rows=[_row(m) for m in t.messages],
    )
    for mark in reversed(t.compactions):
        # The summary message Claude Code injected right after the boundary; nothing to cover at index 0.
        at = mark.index
        if 0 < at < len(t.messages) and t.messages[at].is_compact_summary and _text_of(t.messages[at]).strip():
            plan.summary_index = at
            plan.summary = _text_of(t.messages[at])
            plan.compaction_stats = {"imported": True, "pre_tokens": mark.pre_tokens, "source_trigger": mark.trigger}
            break
    return plan


def write_import(repo: Any, plan: ImportPlan) -> ImportResult:
    """Write ``plan`` as a new session. Runs on the database thread (``store.call(write_import, store.repo, p)``).

    ``repo`` is a ``desktop.store.repo.Repo`` (not imported: the engine never depends on the store module).
    A failure part-way deletes the half-written session.
    """
    session = repo.create_session(plan.title, plan.model)
    try:
        # The compaction covers Claude Code's own summary message too: the summary then goes out once, in front.
        cut = plan.summary_index + 1 if plan.summary_index is not None else len(plan.rows)
        repo.add_messages(session.id, plan.rows[:cut])
        compaction = None
        if plan.summary_index is not None:
            through = repo.messages(session.id, newest=1)[0].id
            compaction = repo.add_compaction(session.id, plan.summary, through, "manual", plan.compaction_stats)
        repo.add_messages(session.id, plan.rows[cut:])
        repo.update_session(session.id)  # updated_at: the new session sorts first
    except BaseException:
        repo.delete_session(session.id)
        raise
    return ImportResult(
        session_id=session.id,
        title=plan.title,
        model=plan.model,
        messages=len(plan.rows),
        skipped_malformed=0,
        skipped={},
        compaction_id=compaction.id if compaction else None,
        covers_through_message_id=compaction.covers_through_message_id if compaction else None,
    )


async def import_claude_code(store: Any, path: str | Path, title: str | None = None) -> ImportResult:
    """Parse ``path`` off the event loop's thread, then write it through ``store`` (a ``Store``)."""
    transcript = await asyncio.to_thread(load_transcript, path)
    plan = plan_import(transcript, title)
    result: ImportResult = await store.call(write_import, store.repo, plan)
    result.skipped_malformed = transcript.skipped_malformed
    result.skipped = dict(transcript.skipped)
    return result
