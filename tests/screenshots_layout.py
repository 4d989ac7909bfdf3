"""The reading layout at the sizes people use: 1440x900 and 1920x1080 (and 900 px wide), light and dark, and
Simplified Chinese: a user message with an emoji, a reply with a code block and a long paragraph.

Part of ``python -m tests.screenshots`` (scene ``layout``; ``PRECIS_SHOTS=layout`` takes it alone). Run it under
Xvfb with a screen at least 1920x1080: ``xvfb-run -a -s "-screen 0 1920x1080x24"``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.fakeapi import FakeAnthropic

LONG = (
    "A long reply is easier to read in a column: the eye finds the start of the next line without "
    "searching, and the page keeps its margins. " * 4
).strip()
REPLY = f"""Sure 🙂 here is a helper that reads a file safely:

```python
from pathlib import Path

def read_text(path: str) -> str:
    p = Path(path)
    return p.read_text("utf-8") if p.exists() else ""
```

{LONG}

- it returns `""` for a missing file
- it never raises on a missing path ✅
"""
SIZES = ((1440, 900), (1920, 1080), (900, 700))


async def _converse(window, bridge, srv, text: str, reply: str) -> None:  # noqa: ANN001
    from desktop.ui.api import events

    done = asyncio.Event()
    bridge.engine_event.connect(lambda e: isinstance(e, events.TurnDone | events.TurnError) and done.set())
    srv.queue_text(reply)
    window.composer.edit.setPlainText(text)
    window.composer.send_button.click()
    await asyncio.wait_for(done.wait(), 90)  # a loaded machine streams slowly
    await asyncio.sleep(0.5)


async def _sizes(window, outdir: Path, stem: str) -> None:  # noqa: ANN001
    from tests.screenshots import screen

    for w, h in SIZES:
        window.resize(w, h)
        await asyncio.sleep(0.6)
        window.toast.hide()
        window.chat.scroll_to_bottom()
        await asyncio.sleep(0.3)
        screen(outdir / f"{stem}-{w}.png", window)


async def shoot_layout(outdir: Path, srv: FakeAnthropic) -> None:
    from tests.screenshots import opened_window, screen

    async with opened_window(tools=True) as (_store, _engine, bridge, window):
        await window.start()
        await _converse(window, bridge, srv, "Hi! Write a Python helper that reads a file safely 📄🚀", REPLY)
        for theme in ("light", "dark"):
            window.look.set_theme(theme)
            await _sizes(window, outdir, f"layout-{theme}")
        window.look.set_theme("light")
        if hasattr(
            window.look, "wide_action"
        ):  # View > Wide reading column (absent before the reading layout)
            window.look.wide_action.trigger()
            window.resize(1920, 1080)
            await asyncio.sleep(0.6)
            screen(outdir / "layout-wide-1920.png", window)
            window.look.wide_action.trigger()


async def shoot_layout_zh(outdir: Path, srv: FakeAnthropic) -> None:
    from PySide6.QtWidgets import QApplication

    from desktop.ui.app import apply_language
    from tests.screenshots import REPLY_ZH, opened_window

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_language(app, "zh_CN")
    try:
        async with opened_window() as (_store, _engine, bridge, window):
            await window.start()
            await _converse(window, bridge, srv, "写一个安全读取文件的 Python 函数。😀", REPLY_ZH)
            window.look.set_theme("light")
            await _sizes(window, outdir, "layout-zh")
    finally:
        apply_language(app, "en")
