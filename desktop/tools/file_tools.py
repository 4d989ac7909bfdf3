"""The file tools (read, glob, grep, write, edit) of one workspace, on race-free descriptors (``confined``).

Each path is checked by ``Workspace.resolve`` (absolute paths, ``..`` and links that leave are refused there),
then used only through descriptors walked from the workspace, so a folder swapped for a link after the check
redirects nothing. What they print names files relative to the workspace. Their limits and wording follow the
SDK's reference tools they replace.
"""

from __future__ import annotations

import base64
import errno
import os
import re
from collections.abc import Iterator
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any

from desktop.engine.types import Block
from desktop.tools import confined
from desktop.tools.workspace import OutsideWorkspace, Workspace

MAX_FILE_BYTES = 256 * 1024  # a whole-file read and an edit load at most this much
MAX_IMAGE_BYTES = (5 * 1024 * 1024 // 4) * 3  # an image's base64 form stays under 5 MiB
MAX_PDF_BYTES = 20 * 1024 * 1024
MEDIA_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".pdf": "application/pdf",
}
GLOB_RESULTS = 200
WALK_ENTRIES = 50_000
GREP_OUTPUT = 100 * 1024
GREP_LINE = 2_000  # longer lines are not searched: a model's pattern could backtrack for ever on them
GREP_SKIP = frozenset({".git", "node_modules"})


class ToolFailure(Exception):
    """A call that failed: its one-line message is the tool's error result."""


def reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file or directory"
    if isinstance(exc, NotADirectoryError):
        return "not a directory"
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    if isinstance(exc, confined.NotRegular):
        return "not a regular file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    if exc.errno == errno.ELOOP:
        return (
            "a link or a folder replaced on the way: refused (links out of the workspace are never followed)"
        )
    return (exc.strerror or "input/output error").lower()


class FileTools:
    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self.root = workspace.root

    def parts(self, op: str, path: str) -> tuple[str, ...]:
        """The checked path's names below the workspace root."""
        try:
            target = self.workspace.resolve(path)
        except OutsideWorkspace as exc:
            raise ToolFailure(f"{op}: {exc}") from exc
        try:
            return target.relative_to(self.root).parts
        except ValueError as exc:  # pragma: no cover - resolve keeps paths inside
            raise ToolFailure(f"{op}: {path}: outside the workspace") from exc

    def _name(self, parts: tuple[str, ...]) -> str:
        return PurePosixPath(*parts).as_posix() if parts else "."

    # --- read ------------------------------------------------------------------------------------------------
    def read(self, file_path: str, view_range: list[int] | None = None) -> str | list[Block]:
        parts = self.parts("read", file_path)
        if view_range is not None and (
            len(view_range) != 2 or not all(isinstance(n, int) for n in view_range)
        ):
            raise ToolFailure("read: view_range must be [start_line, end_line]")
        media = MEDIA_TYPES.get(Path(file_path).suffix.lower())
        try:
            with confined.open_regular(self.root, parts) as (fd, st):
                if media is not None:
                    if view_range:
                        raise ToolFailure("read: view_range is not supported for image/PDF files")
                    return [self._media_block(fd, st.st_size, file_path, media)]
                if st.st_size > MAX_FILE_BYTES and not view_range:
                    raise ToolFailure(
                        f"read: {file_path} is {st.st_size} bytes, exceeds {MAX_FILE_BYTES}-byte limit. Use the "
                        "view_range parameter to read specific line ranges, e.g. view_range: [1, 500]."
                    )
                with os.fdopen(os.dup(fd), "rb") as fh:
                    if view_range:
                        data = _line_range(fh, file_path, view_range[0], view_range[1])
                    else:
                        data = fh.read(MAX_FILE_BYTES + 1)
                        if len(data) > MAX_FILE_BYTES:
                            raise ToolFailure(f"read: {file_path} grew past the {MAX_FILE_BYTES}-byte limit")
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolFailure(
                f"read: {file_path}: not valid UTF-8 text (binary files are only supported for "
                "image/PDF extensions)"
            ) from exc
        except OSError as exc:
            raise ToolFailure(f"read: {file_path}: {reason(exc)}") from exc

    @staticmethod
    def _media_block(fd: int, size: int, file_path: str, media: str) -> Block:
        limit = MAX_PDF_BYTES if media == "application/pdf" else MAX_IMAGE_BYTES
        if size > limit:
            raise ToolFailure(
                f"read: {file_path} is {size} bytes, exceeds {limit}-byte limit for image/PDF files."
            )
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = base64.standard_b64encode(fh.read(limit + 1)).decode("ascii")
        kind = "document" if media == "application/pdf" else "image"
        return {"type": kind, "source": {"type": "base64", "media_type": media, "data": data}}

    def read_text(self, path: str, limit: int) -> str:
        """A whole UTF-8 file of at most ``limit`` bytes (the previews and the files shown after a summary);
        OSError, ValueError (too large) or UnicodeDecodeError otherwise."""
        parts = self.workspace.resolve(path).relative_to(self.root).parts
        return confined.read_bytes(self.root, parts, limit).decode("utf-8")

    # --- write, edit -----------------------------------------------------------------------------------------
    def write(self, file_path: str, content: str) -> str:
        parts = self.parts("write", file_path)
        try:
            confined.write_atomic(self.root, parts, content.encode("utf-8"))
        except OSError as exc:
            raise ToolFailure(f"write: {file_path}: {reason(exc)}") from exc
        return f"wrote {len(content)} bytes to {file_path}"

    def edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool | None = None) -> str:
        parts = self.parts("edit", file_path)
        try:
            text = confined.read_bytes(self.root, parts, MAX_FILE_BYTES).decode("utf-8")
        except ValueError as exc:
            if isinstance(exc, UnicodeDecodeError):
                raise ToolFailure(
                    f"edit: {file_path}: not valid UTF-8 text (cannot edit binary files)"
                ) from exc
            raise ToolFailure(
                f"edit: {file_path} is {exc.args[0]} bytes, exceeds {MAX_FILE_BYTES}-byte limit. "
                "The edit tool loads the whole file and cannot modify a file this large."
            ) from exc
        except OSError as exc:
            raise ToolFailure(f"edit: {file_path}: {reason(exc)}") from exc
        if not old_string:
            raise ToolFailure("edit: old_string must not be empty")
        count = text.count(old_string)
        if count == 0:
            raise ToolFailure(f"edit: old_string not found in {file_path}")
        if not replace_all and count > 1:
            raise ToolFailure(f"edit: old_string appears {count} times in {file_path} (must be unique)")
        updated = (
            text.replace(old_string, new_string) if replace_all else text.replace(old_string, new_string, 1)
        )
        try:
            confined.write_atomic(self.root, parts, updated.encode("utf-8"))
        except OSError as exc:
            raise ToolFailure(f"edit: {file_path}: {reason(exc)}") from exc
        replaced = count if replace_all else 1
        return f"edited {file_path} ({replaced} replacement{'' if replaced == 1 else 's'})"

    # --- glob, grep ------------------------------------------------------------------------------------------
    def _start(self, op: str, path: str | None) -> tuple[str, ...]:
        return self.parts(op, path) if path else ()

    def glob(self, pattern: str, path: str | None = None) -> str:
        if not isinstance(pattern, str) or not pattern:
            raise ToolFailure("glob: pattern is required")
        if PurePosixPath(pattern).is_absolute() or Path(pattern).is_absolute():
            raise ToolFailure(
                "glob: absolute pattern not permitted; pass a relative pattern (and optionally path)"
            )
        wanted = [p for p in pattern.split("/") if p not in ("", ".")]
        if ".." in wanted:
            raise ToolFailure("glob: '..' is not permitted in the pattern")
        start = self._start("glob", path)
        found: list[tuple[float, str]] = []
        try:
            for entry, _where in confined.walk(self.root, start, WALK_ENTRIES):
                if _matches(entry.parts, wanted) and not (
                    entry.is_link and not self._link_inside(start, entry)
                ):
                    found.append((entry.mtime, self._name((*start, *entry.parts))))
        except OSError as exc:
            raise ToolFailure(f"glob: {path}: {reason(exc)}") from exc
        if not found:
            return "no matches"
        found.sort(key=lambda item: item[0], reverse=True)
        return "\n".join(name for _mtime, name in found[:GLOB_RESULTS])

    def _link_inside(self, start: tuple[str, ...], entry: confined.Entry) -> bool:
        """A link is listed when it points inside the workspace (its name only; it is never followed here)."""
        try:
            self.workspace.resolve(self._name((*start, *entry.parts)))
        except OutsideWorkspace:
            return False
        return True

    def grep(self, pattern: str, path: str | None = None) -> str:
        try:
            rx = re.compile(pattern)
        except (re.error, TypeError) as exc:
            raise ToolFailure(f"grep: invalid regex: {exc}") from exc
        start = self._start("grep", path)
        hits: list[str] = []
        budget = GREP_OUTPUT

        def scan(fd: int, name: str) -> bool:
            nonlocal budget
            with os.fdopen(os.dup(fd), "rb") as fh:
                if b"\x00" in fh.read(512):
                    return True
                fh.seek(0)
                for number, raw in _lines(fh, GREP_LINE):
                    if raw is None:
                        continue
                    line = raw.decode(errors="replace").rstrip("\r\n")
                    if rx.search(line):
                        hit = f"{name}:{number}:{line}"
                        budget -= len(hit) + 1
                        if budget < 0:
                            hits.append(f"[output truncated at {GREP_OUTPUT} bytes]")
                            return False
                        hits.append(hit)
            return True

        try:
            try:
                with confined.open_regular(self.root, start) as (fd, _st):
                    scan(fd, self._name(start))
                    return "\n".join(hits) if hits else "no matches"
            except IsADirectoryError:
                pass
            for entry, where in confined.walk(self.root, start, WALK_ENTRIES, GREP_SKIP):
                if entry.is_dir or entry.is_link:
                    continue
                try:
                    with confined.open_regular_in(where, entry.parts[-1]) as (fd, _st):
                        if not scan(fd, self._name((*start, *entry.parts))):
                            break
                except OSError:
                    continue
        except OSError as exc:
            raise ToolFailure(f"grep: {path or '.'}: {reason(exc)}") from exc
        return "\n".join(hits) if hits else "no matches"


def _matches(parts: tuple[str, ...], wanted: list[str]) -> bool:
    """Whether the relative path matches the glob's segments ('**': any number of folders, itself included)."""
    if not wanted:
        return not parts
    if wanted[0] == "**":
        return any(_matches(parts[i:], wanted[1:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], wanted[0]) and _matches(parts[1:], wanted[1:])


def _lines(fh: Any, cap: int) -> Iterator[tuple[int, bytes | None]]:
    """(1-based number, the line's bytes) of each line; None for a line longer than ``cap``, which is skipped
    a piece at a time (never held whole)."""
    number, long = 0, False
    while raw := fh.readline(cap + 1):
        complete = raw.endswith(b"\n")
        if long or len(raw) > cap:
            long = not complete
            if complete:
                number += 1
                yield number, None
            continue
        if not complete and len(raw) == cap + 1:
            long = True
            continue
        number += 1
        yield number, raw
    if long:
        yield number + 1, None


def _line_range(fh: Any, file_path: str, first: int, last: int) -> bytes:
    """Lines ``first``..``last`` (1-based; ``last`` -1 or 0: to the end), at most MAX_FILE_BYTES of them."""
    out: list[bytes] = []
    size = 0
    for number, raw in _lines(fh, MAX_FILE_BYTES):
        if last > 0 and number > last:
            break
        if number < first:
            continue
        size += len(raw) if raw is not None else MAX_FILE_BYTES + 1
        if raw is None or size > MAX_FILE_BYTES:
            raise ToolFailure(
                f"read: view_range [{first}, {last}] of {file_path} exceeds {MAX_FILE_BYTES}-byte "
                "limit. Narrow the view_range to read a smaller portion."
            )
        out.append(raw)
    data = b"".join(out)
    return data[:-1] if last > 0 and data.endswith(b"\n") else data
