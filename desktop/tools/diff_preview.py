"""The diff a permission prompt shows for a write or an edit, read within a bound.

The prompt comes before any approval, so what it reads is bounded: at most ``PREVIEW_BYTES`` of the target
file (a regular file only: a FIFO or a device is never opened) and of the new text. Past that the preview says
the file is too large to preview, in one line, and the user decides on the arguments alone.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from desktop.tools.workspace import OutsideWorkspace

PREVIEW_BYTES = 2 * 1024 * 1024  # what a preview reads of a file, or diffs of a write's content, at most
DIFF_CHARS = 20_000  # a prompt shows at most this much of the diff


Reader = Callable[[str, int], str]  # (workspace-relative path, byte limit) -> text; ValueError(size) past it


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def too_large(rel: str, size: int) -> str:
    return (
        f"[{rel} is {_megabytes(size)}: too large to preview (the preview reads at most "
        f"{_megabytes(PREVIEW_BYTES)}); decide on the arguments alone]"
    )


def preview(name: str, arguments: dict[str, Any], read: Reader) -> str | None:
    """What a write or an edit would change, as a unified diff within the bounds, or the sentence that the
    file is too large; None for other tools, a bad path or a file that is not text. ``read`` opens the target
    the way the tools do (confined, a regular file only)."""
    if name not in ("write", "edit"):
        return None
    rel = str(arguments.get("file_path") or "")
    try:
        before = read(rel, PREVIEW_BYTES)
    except FileNotFoundError:
        before = ""
    except (UnicodeDecodeError, OutsideWorkspace):
        return None
    except ValueError as exc:  # past the bound: its size
        return too_large(
            rel, int(exc.args[0]) if exc.args and isinstance(exc.args[0], int) else PREVIEW_BYTES
        )
    except OSError:  # outside the workspace, not a regular file, unreadable
        return None
    if name == "write":
        after = str(arguments.get("content") or "")
        if len(after) > PREVIEW_BYTES:
            return too_large(rel, len(after.encode("utf-8", "surrogatepass")))
    else:
        old, new = str(arguments.get("old_string") or ""), str(arguments.get("new_string") or "")
        if not old or old not in before:
            return None
        after = before.replace(old, new) if arguments.get("replace_all") else before.replace(old, new, 1)
        if len(after) > 2 * PREVIEW_BYTES:
            return too_large(rel, len(after.encode("utf-8", "surrogatepass")))
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{rel}",
        tofile=f"b/{rel}",
    )
    text = "".join(lines)
    return text[:DIFF_CHARS] + ("\n[diff cut]" if len(text) > DIFF_CHARS else "")
