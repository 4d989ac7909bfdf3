"""Schema versions, applied with playhouse.migrate and tracked in PRAGMA user_version.

v1: sessions, messages, compactions, kv (the foundation schema).
v2: sessions.state and messages.meta, for engine state (breaker, horizons) and per-message facts.
"""

from __future__ import annotations

import peewee as pw
from playhouse.migrate import SqliteMigrator, migrate

from desktop.store.schema import Models

CURRENT_VERSION = 2


def _v1(db: pw.SqliteDatabase, models: Models) -> None:
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


def _v2(db: pw.SqliteDatabase, models: Models) -> None:
    # Nullable columns are a plain ALTER TABLE ADD COLUMN; NOT NULL ones make the migrator rebuild the
    # table, and rebuilding `sessions` would cascade-delete every message. Readers treat NULL as {}.
    migrator = SqliteMigrator(db)
    migrate(
        migrator.add_column("sessions", "state", pw.TextField(null=True)),
        migrator.add_column("messages", "meta", pw.TextField(null=True)),
    )


STEPS = {1: _v1, 2: _v2}


def schema_version(db: pw.SqliteDatabase) -> int:
    return db.execute_sql("PRAGMA user_version").fetchone()[0]


def upgrade(db: pw.SqliteDatabase, models: Models, target: int = CURRENT_VERSION) -> int:
    """Bring the database to ``target``; each step is one transaction, so a crash leaves a whole version."""
    version = schema_version(db)
    if version > CURRENT_VERSION:
        raise RuntimeError(
            f"This database was written by a newer Précis (schema {version}, this build knows {CURRENT_VERSION})."
        )
    if version == target:
        return version
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
