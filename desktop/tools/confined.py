"""Race-free file access inside one folder, and atomic writes.

A path is walked from the folder's own descriptor one name at a time, each opened without following a link
(``O_NOFOLLOW | O_DIRECTORY``); the file itself is opened, created and renamed relative to its folder's
descriptor. A folder swapped for a link between the workspace's check and the use is then met as a link and
refused, so no read or write can be sent outside. Callers pass names already checked and resolved by
``Workspace.resolve`` (links inside the workspace followed there), so a link met here is always a swap.

A write goes to a temporary file in the same folder, is flushed to disk, and is renamed over the target with
the target's mode: a crash leaves the old content or the new one, never a truncated file.

Every name is one entry of its folder: ``..``, ``.``, an empty name or one holding a separator is refused, so
even a caller's mistake cannot climb out. Without descriptor-relative calls (Windows) the same steps run on full
paths, each folder checked not to be a link: atomic, not race-free.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from msgspec import Struct

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
RACE_FREE = {os.open, os.stat, os.mkdir, os.rename, os.unlink} <= os.supports_dir_fd and bool(_NOFOLLOW)
SEPARATORS = frozenset({"/", os.sep})


class NotRegular(OSError):
    """A FIFO, a device or a folder where a regular file was expected."""


def _plain(name: str) -> str:
    """``name`` when it names one entry of a folder (OSError EINVAL otherwise: it would climb or descend)."""
    if name in ("", ".", "..") or not SEPARATORS.isdisjoint(name):
        raise OSError(errno.EINVAL, "not a plain name")
    return name


class Folder(Struct, frozen=True):
    """An open folder: its descriptor (race-free platforms) and its path (for the fallback and messages)."""

    fd: int | None
    path: Path

    def name(self, name: str) -> tuple[str | Path, int | None]:
        """What an ``os`` call takes for ``name`` in this folder: (name, dir_fd) or (full path, None)."""
        _plain(name)
        return (name, self.fd) if self.fd is not None else (self.path / name, None)

    def open(self, name: str, flags: int, mode: int = 0o666) -> int:
        where, fd = self.name(name)
        return os.open(where, flags | _CLOEXEC | _BINARY, mode, dir_fd=fd)

    def lstat(self, name: str) -> os.stat_result:
        where, fd = self.name(name)
        return os.stat(where, dir_fd=fd, follow_symlinks=False)


@contextlib.contextmanager
def folder(root: Path, parts: Sequence[str], *, create: bool = False) -> Iterator[Folder]:
    """The folder ``root/parts...`` opened name by name, links refused (``create``: missing ones made)."""
    if not RACE_FREE:
        if not root.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
        path = root
        for name in parts:
            path = path / _plain(name)
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(path, 0o777)
            # A link is not a folder here either (lstat); checked, not held: a swap after the check gets through.
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
        yield Folder(None, path)
        return
    fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for name in parts:
            _plain(name)
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = inner
        yield Folder(fd, root.joinpath(*parts))
    finally:
        os.close(fd)


@contextlib.contextmanager
def open_regular(root: Path, parts: Sequence[str]) -> Iterator[tuple[int, os.stat_result]]:
    """A regular file opened for reading (a link, a FIFO or a device refused without blocking), and its stat."""
    if not parts:
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    with folder(root, parts[:-1]) as where, open_regular_in(where, parts[-1]) as opened:
        yield opened


@contextlib.contextmanager
def open_regular_in(where: Folder, name: str) -> Iterator[tuple[int, os.stat_result]]:
    """``name`` in an open folder, as ``open_regular``."""
    fd = where.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
            raise NotRegular(errno.EINVAL, "not a regular file")
        if _NONBLOCK and hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        yield fd, st
    finally:
        os.close(fd)


def read_bytes(root: Path, parts: Sequence[str], limit: int | None = None) -> bytes:
    """The whole file (``limit``: refused as too large past that many bytes, with ValueError)."""
    with open_regular(root, parts) as (fd, st):
        if limit is not None and st.st_size > limit:
            raise ValueError(st.st_size)
        chunks = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if limit is not None and size > limit:  # grew since the stat
                raise ValueError(size)
        return b"".join(chunks)


def write_atomic(root: Path, parts: Sequence[str], data: bytes) -> None:
    """Replace (or create) the file with ``data`` in one step, making missing folders; an existing file keeps
    its mode. Only a regular file is replaced."""
    if not parts:
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    name = parts[-1]
    with folder(root, parts[:-1], create=True) as where:
        mode: int | None = None
        try:
            st = where.lstat(name)
        except FileNotFoundError:
            pass
        else:
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
            if stat.S_ISLNK(st.st_mode):  # the checked path had none here: swapped in since
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
            if not stat.S_ISREG(st.st_mode):
                raise NotRegular(errno.EINVAL, "not a regular file")
            mode = stat.S_IMODE(st.st_mode)
        temp = f".{name[:200]}.{secrets.token_hex(4)}.tmp"
        fd = where.open(
            temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600 if mode is not None else 0o666
        )
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if mode is not None and hasattr(os, "fchmod"):
                    os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
            source, source_fd = where.name(temp)
            target, target_fd = where.name(name)
            os.replace(source, target, src_dir_fd=source_fd, dst_dir_fd=target_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                source, source_fd = where.name(temp)
                os.unlink(source, dir_fd=source_fd)
            raise
        if where.fd is not None:
            with contextlib.suppress(OSError):  # the rename itself on disk (some file systems refuse: fine)
                os.fsync(where.fd)


class Entry(Struct, frozen=True):
    parts: tuple[str, ...]  # relative to the folder walked
    is_dir: bool
    is_link: bool
    mtime: float


def _listings(top: Folder) -> Iterator[tuple[tuple[str, ...], list[str], list[str], Folder]]:
    """Each folder under ``top``, links not followed: its path from ``top``, its folders (the caller prunes the
    list in place) and files, and the folder opened."""
    if top.fd is None:
        for dirpath, dirnames, filenames in os.walk(top.path):
            path = Path(dirpath)
            yield path.relative_to(top.path).parts, dirnames, filenames, Folder(None, path)
        return
    for dirpath, dirnames, filenames, dirfd in os.fwalk(".", dir_fd=top.fd, follow_symlinks=False):
        rel = tuple(p for p in Path(dirpath).parts if p != ".")
        yield rel, dirnames, filenames, Folder(dirfd, top.path.joinpath(*rel))


def walk(
    root: Path, parts: Sequence[str], limit: int, skip: frozenset[str] = frozenset()
) -> Iterator[tuple[Entry, Folder]]:
    """Every entry under the folder (at most ``limit``; folders named in ``skip`` left out), never descending
    through a link; each with the open folder it is in, so a file is opened relative to it."""
    seen = 0
    with folder(root, parts) as top:
        for rel, dirnames, filenames, here in _listings(top):
            dirnames[:] = [d for d in dirnames if d not in skip]
            for name in [*dirnames, *filenames]:
                seen += 1
                if seen > limit:
                    return
                try:
                    st = here.lstat(name)
                except OSError:  # gone since its folder was listed
                    continue
                yield (
                    Entry((*rel, name), stat.S_ISDIR(st.st_mode), stat.S_ISLNK(st.st_mode), st.st_mtime),
                    here,
                )
