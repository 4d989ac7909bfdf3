"""Cap huge content for requests: oversized text goes to a spill file, the request carries a preview.

Only the request copy changes; the stored message keeps its full content. The spill file name depends only on the
key and the block position, so re-assembling the same request reuses the file and produces the same bytes (the
cached prefix holds).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from desktop.engine.compaction._shared import text_of
from desktop.engine.types import Block

LIMIT = 50_000
PREVIEW = 2_000

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def cap_content(
    content: list[Block] | str | None,
    *,
    key: str,
    spill_dir: Path,
    limit: int = LIMIT,
    preview: int = PREVIEW,
    texts: bool = True,
) -> list[Block]:
    """Return ``content`` with every text block / tool_result over ``limit`` characters spilled to a file.

    ``key`` names the owner (message id or tool_use id); files are ``<key>-b<index>.txt`` in ``spill_dir``.
    ``texts=False`` caps tool output only: what a person wrote (a long paste) is sent whole.
    Unchanged blocks are returned as the same objects; the input is never mutated.
    """
    blocks: list[Block] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    )
    out: list[Block] = []
    for index, block in enumerate(blocks):
        kind = block.get("type")
        text = text_of(block) if kind == "text" and texts else ""
        if len(text) > limit:
            path = _spill(text, spill_dir, f"{key}-b{index}")
            out.append({**block, "text": _preview(text, preview, path)})
        elif kind == "tool_result":
            out.append(_cap_tool_result(block, limit, preview, spill_dir, f"{key}-b{index}"))
        else:
            out.append(block)
    return out


def _cap_tool_result(block: Block, limit: int, preview: int, spill_dir: Path, name: str) -> Block:
    content = block.get("content")
    if isinstance(content, str):
        if len(content) <= limit:
            return block
        return {**block, "content": _preview(content, preview, _spill(content, spill_dir, name))}
    if not isinstance(content, list):
        return block
    texts = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
    joined = "\n".join(str(b.get("text", "")) for b in texts)
    if len(joined) <= limit:
        return block
    # All text sub-blocks collapse into one preview where the first one was; images and documents stay.
    note: Block | None = {"type": "text", "text": _preview(joined, preview, _spill(joined, spill_dir, name))}
    new: list[Block] = []
    for sub in content:
        if isinstance(sub, dict) and sub.get("type") == "text":
            if note is not None:
                new.append(note)
                note = None
        else:
            new.append(sub)
    return {**block, "content": new}


def _preview(text: str, size: int, path: Path) -> str:
    head = text[:size]
    cut = head.rfind("\n")
    if cut >= size // 2:  # end on a whole line unless that would throw most of the preview away
        head = head[:cut]
    # A virtual path, never the machine's absolute one: the read tool maps @spill/ to this session's spill folder.
    lines = text.count("\n") + 1
    return (
        f"{head}\n[Output truncated: {len(text):,} characters; full text saved to @spill/{path.name} "
        f'({lines:,} lines): read more with the read tool, file_path "@spill/{path.name}" and a view_range]'
    )


def _spill(text: str, spill_dir: Path, name: str) -> Path:
    """Write ``text`` once (exclusive create, mode 0600); an existing file with the same bytes is reused."""
    data = text.encode("utf-8")
    spill_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    base = _UNSAFE.sub("_", name)[:120] or "spill"
    # A name collision with different bytes (e.g. a reused key) falls back to a content-addressed name.
    for candidate in (f"{base}.txt", f"{base}-{hashlib.sha256(data).hexdigest()[:16]}.txt"):
        path = spill_dir / candidate
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            if _same_bytes(path, data):
                return path
            continue
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return path
    raise OSError(f"cannot write spill file for {name!r} in {spill_dir}")


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False
