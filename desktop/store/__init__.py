"""Persistence. The only package that touches the database (peewee over SQLite, WAL)."""

from desktop.store.store import Store

__all__ = ["Store"]
