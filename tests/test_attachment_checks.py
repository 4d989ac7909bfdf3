"""Adding a file never blocks the window: the composer shows a pending chip at once, the file is checked (and an
image thumbnailed) in a worker thread, and the chip becomes the checked one, or an error chip with the reason,
when the result comes back by signal. A file that cannot be sent loses nothing else of the draft."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from tests.test_attachments import _png
from tests.test_window import message_rows, until

_opened: list[tuple[str, str]] | None = None  # (path, thread) of every file opened while a test listens
_hooked = False


def _on_audit(event: str, args: tuple) -> None:
    if event == "open" and _opened is not None and args and isinstance(args[0], str | os.PathLike):
        _opened.append((os.fspath(args[0]), threading.current_thread().name))


@pytest.fixture
def opened():
    """Which thread opened which file (Python's audit events; a hook cannot be removed, so it idles after)."""
    global _opened, _hooked
    if not _hooked:
        sys.addaudithook(_on_audit)
        _hooked = True
    _opened = []
    yield _opened
    _opened = None


async def test_an_added_image_is_pending_at_once_and_checked_off_the_ui_thread(window, tmp_path, opened):
    image = _png(tmp_path / "holiday-photo.png", size=(400, 200))
    window.composer.edit.setPlainText("where is this?")
    opened.clear()  # writing the picture opened it here
    assert window.composer.add_files([str(image)]) == [str(image)]
    chip = window.composer.chips.chips[str(image)]
    # add_files returned before the file was read: the chip says it is being checked.
    assert chip.isVisible() and chip.state == "pending" and not chip.is_image
    assert str(image) not in [path for path, _ in opened]
    assert window.composer.attachments == [str(image)]  # a file being checked is part of the draft
    await until(lambda: chip.state == "ready")
    assert chip.is_image and chip.kind_label.text() == "Image"
    thumb = chip.preview.pixmap()
    assert not thumb.isNull() and max(thumb.width(), thumb.height()) <= 44
    assert thumb.toImage().pixelColor(thumb.width() // 2, thumb.height() // 2).green() > 150  # the picture
    readers = {thread for path, thread in opened if path == str(image)}
    assert readers and threading.main_thread().name not in readers  # the check read it in a worker thread
    assert window.composer.edit.toPlainText() == "where is this?"


@pytest.mark.parametrize(
    "damage, reason", [("cut", "not a readable image"), ("huge", "must be at most 50 MB")]
)
async def test_a_broken_or_huge_image_becomes_an_error_chip_and_loses_nothing(
    window, fake_api, tmp_path, damage, reason
):
    bad = tmp_path / "scan.png"
    with open(bad, "wb") as fh:
        fh.write(b"\x89PNG\r\n\x1a\n" + b"\x00" * 30)
        if damage == "huge":
            fh.truncate(50 * 1024 * 1024 + 1)  # sparse: refused by its size, never read whole
    good = tmp_path / "notes.md"
    good.write_text("# notes\n")
    window.composer.edit.setPlainText("what do you see?")
    assert window.composer.add_files([str(bad), str(good)]) == [str(bad), str(good)]
    chips = window.composer.chips.chips
    await until(lambda: chips[str(bad)].state == "refused" and chips[str(good)].state == "ready")
    bad_chip = chips[str(bad)]
    assert bad_chip.isVisible() and bad_chip.kind_label.text() == "Cannot attach"
    assert reason in bad_chip.toolTip() and reason in bad_chip.accessibleDescription()
    assert window.toast.isVisible() and "scan.png" in window.toast.text() and reason in window.toast.text()
    # Nothing else is lost: the text, the good file; the bad one is not sent.
    assert window.composer.edit.toPlainText() == "what do you see?"
    assert window.composer.attachments == [str(good)] and bad.exists()
    bad_chip.remove_button.click()
    assert list(chips) == [str(good)]
    fake_api.queue_text("notes seen")
    window.composer.send_button.click()
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    content = fake_api.message_requests()[-1].body["messages"][0]["content"]
    assert [b["type"] for b in content] == ["document", "text"] and content[0]["title"] == "notes.md"


async def test_a_file_removed_while_it_is_checked_stays_removed(window, tmp_path):
    image = _png(tmp_path / "gone.png")
    window.composer.add_files([str(image)])
    window.composer.remove_file(str(image))
    await until(lambda: not window.composer.checking)
    assert window.composer.attachments == [] and window.composer.chips.chips == {}
    assert not window.toast.isVisible()


async def test_a_pasted_image_is_written_off_the_ui_thread_and_a_quick_send_waits_for_it(window, fake_api):
    from PySide6.QtGui import QColor, QImage

    image = QImage(1600, 1000, QImage.Format.Format_RGB32)
    image.fill(QColor("teal"))
    window.composer.edit.setPlainText("see the paste")
    window.composer.add_image(image)
    (path,) = window.composer.attachments
    assert window.composer.chips.chips[path].state == "pending"
    assert os.path.getsize(path) == 0  # the PNG is encoded in a worker thread, not here
    fake_api.queue_text("a teal rectangle")
    window.composer.send_button.click()  # before the picture is written: the send waits for it
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    content = fake_api.message_requests()[-1].body["messages"][0]["content"]
    assert [b["type"] for b in content] == ["image", "text"] and content[0]["source"][
        "media_type"
    ] == "image/png"
    assert not os.path.exists(path)  # sent: the temp file is gone
