"""Files and folders only their owner may read: the history, settings, window state and exports are private.

Every folder Précis makes is 0700 whatever the process umask (under umask 000 a plain mkdir would give 0777),
missing parents included; new files are created 0600 (a stricter umask is honoured for them). Existing paths are
only ever tightened (bits beyond 0700 / 0600 dropped), never widened.
On Windows the mode bits mean little; these calls then do what they can and never fail because of it.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import tempfile
from pathlib import Path

from desktop.engine import messages as M

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600

log = logging.getLogger(__name__)


def tighten(path: str | os.PathLike[str], allowed: int) -> None:
    """Drop the permission bits of an existing ``path`` that ``allowed`` does not have (missing: nothing)."""
    try:
        current = stat.S_IMODE(os.stat(path).st_mode)
        if current & ~allowed:
            os.chmod(path, current & allowed)
    except FileNotFoundError:
        pass
    except OSError as exc:  # not our file (a shared folder), a read-only file system: keep going
        log.warning("could not restrict the permissions of %s: %s", path, exc)


def private_dir(path: str | os.PathLike[str]) -> Path:
    """Create ``path`` and its missing parents, each 0700 whatever the umask; an existing ``path`` ends up 0700
    or stricter (existing parents are not ours to change)."""
    p = Path(path)
    missing: list[Path] = []
    for folder in (p, *p.parents):
        if folder.is_dir():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue  # made meanwhile by someone else: only tightened below, if it is the folder asked for
        with contextlib.suppress(OSError):  # the umask took bits mkdir's mode asked for: ours is exactly 0700
            os.chmod(folder, PRIVATE_DIR)
    tighten(p, PRIVATE_DIR)
    return p


def touch_private(path: str | os.PathLike[str]) -> Path:
    """Create an empty file 0600 when missing, tighten it when present; its parent must exist.

    Pre-creating a file this way keeps it private when others write it later: SQLite gives ``-wal`` and
    ``-shm`` the database file's mode, and Qt's QSaveFile (QSettings) keeps an existing file's mode.
    """
    p = Path(path)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE)
    os.close(fd)
    tighten(p, PRIVATE_FILE)
    return p


# How long a write into a pipe waits for its reader to open it (a FIFO nobody reads would block for ever).
PIPE_READER_WAIT = 2.0


def _open_for_writing(target: Path) -> int:
    """A descriptor for writing into the pipe or device ``target``: opened without blocking (a FIFO without a
    reader fails at once with ENXIO, retried for ``PIPE_READER_WAIT``), then made blocking for the write."""
    import time

    if not hasattr(os, "O_NONBLOCK"):  # Windows: no FIFOs to wait on
        return os.open(target, os.O_WRONLY)
    import fcntl

    flags = os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    deadline = time.monotonic() + PIPE_READER_WAIT
    while True:
        try:
            fd = os.open(target, flags)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
            if time.monotonic() >= deadline:
                raise OSError(errno.ENXIO, "a pipe nobody reads", str(target)) from None
            time.sleep(0.05)
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


def write_private(path: str | os.PathLike[str], text: str | bytes, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` readable by its owner only (0600, or stricter under the umask).

    The write is atomic: a temporary file in the same folder is flushed and renamed over ``path``, so a
    crash never leaves half a file and the old file's wider mode is not inherited. A symbolic link is
    followed (its target is replaced); a path that is not a regular file (a pipe, ``/dev/stdout``) is
    written into as it is. The parent folder must exist. Returns ``path``.
    """
    data = text.encode(encoding) if isinstance(text, str) else bytes(text)
    given = Path(path)
    target = Path(os.path.realpath(given))
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(os.stat(target).st_mode):
            with os.fdopen(_open_for_writing(target), "wb") as fh:
                fh.write(data)
            return given
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return given


# Settings and server lists are small; a larger file is a mistake (or a device), never read into memory.
CONFIG_LIMIT = 10 * 1024 * 1024


NOT_REGULAR = "not a regular file: a pipe or a device"


class NotRegularFile(OSError):
    """A path that names a pipe, a device or a socket: reading it could block for ever or never end."""


class FileTooLarge(OSError):
    """A file larger than the reader's cap."""


def read_regular(path: str | os.PathLike[str], limit: int = CONFIG_LIMIT) -> bytes:
    """The bytes of the regular file ``path`` (links followed), at most ``limit`` of them.

    Opened without blocking (a FIFO with no writer opens at once), then checked from its descriptor: anything
    but a regular file raises ``NotRegularFile``, a larger file ``FileTooLarge``, before a byte is read.
    Missing files and folders raise what ``open`` raises (FileNotFoundError, IsADirectoryError).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(NOT_REGULAR)
        if info.st_size > limit:
            raise FileTooLarge(f"too large: {info.st_size:,} bytes, at most {limit:,}")
        data = fh.read(limit + 1)
    if len(data) > limit:  # grew while being read
        raise FileTooLarge(f"too large: more than {limit:,} bytes")
    return data


def regular_or_missing(path: str | os.PathLike[str]) -> None:
    """Raise ``NotRegularFile`` when ``path`` exists (links followed) and is neither a regular file nor a
    folder; a missing path or a dangling link passes (it will be created)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise NotRegularFile(NOT_REGULAR)


def os_words(exc: OSError) -> str:
    """What went wrong with a file, in words (never "[Errno 5] …"): a failing disk and the file size limit said
    plainly, anything else as the system words it."""
    if exc.errno == errno.EIO:
        return M.say(M.INPUT_OUTPUT_ERROR)
    if exc.errno == errno.EFBIG:
        return M.say(M.FILE_TOO_LARGE_FOR_LIMIT)
    return exc.strerror or str(exc) or type(exc).__name__


def decode_text(data: bytes) -> str:
    """A config file's text: UTF-8 with or without a BOM, or UTF-16 with its BOM (editors on Windows write
    both). Raises UnicodeDecodeError for anything else."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    return data.decode("utf-8-sig")
