"""What can go wrong with the database file and its folders, each said in one sentence with what to do.

Every SQLite or file-system failure the store meets becomes one of the ``StorageError`` types of the engine's
seam (``desktop.engine.storage``), so the CLI and the window can print it as it is: never a traceback.
The waits for another program's lock are set here too (environment, for tests and slow disks).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import struct
from pathlib import Path

import peewee as pw

from desktop.engine.storage import (
    StorageError,
    StorageFull,
    StorageLocked,
    StorageReadOnly,
    StorageUnusable,
)

SQLITE_MAGIC = b"SQLite format 3\x00"

# How long one SQLite statement waits for another connection's lock before SQLITE_BUSY (seconds).
DEFAULT_BUSY_TIMEOUT = 5.0
# How long a write keeps retrying, busy timeout after busy timeout, before it gives up with a sentence: long
# enough for a backup tool or another Précis to finish what holds the lock (seconds).
DEFAULT_LOCK_WAIT = 60.0


def _seconds(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if 0 <= value <= 86_400 else default


def busy_timeout() -> float:
    return _seconds("PRECIS_BUSY_TIMEOUT", DEFAULT_BUSY_TIMEOUT)


def lock_wait() -> float:
    return _seconds("PRECIS_LOCK_WAIT", DEFAULT_LOCK_WAIT)


def _restore_hint(path: Path) -> str:
    return (f"it was left untouched. To start fresh, move it aside (for example rename it to {path.name}.broken) "
            "and start Précis again; or put back a backup of it")


def damaged(path: Path, what: str) -> StorageUnusable:
    return StorageUnusable(f"The database {path} {what}; {_restore_hint(path)}.")


def check_file(path: Path) -> None:
    """Refuse, before SQLite opens it, a file that is not an SQLite database or was cut short (a missing or
    empty file is a new database). Reads the 100-byte header only."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
            size = os.fstat(fh.fileno()).st_size
    except FileNotFoundError:
        return
    except OSError as exc:
        raise from_os_error(exc, path) from None
    if not header:
        return
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        raise damaged(path, "is not an SQLite database (another program's file, or damaged)")
    page_size = struct.unpack(">H", header[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    pages, change, valid_for = struct.unpack(">I", header[28:32])[0], header[24:28], header[92:96]
    # The page count in the header is meaningful when its version matches the change counter.
    if change == valid_for and pages and size < pages * page_size:
        raise damaged(path, f"is cut short ({size:,} of {pages * page_size:,} bytes)")


def _sqlite_error(exc: BaseException) -> sqlite3.Error | None:
    while exc is not None:
        if isinstance(exc, sqlite3.Error):
            return exc
        orig = getattr(exc, "orig", None)
        exc = orig if isinstance(orig, BaseException) else exc.__cause__  # type: ignore[assignment]
    return None


def is_locked(exc: BaseException) -> bool:
    err = _sqlite_error(exc)
    name = getattr(err, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or (
        err is not None and "database is locked" in str(err))


def locked(path: Path, waited: float) -> StorageLocked:
    return StorageLocked(f"The database {path} is locked by another program and stayed locked for "
                         f"{waited:.0f} s; close the other program (or another Précis) and try again.")


def read_only(path: Path) -> StorageReadOnly:
    return StorageReadOnly(f"The database {path} cannot be written (read-only disk or no permission); "
                           "nothing was changed. Make the folder writable, or set PRECIS_HOME to another one.")


def full(path: Path) -> StorageFull:
    return StorageFull(f"The disk holding {path} is full; nothing was changed. Free some space and try again.")


def from_os_error(exc: OSError, path: Path) -> StorageError:
    """A failure creating or opening one of Précis's folders or files."""
    where = Path(exc.filename) if exc.filename else path
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return full(where)
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return StorageReadOnly(f"{where} cannot be written (read-only disk or no permission); nothing was "
                               "changed. Make it writable, or set PRECIS_HOME to another folder.")
    if exc.errno in (errno.ENOTDIR, errno.EEXIST, errno.EISDIR):
        where = _in_the_way(where)
        return StorageUnusable(f"{where} is in the way: Précis needs a folder there and found a file (or the "
                               "other way round); it was left untouched. Move it, or set PRECIS_HOME to "
                               "another folder.")
    return StorageError(f"{where}: {exc.strerror or exc}; nothing was changed.")


def _in_the_way(path: Path) -> Path:
    """The nearest existing path, going up from ``path``, that is not a folder (``path`` itself if none)."""
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate if not candidate.is_dir() else path
    return path


def translate(exc: BaseException, path: Path, *, waited: float = 0.0) -> StorageError:
    """Any failure of a database operation as the one sentence the user reads."""
    if isinstance(exc, StorageError):
        return exc
    if isinstance(exc, OSError):
        return from_os_error(exc, path)
    err = _sqlite_error(exc)
    name = getattr(err, "sqlite_errorname", "") or ""
    text = str(err if err is not None else exc)
    if is_locked(exc):
        return locked(path, waited)
    if name.startswith("SQLITE_READONLY") or "readonly database" in text:
        return read_only(path)
    if name.startswith("SQLITE_FULL") or "disk is full" in text:
        return full(path)
    if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")) or "malformed" in text or "not a database" in text:
        return damaged(path, f"is damaged ({text})")
    if name.startswith("SQLITE_CANTOPEN"):
        return StorageUnusable(f"The database {path} cannot be opened ({text}); it was left untouched. Check "
                               "that its folder exists and is readable, or set PRECIS_HOME to another folder.")
    if name.startswith("SQLITE_IOERR") or isinstance(exc, pw.OperationalError):
        return StorageError(f"The database {path} could not be written or read ({text}); nothing was lost "
                            "that was saved before. Check the disk (space, errors) and try again.")
    if isinstance(exc, OverflowError):  # an integer SQLite cannot hold: no row can have it
        return StorageError(f"A number too large for the database ({exc}); nothing was changed.")
    return StorageError(f"The database {path} failed: {type(exc).__name__}: {text}")
