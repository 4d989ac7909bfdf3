"""What the window keeps per chat and across processes: empty chats reused, chats the CLI made appear, drafts
per chat, Show originals keeps its place, Undo visible at once, pasted images' temp files removed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QImage

from tests.conftest import engine_of
from tests.test_window import cards, compacted, message_rows, ready, until

pytestmark = pytest.mark.qt


async def send(window, fake_api, text: str) -> None:
    fake_api.queue_text(f"re: {text}")
    window.composer.edit.setPlainText(text)
    window.composer.send_button.click()
    await until(
        lambda: any(
            m.content and m.content[0].get("text") == f"re: {text}" and m.status == "complete"
            for m in message_rows(window)
        )
    )
    await ready(window)


async def test_ctrl_n_reuses_an_empty_untitled_chat_instead_of_piling_them_up(window, fake_api, qtbot):
    store = engine_of(window).store
    first = window.session_id
    for _ in range(3):
        window.new_chat()
        await asyncio_sleep()
    assert [s.id for s in await store.list_sessions()] == [first] and window.session_id == first
    await send(window, fake_api, "now it has a message")
    window.new_chat()
    await until(lambda: window.session_id != first)
    second = window.session_id
    window.new_chat()
    await asyncio_sleep()
    assert window.session_id == second and len(await store.list_sessions()) == 2


async def asyncio_sleep(seconds: float = 0.2) -> None:
    import asyncio

    await asyncio.sleep(seconds)


async def test_a_chat_the_cli_creates_shows_in_the_sidebar_while_the_window_is_open(window, fake_api, qtbot):
    await until(lambda: window.sidebar.list.count() == 1)
    await asyncio_sleep(2.0)  # the watch has read the database's version once
    fake_api.queue_text("from the terminal")
    env = dict(os.environ)
    res = subprocess.run(
        [sys.executable, "-m", "desktop", "chat", "--new", "made by the CLI"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    await until(lambda: window.sidebar.list.count() == 2, timeout=15)
    titles = [window.sidebar.list.item(i).text() for i in range(window.sidebar.list.count())]
    assert "made by the CLI" in titles


async def test_each_chat_keeps_its_own_draft(window, fake_api, qtbot, tmp_path):
    from PIL import Image

    await send(window, fake_api, "chat one exists")
    one = window.session_id
    picture = tmp_path / "plan.png"
    Image.new("RGB", (8, 8)).save(picture)
    window.composer.edit.setPlainText("half-written thought for chat one")
    window.composer.add_files([str(picture)])
    window.new_chat()
    await until(lambda: window.session_id != one)
    two = window.session_id
    assert window.composer.edit.toPlainText() == "" and window.composer.attachments == []
    window.composer.edit.setPlainText("draft for chat two")
    await window.bridge.open_session(one)
    assert window.composer.edit.toPlainText() == "half-written thought for chat one"
    assert window.composer.attachments == [str(picture)]
    await window.bridge.open_session(two)
    assert window.composer.edit.toPlainText() == "draft for chat two" and window.composer.attachments == []


async def test_undo_of_a_compaction_is_offered_without_opening_the_summary(window, fake_api, qtbot):
    await compacted(window, engine_of(window).store)
    model = window.chat_model
    card = cards(window)[0]
    assert not card.detail.get("expanded")
    text = window.chat.delegate.document(model.index(model.row_of(card.key))).toPlainText()
    assert "Undo" in text and "View summary" in text


async def test_show_originals_keeps_the_card_where_it_was_on_screen(window, fake_api, qtbot):
    await compacted(window, engine_of(window).store)
    window.resize(1000, 700)
    view, model = window.chat, window.chat_model
    card = cards(window)[0]
    view.scrollTo(model.index(model.row_of(card.key)))
    await asyncio_sleep(0.05)
    before = view.visualRect(model.index(model.row_of(card.key))).top()
    assert not view.is_at_bottom()
    view.card_action.emit(str(card.key), "originals")
    await until(lambda: len(message_rows(window)) == 12 and len(cards(window)) == 1)
    await asyncio_sleep(0.05)
    after = view.visualRect(model.index(model.row_of(cards(window)[0].key))).top()
    assert abs(after - before) <= 4, (before, after)
    assert not view.is_at_bottom()


async def test_pasted_images_temp_files_are_removed_once_sent_or_discarded(window, fake_api, qtbot):
    image = QImage(16, 16, QImage.Format.Format_RGB32)
    image.fill(QColor("orange"))
    window.composer.add_image(image)
    sent = Path(window.composer.attachments[0])
    assert sent.is_file()
    await send(window, fake_api, "look at this")
    assert not sent.exists()  # committed: the image is in the message, the temp file is gone
    stored = await engine_of(window).store.messages(window.session_id)
    assert stored[0].content[0]["type"] == "image"
    window.composer.add_image(image)
    dropped = Path(window.composer.attachments[0])
    window.composer.clear_attachments_button.click()
    assert not dropped.exists()


async def test_an_edit_borrows_the_composer_and_gives_the_draft_back(window, fake_api, qtbot):
    await send(window, fake_api, "the original")
    window.composer.edit.setPlainText("my unsent draft")
    user = message_rows(window)[0].id
    window._edit_message(user)
    assert window.composer.edit.toPlainText() == "the original"
    window.cancel_edit()
    assert window.composer.edit.toPlainText() == "my unsent draft"  # on main the edit overwrote it
    window._edit_message(user)
    window.composer.edit.setPlainText("the better original")
    fake_api.queue_text("better answer")
    window.composer.send_button.click()
    # (a reply row has no content until its first text arrives)
    await until(
        lambda: (
            [m.content[0].get("text") if m.content else "" for m in message_rows(window)]
            == ["the better original", "better answer"]
        )
    )
    assert window.composer.edit.toPlainText() == "my unsent draft"


async def test_drafts_survive_a_restart(window, fake_api, qtbot):
    from desktop.ui.bridge import Bridge
    from desktop.ui.window.main_window import MainWindow

    await send(window, fake_api, "first chat")
    one = window.session_id
    window.composer.edit.setPlainText("draft one")
    window.new_chat()
    await until(lambda: window.session_id != one)
    window.composer.edit.setPlainText("draft two")
    two = window.session_id
    engine = engine_of(window)
    window.close()
    await window.bridge.close()
    bridge = Bridge(engine)
    again = MainWindow(bridge, engine.paths.config_dir / "window.ini")
    qtbot.addWidget(again)
    again.show()
    await again.start()
    assert again.session_id == two and again.composer.edit.toPlainText() == "draft two"
    await bridge.open_session(one)
    assert again.composer.edit.toPlainText() == "draft one"
    await bridge.close()
    again.close()
