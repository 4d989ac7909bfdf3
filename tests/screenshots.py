"""Regenerate docs/screenshots/ by driving the real window against the loopback server.

Run under Xvfb to see the real platform plugin (or offscreen):
    xvfb-run -a -s "-screen 0 1280x800x24" .venv/bin/python -m tests.screenshots [OUTDIR]
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_API", "pyside6")  # qasync must pick PySide6

import qasync  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from tests.corpus import CORPUS
from tests.fakeapi import FakeAnthropic, Fault

REPLY = """Here is a small helper that reads a file safely:

```python
from pathlib import Path

def read_text(path: str) -> str:
    \"\"\"Return the file's text, or an empty string if it is missing.\"\"\"
    p = Path(path)
    return p.read_text("utf-8") if p.exists() else ""
```

| Case | Result |
|------|--------|
| file exists | its text |
| missing | `""` |

Raw HTML such as <img src="https://example.com/x.png"> stays **literal text**.
"""


async def wait_for(predicate, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise TimeoutError("condition not reached")
        await asyncio.sleep(0.05)


def screen(path: Path, window) -> None:  # noqa: ANN001
    """Under Xvfb the X screen as it shows, cropped to the window and whatever it opened over it (a dialog, a menu,
    a pop-up list are windows of their own); offscreen the window alone."""
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    shown = QGuiApplication.primaryScreen() if QGuiApplication.platformName() == "xcb" else None
    if shown is None:
        window.grab().save(str(path))
        return
    area = window.frameGeometry()
    for top in QApplication.topLevelWidgets():
        if top.isVisible():
            area = area.united(top.frameGeometry())
    area = area.intersected(shown.geometry())
    shown.grabWindow(0, area.x(), area.y(), area.width(), area.height()).save(str(path))


@contextlib.asynccontextmanager
async def opened_window(tools: bool = False):  # noqa: ANN201
    """The real window over a real engine and store in PRECIS_HOME (the app's own wiring), at a fixed place
    and size."""
    from desktop.runtime import open_runtime, toolbox_factory
    from desktop.ui.bridge import Bridge
    from desktop.ui.window.main_window import MainWindow

    async with open_runtime(toolbox=toolbox_factory() if tools else None) as runtime:
        bridge = Bridge(runtime.engine, runtime.toolbox)
        window = MainWindow(bridge, runtime.paths.config_dir / "window.ini")
        # PRECIS_SHOT_SIZE=1440x900 (say): the scenes at a desktop's size instead of the docs' 1100x720.
        width, height = (int(n) for n in os.environ.get("PRECIS_SHOT_SIZE", "1100x720").split("x"))
        window.resize(width, height)
        window.move(0, 0)
        window.look.apply_saved_theme()
        window.show()
        try:
            yield runtime.store, runtime.engine, bridge, window
        finally:
            window.close()
            await bridge.close()


async def shoot(outdir: Path, srv: FakeAnthropic) -> None:
    from desktop.ui.api import events

    async with opened_window() as (store, engine, bridge, window):
        await _shoot(outdir, srv, store, engine, bridge, window, events)


async def _shoot(outdir: Path, srv: FakeAnthropic, store, engine, bridge, window, events) -> None:  # noqa: ANN001
    await window.start()
    await asyncio.sleep(0.3)
    window.grab().save(str(outdir / "window-empty.png"))

    done = asyncio.Event()
    bridge.engine_event.connect(lambda e: isinstance(e, events.TurnDone | events.TurnError) and done.set())
    srv.queue_text(REPLY)
    window.composer.edit.setPlainText("Write a Python helper that reads a file safely.")
    window.composer.send_button.click()
    await asyncio.wait_for(done.wait(), 10)
    await asyncio.sleep(0.3)
    window.grab().save(str(outdir / "window-reply.png"))
    # Editing the first message: the draft, the placeholder and the Cancel edit button (Esc leaves it).
    first_user = next(
        window.chat_model.row_at(i).message
        for i in range(window.chat_model.rowCount())
        if window.chat_model.row_at(i).message and window.chat_model.row_at(i).message.role == "user"
    )
    window._edit_message(first_user.id)
    await asyncio.sleep(0.3)
    window.grab().save(str(outdir / "window-editing.png"))
    window.cancel_edit()
    window.toast.hide()
    sid_first = window.session_id

    # The gauge's hover card at normal, warning and critical states, on a real imported Claude Code session
    # (its recorded usage is real): the same session measured against smaller learned windows.
    from desktop.engine.history.importer import import_claude_code

    transcript = CORPUS / "entire-cli" / "89" / "7eb280e769" / "12" / "full.jsonl"
    result = await import_claude_code(store, transcript, "Imported: refactoring session")
    await bridge.refresh_sessions()
    await bridge.open_session(result.session_id)
    imported_model = (await store.get_session(result.session_id)).model
    used = (await engine.measure(result.session_id)).used
    for state, ratio in (("normal", 0.45), ("warning", 0.84), ("critical", 0.97)):
        engine.catalog.learn_window(imported_model, int(used / ratio))
        await engine.publish_context(window.session_id)
        await asyncio.sleep(0.4)  # let the ring animation settle
        QTest.mouseMove(window.gauge)
        window.gauge.card.anchor_entered()
        await asyncio.sleep(0.6)
        screen(outdir / f"window-gauge-{state}.png", window)
        window.gauge.card.close_card()
        await asyncio.sleep(0.2)
    await bridge.open_session(sid_first)

    done.clear()
    srv.queue_fault(
        Fault.custom(529, "overloaded_error", "Overloaded"),
        Fault.custom(529, "overloaded_error", "Overloaded"),
        Fault.custom(529, "overloaded_error", "Overloaded"),
    )
    window.composer.edit.setPlainText("And now a version that streams large files?")
    window.composer.send_button.click()
    await asyncio.wait_for(done.wait(), 20)
    await asyncio.sleep(0.3)
    window.grab().save(str(outdir / "window-error.png"))
    # A long conversation compacted with the Compact now button: the card, its summary opened.
    from desktop.engine.config.catalog import ModelCatalog

    # Forget the windows "learned" above.
    engine.replace_models(ModelCatalog(engine.settings.model_overrides), engine.calibration)
    await bridge.new_session()
    sid = window.session_id
    for i in range(6):
        await store.add_message(
            sid,
            "user",
            [
                {
                    "type": "text",
                    "text": f"Step {i}: refactor module {i} and keep "
                    "tabs for indentation.\n\n" + "Details follow. " * 1500,
                }
            ],
        )
        await store.add_message(
            sid, "assistant", [{"type": "text", "text": f"Done with module {i}. " + "Explanation. " * 600}]
        )
    await bridge.open_session(sid)
    window.gauge.compact_requested.emit()  # Compact now: its preview, confirmed as it is
    await wait_for(lambda: window.memory.preview is not None and window.memory.preview.isVisible(), 20)
    window.memory.preview.accept()
    model = window.chat_model
    await wait_for(lambda: any(model.row_at(i).kind == "compaction" for i in range(model.rowCount())), 20)
    await asyncio.sleep(0.5)
    card = next(model.row_at(i) for i in range(model.rowCount()) if model.row_at(i).kind == "compaction")
    model.set_card_detail(str(card.key), expanded=True)
    await asyncio.sleep(0.2)
    window.chat.scrollToTop()
    await asyncio.sleep(0.4)
    screen(outdir / "window-compacted.png", window)
    window.toast.hide()

    # A reply the provider cut at max_tokens: marked, with Continue.
    await bridge.new_session()
    done.clear()
    srv.queue_text(
        "There are three ways to stream a large file in Python. The first reads it in fixed-size "
        "chunks with `file.read(65536)` in a loop, which keeps memory flat; the second iterates over "
        "the file object line by line, which suits text; the third",
        stop_reason="max_tokens",
    )
    window.composer.edit.setPlainText("How do I stream a large file without loading it all?")
    window.composer.send_button.click()
    await asyncio.wait_for(done.wait(), 10)
    await asyncio.sleep(0.4)
    window.toast.hide()
    screen(outdir / "window-cut-reply.png", window)

    # The chat's model picker, open: what the provider lists, then the catalog.
    await wait_for(lambda: window.model_picker.count() > 0)
    window.model_picker.showPopup()
    await asyncio.sleep(0.5)
    screen(outdir / "window-model-picker.png", window)
    window.model_picker.hidePopup()
    await asyncio.sleep(0.2)

    # The profiles dialog: Test connection's answer, then the presets.
    dialog = window.open_settings()
    dialog.move(120, 40)
    await asyncio.sleep(0.3)
    dialog.form.test_button.click()
    await wait_for(lambda: dialog.form.test_result.isVisible(), 10)
    await asyncio.sleep(0.3)
    screen(outdir / "window-profiles.png", dialog.window().parentWidget() or window)
    dialog.grab().save(str(outdir / "dialog-profiles.png"))  # the whole dialog, however tall
    dialog.form.profile_box.showPopup()
    await asyncio.sleep(0.5)
    screen(outdir / "window-profiles-presets.png", window)
    dialog.form.profile_box.hidePopup()
    dialog.reject()


async def shoot_welcome(outdir: Path) -> None:
    """First run without any key: the welcome page guides to a working provider."""
    async with opened_window() as (_store, _engine, _bridge, window):
        await window.start()  # as the app does: the form learns about the keyring after it
        await asyncio.sleep(0.5)
        screen(outdir / "window-welcome.png", window)


async def shoot_tools(outdir: Path, srv: FakeAnthropic) -> None:
    """A chat with a workspace: read, grep, an edit approved on its diff, a command, a stdio MCP server's tool;
    then the tool cards (one expanded) and the MCP page."""
    import json

    from desktop.tools.permissions import Answer
    from desktop.ui.api import tool_events

    home = Path(os.environ["PRECIS_HOME"])
    (home / "config").mkdir(parents=True, exist_ok=True)
    repo = Path(__file__).resolve().parent.parent
    (home / "config" / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "calc": {"command": sys.executable, "args": ["-m", "tests.mcp_server"], "cwd": str(repo)}
                }
            }
        )
    )
    ws = Path(tempfile.mkdtemp(prefix="precis-ws-")) / "demo-project"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "config.py").write_text(
        "import tomllib\n\n\ndef parse_config(path):\n"
        "    with open(path) as f:\n        return tomllib.loads(f.read())\n"
    )
    (ws / "src" / "main.py").write_text(
        "from config import parse_config\n\nsettings = parse_config('app.toml')\n"
    )
    async with opened_window(tools=True) as (_store, engine, bridge, window):
        await window.start()
        toolbox = bridge._toolbox
        await wait_for(lambda: toolbox.servers["calc"].state == "ready", 30)
        await bridge.new_session()
        await asyncio.sleep(0.3)
        QTest.mouseMove(window.composer)
        window.gauge.card.close_card()
        window.tools.set_workspace(str(ws))
        await asyncio.sleep(0.3)
        toolbox.policy.allow = frozenset({"read", "grep", "run", "mcp__calc__add"})
        srv.queue_tool_use("read", {"file_path": "src/config.py"}, text="Let me look at the parser first.")
        srv.queue_tool_use("grep", {"pattern": "parse_config"})
        srv.queue_tool_use(
            "edit",
            {
                "file_path": "src/config.py",
                "old_string": "    with open(path) as f:\n        return tomllib.loads(f.read())",
                "new_string": '    with open(path, "rb") as f:\n        return tomllib.load(f)',
            },
        )
        srv.queue_tool_use(
            "run",
            {
                "command": "python3 -c \"import ast,sys; ast.parse(open('src/config.py').read());"
                " print('syntax ok')\""
            },
        )
        srv.queue_tool_use("mcp__calc__add", {"a": 20, "b": 22})
        srv.queue_text(
            "`parse_config` now opens the file in binary mode and uses `tomllib.load`, as the "
            "standard library requires; the syntax check passes and the MCP calculator agrees: 42."
        )
        from desktop.ui.api import events

        done = asyncio.Event()
        asked = asyncio.Event()

        def on_event(e) -> None:  # noqa: ANN001
            if isinstance(e, tool_events.PermissionAsked):
                asked.set()
            elif isinstance(e, events.TurnError) or (
                isinstance(e, events.TurnDone)
                and not any(b.get("type") == "tool_use" for b in e.message.content)
            ):
                done.set()

        bridge.engine_event.connect(on_event)
        window.composer.edit.setPlainText("parse_config fails on binary TOML reads; fix it and check.")
        window.composer.send_button.click()
        await asyncio.wait_for(asked.wait(), 20)
        await asyncio.sleep(0.5)
        screen(outdir / "window-tools-permission.png", window)
        window.tools.prompt._answer(Answer.ONCE)
        await asyncio.wait_for(done.wait(), 30)
        await asyncio.sleep(0.5)
        model = window.chat_model
        run_result = next(
            i
            for i in range(model.rowCount())
            if model.row_at(i).message
            and any("syntax ok" in str(b.get("content")) for b in model.row_at(i).message.content)
        )
        model.toggle_expanded(run_result)
        await asyncio.sleep(0.3)
        window.chat.scroll_to_bottom()
        await asyncio.sleep(0.4)
        screen(outdir / "window-tools-cards.png", window)
        dialog = window.tools.open_mcp()
        dialog.move(0, 0)
        await asyncio.sleep(1.0)
        screen(outdir / "window-mcp-page.png", dialog)
        dialog.close()


REPLY_ZH = """这是一个安全读取文件的小函数：

```python
from pathlib import Path

def read_text(path: str) -> str:
    p = Path(path)
    return p.read_text("utf-8") if p.exists() else ""
```

文件不存在时返回空字符串，所以调用方不必再处理异常。
"""


async def shoot_chinese(outdir: Path, srv: FakeAnthropic) -> None:
    """The window, the hover card and the settings in Simplified Chinese (the language chosen in Settings)."""
    from PySide6.QtWidgets import QApplication

    from desktop.ui.api import events
    from desktop.ui.app import apply_language

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_language(app, "zh_CN")
    try:
        async with opened_window(tools=True) as (_store, engine, bridge, window):
            await window.start()
            done = asyncio.Event()
            bridge.engine_event.connect(
                lambda e: isinstance(e, events.TurnDone | events.TurnError) and done.set()
            )
            srv.queue_text(REPLY_ZH)
            window.composer.edit.setPlainText("写一个安全读取文件的 Python 函数。")
            window.composer.send_button.click()
            await asyncio.wait_for(done.wait(), 10)
            await wait_for(window.composer.send_button.isVisible)  # the turn has ended, not only its reply
            done.clear()
            srv.queue_text("好的，接下来可以按块读取大文件，内存占用保持不变。")
            window.composer.edit.setPlainText("那大文件呢？")
            window.composer.send_button.click()
            await asyncio.wait_for(done.wait(), 10)
            await asyncio.sleep(0.5)
            window.toast.hide()
            window.chat.scroll_to_bottom()
            await asyncio.sleep(0.3)
            screen(outdir / "window-zh.png", window)
            # The card at the warning state: the same chat measured against a smaller learned window.
            session_id = window.session_id
            assert session_id is not None
            snapshot = await engine.measure(session_id)
            engine.catalog.learn_window(snapshot.model, int(snapshot.used / 0.84))
            await engine.publish_context(session_id)
            await asyncio.sleep(0.4)
            QTest.mouseMove(window.gauge)
            window.gauge.card.anchor_entered()
            await asyncio.sleep(0.8)
            screen(outdir / "window-zh-gauge.png", window)
            window.gauge.card.close_card()
            dialog = window.open_settings()
            dialog.move(120, 40)
            await asyncio.sleep(0.3)
            dialog.form.test_button.click()
            await wait_for(lambda: dialog.form.test_result.isVisible(), 10)
            await asyncio.sleep(0.3)
            screen(outdir / "window-zh-settings.png", window)
            dialog.reject()
    finally:
        apply_language(app, "en")


async def shoot_organise(outdir: Path, srv: FakeAnthropic) -> None:
    """Search across chats with snippets, the date-grouped sidebar with a pinned chat, the shortcuts list and
    the `/` command completion."""
    import time

    async with opened_window() as (store, _engine, bridge, window):
        await window.start()
        repo = store.repo
        now = time.time()
        day = 86_400
        chats = [  # title, days ago, pinned, messages
            (
                "Release checklist",
                0,
                True,
                [
                    "Draft the release checklist for 2.4: migrations first, then the "
                    "changelog and the signed builds."
                ],
            ),
            (
                "Retry policy for the sync worker",
                0,
                False,
                [
                    "How should the sync worker retry after a 429?",
                    "Back off exponentially from 1 s, honour retry-after, and give up after five tries; log each "
                    "retry with the request id.",
                ],
            ),
            ("Flaky integration test", 1, False, ["The integration test times out on CI about once a week."]),
            (
                "SQLite full-text search",
                4,
                False,
                [
                    "Can SQLite search message text and tool results together?",
                    "Yes: one FTS5 table kept in step by triggers; snippet() gives the text around the match.",
                ],
            ),
            ("Parsing TOML configs", 12, False, ["tomllib needs the file opened in binary mode."]),
            ("Onboarding notes", 75, False, ["Notes for new contributors: run the tests under Xvfb."]),
        ]
        for title, ago, pinned, texts in chats:
            session = await store.create_session(title)
            for i, t in enumerate(texts):
                await store.add_message(
                    session.id, "user" if i % 2 == 0 else "assistant", [{"type": "text", "text": t}]
                )
            if title == "Flaky integration test":
                await store.add_message(
                    session.id,
                    "assistant",
                    [
                        {
                            "type": "tool_use",
                            "id": "tu1",
                            "name": "run",
                            "input": {"command": "pytest -k sync"},
                        }
                    ],
                )
                await store.add_message(
                    session.id,
                    "user",
                    [
                        {
                            "type": "tool_result",
                            "tool_use_id": "tu1",
                            "content": "FAILED test_sync_retry: the worker gave up after 3 retry attempts",
                        }
                    ],
                )
            stamp = now - ago * day

            def touch(sid: int = session.id, at: float = stamp, pin: bool = pinned) -> None:
                repo.m.Session.update(updated_at=at, pinned=1 if pin else None).where(
                    repo.m.Session.id == sid
                ).execute()

            await store.call(touch)
        sessions = await bridge.refresh_sessions()
        await bridge.open_session(next(s.id for s in sessions if s.title.startswith("Retry policy")))
        await asyncio.sleep(0.4)
        window.toast.hide()
        screen(outdir / "window-sidebar-groups.png", window)

        dialog = window.organise.open_search()
        dialog.move(230, 90)
        dialog.edit.setText("retry")
        dialog.search_now()
        await wait_for(lambda: dialog.hits(), 10)
        await asyncio.sleep(0.5)
        screen(outdir / "window-search.png", window)
        dialog.edit.setText("kumquat")
        dialog.search_now()
        await wait_for(lambda: dialog.empty.isVisible(), 10)
        await asyncio.sleep(0.3)
        screen(outdir / "window-search-empty.png", window)
        dialog.reject()

        shortcuts = window.organise.show_shortcuts()
        shortcuts.move(260, 90)
        await asyncio.sleep(0.5)
        screen(outdir / "window-shortcuts.png", window)
        shortcuts.reject()

        window.composer.edit.setFocus()
        QTest.keyClicks(window.composer.edit, "/c")
        await wait_for(window.organise.slash.popup_visible, 5)
        await asyncio.sleep(0.5)
        screen(outdir / "window-slash-commands.png", window)
        window.organise.slash.hide_popup()
        window.composer.clear()


LOOK_CODE = '''"""Parse the app's settings file."""
import json
from pathlib import Path


def load(path: Path) -> dict:
    return json.loads(path.read_text("utf-8"))
'''


async def shoot_look(outdir: Path, srv: FakeAnthropic) -> None:
    """Attachments (a code file and an image: chips, then the bubble), the gauge with its tick and figure, the
    light and dark windows and a narrow window with the sidebar folded away."""
    from PIL import Image, ImageDraw

    from desktop.ui.api import events

    scratch = Path(tempfile.mkdtemp(prefix="precis-look-"))
    (scratch / "settings_loader.py").write_text(LOOK_CODE, "utf-8")
    picture = Image.new("RGB", (640, 400), (236, 226, 206))
    draw = ImageDraw.Draw(picture)
    draw.rectangle((40, 60, 600, 340), fill=(200, 100, 59))
    draw.ellipse((240, 120, 400, 280), fill=(43, 58, 103))
    picture.save(scratch / "architecture-sketch.png", "PNG")
    async with opened_window() as (store, engine, bridge, window):
        await window.start()
        window.resize(1180, 740)
        window.look.set_theme("light")
        await asyncio.sleep(0.3)
        window.composer.add_files(
            [str(scratch / "settings_loader.py"), str(scratch / "architecture-sketch.png")]
        )
        window.composer.edit.setPlainText("Review this loader and tell me what the sketch shows.")
        await asyncio.sleep(0.3)
        window.grab().save(str(outdir / "look-attachments-composer.png"))
        done = asyncio.Event()
        bridge.engine_event.connect(
            lambda e: isinstance(e, events.TurnDone | events.TurnError) and done.set()
        )
        srv.queue_text(
            "The loader reads the whole file and parses it as JSON; a missing file raises "
            "`FileNotFoundError`, so wrap it if settings are optional.\n\nThe sketch shows a navy "
            "circle on a clay-coloured panel."
        )
        window.composer.send_button.click()
        await asyncio.wait_for(done.wait(), 10)
        await asyncio.sleep(0.4)
        window.grab().save(str(outdir / "look-attachments-bubble.png"))
        # The gauge: a window learned small enough that the ring is a third full and the tick shows.
        measured = await engine.measure(
            window.session_id
        )  # the chat's own model may be unset (the default's)
        engine.catalog.learn_window(measured.model, max(2_000, int(measured.used / 0.3)))
        await engine.publish_context(window.session_id)
        await asyncio.sleep(0.5)
        window.grab().save(str(outdir / "look-light.png"))
        header = window.header_bar.grab()
        header.scaled(header.width() * 2, header.height() * 2).save(str(outdir / "look-gauge-header.png"))
        QTest.mouseMove(window.gauge)
        window.gauge.card.anchor_entered()
        await asyncio.sleep(0.6)
        screen(outdir / "look-gauge-card.png", window)
        window.gauge.card.close_card()
        window.look.set_theme("dark")
        await asyncio.sleep(0.5)
        window.grab().save(str(outdir / "look-dark.png"))
        window.resize(680, 700)
        await asyncio.sleep(0.5)
        window.grab().save(str(outdir / "look-narrow-dark.png"))
        window.look.set_theme("light")
        await asyncio.sleep(0.4)
        window.grab().save(str(outdir / "look-narrow.png"))


async def shoot_versions(outdir: Path, srv: FakeAnthropic) -> None:
    """A regenerated reply: ‹ 2/2 › under it, the first reply kept as version 1."""
    from desktop.ui.api import events

    async with opened_window() as (_store, engine, bridge, window):
        await window.start()
        await bridge.new_session(reuse=window.session_id)
        done = asyncio.Event()
        bridge.engine_event.connect(
            lambda e: isinstance(e, events.TurnDone | events.TurnError) and done.set()
        )
        srv.queue_text(
            "A haiku about tabs:\n\nIndent with one key,\nthe file breathes in even steps —\n"
            "spaces count in vain."
        )
        window.composer.edit.setPlainText("Write a haiku about tabs versus spaces.")
        window.composer.send_button.click()
        await asyncio.wait_for(done.wait(), 10)
        await asyncio.sleep(0.3)
        reply = window.chat_model.row_at(window.chat_model.rowCount() - 1).message
        done.clear()
        srv.queue_text(
            "Another take:\n\nFour spaces, aligned,\na tab means what you want it —\nthe diff will decide."
        )
        window.regenerate(reply.id)
        await asyncio.wait_for(done.wait(), 10)
        await wait_for(
            lambda: window.chat_model.rowCount() == 2 and window.chat_model.row_at(1).versions == (2, 2)
        )
        await asyncio.sleep(0.4)
        screen(outdir / "window-versions.png", window)


async def shoot_card(window, path: Path):  # noqa: ANN001, ANN201
    """Wait for the chat's compaction card, open it at the top of the chat and take the window; the card."""
    model = window.chat_model
    await wait_for(lambda: any(model.row_at(i).kind == "compaction" for i in range(model.rowCount())), 90)
    await asyncio.sleep(0.5)
    card = next(model.row_at(i) for i in range(model.rowCount()) if model.row_at(i).kind == "compaction")
    model.set_card_detail(str(card.key), expanded=True)
    window.toast.hide()
    await asyncio.sleep(0.3)
    window.chat.scrollToTop()
    await asyncio.sleep(0.4)
    screen(path, window)
    return card


async def shoot_steer(outdir: Path, srv: FakeAnthropic) -> None:
    """Steering compaction: a sectioned summary on its card (its cost and saving), Edit summary, New chat from
    summary, the threshold fields in Settings and the cache countdown in the hover card."""
    from PySide6.QtWidgets import QScrollArea

    from desktop.ui.api import events

    async with opened_window() as (store, engine, bridge, window):
        await window.start()
        await bridge.new_session()
        sid = window.session_id
        await engine.set_chat_model(sid, "claude-sonnet-4-6")
        for i in range(10):  # ~90K tokens: more than the verbatim tail of a 1M window
            await store.add_message(
                sid,
                "user",
                [
                    {
                        "type": "text",
                        "text": f"Step {i}: port exporter {i} to the new "
                        "schema. Always keep tabs for indentation. " + "Details. " * 4000,
                    }
                ],
            )
            await store.add_message(
                sid,
                "assistant",
                [
                    {
                        "type": "text",
                        "text": f"Exporter {i} done: we decided on "
                        "JSON lines because the importer streams. " + "Explanation. " * 600,
                    }
                ],
            )
        await bridge.open_session(sid)
        done = asyncio.Event()
        bridge.engine_event.connect(
            lambda e: isinstance(e, events.TurnDone | events.TurnError) and done.set()
        )
        srv.queue_text("Exporter 6 is next; the csv one still fails on quoted newlines.")
        window.composer.edit.setPlainText("What is left?")
        window.composer.send_button.click()
        await asyncio.wait_for(done.wait(), 20)
        await wait_for(lambda: not engine.busy(sid))
        outcome = await engine.compact(sid, "manual")  # what Compact now does; the cache is warm: it is read
        print("compaction:", outcome.message, flush=True)
        card = await shoot_card(window, outdir / "window-summary-sections.png")
        model = window.chat_model

        window.chat.card_action.emit(str(card.key), "edit")
        await asyncio.sleep(0.3)
        editor = window.summary_editor
        assert editor is not None
        editor.move(140, 60)
        heading = "## User instructions and constraints\n"
        editor.editor.setPlainText(
            editor.editor.toPlainText().replace(
                heading, heading + "- Ship exporter 6 on Friday, not before (my note).\n", 1
            )
        )
        await asyncio.sleep(0.4)
        screen(outdir / "window-summary-edit.png", window)
        editor.save_button.click()
        await asyncio.sleep(1.0)

        # The hover card: where compaction starts, the cache countdown, the next turn warm and cold.
        QTest.mouseMove(window.gauge)
        window.gauge.card.anchor_entered()
        await asyncio.sleep(1.6)
        screen(outdir / "window-cache-countdown.png", window)
        window.gauge.card.close_card()
        await asyncio.sleep(0.2)

        card = next(model.row_at(i) for i in range(model.rowCount()) if model.row_at(i).kind == "compaction")
        window.chat.card_action.emit(str(card.key), "handoff")
        await wait_for(lambda: window.session_id != sid, 10)
        await asyncio.sleep(0.6)
        window.toast.hide()
        screen(outdir / "window-handoff.png", window)

        dialog = window.open_settings()
        dialog.move(120, 40)
        dialog.form.threshold.percent.setValue(40)
        dialog.form.threshold.cap.setValue(200_000)
        await asyncio.sleep(0.4)
        dialog.findChild(QScrollArea).ensureWidgetVisible(
            dialog.form.long_ttl
        )  # the threshold's section in view
        await asyncio.sleep(0.2)
        screen(outdir / "window-threshold-setting.png", dialog.window().parentWidget() or window)
        dialog.reject()


async def shoot_refused(outdir: Path, srv: FakeAnthropic) -> None:
    """A summary a small local model wrote, refused: the trimmed card says why and shows what it wrote."""
    from tests.test_summary_degenerate import RECORDED

    reply = next(case["reply"] for case in RECORDED if case["verdict"] == "refused")
    async with opened_window() as (store, engine, bridge, window):
        await window.start()
        await bridge.new_session()
        sid = window.session_id
        for i in range(8):
            await store.add_message(
                sid, "user", [{"type": "text", "text": f"Step {i}: port exporter {i}. " + "Details. " * 3000}]
            )
            await store.add_message(
                sid, "assistant", [{"type": "text", "text": f"Exporter {i} done. " + "Explanation. " * 600}]
            )
        await bridge.open_session(sid)
        srv.queue_summary(reply, reply)  # the summary, then the first section asked for alone
        outcome = await engine.compact(sid, "auto", target=20_000)  # what a full context does on its own
        print("compaction:", outcome.message, flush=True)
        await shoot_card(window, outdir / "window-summary-refused.png")


async def shoot_failed(outdir: Path, srv: FakeAnthropic) -> None:
    """Compact now whose summary is refused: a card in the chat says why, shows what the model wrote, and Retry."""
    from tests.test_summary_degenerate import RECORDED

    reply = next(case["reply"] for case in RECORDED if case["verdict"] == "refused")
    async with opened_window() as (store, _engine, bridge, window):
        await window.start()
        await bridge.new_session()
        sid = window.session_id
        await bridge.engine.library.rename(sid, "Port the exporters")
        for i in range(8):
            await store.add_message(
                sid, "user", [{"type": "text", "text": f"Step {i}: port exporter {i}. " + "Details. " * 3000}]
            )
            await store.add_message(
                sid, "assistant", [{"type": "text", "text": f"Exporter {i} done. " + "Explanation. " * 600}]
            )
        await bridge.open_session(sid)
        srv.queue_summary(reply, reply)  # the summary, then the first section asked for alone
        window.gauge.compact_requested.emit()  # Compact now: its preview, confirmed as it is
        await wait_for(lambda: window.memory.preview is not None and window.memory.preview.isVisible(), 20)
        window.memory.preview.accept()
        model = window.chat_model
        await wait_for(
            lambda: any(model.row_at(i).detail.get("failure") for i in range(model.rowCount())), 60
        )
        await asyncio.sleep(0.6)
        window.chat.scroll_to_bottom()
        await asyncio.sleep(0.4)
        screen(outdir / "window-summary-failed.png", window)


async def shoot_profiles(outdir: Path, srv: FakeAnthropic) -> None:
    """Settings' profiles: the user's own list with Add (presets, Custom), Duplicate and Delete, and Delete's
    question for a profile a chat uses."""
    from desktop.engine.config.profiles import Profile
    from desktop.ui.settings.settings_dialog import ProviderChoice

    async with opened_window() as (store, engine, bridge, window):
        await window.start()
        work = Profile("Work proxy", "https://llm-proxy.example.com/anthropic", "bearer", "claude-sonnet-4-6")
        settings = dataclasses.replace(
            engine.settings,
            profiles=[Profile("Anthropic", "", "x-api-key", engine.settings.model), work],
            profile="Anthropic",
        )
        await bridge.apply_provider_choice(ProviderChoice(settings, "", False))
        chat = await store.create_session("Review the proxy logs", "claude-sonnet-4-6", "Work proxy")
        await store.add_message(chat.id, "user", [{"type": "text", "text": "Why do requests time out?"}])
        await bridge.refresh_sessions()
        dialog = window.open_settings()
        dialog.move(120, 20)
        await asyncio.sleep(0.3)
        dialog.form.add_profile("Custom")
        dialog.form.base_url.setText("https://gateway.example.org/anthropic")
        dialog.form.model.setText("claude-opus-5-5")
        await asyncio.sleep(0.4)
        screen(outdir / "window-settings-profiles.png", dialog)
        dialog.form.profile_box.setCurrentText("Work proxy")
        await asyncio.sleep(0.2)
        box = dialog.form.ask_delete()
        await asyncio.sleep(0.5)
        if box is not None:
            box.move(260, 260)
            await asyncio.sleep(0.3)
        screen(outdir / "window-settings-delete.png", box or dialog)
        if box is not None:
            box.reject()
        dialog.reject()


def main() -> int:
    outdir = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots").resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    os.environ["PRECIS_HOME"] = tempfile.mkdtemp(prefix="precis-shots-")
    from desktop.ui.app import make_app

    app = make_app([])
    app.setQuitOnLastWindowClosed(False)
    from tests.screenshots_keys import shoot_keys
    from tests.screenshots_layout import shoot_layout, shoot_layout_zh
    from tests.screenshots_mcp import shoot_mcp_forms, shoot_prompt_per_chat
    from tests.screenshots_memory import shoot_memory
    from tests.screenshots_projects import shoot_projects
    from tests.screenshots_reading import shoot_reading
    from tests.screenshots_startup import shoot_attachment_checks

    scenes = {
        "tools": shoot_tools,
        "versions": shoot_versions,
        "mcp": shoot_mcp_forms,
        "prompt": shoot_prompt_per_chat,
        "steer": shoot_steer,
        "zh": shoot_chinese,
        "organise": shoot_organise,
        "look": shoot_look,
        "reading": shoot_reading,
        "refused": shoot_refused,
        "chips": shoot_attachment_checks,
        "failed": shoot_failed,
        "profiles": shoot_profiles,
        "keys": shoot_keys,
        "memory": shoot_memory,
        "layout": shoot_layout,
        "layout-zh": shoot_layout_zh,
        "projects": shoot_projects,
    }
    # PRECIS_SHOTS=zh,look (say) takes only those scenes; unset, every scene.
    chosen = [n for n in os.environ.get("PRECIS_SHOTS", "").split(",") if n] or ["welcome", "main", *scenes]
    if "welcome" in chosen:
        asyncio.run(shoot_welcome(outdir), loop_factory=lambda: qasync.QEventLoop(app))
    with FakeAnthropic(window=200_000) as srv:
        os.environ["ANTHROPIC_BASE_URL"] = srv.base_url
        os.environ["ANTHROPIC_API_KEY"] = "test-key"
        if "main" in chosen:
            asyncio.run(shoot(outdir, srv), loop_factory=lambda: qasync.QEventLoop(app))
        for name, scene in scenes.items():
            if name in chosen:
                asyncio.run(scene(outdir, srv), loop_factory=lambda: qasync.QEventLoop(app))
    print(f"screenshots in {outdir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
