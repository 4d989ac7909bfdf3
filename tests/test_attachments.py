"""Attachments: every kind a user adds reaches the request at the test server as the right block; a file that
cannot be sent is refused when it is added, with the reason; images show a thumbnail and their real name in the
composer's chip and in the bubble."""

from __future__ import annotations

import base64
import json

import pytest
from PIL import Image

from desktop.engine.history import attachments
from desktop.engine.history.attachments import TEXT_INLINE_CHARS, AttachmentRefused, check, prepare
from tests.conftest import engine_of
from tests.test_tools_window import tool_window
from tests.test_window import message_rows, until

PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Count 0/Kids[]>>endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
)
CODE = 'def parse(path):\n    """Read the file — UTF-8 with accents: café."""\n    return open(path).read()\n'


def _png(path, size=(60, 30), colour=(10, 180, 40)):
    Image.new("RGB", size, colour).save(path, "PNG")
    return path


# --- the engine's rules (no window) --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, data",
    [
        ("parser.py", CODE),
        ("notes.md", "# Title\n\n- one\n- two\n"),
        ("table.csv", "a,b\n1,2\n"),
        ("config.json", json.dumps({"k": [1, 2]})),
        ("server.log", "2026-12-01 10:00 started\n"),
        ("Makefile", "all:\n\techo ok\n"),  # no extension at all: told by its bytes
        ("bom.txt", "\ufeffwith a byte-order mark\n"),
    ],
)
def test_utf8_text_files_become_whole_text_documents(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(data, encoding="utf-8")
    info = check(path)
    assert info.kind == "text" and not info.through_read_tool
    block = prepare(path)
    assert block == {
        "type": "document",
        "title": name,
        "source": {"type": "text", "media_type": "text/plain", "data": data.lstrip("\ufeff")},
    }


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("blob.bin", b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 64, "binary"),
        ("latin.txt", "café crème\n".encode("latin-1"), "not UTF-8"),
        ("empty.txt", b"", "is empty"),
        ("cut.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 30, "not a readable image"),
    ],
)
def test_files_that_cannot_be_sent_are_refused_with_the_reason(tmp_path, name, data, reason):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(AttachmentRefused, match=reason):
        check(path)


def test_a_long_text_goes_through_the_read_tool_or_is_refused(tmp_path):
    path = tmp_path / "big.log"
    lines = [f"line {i:06d} " + "x" * 40 for i in range(TEXT_INLINE_CHARS // 40)]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(AttachmentRefused, match="workspace"):
        check(path)  # no workspace: no read tool to reach it
    assert check(path, read_tool=True).through_read_tool
    spill = tmp_path / "spill"
    block = prepare(path, spill_dir=spill)
    text = block["source"]["data"]
    assert block["title"] == "big.log" and len(text) < 10_000 and text.startswith("line 000000")
    virtual = text.rsplit('file_path "', 1)[1].split('"', 1)[0]
    assert virtual.startswith("@spill/attach-") and str(tmp_path) not in text  # no machine path in a request
    assert (spill / virtual.removeprefix("@spill/")).read_text() == path.read_text()


def test_images_and_pdfs_are_typed_by_their_bytes(tmp_path):
    png = _png(tmp_path / "shot.pdf")  # a PNG named .pdf is an image
    assert check(png).kind == "image" and prepare(png)["type"] == "image"
    pdf = tmp_path / "report.dat"
    pdf.write_bytes(PDF)
    assert check(pdf).kind == "pdf"
    block = prepare(pdf)
    assert block["type"] == "document" and block["source"]["media_type"] == "application/pdf"
    assert base64.b64decode(block["source"]["data"]) == PDF


# --- through the window, to the test server ----------------------------------------------------------------


async def test_each_kind_reaches_the_request_as_the_right_block(window, fake_api, qtbot, tmp_path):
    code = tmp_path / "parser.py"
    code.write_text(CODE, encoding="utf-8")
    image = _png(tmp_path / "diagram.png")
    pdf = tmp_path / "spec.pdf"
    pdf.write_bytes(PDF)
    assert window.composer.add_files([str(code), str(image), str(pdf)]) == [str(code), str(image), str(pdf)]
    fake_api.queue_text("three files")
    window.composer.edit.setPlainText("look at these")
    window.composer.send_button.click()
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    content = fake_api.message_requests()[-1].body["messages"][0]["content"]
    assert [b["type"] for b in content] == ["document", "image", "document", "text"]
    assert content[0]["source"] == {"type": "text", "media_type": "text/plain", "data": CODE}
    assert content[0]["title"] == "parser.py"
    assert content[1]["source"]["media_type"] == "image/png"
    assert content[2]["source"]["media_type"] == "application/pdf" and content[2]["title"] == "spec.pdf"
    stored = (await engine_of(window).store.messages(window.session_id))[0]
    assert stored.meta["files"] == ["parser.py", "diagram.png", "spec.pdf"]  # the bubble's names


async def test_an_unsupported_file_is_refused_when_added_never_at_send(window, fake_api, qtbot, tmp_path):
    blob = tmp_path / "photo.heic"
    blob.write_bytes(b"\x00\x00\x00\x18ftypheic" + b"\x00" * 100)
    good = tmp_path / "notes.md"
    good.write_text("# notes\n")
    assert window.composer.add_files([str(blob), str(good)]) == [
        str(blob),
        str(good),
    ]  # checked off the UI thread
    await until(lambda: window.toast.isVisible())
    assert "photo.heic" in window.toast.text() and "unsupported file type" in window.toast.text()
    assert window.composer.attachments == [str(good)]  # the good one stays, the bad one is not sent
    assert window.composer.chips.chips[str(blob)].state == "refused"  # shown as an error chip until removed
    assert not fake_api.message_requests()


async def test_a_long_text_is_refused_on_add_without_a_workspace(window, fake_api, qtbot, tmp_path):
    path = tmp_path / "huge.txt"
    path.write_text("word " * (TEXT_INLINE_CHARS // 4))
    window.composer.add_files([str(path)])
    await until(lambda: window.toast.isVisible())
    assert "workspace" in window.toast.text() and "huge.txt" in window.toast.text()
    assert not window.composer.attachments


async def test_a_long_text_reaches_the_model_through_the_read_tool(qtbot, fake_api, tmp_path):
    from tests.tools_helpers import make_workspace

    root = make_workspace(tmp_path / "ws")
    path = tmp_path / "trace.log"
    path.write_text("".join(f"{i:07d} event\n" for i in range(TEXT_INLINE_CHARS // 10)))
    async with tool_window(qtbot) as win:
        win.tools.set_workspace(str(root))
        await until(lambda: win.tools.workspace.folder == str(root))
        assert win.composer.add_files([str(path)]) == [str(path)]
        fake_api.queue_text("I will read it in parts")
        win.composer.edit.setPlainText("summarise the trace")
        win.composer.send_button.click()
        await until(lambda: len(message_rows(win)) == 2 and message_rows(win)[1].status == "complete")
        block = fake_api.message_requests()[-1].body["messages"][0]["content"][0]
        assert block["type"] == "document" and block["title"] == "trace.log"
        text = block["source"]["data"]
        assert len(text) < 10_000 and "@spill/attach-" in text and "read tool" in text
        virtual = text.rsplit('file_path "', 1)[1].split('"', 1)[0]
        spill = win.runtime.paths.spill_dir(win.session_id)
        assert (spill / virtual.removeprefix("@spill/")).read_text() == path.read_text()


async def test_images_show_a_thumbnail_and_their_name_in_chip_and_bubble(window, fake_api, qtbot, tmp_path):
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QTextDocument

    image = _png(tmp_path / "holiday-photo.png", size=(400, 200))
    window.composer.add_files([str(image)])
    chip = window.composer.chips.chips[str(image)]
    await until(lambda: chip.state == "ready")  # checked and thumbnailed in a worker thread
    assert chip.isVisible() and chip.is_image and chip.name_label.text() == "holiday-photo.png"
    thumb = chip.preview.pixmap()
    assert not thumb.isNull() and max(thumb.width(), thumb.height()) <= 44
    assert thumb.toImage().pixelColor(thumb.width() // 2, thumb.height() // 2).green() > 150  # the picture

    fake_api.queue_text("a green field")
    window.composer.edit.setPlainText("where is this?")
    window.composer.send_button.click()
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    assert not window.composer.chips.isVisible()
    model = window.chat_model
    row = next(i for i in range(model.rowCount()) if model.row_at(i).is_user_bubble)
    segment = model.row_at(row).segments[0]
    assert segment.kind == "image" and segment.text == "holiday-photo.png" and segment.media
    doc = window.chat.itemDelegate().document(model.index(row, 0))
    assert "holiday-photo.png" in doc.toPlainText()
    url = next(f for f in doc.toHtml().split('"') if f.startswith("precis-thumb:"))
    picture = doc.resource(QTextDocument.ResourceType.ImageResource.value, QUrl(url))
    assert picture is not None and 0 < picture.width() <= 180 and picture.height() == picture.width() // 2


def test_text_attachment_names_come_from_the_block(tmp_path):
    from desktop.ui.transcript.chat_model import segments_for

    block = attachments.text_document("a\nb\nc\n", "three.txt")
    (seg,) = segments_for([block])
    assert seg.kind == "image" and "three.txt" in seg.text and "3 lines" in seg.text


@pytest.mark.in_process  # engine behaviour, not HTTP (tests/scripted_provider.py)
async def test_a_text_file_too_big_for_the_window_is_refused_before_anything_is_stored(
    small_engine, tmp_path
):
    from desktop.engine.turn.chat import MessageTooLong

    path = tmp_path / "dump.csv"
    path.write_text("".join(f"{i},{i * i},row number {i}\n" for i in range(3_000)))  # ~70K chars, 8K window
    sid = await small_engine.new_session()
    with pytest.raises(MessageTooLong, match="Nothing was sent"):
        await small_engine.send(sid, "what is in it?", [prepare(path)], meta={"files": ["dump.csv"]})
    assert await small_engine.store.messages(sid) == []
