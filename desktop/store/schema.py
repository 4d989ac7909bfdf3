"""Peewee models, built per database so several stores can live in one process (tests, benchmarks).

Message ids use SQLite AUTOINCREMENT: an id is never handed out twice, even after deletes, so a compaction's
``covers_through_message_id`` can never come to cover a message written after it. (A plain rowid may be reused
after the newest rows are deleted, and a summary would then silently claim messages it never saw.)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import peewee as pw
from playhouse.sqlite_ext import AutoIncrementField


def _now() -> float:
    return time.time()


@dataclass(frozen=True, slots=True)
class Models:
    # Model classes built per database; peewee's fields are dynamic attributes no checker can follow.
    Session: Any
    Message: Any
    Compaction: Any
    KeyValue: Any


def build_models(db: pw.Database) -> Models:
    class Base(pw.Model):
        class Meta:
            database = db

    class Session(Base):
        id = AutoIncrementField()
        title = pw.TextField(default="New chat")
        model = pw.TextField(null=True)
        created_at = pw.FloatField(default=_now)
        updated_at = pw.FloatField(default=_now, index=True)
        # Per-session engine state: breaker failures, microcompaction horizons, settings (schema v2).
        state = pw.TextField(null=True, default="{}")

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

        class Meta:
            table_name = "messages"
            indexes = ((("session", "id"), False),)

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

    return Models(Session, Message, Compaction, KeyValue)
