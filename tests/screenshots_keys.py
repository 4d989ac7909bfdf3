"""Screenshots of the keyboard paths (PRECIS_SHOTS=keys): the focus ring on the composer, a button, the model box,
the sidebar's filter and a tool button in dark and light, the version arrows after a regenerate, the shortcut
sheet."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.fakeapi import FakeAnthropic


async def shoot_keys(outdir: Path, srv: FakeAnthropic) -> None:
    from tests.screenshots import opened_window

    async with opened_window() as (store, _engine, bridge, window):
        await window.start()
        window.resize(1180, 740)
        window.activateWindow()  # focus shows only in the active window
        srv.queue_text("A first answer: the column is about 760 px wide.")
        await asyncio.sleep(0.5)
        window._send("How wide is a comfortable reading column?")
        await _idle(window, bridge)
        srv.queue_text("Another answer: 60 to 75 characters a line, so about 700 to 800 px at 16 px type.")
        model = window.chat_model
        for _ in range(20):  # Regenerate waits for the chat to be idle (the title is written after the reply)
            window.keys.regenerate_last()
            await _idle(window, bridge)
            if any(model.row_at(i).versions for i in range(model.rowCount())):
                break
        for theme in ("dark", "light"):
            window.look.set_theme(theme)
            for name, widget in (
                ("composer", window.composer.edit),
                ("attach", window.composer.attach_button),
                ("model", window.model_picker),
                ("filter", window.sidebar.filter_edit),
                ("toggle", window.look.sidebar_toggle),
            ):
                widget.setFocus()
                window.activateWindow()
                await asyncio.sleep(0.3)
                window.grab().save(str(outdir / f"keys-focus-{name}-{theme}.png"))
        window.look.set_theme("dark")
        dialog = window.organise.show_shortcuts()
        dialog.resize(640, 760)
        await asyncio.sleep(0.4)
        dialog.grab().save(str(outdir / "keys-sheet-dark.png"))
        dialog.close()
        window.look.set_theme("light")


async def _idle(window, bridge) -> None:  # noqa: ANN001
    await asyncio.sleep(0.3)
    for _ in range(500):
        await asyncio.sleep(0.02)
        if (
            window.session_id is not None
            and not bridge.engine.busy(window.session_id)
            and window.composer.send_button.isVisible()
        ):
            await asyncio.sleep(0.3)
            return
