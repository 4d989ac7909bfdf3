"""Projects in the database (schema v15): the project rows, their knowledge, which chats belong to which, and the
search across a project (its knowledge and its chats' messages) that the recall tool reaches."""

from __future__ import annotations

import sqlite3
import time
from typing import Literal

import peewee as pw

from desktop.engine import messages as M
from desktop.engine.history.storage import StorageError
from desktop.engine.projects.records import Knowledge, KnowledgeKind, Project, ProjectHit
from desktop.store.schema import Database
from desktop.store.search import RECALL_SNIPPET_WORDS, recall_expression

_COLUMNS = (
    "p.id, p.name, p.instructions, p.profile, p.model, p.workspace, p.recall, p.created_at, p.updated_at"
)
_CHATS = "(SELECT count(*) FROM sessions AS s WHERE s.project_id = p.id)"
EDITABLE = frozenset({"name", "instructions", "profile", "model", "workspace", "recall"})


class ProjectExists(StorageError):
    """A project of that name exists already (names are unique, so ``--project NAME`` is never ambiguous)."""


def _project(row: tuple[object, ...]) -> Project:
    pid, name, instructions, profile, model, workspace, recall, created, updated, chats = row
    return Project(
        id=int(pid),  # type: ignore[call-overload]
        name=str(name),
        instructions=str(instructions),
        profile=profile if isinstance(profile, str) else None,
        model=model if isinstance(model, str) else None,
        workspace=workspace if isinstance(workspace, str) else None,
        recall=bool(recall),
        created_at=float(created),  # type: ignore[arg-type]
        updated_at=float(updated),  # type: ignore[arg-type]
        chats=int(chats),  # type: ignore[call-overload]
    )


def create(
    db: Database,
    name: str,
    instructions: str = "",
    profile: str | None = None,
    model: str | None = None,
    workspace: str | None = None,
) -> Project:
    now = time.time()
    try:
        with db.atomic():
            cursor = db.execute_sql(
                "INSERT INTO projects (name, instructions, profile, model, workspace, recall, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)",
                (name, instructions, profile, model, workspace, now, now),
            )
    except (sqlite3.IntegrityError, pw.IntegrityError):
        raise ProjectExists(M.say(M.PROJECT_EXISTS, name=name)) from None
    found = get(db, int(cursor.lastrowid or 0))
    assert found is not None
    return found


def get(db: Database, project_id: int) -> Project | None:
    row = db.execute_sql(
        f"SELECT {_COLUMNS}, {_CHATS} FROM projects AS p WHERE p.id = ?", (project_id,)
    ).fetchone()
    return _project(row) if row else None


def find(db: Database, name: str) -> Project | None:
    row = db.execute_sql(
        f"SELECT {_COLUMNS}, {_CHATS} FROM projects AS p WHERE p.name = ?", (name,)
    ).fetchone()
    return _project(row) if row else None


def listed(db: Database) -> list[Project]:
    rows = db.execute_sql(
        f"SELECT {_COLUMNS}, {_CHATS} FROM projects AS p ORDER BY p.name COLLATE NOCASE, p.id"
    )
    return [_project(r) for r in rows.fetchall()]


def update(db: Database, project_id: int, changes: dict[str, str | bool | None]) -> None:
    unknown = set(changes) - EDITABLE
    if unknown:
        raise ValueError(f"not a project's field: {', '.join(sorted(unknown))}")
    if not changes:
        return
    names = sorted(changes)
    values = [int(v) if isinstance(v, bool) else v for v in (changes[n] for n in names)]
    try:
        with db.atomic():
            db.execute_sql(
                f"UPDATE projects SET {', '.join(f'{n} = ?' for n in names)}, updated_at = ? WHERE id = ?",
                (*values, time.time(), project_id),
            )
    except (sqlite3.IntegrityError, pw.IntegrityError):
        raise ProjectExists(M.say(M.PROJECT_EXISTS, name=str(changes.get("name")))) from None


def delete(db: Database, project_id: int, chats: Literal["keep", "delete"]) -> list[int]:
    """Delete a project; its chats stay (out of any project) or go with it, as the caller was told to do. The
    ids of the chats deleted."""
    with db.atomic():
        ids = [
            int(r[0]) for r in db.execute_sql("SELECT id FROM sessions WHERE project_id = ?", (project_id,))
        ]
        if chats == "delete" and ids:
            marks = ", ".join("?" * len(ids))
            db.execute_sql(f"DELETE FROM usage_totals WHERE session_id IN ({marks})", ids)
            db.execute_sql(f"DELETE FROM spend WHERE session_id IN ({marks})", ids)
            db.execute_sql(f"DELETE FROM sessions WHERE id IN ({marks})", ids)
        else:
            db.execute_sql("UPDATE sessions SET project_id = NULL WHERE project_id = ?", (project_id,))
        db.execute_sql("DELETE FROM projects WHERE id = ?", (project_id,))
    return ids if chats == "delete" else []


def add_knowledge(
    db: Database, project_id: int, name: str, kind: KnowledgeKind, text: str, source: str = ""
) -> Knowledge:
    now = time.time()
    with db.atomic():
        cursor = db.execute_sql(
            "INSERT INTO project_knowledge (project_id, name, kind, content, source, added_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (project_id, name, kind, text, source, now),
        )
        db.execute_sql("UPDATE projects SET updated_at = ? WHERE id = ?", (now, project_id))
    return Knowledge(int(cursor.lastrowid or 0), project_id, name, kind, text, source, now)


def remove_knowledge(db: Database, knowledge_id: int) -> bool:
    with db.atomic():
        return db.execute_sql("DELETE FROM project_knowledge WHERE id = ?", (knowledge_id,)).rowcount > 0


def knowledge(db: Database, project_id: int) -> list[Knowledge]:
    """A project's knowledge in the order it was added (the order requests carry it in, byte for byte)."""
    rows = db.execute_sql(
        "SELECT id, project_id, name, kind, content, source, added_at FROM project_knowledge "
        "WHERE project_id = ? ORDER BY id",
        (project_id,),
    ).fetchall()
    return [Knowledge(int(i), int(p), str(n), "text" if k == "text" else "file", str(c), str(s), float(a))
            for i, p, n, k, c, s, a in rows]  # fmt: skip


def set_session_project(db: Database, session_id: int, project_id: int | None) -> None:
    with db.atomic():
        db.execute_sql("UPDATE sessions SET project_id = ? WHERE id = ?", (project_id, session_id))


def search(
    db: Database, project_id: int, query: str, limit: int, besides: int | None = None
) -> list[ProjectHit]:
    """The project's knowledge and the messages of its chats (but ``besides``, the asking chat, which its own
    recall reads) that match ``query``, best first (bm25 over both)."""
    expr = recall_expression(query)
    if not expr:
        return []
    limit = max(1, limit)
    found = [
        ProjectHit("knowledge", str(name), snippet or "", float(rank), knowledge_id=int(kid))
        for kid, name, snippet, rank in db.execute_sql(
            "SELECT k.id, k.name, snippet(knowledge_fts, 1, '', '', '…', ?), bm25(knowledge_fts) "
            "FROM knowledge_fts JOIN project_knowledge AS k ON k.id = knowledge_fts.rowid "
            "WHERE knowledge_fts MATCH ? AND k.project_id = ? ORDER BY bm25(knowledge_fts), k.id LIMIT ?",
            (RECALL_SNIPPET_WORDS, expr, project_id, limit),
        ).fetchall()
    ]
    found += [
        ProjectHit("chat", str(title), snippet or "", float(rank), session_id=int(sid), message_id=int(mid))
        for mid, sid, title, snippet, rank in db.execute_sql(
            "SELECT m.id, s.id, s.title, snippet(message_fts, 0, '', '', '…', ?), bm25(message_fts) "
            "FROM message_fts JOIN messages AS m ON m.id = message_fts.rowid JOIN sessions AS s ON s.id = m.session_id "
            "WHERE message_fts MATCH ? AND s.project_id = ? AND s.id != ? AND m.off_path IS NULL "
            "AND m.status != 'streaming' ORDER BY bm25(message_fts), m.id LIMIT ?",
            (RECALL_SNIPPET_WORDS, expr, project_id, besides if besides is not None else -1, limit),
        ).fetchall()
    ]
    return sorted(found, key=lambda h: h.rank)[:limit]
