"""Files and folders only their owner may read: the history, settings, window state and exports are private.

New folders are created 0700 and new files 0600; the process umask still applies, so a stricter one is
honoured. Existing paths are only ever tightened (bits beyond 0700 / 0600 dropped), never widened.
On Windows the mode bits mean little; these calls then do what they can and never fail because of it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import tempfile
from pathlib import Path

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
    """Create ``path`` (and missing parents) if needed; the folder itself ends up 0700 or stricter."""
    p = Path(path)
    p.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
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
            with open(target, "wb") as fh:
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
