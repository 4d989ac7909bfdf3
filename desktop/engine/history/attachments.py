"""Files a user attaches to a message: what each becomes in the request, and what is refused, and why.

Images become ``image`` blocks and PDFs ``document`` blocks (``compaction.media`` reads and checks them); any other
file whose bytes decode as UTF-8 (code, Markdown, CSV, JSON, logs: told by its bytes, not its name) becomes a text
``document`` block carrying the whole file. A text file past ``TEXT_INLINE_CHARS`` is too big to send whole: with a
workspace (so the ``read`` tool exists) the block carries its head and names a virtual path the read tool reads in
parts; without one it is refused. ``check`` runs when the file is added, so a refusal comes then, not at send.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
from pathlib import Path
from typing import Literal

from msgspec import Struct

from desktop.engine.compaction.media import (
    MAX_IMAGE_FILE_BYTES,
    MAX_PDF_BYTES,
    MediaError,
    open_regular,
    prepare_attachment,
)
from desktop.engine.types import Block

Kind = Literal["image", "pdf", "text"]

# About 25-30K tokens: sent whole below this; above, only through the read tool.
TEXT_INLINE_CHARS = 100_000
TEXT_PREVIEW_CHARS = 4_000
TEXT_MAX_BYTES = 20 * 1024 * 1024  # even through the read tool: a bigger "text" is a dump, not a document
_HEAD = 16
_MEDIA_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"%PDF-")
PASTE_PREFIX = "precis-paste-"  # the composer's temp files of pasted images
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class AttachmentRefused(MediaError):
    """The file cannot be attached; the message says why in words the user can act on."""


class Checked(Struct, frozen=True):
    """A file checked for attaching: its kind and size."""

    path: Path
    kind: Kind
    size: int  # bytes on disk
    chars: int = 0  # text files: characters once decoded

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def through_read_tool(self) -> bool:
        """A text file too big to send whole: the model reads it in parts."""
        return self.kind == "text" and self.chars > TEXT_INLINE_CHARS


def _media_kind(head: bytes) -> Kind | None:
    if head.startswith(b"%PDF-"):
        return "pdf"
    if head.startswith(_MEDIA_MAGIC) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP"):
        return "image"
    return None


def _open_regular(path: Path) -> tuple[int, os.stat_result]:
    return open_regular(path, "attach an image, a PDF or a text file", AttachmentRefused)


def decode_text(raw: bytes, name: str) -> str:
    """The text of a UTF-8 file (a byte-order mark is dropped); refused when the bytes are not text."""
    if b"\x00" in raw[:65_536]:
        raise AttachmentRefused(
            f"{name}: unsupported file type (a binary file); attach PNG, JPEG, GIF or WebP "
            "images, PDFs, or UTF-8 text and code files"
        )
    try:
        text = raw.decode("utf-8-sig" if raw.startswith(codecs.BOM_UTF8) else "utf-8")
    except UnicodeDecodeError as exc:
        raise AttachmentRefused(
            f"{name}: unsupported file type (not UTF-8 text); attach PNG, JPEG, GIF or "
            "WebP images, PDFs, or UTF-8 text and code files"
        ) from exc
    return text


def _read_text(path: Path, *, read_tool: bool) -> tuple[Checked, str]:
    fd, info = _open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        if info.st_size > TEXT_MAX_BYTES:
            raise AttachmentRefused(
                f"{path.name} is {info.st_size / 1e6:.1f} MB; text files must be at most "
                f"{TEXT_MAX_BYTES // 2**20} MB"
            )
        try:
            raw = fh.read(TEXT_MAX_BYTES + 1)
        except OSError as exc:
            raise AttachmentRefused(f"cannot read {path.name}: {exc.strerror or exc}") from exc
    if len(raw) > TEXT_MAX_BYTES:
        raise AttachmentRefused(f"{path.name} grew past {TEXT_MAX_BYTES // 2**20} MB while it was read")
    if not raw:
        raise AttachmentRefused(f"{path.name} is empty: nothing to attach")
    text = decode_text(raw, path.name)
    checked = Checked(path, "text", len(raw), len(text))
    if checked.through_read_tool and not read_tool:
        raise AttachmentRefused(
            f"{path.name} has {len(text):,} characters, more than the {TEXT_INLINE_CHARS:,} sent whole; choose a "
            "workspace folder for this chat so the model can read it in parts, or attach a shorter extract"
        )
    return checked, text


def read_text_file(path: Path | str) -> str:
    """A UTF-8 text file's text, however long (up to the text files' size limit); AttachmentRefused with the
    reason otherwise (a PDF or an image included: they are not text)."""
    path = Path(path)
    fd, _info = _open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        head = fh.read(_HEAD)
    if (kind := _media_kind(head)) is not None:
        raise AttachmentRefused(f"{path.name} is {'a PDF' if kind == 'pdf' else 'an image'}, not a text file")
    return _read_text(path, read_tool=True)[1]


def check(path: Path | str, *, read_tool: bool = False) -> Checked:
    """What the file would be sent as, or AttachmentRefused with the reason (nothing is kept).

    ``read_tool``: the chat has a workspace, so a long text file can go through the read tool.
    Images are decoded (verified) here too, so a broken one is refused when it is added.
    """
    path = Path(path)
    fd, info = _open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        try:
            head = fh.read(_HEAD)
        except OSError as exc:
            raise AttachmentRefused(f"cannot read {path.name}: {exc.strerror or exc}") from exc
    kind = _media_kind(head)
    if kind is None:
        return _read_text(path, read_tool=read_tool)[0]
    limit = MAX_PDF_BYTES if kind == "pdf" else MAX_IMAGE_FILE_BYTES
    if info.st_size > limit:
        raise AttachmentRefused(
            f"{path.name} is {info.st_size / 1e6:.1f} MB; "
            f"{'PDFs' if kind == 'pdf' else 'image files'} must be at most {limit // 2**20} MB"
        )
    if kind == "image":
        try:
            prepare_attachment(path)  # decodes, downscales and checks the encoded size: what send will do
        except MediaError as exc:
            raise AttachmentRefused(str(exc)) from exc
    return Checked(path, kind, info.st_size)


def prepare(path: Path | str, *, spill_dir: Path | None = None) -> Block:
    """The content block for one attached file.

    ``spill_dir``: the session's folder that the read tool reaches as ``@spill/`` (only when the chat has a
    workspace); a long text file is written there and the block names it. Without it a long text is refused.
    """
    path = Path(path)
    fd, _info = _open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        head = fh.read(_HEAD)
    if _media_kind(head) is not None:
        try:
            return prepare_attachment(path)
        except MediaError as exc:
            raise AttachmentRefused(str(exc)) from exc
    checked, text = _read_text(path, read_tool=spill_dir is not None)
    if checked.through_read_tool and spill_dir is not None:
        text = _through_read_tool(text, path.name, spill_dir)
    return text_document(text, path.name)


def display_name(path: Path | str) -> str:
    """The name a chip and a bubble show: the file's own, or "Pasted image" for a pasted one's temp file."""
    name = Path(path).name
    return "Pasted image" if name.startswith(PASTE_PREFIX) else name


def text_document(text: str, title: str) -> Block:
    return {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": text},
        "title": title,
    }


def _through_read_tool(text: str, name: str, spill_dir: Path) -> str:
    """The file's head and where the read tool finds the whole of it (a virtual path: no machine path)."""
    data = text.encode("utf-8")
    digest = hashlib.sha256(data).hexdigest()[:12]
    stem = _UNSAFE.sub("_", name)[:80] or "file"
    spill_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = spill_dir / f"attach-{digest}-{stem}.txt"
    if not target.exists():
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    head = text[:TEXT_PREVIEW_CHARS]
    cut = head.rfind("\n")
    if cut >= TEXT_PREVIEW_CHARS // 2:
        head = head[:cut]
    lines = text.count("\n") + 1
    virtual = f"@spill/{target.name}"
    return (
        f"{head}\n[Attached file {name}: {len(text):,} characters, {lines:,} lines; only its beginning is "
        f'shown here. The whole file is at {virtual}: read it with the read tool, file_path "{virtual}" '
        f"and a view_range]"
    )
