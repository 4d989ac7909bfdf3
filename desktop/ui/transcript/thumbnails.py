"""Small previews of attached images: from a file (the composer's chips) and from a stored block's base64 (the
message bubble). Decoded once at a reduced size and kept: a bubble is rebuilt on every theme or width change."""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections import OrderedDict

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QSize, Qt
from PySide6.QtGui import QImage, QImageReader

CHIP_SIDE = 44  # composer chip
BUBBLE_SIDE = 180  # message bubble
_CACHE_SIZE = 128
_cache: OrderedDict[tuple[str, int], QImage] = OrderedDict()


def _scaled_read(reader: QImageReader, side: int) -> QImage | None:
    size = reader.size()
    if size.isValid() and max(size.width(), size.height()) > side:
        reader.setScaledSize(size.scaled(QSize(side, side), Qt.AspectRatioMode.KeepAspectRatio))
    image = reader.read()
    return None if image.isNull() else image


def _remember(key: tuple[str, int], image: QImage | None) -> QImage | None:
    if image is not None:
        _cache[key] = image
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return image


def file_thumbnail(path: str, side: int = CHIP_SIDE) -> QImage | None:
    """A preview of an image file no larger than ``side``; None when the file is not an image Qt reads."""
    reader = QImageReader(path)
    reader.setAutoTransform(True)
    return _scaled_read(reader, side) if reader.canRead() else None


def data_thumbnail(data: str, side: int = BUBBLE_SIDE) -> QImage | None:
    """A preview of a base64 image (a stored image block's data), cached by its digest."""
    key = (hashlib.sha1(data.encode("ascii", "ignore")).hexdigest(), side)
    if (hit := _cache.get(key)) is not None:
        _cache.move_to_end(key)
        return hit
    try:
        raw = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return None
    array = QByteArray(raw)
    buffer = QBuffer(array)
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer)
    image = _scaled_read(reader, side) if reader.canRead() else None
    buffer.close()
    return _remember(key, image)


def thumbnail_key(data: str) -> str:
    """A short stable name for a resource URL (``precis-thumb:<key>``)."""
    return hashlib.sha1(data.encode("ascii", "ignore")).hexdigest()[:16]
