"""What can go wrong with the database file and its folders, each said in one sentence with what to do.

Every SQLite or file-system failure the store meets becomes one of the ``StorageError`` types of the engine's
seam (``desktop.engine.history.storage``), so the CLI and the window can print it as it is: never a traceback.
The waits for another program's lock are set here too (environment, for tests and slow disks).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import stat
import struct
from pathlib import Path

import peewee as pw

from desktop.engine import messages as M
from desktop.engine.history.storage import (
    StorageError,
    StorageFull,
    StorageLocked,
    StorageReadOnly,
    StorageUnusable,
)

SQLITE_MAGIC = b"SQLite format 3\x00"

# How long one SQLite statement waits for another connection's lock before SQLITE_BUSY (seconds). Short: the store
# retries the whole operation until DEFAULT_LOCK_WAIT (store.retrying), and says it waits between tries, so the
# user hears of another program's lock within 2 s instead of after a silent wait.
DEFAULT_BUSY_TIMEOUT = 1.0
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


def damaged(path: Path, what: str) -> StorageUnusable:
    return StorageUnusable(M.say(M.DB_DAMAGED, path=str(path), what=what, name=path.name))


def check_file(path: Path) -> None:
    """Refuse, before SQLite opens it, a file that is not an SQLite database or was cut short (a missing or
    empty file is a new database). Reads the 100-byte header only."""
    try:
        # Never blocks: a FIFO opens at once without O_NONBLOCK's writer, and is refused from its descriptor.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
            raise StorageUnusable(
                f"The database {path} is not a regular file (a pipe or a device); it was left untouched. "
                f"Remove it, or point PRECIS_HOME at another folder."
            )
        with os.fdopen(fd, "rb") as fh:
            header = fh.read(100)
            size = os.fstat(fh.fileno()).st_size
    except FileNotFoundError:
        return
    except OSError as exc:
        raise from_os_error(exc, path) from None
    if not header:
        return
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        raise damaged(path, M.say(M.DB_NOT_SQLITE))
    page_size = struct.unpack(">H", header[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    pages, change, valid_for = struct.unpack(">I", header[28:32])[0], header[24:28], header[92:96]
    # The page count in the header is meaningful when its version matches the change counter.
    if change == valid_for and pages and size < pages * page_size:
        raise damaged(path, M.say(M.DB_CUT_SHORT, size=size, expected=pages * page_size))


# What SQLite says when a transaction it had already rolled back (after an I/O error) is rolled back again: the
# error that matters is the one before it.
_AFTERMATH = ("cannot rollback - no transaction is active", "cannot commit - no transaction is active")


def _sqlite_error(exc: BaseException) -> sqlite3.Error | None:
    """The SQLite error behind ``exc`` (through peewee's ``orig`` and the causes), past a failed rollback."""
    first: sqlite3.Error | None = None
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, sqlite3.Error):
            if not any(a in str(current) for a in _AFTERMATH):
                return current
            first = first or current
        orig = getattr(current, "orig", None)
        current = orig if isinstance(orig, BaseException) else current.__cause__ or current.__context__
    return first


def file_size_limit() -> int | None:
    """The largest file this process may write (``ulimit -f``, in bytes), None when unlimited."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def _at_size_limit(path: Path) -> int | None:
    """The file size limit, when one of the database's files is at it (a write past it failed with EFBIG,
    which SQLite reports as a plain I/O error)."""
    limit = file_size_limit()
    if limit is None:
        return None
    for name in (path.name, path.name + "-wal", path.name + "-journal"):
        with contextlib.suppress(OSError):
            if (
                path.parent / name
            ).stat().st_size + 65_536 + 24 >= limit:  # one page (and its WAL header) short
                return limit
    return None


def size_limited(path: Path, limit: int | None = None) -> StorageFull:
    limit = file_size_limit() if limit is None else limit
    return StorageFull(M.say(M.FILE_SIZE_LIMIT, path=str(path), limit=limit or 0))


def disk_io(path: Path) -> StorageError:
    return StorageError(M.say(M.DISK_IO, path=str(path)))


def is_locked(exc: BaseException) -> bool:
    err = _sqlite_error(exc)
    name = getattr(err, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or (
        err is not None and "database is locked" in str(err)
    )


def locked(path: Path, waited: float) -> StorageLocked:
    return StorageLocked(M.say(M.DB_LOCKED, path=str(path), waited=round(waited)))


def lock_waiting(path: Path) -> str:
    """What the user reads while a write waits for another program's lock."""
    return M.say(M.DB_LOCK_WAITING, path=str(path), wait=round(lock_wait()))


def read_only(path: Path) -> StorageReadOnly:
    return StorageReadOnly(M.say(M.DB_READ_ONLY, path=str(path)))


def full(path: Path) -> StorageFull:
    return StorageFull(M.say(M.DISK_FULL, path=str(path)))


def from_os_error(exc: OSError, path: Path) -> StorageError:
    """A failure creating or opening one of Précis's folders or files."""
    where = Path(exc.filename) if exc.filename else path
    if exc.errno == errno.EFBIG:
        return size_limited(where)
    if exc.errno == errno.EIO:
        return disk_io(where)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return full(where)
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return StorageReadOnly(M.say(M.PATH_READ_ONLY, path=str(where)))
    if exc.errno in (errno.ENOTDIR, errno.EEXIST, errno.EISDIR):
        where = _in_the_way(where)
        return StorageUnusable(M.say(M.PATH_IN_THE_WAY, path=str(where)))
    return StorageError(M.say(M.PATH_FAILED, path=str(where), error=str(exc.strerror or exc)))


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
    if (
        name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT"))
        or "malformed" in text
        or "not a database" in text
    ):
        return damaged(path, M.say(M.DB_IS_DAMAGED, error=text))
    if name.startswith("SQLITE_CANTOPEN"):
        return StorageUnusable(M.say(M.DB_CANNOT_OPEN, path=str(path), error=text))
    if name.startswith("SQLITE_IOERR") or "disk I/O error" in text:
        limit = _at_size_limit(path)
        return size_limited(path, limit) if limit is not None else disk_io(path)
    if isinstance(exc, pw.OperationalError):
        return StorageError(M.say(M.DB_IO, path=str(path), error=text))
    if isinstance(exc, OverflowError):  # an integer SQLite cannot hold: no row can have it
        return StorageError(M.say(M.DB_NUMBER_TOO_LARGE, error=str(exc)))
    return StorageError(M.say(M.DB_FAILED, path=str(path), name=type(exc).__name__, error=text))
