"""Schema versions, applied with playhouse.migrate and tracked in PRAGMA user_version.

v1: sessions, messages, compactions, kv (the foundation schema).
v2: sessions.state and messages.meta, for engine state (breaker, horizons) and per-message facts.
v3: usage_totals, per session and model the sums of the stored replies' usage (the session's cost without
    reading every reply), built from the existing rows.
v4: per-message estimate columns (est_key, est, est_results, est_media, est_trimmed): the numbers the engine
    gives for a row as requests carry it, so a session's gauge is a SUM without decoding its rows. Left NULL
    here; the engine fills them as it reads rows (a row without them is decoded and estimated when needed).
v5: tool_audit (what each tool call asked, how it was decided, how it ended) and tool_approvals (saved "always"
    answers, bound to the server's origin hash).
v6: sessions.profile, the provider profile a chat uses (NULL: the active one).
v7: session_locks, the per-session lock a running turn holds (pid, host, heartbeat), so a second process on
    the same session waits or refuses instead of sending a merged history.
v8: tool_chat_approvals, the "Allow for this chat" answers, kept with their chat (deleted with it).
v9: versions: messages.parent_id (the row a message follows; existing rows follow the previous one) and
    messages.off_path (1: on a version the chat does not show now), the estimates index with off_path so the
    gauge's sums still read the index alone, and an index of each row's children.
v10: the full-text index (FTS5 tables over message text and summaries, kept by triggers, filled from the rows
    already stored; see store/search.py) and sessions.pinned (a pinned chat sorts first in the sidebar).
v11: the full-text index reads attached text files too (the message triggers again; rows holding a document
    indexed again).
v12: usage_totals per model *and prompt band* (a new key column, ``band``): a price tier applies per request,
    not to a session's sum. The table is derived data: it is rebuilt from the stored replies, so existing
    sessions are priced per request too (no message is touched).
v13: a partial index of the rows left 'streaming'.
v14: spend, per session, kind, model and prompt band, the usage of the requests made for a chat that are no
    reply of its own (summaries, section requests, retries of a summary): a chat's cost is every request it made.
v15: projects (name, instructions, a new chat's defaults, whether recall reaches across it), their knowledge
    (files' text and pasted text, with a full-text index kept by triggers) and sessions.project_id (a chat
    belongs to at most one project; deleting a project leaves its chats, the store is told what to do with them).
v16: sessions.message_count, the rows on each chat's active path, kept by triggers on messages (insert, delete,
    a row leaving or joining the path), and a partial index of the rows with a usage: listing the chats (every
    start) reads neither every message of a chat nor its replies (counted from the rows already stored).
v17: the message index made anew with a second column, ``context``, for recall: a tool result is indexed with the
    name, short text arguments and narration of the call it answers and "error" when it is one, a row of calls
    with its tools' names (see store/search.py ``_context_of``); every stored row indexed again.

A new database runs none of the steps: it is made at the current version at once (``CURRENT_SCHEMA``).
"""

from __future__ import annotations

from collections import defaultdict

import peewee as pw

from desktop.store.schema import Database, Models, prompt_band, stored_usage

CURRENT_VERSION = 17
STREAMING_INDEX = "CREATE INDEX messages_streaming ON messages (session_id) WHERE status = 'streaming'"


def _v1(db: Database, models: Models) -> None:
    # v1 has no state/meta columns: create the tables as v1 had them, then v2 adds the columns.
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, "
        "model TEXT, created_at REAL NOT NULL, updated_at REAL NOT NULL)"
    )
    db.execute_sql("CREATE INDEX IF NOT EXISTS sessions_updated_at ON sessions (updated_at)")
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, role TEXT NOT NULL, "
        "content TEXT NOT NULL, usage TEXT, status TEXT NOT NULL, model TEXT, created_at REAL NOT NULL)"
    )
    db.execute_sql("CREATE INDEX IF NOT EXISTS messages_session_id_id ON messages (session_id, id)")
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS compactions (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, summary TEXT NOT NULL, "
        "covers_through_message_id INTEGER NOT NULL, trigger TEXT NOT NULL, stats TEXT NOT NULL, "
        "created_at REAL NOT NULL)"
    )
    db.execute_sql("CREATE INDEX IF NOT EXISTS compactions_session_id ON compactions (session_id)")
    db.execute_sql("CREATE TABLE IF NOT EXISTS kv (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL)")


def _add_columns(db: Database, table: str, **columns: pw.Field) -> None:
    # The migrator is imported here, by the steps that use it: a new database needs none of it.
    from playhouse.migrate import SqliteMigrator, migrate

    migrator = SqliteMigrator(db)
    migrate(*(migrator.add_column(table, name, field) for name, field in columns.items()))


def _v2(db: Database, models: Models) -> None:
    # Nullable columns are a plain ALTER TABLE ADD COLUMN; NOT NULL ones make the migrator rebuild the
    # table, and rebuilding `sessions` would cascade-delete every message. Readers treat NULL as {}.
    _add_columns(db, "sessions", state=pw.TextField(null=True))
    _add_columns(db, "messages", meta=pw.TextField(null=True))


def _v3(db: Database, models: Models) -> None:
    # A new table: no existing table is rebuilt, so nothing can cascade. Created with the SQL v3 has (not from
    # the current models, which a later version may change), like v1; NOT NULL is fine on a table created whole.
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS usage_totals ("
        "session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, model TEXT NOT NULL, "
        "replies INTEGER NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, "
        "cache_creation_input_tokens INTEGER NOT NULL, cache_read_input_tokens INTEGER NOT NULL, "
        "PRIMARY KEY (session_id, model))"
    )
    rebuild_usage_totals(db, banded=False)


def rebuild_usage_totals(db: Database, *, banded: bool = True) -> None:
    """Recompute every session's usage totals from its stored rows (in the caller's transaction); ``banded``:
    the table has v12's band column (v3 to v11 sum per model only).

    Usage is parsed the way the repo parses it when it keeps the totals (``stored_usage``); only messages of an
    existing session count.
    """
    sums: dict[tuple[int, str, int], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    cursor = db.execute_sql(
        "SELECT m.session_id, m.model, m.usage FROM messages AS m JOIN sessions AS s ON s.id = m.session_id "
        "WHERE m.usage IS NOT NULL"
    )
    for session_id, model, text in cursor:
        usage = stored_usage(text)
        if usage is None:
            continue
        total = sums[(session_id, model or "", prompt_band(usage) if banded else 0)]
        total[0] += 1
        total[1] += usage.input_tokens
        total[2] += usage.output_tokens
        total[3] += usage.cache_creation_input_tokens
        total[4] += usage.cache_read_input_tokens
    db.execute_sql("DELETE FROM usage_totals")
    for (session_id, model, band), total in sums.items():
        db.execute_sql(
            "INSERT INTO usage_totals (session_id, model, replies, input_tokens, output_tokens, "
            "cache_creation_input_tokens, cache_read_input_tokens" + (", band" if banded else "") + ") "
            "VALUES (?, ?, ?, ?, ?, ?, ?" + (", ?" if banded else "") + ")",
            (session_id, model, *total, *((band,) if banded else ())),
        )


def _v4(db: Database, models: Models) -> None:
    # Nullable columns only: a plain ALTER TABLE ADD COLUMN each, no table rebuild (see _v2).
    _add_columns(
        db,
        "messages",
        est_key=pw.TextField(null=True),
        est=pw.IntegerField(null=True),
        est_results=pw.IntegerField(null=True),
        est_media=pw.IntegerField(null=True),
        est_trimmed=pw.IntegerField(null=True),
    )
    # The numbers sit after the content in each record, so summing them from the table would read every
    # row's content from disk; this index holds what the sums read.
    db.execute_sql(
        "CREATE INDEX IF NOT EXISTS messages_estimates ON messages "
        "(session_id, id, status, est_key, est, est_results, est_media, est_trimmed)"
    )


def _v5(db: Database, models: Models) -> None:
    # New tables only, created whole with the SQL v5 has (see v3).
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS tool_audit (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, tool_use_id TEXT NOT NULL, "
        "server TEXT NOT NULL, tool TEXT NOT NULL, arguments TEXT NOT NULL, decision TEXT NOT NULL, "
        "outcome TEXT NOT NULL, is_error INTEGER NOT NULL, exit_code INTEGER, duration REAL, "
        "created_at REAL NOT NULL)"
    )
    db.execute_sql("CREATE INDEX IF NOT EXISTS tool_audit_session_id ON tool_audit (session_id, id)")
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS tool_approvals (id INTEGER PRIMARY KEY AUTOINCREMENT, server TEXT NOT NULL, "
        "tool TEXT NOT NULL, origin TEXT NOT NULL, created_at REAL NOT NULL, UNIQUE (server, tool, origin))"
    )


def _v6(db: Database, models: Models) -> None:
    # A chat remembers its provider profile: a nullable column, a plain ALTER TABLE (nothing is rebuilt).
    _add_columns(db, "sessions", profile=pw.TextField(null=True))


def _v7(db: Database, models: Models) -> None:
    # A new table, no foreign key: a lock row of a deleted session is harmless and goes with the next claim.
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS session_locks (session_id INTEGER NOT NULL PRIMARY KEY, pid INTEGER NOT NULL, "
        "host TEXT NOT NULL, heartbeat REAL NOT NULL)"
    )


def _v8(db: Database, models: Models) -> None:
    # A new table created whole (see v3); it goes with its chat.
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS tool_chat_approvals (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, server TEXT NOT NULL, "
        "tool TEXT NOT NULL, origin TEXT NOT NULL, created_at REAL NOT NULL, UNIQUE (session_id, server, tool, origin))"
    )


def _v9(db: Database, models: Models) -> None:
    # Nullable columns (a plain ALTER TABLE each, see _v2); every existing history is one path.
    _add_columns(db, "messages", parent_id=pw.IntegerField(null=True), off_path=pw.IntegerField(null=True))
    db.execute_sql(
        "UPDATE messages SET parent_id = (SELECT MAX(p.id) FROM messages AS p "
        "WHERE p.session_id = messages.session_id AND p.id < messages.id)"
    )
    db.execute_sql("DROP INDEX IF EXISTS messages_estimates")
    db.execute_sql(
        "CREATE INDEX messages_estimates ON messages "
        "(session_id, id, status, est_key, est, est_results, est_media, est_trimmed, off_path)"
    )
    db.execute_sql("CREATE INDEX IF NOT EXISTS messages_parent ON messages (session_id, parent_id)")


def _v10(db: Database, models: Models) -> None:
    # Virtual tables and triggers only, plus one nullable column (a plain ALTER TABLE): nothing is rebuilt.
    import desktop.store.search as search

    search.create_index(db)
    _add_columns(db, "sessions", pinned=pw.IntegerField(null=True))


def _v11(db: Database, models: Models) -> None:
    import desktop.store.search as search

    search.index_attachments(db)


def _v12(db: Database, models: Models) -> None:
    # The primary key changes, so the table is made anew under another name, swapped in, and filled from the
    # stored replies (it holds nothing they do not: no figure is lost). Only usage_totals is rebuilt; nothing
    # references it, so no cascade reaches another table.
    db.execute_sql(
        "CREATE TABLE usage_totals_v12 ("
        "session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, model TEXT NOT NULL, "
        "replies INTEGER NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, "
        "cache_creation_input_tokens INTEGER NOT NULL, cache_read_input_tokens INTEGER NOT NULL, "
        "band INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (session_id, model, band))"
    )
    db.execute_sql("DROP TABLE usage_totals")
    db.execute_sql("ALTER TABLE usage_totals_v12 RENAME TO usage_totals")
    rebuild_usage_totals(db)


def _v13(db: Database, models: Models) -> None:
    # Every start looks for replies a crash left 'streaming' (almost never any): a partial index holds only
    # those, so the look no longer reads every message (35-180 ms with a 200 MB database).
    db.execute_sql(STREAMING_INDEX)


SPEND_TABLE = (
    "CREATE TABLE spend (session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, "
    "kind TEXT NOT NULL, model TEXT NOT NULL, band INTEGER NOT NULL, requests INTEGER NOT NULL, "
    "input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, cache_creation_input_tokens INTEGER NOT NULL, "
    "cache_read_input_tokens INTEGER NOT NULL, PRIMARY KEY (session_id, kind, model, band))"
)


def _v14(db: Database, models: Models) -> None:
    db.execute_sql(SPEND_TABLE)


PROJECT_TABLES = (
    "CREATE TABLE projects (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, "
    "instructions TEXT NOT NULL, profile TEXT, model TEXT, workspace TEXT, recall INTEGER NOT NULL, "
    "created_at REAL NOT NULL, updated_at REAL NOT NULL)",
    "CREATE TABLE project_knowledge (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE, name TEXT NOT NULL, "
    "kind TEXT NOT NULL, content TEXT NOT NULL, source TEXT NOT NULL, added_at REAL NOT NULL)",
    "CREATE INDEX project_knowledge_project ON project_knowledge (project_id, id)",
)
SESSION_PROJECT_COLUMN = '"project_id" INTEGER REFERENCES projects (id) ON DELETE SET NULL'
SESSION_PROJECT_INDEX = "CREATE INDEX sessions_project ON sessions (project_id)"


def _v15(db: Database, models: Models) -> None:
    import desktop.store.search as search

    for statement in PROJECT_TABLES:
        db.execute_sql(statement)
    db.execute_sql(f"ALTER TABLE sessions ADD COLUMN {SESSION_PROJECT_COLUMN}")
    db.execute_sql(SESSION_PROJECT_INDEX)
    search.create_knowledge_index(db)


SESSION_COUNT_COLUMN = '"message_count" INTEGER NOT NULL DEFAULT 0'
# One UPDATE of the chat's row per message written or deleted, in the same statement's transaction; a bulk
# version switch (off_path set or cleared on many rows) moves the count by each row that left or joined the path.
MESSAGE_COUNT_TRIGGERS = (
    "CREATE TRIGGER messages_count_insert AFTER INSERT ON messages WHEN NEW.off_path IS NULL BEGIN "
    "UPDATE sessions SET message_count = message_count + 1 WHERE id = NEW.session_id; END",
    "CREATE TRIGGER messages_count_delete AFTER DELETE ON messages WHEN OLD.off_path IS NULL BEGIN "
    "UPDATE sessions SET message_count = message_count - 1 WHERE id = OLD.session_id; END",
    "CREATE TRIGGER messages_count_path AFTER UPDATE OF off_path, session_id ON messages "
    "WHEN OLD.session_id != NEW.session_id OR (OLD.off_path IS NULL) != (NEW.off_path IS NULL) BEGIN "
    "UPDATE sessions SET message_count = message_count - 1 WHERE id = OLD.session_id AND OLD.off_path IS NULL; "
    "UPDATE sessions SET message_count = message_count + 1 WHERE id = NEW.session_id AND NEW.off_path IS NULL; END",
)
# The newest usage of a chat (the list shows it) is the newest entry here on the active path: no walk back over
# the chat's rows, however many have none (an imported transcript, a chat whose replies all failed).
USAGE_INDEX = "CREATE INDEX messages_usage ON messages (session_id, id) WHERE usage IS NOT NULL"


def _v16(db: Database, models: Models) -> None:
    db.execute_sql(f"ALTER TABLE sessions ADD COLUMN {SESSION_COUNT_COLUMN}")
    db.execute_sql(
        "UPDATE sessions SET message_count = "
        "(SELECT COUNT(*) FROM messages WHERE session_id = sessions.id AND off_path IS NULL)"
    )
    for statement in MESSAGE_COUNT_TRIGGERS:
        db.execute_sql(statement)
    db.execute_sql(USAGE_INDEX)


def _v17(db: Database, models: Models) -> None:
    # The full-text table is virtual: dropped and made again with its triggers, filled from the stored rows; no
    # other table changes.
    import desktop.store.search as search

    search.reindex_messages(db)


# A new database is made at the current version at once, in one transaction: the tables, indexes and triggers the
# steps above leave, word for word (a column a step added is quoted as the migrator wrote it), so a new database
# and a migrated one are the same (tests/test_startup.py compares them). A new version adds its step above and its
# end state here.
CURRENT_SCHEMA = (
    *PROJECT_TABLES,
    "CREATE TABLE sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, model TEXT, "
    'created_at REAL NOT NULL, updated_at REAL NOT NULL, "state" TEXT, "profile" TEXT, "pinned" INTEGER, '
    f"{SESSION_PROJECT_COLUMN}, {SESSION_COUNT_COLUMN})",
    "CREATE INDEX sessions_updated_at ON sessions (updated_at)",
    SESSION_PROJECT_INDEX,
    "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, role TEXT NOT NULL, "
    "content TEXT NOT NULL, usage TEXT, status TEXT NOT NULL, model TEXT, created_at REAL NOT NULL, "
    '"meta" TEXT, "est_key" TEXT, "est" INTEGER, "est_results" INTEGER, "est_media" INTEGER, '
    '"est_trimmed" INTEGER, "parent_id" INTEGER, "off_path" INTEGER)',
    "CREATE INDEX messages_session_id_id ON messages (session_id, id)",
    "CREATE INDEX messages_estimates ON messages "
    "(session_id, id, status, est_key, est, est_results, est_media, est_trimmed, off_path)",
    "CREATE INDEX messages_parent ON messages (session_id, parent_id)",
    STREAMING_INDEX,
    USAGE_INDEX,
    *MESSAGE_COUNT_TRIGGERS,
    "CREATE TABLE compactions (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, summary TEXT NOT NULL, "
    "covers_through_message_id INTEGER NOT NULL, trigger TEXT NOT NULL, stats TEXT NOT NULL, "
    "created_at REAL NOT NULL)",
    "CREATE INDEX compactions_session_id ON compactions (session_id)",
    "CREATE TABLE kv (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL)",
    'CREATE TABLE "usage_totals" ('
    "session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, model TEXT NOT NULL, "
    "replies INTEGER NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, "
    "cache_creation_input_tokens INTEGER NOT NULL, cache_read_input_tokens INTEGER NOT NULL, "
    "band INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (session_id, model, band))",
    "CREATE TABLE tool_audit (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, tool_use_id TEXT NOT NULL, "
    "server TEXT NOT NULL, tool TEXT NOT NULL, arguments TEXT NOT NULL, decision TEXT NOT NULL, "
    "outcome TEXT NOT NULL, is_error INTEGER NOT NULL, exit_code INTEGER, duration REAL, "
    "created_at REAL NOT NULL)",
    "CREATE INDEX tool_audit_session_id ON tool_audit (session_id, id)",
    "CREATE TABLE tool_approvals (id INTEGER PRIMARY KEY AUTOINCREMENT, server TEXT NOT NULL, "
    "tool TEXT NOT NULL, origin TEXT NOT NULL, created_at REAL NOT NULL, UNIQUE (server, tool, origin))",
    "CREATE TABLE session_locks (session_id INTEGER NOT NULL PRIMARY KEY, pid INTEGER NOT NULL, "
    "host TEXT NOT NULL, heartbeat REAL NOT NULL)",
    "CREATE TABLE tool_chat_approvals (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, server TEXT NOT NULL, "
    "tool TEXT NOT NULL, origin TEXT NOT NULL, created_at REAL NOT NULL, UNIQUE (session_id, server, tool, origin))",
    SPEND_TABLE,
)


def create_current(db: Database) -> None:
    """Make the current schema in an empty database (in the caller's transaction)."""
    import desktop.store.search as search

    for statement in CURRENT_SCHEMA:
        db.execute_sql(statement)
    search.create_index(db)  # the full-text tables and their triggers as v17 left them (nothing to fill)
    search.create_knowledge_index(db)


STEPS = {
    1: _v1,
    2: _v2,
    3: _v3,
    4: _v4,
    5: _v5,
    6: _v6,
    7: _v7,
    8: _v8,
    9: _v9,
    10: _v10,
    11: _v11,
    12: _v12,
    13: _v13,
    14: _v14,
    15: _v15,
    16: _v16,
    17: _v17,
}


def schema_version(db: Database) -> int:
    version: int = db.execute_sql("PRAGMA user_version").fetchone()[0]
    return version


def _has_tables(db: Database) -> bool:
    return db.execute_sql("SELECT 1 FROM sqlite_master WHERE type = 'table' LIMIT 1").fetchone() is not None


def upgrade(db: Database, models: Models, target: int = CURRENT_VERSION) -> int:
    """Bring the database to ``target``; each step is one transaction, so a crash leaves a whole version."""
    version = schema_version(db)
    if version > CURRENT_VERSION:
        raise RuntimeError(
            f"This database was written by a newer Précis (schema {version}, this build knows {CURRENT_VERSION})."
        )
    if version == target:
        return version
    if version == 0 and target == CURRENT_VERSION and not _has_tables(db):  # a new database: no step to run
        with db.atomic():
            create_current(db)
            db.execute_sql(f"PRAGMA user_version = {CURRENT_VERSION}")
        return CURRENT_VERSION
    # SQLite's advice for schema changes: foreign keys off (outside the transaction) so no table rebuild can
    # cascade, then a foreign_key_check before committing each step.
    db.execute_sql("PRAGMA foreign_keys = OFF")
    try:
        while version < target:
            step = version + 1
            with db.atomic():
                STEPS[step](db, models)
                if db.execute_sql("PRAGMA foreign_key_check").fetchall():
                    raise RuntimeError(f"schema step {step} broke a foreign key")
                db.execute_sql(f"PRAGMA user_version = {step}")
            version = step
    finally:
        db.execute_sql("PRAGMA foreign_keys = ON")
    return version
