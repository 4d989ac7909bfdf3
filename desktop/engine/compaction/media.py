"""Keep a request within the API's media limits: image/document count, pixel size, bytes per image.

Limits (the Messages API's documented ones): 100 images+documents per request on 200K-window models (600 on 1M), 8,000 px per
side, 2,000 px per side once a request holds more than 20 images, 5 MB per image as base64. Every image in the request
counts, including resent history and images inside tool_result blocks. The output is deterministic (same input,
same bytes) so the cached prefix survives: re-encoding uses fixed settings and no metadata.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import os
import stat
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from msgspec import Struct

from desktop.engine.compaction._shared import Message, content_of, with_content
from desktop.engine.types import Block

LIMIT = 100
MAX_SIDE = 8_000
MANY_IMAGES_SIDE = 2_000
MANY_IMAGES = 20
# Measured by the API on the base64 text (``image.source.base64``: "image exceeds 5 MB maximum: 5508916 bytes >
# 5242880 bytes" for a 3.9 MB file), so raw bytes may be at most about 3.75 MB.
MAX_IMAGE_BASE64 = 5 * 1024 * 1024
MAX_PDF_BYTES = 32 * 1024 * 1024
# An image file larger than this is refused before it is read: even downscaled it would cost too much memory
# (a huge PNG decodes to far more than its size) and no provider takes it as it is.
MAX_IMAGE_FILE_BYTES = 50 * 1024 * 1024

_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
_HEADER_B64 = 65_536  # enough base64 to read the pixel size of nearly every image without decoding it all


class MediaError(ValueError):
    """An image or document cannot be sent; the message names it."""


class CapReport(Struct, frozen=True):
    """What the media cap did to a request's images and documents."""

    count_before: int  # images + documents in the request
    omitted: int  # the oldest ones replaced by a note
    downscaled: int


Position = tuple[int, int, int | None]  # message index, block index, sub-block index inside a tool_result


def _media_positions(messages: Sequence[Message]) -> list[Position]:
    out: list[Position] = []
    for mi, msg in enumerate(messages):
        for bi, block in enumerate(content_of(msg)):
            kind = block.get("type")
            if kind in ("image", "document"):
                out.append((mi, bi, None))
            elif kind == "tool_result" and isinstance(block.get("content"), list):
                out.extend(
                    (mi, bi, si)
                    for si, sub in enumerate(block["content"])
                    if isinstance(sub, dict) and sub.get("type") in ("image", "document")
                )
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def omission_note(images: int, documents: int) -> str:
    return (
        f"[image omitted: {_plural(images, 'older image')} and {_plural(documents, 'document')} "
        "were removed to stay within the media limit]"
    )


def cap_media(
    messages: Sequence[Message],
    *,
    limit: int = LIMIT,
    many_images_threshold: int = MANY_IMAGES,
    batch: int = 1,
    on_error: Literal["raise", "omit"] = "raise",
) -> tuple[list[Message], CapReport]:
    """Keep the newest ``limit`` images/documents, downscale images to the allowed size, check their bytes.

    ``batch`` > 1 omits in steps of that size, so the prefix changes once per ``batch`` new images instead of
    every turn once the limit is reached. ``on_error="omit"`` replaces an unusable image (corrupt, still over
    5 MB) with a text note instead of raising MediaError.
    """
    positions = _media_positions(messages)
    over = len(positions) - limit
    omitted = 0 if over <= 0 else min(len(positions), -(-over // max(1, batch)) * max(1, batch))
    kept_images = sum(
        1 for mi, bi, si in positions[omitted:] if _at(messages, mi, bi, si).get("type") == "image"
    )
    max_side = MAX_SIDE if kept_images <= many_images_threshold else min(MAX_SIDE, MANY_IMAGES_SIDE)

    gone_by_message: dict[int, list[tuple[int, int | None]]] = {}
    for mi, bi, si in positions[:omitted]:
        gone_by_message.setdefault(mi, []).append((bi, si))
    out: list[Message] = []
    downscaled = 0
    for mi, msg in enumerate(messages):
        blocks = content_of(msg)
        gone = gone_by_message.get(mi, [])
        new_blocks: list[Block] = []
        note_at: int | None = None
        changed = bool(gone)
        for bi, block in enumerate(blocks):
            if (bi, None) in gone:
                note_at = len(new_blocks) if note_at is None else note_at
                continue
            new_block, n = _fix_block(
                block, bi, mi, {si for b, si in gone if b == bi and si is not None}, max_side, on_error
            )
            downscaled += n
            changed = changed or new_block is not block
            new_blocks.append(new_block)
        if gone:
            kinds = [_at(messages, mi, bi, si).get("type") for bi, si in gone]
            note = {"type": "text", "text": omission_note(kinds.count("image"), kinds.count("document"))}
            new_blocks.insert(len(new_blocks) if note_at is None else note_at, note)
        out.append(with_content(msg, new_blocks) if changed else msg)
    return out, CapReport(count_before=len(positions), omitted=omitted, downscaled=downscaled)


def _at(messages: Sequence[Message], mi: int, bi: int, si: int | None) -> Block:
    block = content_of(messages[mi])[bi]
    return block if si is None else block["content"][si]


def _fix_block(
    block: Block, bi: int, mi: int, gone_subs: set[int], max_side: int, on_error: str
) -> tuple[Block, int]:
    """Downscale an image block, or drop/downscale media inside a tool_result. Returns (block, downscaled)."""
    where = f"message {mi + 1}, block {bi + 1}"
    if block.get("type") == "image":
        return _fit_image_block(block, max_side, where, on_error)
    if block.get("type") != "tool_result" or not isinstance(block.get("content"), list):
        return block, 0
    subs: list[Block] = []
    count = 0
    changed = bool(gone_subs)
    for si, sub in enumerate(block["content"]):
        if si in gone_subs:
            continue
        if isinstance(sub, dict) and sub.get("type") == "image":
            new_sub, n = _fit_image_block(sub, max_side, f"{where}, item {si + 1}", on_error)
            count += n
            changed = changed or new_sub is not sub
            subs.append(new_sub)
        else:
            subs.append(sub)
    if not changed:
        return block, 0
    if not subs:  # an empty tool_result would read as "no output"; say what happened
        subs = [{"type": "text", "text": "[media omitted to stay within the media limit]"}]
    return {**block, "content": subs}, count


def _fit_image_block(block: Block, max_side: int, where: str, on_error: str) -> tuple[Block, int]:
    source = block.get("source") or {}
    if source.get("type") != "base64":
        return block, 0  # url / file sources are sized by the server
    data = str(source.get("data", ""))
    try:
        fitted = _fit_image(data, max_side, where)
    except MediaError as exc:
        if on_error == "raise":
            raise
        return {"type": "text", "text": f"[image removed: {exc}]"}, 0
    if fitted is None:
        return block, 0
    new_data, media_type = fitted
    return {**block, "source": {**source, "media_type": media_type, "data": new_data}}, 1


def _b64_len(raw: bytes) -> int:
    return -(-len(raw) // 3) * 4


def _fit_image(data: str, max_side: int, where: str) -> tuple[str, str] | None:
    """(new base64, media type) when the image had to shrink, None when it is fine as is."""
    width, height = _image_size(data, where)
    if max(width, height) <= max_side:
        if len(data) > MAX_IMAGE_BASE64:
            raise MediaError(f"image at {where} is {len(data) / 1e6:.1f} MB as base64; the limit is 5 MB")
        return None
    key = (hashlib.blake2b(data.encode("ascii", "replace"), digest_size=16).digest(), max_side)
    if key in _RESIZED:
        _RESIZED.move_to_end(key)
        return _RESIZED[key]
    raw, fmt = _downscale(_b64decode(data, where), max_side, where)
    if _b64_len(raw) > MAX_IMAGE_BASE64:
        raise MediaError(
            f"image at {where} is {_b64_len(raw) / 1e6:.1f} MB as base64 after downscaling; the limit is 5 MB"
        )
    result = (base64.b64encode(raw).decode("ascii"), _FORMATS[fmt])
    _RESIZED[key] = result
    if len(_RESIZED) > 32:
        _RESIZED.popitem(last=False)
    return result


# Downscaled images by content hash: history images are resent every turn; resize each once per process.
_RESIZED: OrderedDict[tuple[bytes, int], tuple[str, str]] = OrderedDict()


def _b64decode(data: str, where: str) -> bytes:
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise MediaError(f"image at {where} is not valid base64") from exc


def _image_size(data: str, where: str) -> tuple[int, int]:
    from PIL import Image, UnidentifiedImageError  # Pillow loads with the first image, not with the window

    head = data[:_HEADER_B64]
    try:
        with Image.open(io.BytesIO(base64.b64decode(head[: len(head) // 4 * 4]))) as img:
            return img.size
    except Image.DecompressionBombError as exc:
        raise MediaError(f"image at {where} has too many pixels to process") from exc
    except (OSError, ValueError, UnidentifiedImageError, binascii.Error):
        pass
    try:
        with Image.open(io.BytesIO(_b64decode(data, where))) as img:
            return img.size
    except (OSError, ValueError, UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise MediaError(f"image at {where} cannot be read") from exc


def _downscale(raw: bytes, max_side: int, where: str) -> tuple[bytes, str]:
    """Shrink so the longer side is ``max_side``; same format, fixed encoder settings, no metadata."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(raw)) as img:
            fmt = img.format if img.format in _FORMATS else "PNG"
            img.seek(0)  # animated GIF/WebP: the first frame only
            frame = img.copy()
    except (OSError, ValueError, UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise MediaError(f"image at {where} cannot be read") from exc
    width, height = frame.size
    scale = max_side / max(width, height)
    size = (max(1, min(max_side, int(width * scale))), max(1, min(max_side, int(height * scale))))
    frame = frame.resize(size, Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    if fmt == "JPEG":
        if frame.mode not in ("RGB", "L", "CMYK"):
            frame = frame.convert("RGB")
        frame.save(buf, "JPEG", quality=90)
    elif fmt == "WEBP":
        frame.save(buf, "WEBP", quality=90, method=4)
    elif fmt == "GIF":
        frame.save(buf, "GIF")
    else:
        frame.save(buf, "PNG")
    return buf.getvalue(), fmt


# --- attachments ----------------------------------------------------------------------------------------


def _sniff(head: bytes) -> str | None:
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    return None


def open_regular(path: Path, hint: str, refuse: type[MediaError] = MediaError) -> tuple[int, os.stat_result]:
    """An open descriptor of a regular file and its stat; a folder, device, pipe or socket is refused (``hint``
    says what to attach instead) before anything is read."""
    try:
        # Non-blocking: opening a FIFO for reading would otherwise wait for a writer forever.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise refuse(f"cannot read {path.name}: {exc.strerror or exc}") from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a device, pipe or socket)"
        raise refuse(f"{path.name} is {kind}; {hint}")
    return fd, info


def _read_checked(path: Path) -> tuple[str, bytes]:
    """The file's type and bytes, checked from ``stat`` and its first bytes before it is read whole: a device,
    pipe or folder, an unsupported type and an oversize file are refused without reading them."""
    fd, info = open_regular(path, "attach an image or PDF file")
    with os.fdopen(fd, "rb") as fh:
        try:
            head = fh.read(16)
            media_type = _sniff(head)
            if media_type is None:
                raise MediaError(
                    f"{path.name}: unsupported file type (attach PNG, JPEG, GIF or WebP images, or PDF)"
                )
            pdf = media_type == "application/pdf"
            limit = MAX_PDF_BYTES if pdf else MAX_IMAGE_FILE_BYTES
            if info.st_size > limit:
                raise MediaError(
                    f"{path.name} is {info.st_size / 1e6:.1f} MB; "
                    f"{'PDFs' if pdf else 'image files'} must be at most {limit // 2**20} MB"
                )
            rest = fh.read(limit + 1 - len(head))  # bounded even if the file grows while it is read
        except OSError as exc:
            raise MediaError(f"cannot read {path.name}: {exc.strerror or exc}") from exc
    raw = head + rest
    if len(raw) > limit:
        raise MediaError(
            f"{path.name} grew past {limit // 2**20} MB while it was read; attach it when complete"
        )
    return media_type, raw


def prepare_attachment(path: Path | str, *, max_side: int = MAX_SIDE) -> Block:
    """An image or PDF document block from a file, typed by its bytes (not its extension)."""
    path = Path(path)
    media_type, raw = _read_checked(path)
    if media_type == "application/pdf":
        data = base64.b64encode(raw).decode("ascii")
        return {
            "type": "document",
            "source": {"type": "base64", "media_type": media_type, "data": data},
            "title": path.name,
        }
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(raw)) as img:
            img.verify()
            width, height = img.size
    except (OSError, ValueError, UnidentifiedImageError, SyntaxError, Image.DecompressionBombError) as exc:
        raise MediaError(f"{path.name} is not a readable image") from exc
    if max(width, height) > max_side:
        raw, fmt = _downscale(raw, max_side, path.name)
        media_type = _FORMATS[fmt]
    if _b64_len(raw) > MAX_IMAGE_BASE64:
        raise MediaError(
            f"{path.name} is {len(raw) / 1e6:.1f} MB; images must be at most 3.75 MB "
            "(5 MB once base64-encoded)"
        )
    data = base64.b64encode(raw).decode("ascii")
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
