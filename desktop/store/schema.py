"""Peewee models, built per database so several stores can live in one process (tests, benchmarks).

Message ids use SQLite AUTOINCREMENT: an id is never handed out twice, even after deletes, so a compaction's
``covers_through_message_id`` can never come to cover a message written after it. (A plain rowid may be reused
after the newest rows are deleted, and a summary would then silently claim messages it never saw.)
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import peewee as pw
from msgspec import Struct

from desktop.engine.types import Usage

if TYPE_CHECKING:

    class Database(pw.SqliteDatabase):
        """The store's database as the type checker sees it: peewee's bundled stubs leave these methods
        unannotated (every call to them would be an untyped call); SqliteDatabase returns the sqlite3 objects.
        Only methods SqliteDatabase has, with the types its code gives them; at run time this is
        ``pw.SqliteDatabase`` itself."""

        def execute_sql(self, sql: str, params: Sequence[object] | None = None) -> sqlite3.Cursor: ...
        def connection(self) -> sqlite3.Connection: ...
else:
    Database = pw.SqliteDatabase


class AutoIncrementField(pw.AutoField):
    """An ``INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT`` id, as ``playhouse.sqlite_ext``'s field of that name
    declares it: importing that module (with its full-text query parser) took 5-9 ms of every start, for this."""

    def ddl(self, ctx: Any) -> pw.NodeList:
        return pw.NodeList((super().ddl(ctx), pw.SQL("AUTOINCREMENT")))


def _now() -> float:
    return time.time()


def stored_usage(text: str | None) -> Usage | None:
    """A ``messages.usage`` value as the usage totals count it: None for no usage, and for a value that is not
    a usage object (never written by Précis; counting it as nothing keeps a migration from failing on it)."""
    if not text:
        return None
    try:
        data = json.loads(text)
        return Usage.from_json(data) if isinstance(data, dict) else None
    except (TypeError, ValueError):
        return None


# The usage totals are kept per band of this many prompt tokens, so a price tier (a multiple of every token of a
# request whose prompt is over a cliff) is judged on each request's size, never on a session's sum. Published
# cliffs are multiples of it, so every request of a band is on the same side of each cliff.
PROMPT_BAND = 1_000


def prompt_band(usage: Usage) -> int:
    """The band of a request's prompt: n holds prompts of (n-1)*PROMPT_BAND + 1 to n*PROMPT_BAND tokens."""
    return -(-usage.prompt_tokens // PROMPT_BAND)


class Models(Struct, frozen=True):
    """The peewee model classes of one database."""

    # Model classes built per database; peewee's fields are dynamic attributes no checker can follow.
    Session: Any
    Message: Any
    Compaction: Any
    KeyValue: Any
    UsageTotal: Any


def build_models(db: pw.Database) -> Models:
    class Base(pw.Model):
        class Meta:
            database = db

    class Session(Base):
        id = AutoIncrementField()
        title = pw.TextField(default="New chat")
        model = pw.TextField(null=True)
        profile = pw.TextField(null=True)  # the provider profile the chat uses (NULL: the active one)
        created_at = pw.FloatField(default=_now)
        updated_at = pw.FloatField(default=_now, index=True)
        # Per-session engine state: breaker failures, microcompaction horizons, settings (schema v2).
        state = pw.TextField(null=True, default="{}")
        pinned = pw.IntegerField(null=True)  # schema v10: 1 for a chat pinned on top of the sidebar
        project_id = pw.IntegerField(null=True)  # schema v15: the project it belongs to (store/projects.py)
        # schema v16: rows on the active path, kept by triggers on messages (every write, any process), so listing
        # the chats reads no messages
        message_count = pw.IntegerField(default=0)

        class Meta:
            table_name = "sessions"

    class Message(Base):
        id = AutoIncrementField()
        session = pw.ForeignKeyField(Session, backref="messages", on_delete="CASCADE", index=False)
        role = pw.TextField()
        content = pw.TextField()  # JSON list of Anthropic content blocks
        usage = pw.TextField(null=True)  # JSON usage of the API response (assistant rows)
        status = pw.TextField(default="complete")
        model = pw.TextField(null=True)
        meta = pw.TextField(null=True, default="{}")  # schema v2
        created_at = pw.FloatField(default=_now)
        # schema v4: the engine's estimate of the row as requests carry it, for the shape named by est_key
        est_key = pw.TextField(null=True)
        est = pw.IntegerField(null=True)
        est_results = pw.IntegerField(null=True)
        est_media = pw.IntegerField(null=True)
        est_trimmed = pw.IntegerField(null=True)
        # schema v9: versions (see store/versions.py): the row this one follows, and 1 when it is not on the
        # session's active path (a version not shown now)
        parent_id = pw.IntegerField(null=True)
        off_path = pw.IntegerField(null=True)

        class Meta:
            table_name = "messages"
            indexes = (
                (("session", "id"), False),
                (
                    (
                        "session",
                        "id",
                        "status",
                        "est_key",
                        "est",
                        "est_results",
                        "est_media",
                        "est_trimmed",
                        "off_path",
                    ),
                    False,
                ),
                (("session", "parent_id"), False),
            )

    class Compaction(Base):
        id = AutoIncrementField()
        session = pw.ForeignKeyField(Session, backref="compactions", on_delete="CASCADE")
        summary = pw.TextField()
        covers_through_message_id = pw.IntegerField()
        trigger = pw.TextField()
        stats = pw.TextField(default="{}")
        created_at = pw.FloatField(default=_now)

        class Meta:
            table_name = "compactions"

    class KeyValue(Base):
        key = pw.TextField(primary_key=True)
        value = pw.TextField()

        class Meta:
            table_name = "kv"

    class UsageTotal(Base):
        """Per session and model: the sums of the usage of the session's stored replies (schema v3).

        Kept by ``Repo`` in the transaction of every write that adds, changes or deletes a reply's usage, so it
        always equals the sum over the rows still stored: deleting a reply (delete, truncate, clear) takes its
        usage out too, so the session cost is that of the stored conversation, not the bill already paid.
        ``model`` is '' for replies stored without one (they are priced at the default model); a row goes when
        its ``replies`` count reaches 0. ``band`` (schema v12) is the replies' prompt band (``prompt_band``): one
        row per model and band, so a price tier applies per request.
        """

        session = pw.ForeignKeyField(Session, on_delete="CASCADE", index=False)
        model = pw.TextField(default="")
        replies = pw.IntegerField(default=0)  # stored rows with a usage
        input_tokens = pw.IntegerField(default=0)
        output_tokens = pw.IntegerField(default=0)
        cache_creation_input_tokens = pw.IntegerField(default=0)
        cache_read_input_tokens = pw.IntegerField(default=0)
        band = pw.IntegerField(default=0)

        class Meta:
            table_name = "usage_totals"
            primary_key = pw.CompositeKey("session", "model", "band")

    return Models(Session, Message, Compaction, KeyValue, UsageTotal)
