"""Screenshots of the composer's attachment chips while their files are checked in a worker thread: pending
("Checking…") at once, then checked (a thumbnail) or refused (an error chip with the reason). Called from
tests.screenshots (scene ``chips``; ``PRECIS_SHOTS=chips`` takes it alone)."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from tests.fakeapi import FakeAnthropic
from tests.screenshots import opened_window, wait_for


def _composer_shot(window, path: Path) -> None:  # noqa: ANN001
    """The lower part of the window: the composer with its chips, at twice the size."""
    area = window.composer
    shot = area.grab()
    shot.scaled(shot.width() * 2, shot.height() * 2).save(str(path))


async def shoot_attachment_checks(outdir: Path, srv: FakeAnthropic) -> None:
    from PIL import Image, ImageDraw

    scratch = Path(tempfile.mkdtemp(prefix="precis-chips-"))
    picture = Image.new("RGB", (640, 400), (236, 226, 206))
    ImageDraw.Draw(picture).ellipse((240, 120, 400, 280), fill=(43, 58, 103))
    picture.save(scratch / "whiteboard.png", "PNG")
    (scratch / "scan.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 30)  # cut short: not a readable image
    (scratch / "notes.md").write_text("# Notes\n\n- check the loader\n", "utf-8")
    async with opened_window() as (_store, _engine, _bridge, window):
        await window.start()
        window.resize(1180, 740)
        window.look.set_theme("light")
        await asyncio.sleep(0.3)
        window.composer.edit.setPlainText("What is on the whiteboard, and what do the notes ask?")
        files = [str(scratch / n) for n in ("whiteboard.png", "scan.png", "notes.md")]
        window.composer.add_files(files)
        _composer_shot(window, outdir / "chips-checking.png")  # before any check has come back
        chips = window.composer.chips.chips
        await wait_for(lambda: not window.composer.checking, 10)
        assert chips[files[0]].state == "ready" and chips[files[1]].state == "refused"
        window.toast.hide()
        await asyncio.sleep(0.2)
        _composer_shot(window, outdir / "chips-checked.png")
