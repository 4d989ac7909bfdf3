"""Versions of a conversation: messages form a tree (``parent_id``), a session shows one path through it.

A regenerated reply or an edited message is a new row beside the old one (same parent); nothing is deleted.
The session's active path is recorded per row: ``off_path`` is NULL for rows on it and 1 for rows of versions
not shown now, so every read of "the transcript" is the same indexed query with one more condition. Ids only
grow along a path (a child is written after its parent), so the path in id order is the conversation in order,
and its newest row is its leaf.

A compaction covers one path: it applies while the row it covers through is on the active path (the rows up
to it are then exactly the ancestors it summarised). Switching to a version that forks before that row leaves
the summary out until the path comes back; the requests then carry that path's originals, or its own summary.
Deleting a row hangs its children from its parent, and a compaction that covered through it then covers through
that parent (the same rows of its path, less the deleted one); a shown version deleted without children gives
its place to another version.

Called on the store's database thread only, inside the caller's transaction.
"""

from __future__ import annotations

import json
from typing import Any

from desktop.engine.history.storage import Fork
from desktop.store.schema import Database

LEAVES_KEY = "version_leaves"  # sessions.state: first row of a version -> the leaf last shown under it


def leaf(db: Database, session_id: int) -> int | None:
    """The newest row of the active path (the parent of the next row written); None for an empty session."""
    row = db.execute_sql(
        "SELECT id FROM messages WHERE session_id = ? AND off_path IS NULL ORDER BY id DESC LIMIT 1",
        (session_id,),
    ).fetchone()
    return row[0] if row else None


def parent_of(db: Database, message_id: int) -> tuple[int, int | None] | None:
    """(session id, parent id) of a row; None when it does not exist."""
    row = db.execute_sql("SELECT session_id, parent_id FROM messages WHERE id = ?", (message_id,)).fetchone()
    return (row[0], row[1]) if row else None


def siblings(db: Database, session_id: int, parent_id: int | None) -> list[int]:
    """The versions at one place of the tree, oldest first."""
    if parent_id is None:
        cur = db.execute_sql(
            "SELECT id FROM messages WHERE session_id = ? AND parent_id IS NULL ORDER BY id", (session_id,)
        )
    else:
        cur = db.execute_sql(
            "SELECT id FROM messages WHERE session_id = ? AND parent_id = ? ORDER BY id",
            (session_id, parent_id),
        )
    return [r[0] for r in cur]


def versions_of(
    db: Database, session_id: int, rows: list[tuple[int, int | None]]
) -> dict[int, tuple[int, int]]:
    """For rows given as (id, parent id): message id -> (position from 1, count) of those that have siblings."""
    parents = {p for _i, p in rows if p is not None}
    groups: dict[int | None, list[int]] = {}
    for start in range(0, len(parents), 500):
        chunk = sorted(parents)[start : start + 500]
        marks = ",".join("?" * len(chunk))
        cur = db.execute_sql(
            f"SELECT parent_id, id FROM messages WHERE session_id = ? AND parent_id IN ({marks})",
            (session_id, *chunk),
        )
        for parent, mid in cur:
            groups.setdefault(parent, []).append(mid)
    if any(p is None for _i, p in rows):
        groups[None] = siblings(db, session_id, None)
    out: dict[int, tuple[int, int]] = {}
    for mid, parent in rows:
        group = sorted(groups.get(parent, ()))
        if len(group) > 1 and mid in group:
            out[mid] = (group.index(mid) + 1, len(group))
    return out


def descendants_leaf(db: Database, session_id: int, root: int) -> int:
    """The newest row under ``root`` (itself when it has no children): a leaf, since children are newer."""
    row = db.execute_sql(
        "WITH RECURSIVE down(id) AS (SELECT ? UNION ALL SELECT m.id FROM messages AS m JOIN down "
        "ON m.session_id = ? AND m.parent_id = down.id) SELECT MAX(id) FROM down",
        (root, session_id),
    ).fetchone()
    return int(row[0])


def is_under(db: Database, row_id: int, root: int) -> bool:
    """Whether ``row_id`` is ``root`` or one of its descendants."""
    found = db.execute_sql(
        "WITH RECURSIVE up(id, parent) AS (SELECT id, parent_id FROM messages WHERE id = ? UNION ALL "
        "SELECT m.id, m.parent_id FROM messages AS m JOIN up ON m.id = up.parent WHERE up.id > ?) "
        "SELECT 1 FROM up WHERE id = ?",
        (row_id, root, root),
    ).fetchone()
    return found is not None


def set_path(db: Database, session_id: int, new_leaf: int | None, above: int) -> list[int]:
    """Make the path run through ``new_leaf`` (None: end at ``above``) for every row newer than ``above`` (the
    shared ancestor: rows up to it stay as they are). Returns the rows that left the path."""
    before = {
        r[0]
        for r in db.execute_sql(
            "SELECT id FROM messages WHERE session_id = ? AND id > ? AND off_path IS NULL",
            (session_id, above),
        )
    }
    db.execute_sql(
        "UPDATE messages SET off_path = 1 WHERE session_id = ? AND id > ? AND off_path IS NULL",
        (session_id, above),
    )
    if new_leaf is not None:
        db.execute_sql(
            "WITH RECURSIVE up(id, parent) AS (SELECT id, parent_id FROM messages WHERE id = ? UNION ALL "
            "SELECT m.id, m.parent_id FROM messages AS m JOIN up ON m.id = up.parent WHERE m.id > ?) "
            "UPDATE messages SET off_path = NULL WHERE id IN (SELECT id FROM up)",
            (new_leaf, above),
        )
    after = {
        r[0]
        for r in db.execute_sql(
            "SELECT id FROM messages WHERE session_id = ? AND id > ? AND off_path IS NULL",
            (session_id, above),
        )
    }
    return sorted(before - after)


def _shown(db: Database, message_id: int) -> bool:
    row = db.execute_sql("SELECT off_path FROM messages WHERE id = ?", (message_id,)).fetchone()
    return row is not None and row[0] is None


def _remember(state: dict[str, Any], version: int, shown_leaf: int | None) -> dict[str, Any]:
    leaves = dict(state.get(LEAVES_KEY) or {})
    if shown_leaf is not None:
        leaves[str(version)] = shown_leaf
    return {LEAVES_KEY: leaves}


def _state(db: Database, session_id: int) -> dict[str, Any]:
    row = db.execute_sql("SELECT state FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return json.loads(row[0] or "{}") if row else {}


def _save_state(db: Database, session_id: int, changes: dict[str, Any]) -> None:
    state = {**_state(db, session_id), **changes}
    db.execute_sql(
        "UPDATE sessions SET state = ? WHERE id = ?",
        (json.dumps(state, ensure_ascii=False, separators=(",", ":")), session_id),
    )


def branch_at(db: Database, session_id: int, message_id: int) -> Fork:
    """Make room for a new version of ``message_id``: the path ends at its parent (the old version and what
    followed it stay stored, off the path, and the leaf shown under it is remembered)."""
    found = parent_of(db, message_id)
    if found is None or found[0] != session_id or not _shown(db, message_id):
        raise ValueError(f"message {message_id} is not shown in session {session_id}")
    parent = found[1]
    shown = leaf(db, session_id)
    _save_state(db, session_id, _remember(_state(db, session_id), message_id, shown))
    removed = set_path(db, session_id, parent, parent or 0)
    return Fork(removed, shown, parent)


def restore(db: Database, session_id: int, fork: Fork) -> list[int]:
    """Undo a branch that produced no new row (the reply failed before writing anything): the old path is
    shown again. Returns the rows that came back."""
    if fork.previous_leaf is None or leaf(db, session_id) != fork.parent_id:
        return []
    set_path(db, session_id, fork.previous_leaf, fork.parent_id or 0)
    return [
        r[0]
        for r in db.execute_sql(
            "SELECT id FROM messages WHERE session_id = ? AND id > ? AND off_path IS NULL ORDER BY id",
            (session_id, fork.parent_id or 0),
        )
    ]


def switch(db: Database, session_id: int, message_id: int, delta: int) -> bool:
    """Show the version ``delta`` steps from ``message_id`` among its siblings (with the leaf last shown under
    it, else its newest). False when there is none that way (or the row is not on the path)."""
    found = parent_of(db, message_id)
    if found is None or found[0] != session_id or not _shown(db, message_id):
        return False
    parent = found[1]
    group = siblings(db, session_id, parent)
    at = group.index(message_id)
    to = at + delta
    if delta == 0 or not 0 <= to < len(group):
        return False
    target = group[to]
    state = _state(db, session_id)
    changes = _remember(state, message_id, leaf(db, session_id))
    remembered = (state.get(LEAVES_KEY) or {}).get(str(target))
    new_leaf = remembered if isinstance(remembered, int) and is_under(db, remembered, target) else None
    if new_leaf is None:
        new_leaf = descendants_leaf(db, session_id, target)
    _save_state(db, session_id, changes)
    set_path(db, session_id, new_leaf, parent or 0)
    return True


def detach(db: Database, message_id: int) -> None:
    """Before a row is deleted: its children hang from its parent instead, and a compaction that covered
    through it covers through its parent (the same rows of that path, the deleted one gone)."""
    found = parent_of(db, message_id)
    if found is None:
        return
    parent = found[1]
    db.execute_sql("UPDATE messages SET parent_id = ? WHERE parent_id = ?", (parent, message_id))
    db.execute_sql(
        "UPDATE compactions SET covers_through_message_id = ? WHERE covers_through_message_id = ?",
        (parent or 0, message_id),
    )


def fill_gap(db: Database, session_id: int, parent: int | None) -> None:
    """After the shown row under ``parent`` was deleted without children: show the newest other version there
    (with the leaf last shown under it), so no stored version is left unreachable from the path."""
    if leaf(db, session_id) != parent:
        return
    others = siblings(db, session_id, parent)
    if not others:
        return
    remembered = (_state(db, session_id).get(LEAVES_KEY) or {}).get(str(others[-1]))
    target = remembered if isinstance(remembered, int) and is_under(db, remembered, others[-1]) else None
    set_path(db, session_id, target or descendants_leaf(db, session_id, others[-1]), parent or 0)


def link_appended(db: Database, session_id: int, after_id: int, parent: int | None) -> None:
    """Rows bulk-inserted after ``after_id`` (imports): each follows the previous one, the first the old leaf."""
    db.execute_sql(
        "UPDATE messages SET parent_id = (SELECT MAX(p.id) FROM messages AS p WHERE p.session_id = messages.session_id "
        "AND p.id > ? AND p.id < messages.id) WHERE session_id = ? AND id > ?",
        (after_id, session_id, after_id),
    )
    db.execute_sql(
        "UPDATE messages SET parent_id = ? WHERE id = (SELECT MIN(id) FROM messages WHERE session_id = ? "
        "AND id > ?)",
        (parent, session_id, after_id),
    )
