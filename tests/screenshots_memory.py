"""Screenshots of what the chat keeps past a summary: a pinned message (its tag and Unpin in its actions), the
preview before Compact now (a message ticked to stay verbatim, a focus typed) and the summary card whose items
cite the messages they came from ([#123] links that open them). Scene "memory" of tests/screenshots.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPainter

from tests.fakeapi import FakeAnthropic
from tests.screenshots import opened_window, screen, shoot_card, wait_for

PINNED = "The staging database listens on port 6543; its password rotates every Tuesday at 09:00."


def over(window, dialog, path: Path) -> None:  # noqa: ANN001
    """The window with ``dialog`` drawn where it stands (the X screen itself under Xvfb; offscreen the two grabs
    put together, as a compositor would)."""
    if QGuiApplication.platformName() == "xcb":
        screen(path, window)
        return
    shot = window.grab()
    painter = QPainter(shot)
    painter.drawPixmap(dialog.frameGeometry().topLeft() - window.frameGeometry().topLeft(), dialog.grab())
    painter.end()
    shot.save(str(path))


async def shoot_memory(outdir: Path, srv: FakeAnthropic) -> None:
    async with opened_window() as (store, engine, bridge, window):
        await window.start()
        await bridge.new_session()
        sid = window.session_id
        await engine.set_chat_model(sid, "claude-sonnet-4-6")
        pin_id = 0
        for i in range(8):  # ~70K tokens: more than the verbatim tail of a 1M window
            await store.add_message(
                sid,
                "user",
                [
                    {
                        "type": "text",
                        "text": f"Step {i}: port exporter {i} to the new "
                        "schema. Always keep tabs for indentation. " + "Details. " * 3000,
                    }
                ],
            )
            said = (
                PINNED
                if i == 1
                else f"Exporter {i} done: we decided on JSON lines because the importer "
                "streams. " + "Explanation. " * 300
            )
            reply = await store.add_message(sid, "assistant", [{"type": "text", "text": said}])
            pin_id = reply.id if i == 1 else pin_id
        await bridge.open_session(sid)
        await bridge.pin_message(sid, pin_id)
        model = window.chat_model
        await wait_for(lambda: bool(model.row_at(model.row_of(pin_id)).detail.get("pinned")))
        index = model.index(model.row_of(pin_id))
        window.chat.scrollTo(index, window.chat.ScrollHint.PositionAtCenter)
        await asyncio.sleep(0.4)
        window.reading.actions.show_for(model.index(model.row_of(pin_id)))
        window.toast.hide()
        await asyncio.sleep(0.3)
        screen(outdir / "window-pinned-message.png", window)

        window.gauge.compact_requested.emit()  # Compact now: the preview first
        await wait_for(lambda: window.memory.preview is not None and window.memory.preview.isVisible(), 20)
        preview = window.memory.preview
        preview.move(150, 50)
        first = preview.messages.item(2)
        first.setCheckState(Qt.CheckState.Checked)  # keep this one verbatim
        preview.focus_edit.setText("the exporters still to port and the schema decisions")
        await asyncio.sleep(0.8)
        over(window, preview, outdir / "window-compact-preview.png")
        preview.accept()
        await shoot_card(window, outdir / "window-summary-cited.png")
