"""Screenshots of reading the chat: a selection, the find bar, expanded thinking, math and a task list.

Part of ``python -m tests.screenshots`` (scene ``reading``; ``PRECIS_SHOTS=reading`` takes it alone).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.fakeapi import FakeAnthropic

MATH_REPLY = (
    "Here is the plan, with the maths behind it.\n\n"
    "- [x] read the data\n- [x] fit the model\n- [ ] write the report\n\n"
    "The loss is the mean squared error $L = \\frac{1}{n}\\sum_{i=1}^{n} (y_i - \\hat{y}_i)^2$, and the "
    "closed form of the fit is\n\n$$\n\\hat{\\beta} = (X^T X)^{-1} X^T y\n$$\n\n"
    "> Gauss used least squares to find Ceres in 1801.[^1]\n\n"
    "Euler's identity, $e^{i\\pi} + 1 = 0$, stays a favourite.\n\n[^1]: After Piazzi lost it behind the Sun."
)
FIND_REPLY = (
    "The **needle** is rarely where you look first. Search the haystack row by row, and mark each needle "
    "you find; a second needle often lies near the first.\n\nWhen the last needle is found, stop."
)
THOUGHT = (
    "The user asks why the sky is blue.\nRayleigh scattering goes as 1/λ⁴, so blue light scatters about "
    "5.5 times more than red.\nViolet scatters even more, but the Sun emits less of it and our eyes are "
    "less sensitive to it.\nSo: explain scattering, then the violet question."
)


async def _turn(window, srv, done, text: str, queue) -> None:  # noqa: ANN001
    done.clear()
    queue()
    window.composer.edit.setPlainText(text)
    window.composer.send_button.click()
    await asyncio.wait_for(done.wait(), 20)
    await asyncio.sleep(0.4)


async def shoot_reading(outdir: Path, srv: FakeAnthropic) -> None:
    from desktop.ui.api import events
    from tests.screenshots import opened_window, screen

    async with opened_window() as (_store, _engine, bridge, window):
        await window.start()
        await asyncio.sleep(0.3)
        done = asyncio.Event()
        bridge.engine_event.connect(
            lambda e: isinstance(e, events.TurnDone | events.TurnError) and done.set()
        )
        chat, model = window.chat, window.chat_model

        await _turn(
            window,
            srv,
            done,
            "Fit a line to my data and explain the maths.",
            lambda: srv.queue_text(MATH_REPLY),
        )
        from desktop.ui.transcript import math_render

        while not math_render.is_ready():  # the window shows a formula's source until matplotlib is loaded
            await asyncio.sleep(0.05)
        chat.scroll_to_bottom()
        await asyncio.sleep(0.3)
        screen(outdir / "window-math.png", window)

        await _turn(window, srv, done, "Where is the needle?", lambda: srv.queue_text(FIND_REPLY))
        reply = model.index(model.rowCount() - 1, 0)
        text = chat.delegate.document(reply).toPlainText()
        start = text.index("Search the haystack")
        window.reading.selector.select(reply, start, start + len("Search the haystack row by row"))
        chat.setFocus()
        chat.setCurrentIndex(reply)
        window.reading.actions.show_for(reply)
        await asyncio.sleep(0.3)
        screen(outdir / "window-selection.png", window)
        window.reading.selector.clear()
        window.reading.open_find()
        window.reading.find_bar.edit.setText("needle")
        window.reading.find_bar.search()
        window.reading.find_bar.find_next()
        await asyncio.sleep(0.3)
        screen(outdir / "window-find.png", window)
        window.reading.find_bar.close_bar()

        window.reading.thinking.setChecked(True)
        await asyncio.sleep(0.3)
        await _turn(
            window,
            srv,
            done,
            "Why is the sky blue?",
            lambda: srv.queue_thinking(THOUGHT, "Because air scatters blue light far more than red."),
        )
        model.toggle_thinking(model.rowCount() - 1)
        await asyncio.sleep(0.2)
        chat.scroll_to_bottom()
        await asyncio.sleep(0.4)
        screen(outdir / "window-thinking.png", window)
