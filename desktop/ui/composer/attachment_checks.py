"""Checking an added file off the UI thread: what it would be sent as (the bridge's check, run in a worker
thread) and, for an image, its chip's thumbnail as a QImage (made in a worker thread too; the chip makes its
QPixmap on the UI thread); a pasted image's PNG is written in the worker thread first. Each result comes back
by the ``finished`` signal; the composer shows a pending chip until then, so adding a big or slow file never
freezes the window."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from msgspec import Struct
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage

from desktop.ui.transcript.thumbnails import CHIP_SIDE, file_thumbnail

log = logging.getLogger(__name__)


class CheckedFile(Protocol):
    """What the check says of a file that can be sent (the engine's ``Checked``)."""

    @property
    def kind(self) -> str: ...  # image | pdf | text


# Checks one file in a worker thread; raises ValueError or OSError with the reason when it cannot be sent.
Checker = Callable[[str], Awaitable[CheckedFile]]


class CheckResult(Struct, frozen=True):
    """The answer to checking an attached file: its kind, or why it cannot be sent."""

    path: str
    ticket: int  # which request this answers: a file removed and added again is checked again
    kind: str = ""  # image | pdf | text: it can be sent
    refusal: str = ""  # why it cannot, in words
    thumbnail: QImage | None = None


class AttachmentChecks(QObject):
    finished = Signal(object)  # CheckResult

    def __init__(self, check: Checker, parent: QObject | None = None):
        super().__init__(parent)
        self.checker = check
        self._tasks: set[asyncio.Task[None]] = set()
        self._tickets = 0

    @property
    def busy(self) -> bool:
        return bool(self._tasks)

    def request(self, path: str, write: Callable[[], None] | None = None) -> int:
        """Start checking ``path`` (after ``write`` made it, in the same worker thread: a pasted image's PNG);
        returns the ticket its result will carry."""
        self._tickets += 1
        task = asyncio.ensure_future(self._run(path, self._tickets, write))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return self._tickets

    async def _run(self, path: str, ticket: int, write: Callable[[], None] | None) -> None:
        try:
            if write is not None:
                await asyncio.to_thread(write)
            checked = await self.checker(path)
        except (OSError, ValueError) as exc:
            self.finished.emit(CheckResult(path, ticket, refusal=str(exc)))
            return
        except Exception as exc:  # noqa: BLE001 - an unexpected failure still answers, so no chip waits forever
            log.exception("checking an attachment failed")
            self.finished.emit(CheckResult(path, ticket, refusal=str(exc) or type(exc).__name__))
            return
        thumb = await asyncio.to_thread(file_thumbnail, path, CHIP_SIDE) if checked.kind == "image" else None
        self.finished.emit(CheckResult(path, ticket, checked.kind, thumbnail=thumb))
