"""Start-up and shutdown of the window on the qasync loop."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from typing import TYPE_CHECKING

# qasync picks the first Qt binding it finds unless told.
os.environ.setdefault("QT_API", "pyside6")

from PySide6.QtCore import QSettings, QTimer  # noqa: E402
from PySide6.QtGui import QIcon  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from desktop.ui import gc_pause, pyside_scan  # noqa: E402

pyside_scan.install()  # before qasync and the app's own modules load: PySide6 looks at each of them

import qasync  # noqa: E402

from desktop import APP_ID, APP_NAME  # noqa: E402
from desktop.resources import icon_files, icon_path, stylesheet  # noqa: E402
from desktop.resources import root as assets_root  # noqa: E402
from desktop.runtime import Runtime, StorageError, open_runtime, toolbox_factory  # noqa: E402

MATH_WARM_DELAY_MS = 1500

if TYPE_CHECKING:
    from desktop.ui.bridge import Bridge
    from desktop.ui.window.main_window import MainWindow


async def amain(app: QApplication, *, quit_after: float | None = None) -> int:
    from desktop.engine.config.settings import Paths, Settings
    from desktop.ui.look.wording import word_error

    # Before anything can fail or any widget is built: every sentence and widget is worded once.
    apply_language(app, Settings.load(Paths.resolve()).language)
    try:
        async with open_runtime(toolbox=toolbox_factory()) as runtime:
            return await _run_window(app, runtime, quit_after)
    except StorageError as exc:  # a database or folder that cannot be used: one sentence, nothing touched
        _tell_failure(word_error(exc))
        return 1


def _tell_failure(text: str) -> None:
    print(f"precis: error: {text}", file=sys.stderr, flush=True)
    if QApplication.platformName() not in ("offscreen", "minimal"):  # someone is there to read a dialog
        from PySide6.QtWidgets import QMessageBox

        QMessageBox.critical(None, APP_NAME, text)


async def _run_window(app: QApplication, runtime: Runtime, quit_after: float | None) -> int:
    from desktop.ui.bridge import Bridge
    from desktop.ui.look.theme import apply_theme
    from desktop.ui.transcript import math_render
    from desktop.ui.window.main_window import MainWindow
    from desktop.ui.window.window_look import THEME_KEY

    bridge = Bridge(runtime.engine, runtime.toolbox)
    # The palette the user chose (system / light / dark), put on before the widgets exist: on a built window it
    # re-polishes every widget; the window's own apply below then finds it in place.
    window_ini = runtime.paths.config_dir / "window.ini"
    apply_theme(app, str(QSettings(str(window_ini), QSettings.Format.IniFormat).value(THEME_KEY, "system")))
    window = MainWindow(bridge, window_ini)
    window.look.apply_saved_theme()

    app.setQuitOnLastWindowClosed(False)
    closed = asyncio.Event()
    app.lastWindowClosed.connect(closed.set)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])):
        with contextlib.suppress(NotImplementedError):  # Windows has no loop signal handlers
            loop.add_signal_handler(sig, window.close)
    window.show()
    await window.start()
    gc_pause.resume()  # the collector runs again, past what the start made
    if startup := os.environ.get("PRECIS_STARTUP_REPORT"):  # install checks: what the window really loaded
        from desktop.ui import startup_report

        shipped = startup_report.Shipped(assets_root(), icon_path(), stylesheet())
        startup_report.write(startup, app, window, shipped)
    # After the first paint, once the first chat has opened: formulas' renderer loads in a worker thread (a
    # formula shows its source until then; the first formula starts it sooner). Not at once: the import holds the
    # interpreter for half a second, which would slow the start-up chat's opening or the user's first click.
    QTimer.singleShot(MATH_WARM_DELAY_MS, math_render.warm_in_background)
    if quit_after is not None:
        loop.call_later(quit_after, window.close)
    if report := os.environ.get("PRECIS_BENCH_REPORT"):  # tests/bench/bench_window.py: write timings, quit
        await _bench_report(report, bridge, window)
        window.close()
    await closed.wait()  # the loop still runs here, so async cleanup is safe
    await bridge.close()
    return 0


async def _bench_report(report: str, bridge: Bridge, window: MainWindow) -> None:
    """Time the first paint and, with PRECIS_BENCH_OPEN, opening that session until its gauge is measured."""
    import json
    import time

    from desktop.ui.api import events

    window.repaint()  # the first paint, done now rather than on the next loop turn
    data: dict[str, float | int] = {"shown_at": time.time()}
    if open_id := os.environ.get("PRECIS_BENCH_OPEN"):
        sid = int(open_id)
        measured = asyncio.get_running_loop().create_future()

        def on_event(event: events.EngineEvent) -> None:
            if isinstance(event, events.ContextChanged) and event.session_id == sid and not measured.done():
                window.gauge.repaint()
                measured.set_result(time.time())

        bridge.session_opened.connect(
            lambda *_: (window.chat.viewport().repaint(), data.setdefault("painted_at", time.time()))
        )
        bridge.engine_event.connect(on_event)
        data["open_at"] = time.time()
        await bridge.open_session(sid)
        data["settled_at"] = await measured  # the gauge shows its figure: the session is really open
        data["rows"] = window.chat_model.rowCount()
    from desktop.engine.config.files import write_private

    write_private(report, json.dumps(data))


def apply_language(app: QApplication, setting: str) -> str:
    """Install the translators for the Settings choice ("" follows the system); returns the language shown."""
    from desktop import i18n
    from desktop.i18n import catalog
    from desktop.ui.look import translation

    language = i18n.choose(setting, translation.system_language())
    translation.install(app, language, i18n.qm_file(language), catalog.load(language).translate)
    return language


def app_icon() -> QIcon:
    """The PNGs at their own sizes (sharp at 16 and 32 px, and shown without the SVG plugin) plus the SVG."""
    icon = QIcon()
    for path in icon_files().values():
        icon.addFile(str(path))
    return icon


def make_app(argv: list[str] | None = None) -> QApplication:
    existing = QApplication.instance()
    # Fusion follows the system colour scheme (light/dark) and the palette everywhere. Chosen by argument: the
    # QStyle setStyle() hands back would build all of QStyle's enums in Python (~10 ms) before the first paint.
    app = (
        existing
        if isinstance(existing, QApplication)
        else QApplication([*(argv or sys.argv), "-style", "Fusion"])
    )
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setOrganizationName("Precis")
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())
    if app is existing:
        app.setStyle("Fusion")
    app.setStyleSheet(stylesheet())
    return app


def run_app() -> int:
    if (
        not os.environ.get("DISPLAY")
        and not os.environ.get("WAYLAND_DISPLAY")
        and sys.platform.startswith("linux")
    ):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        print("precis: no display found; running offscreen", file=sys.stderr)
    app = make_app()
    quit_after = os.environ.get("PRECIS_QUIT_AFTER")  # smoke tests and the start-up benchmark
    return asyncio.run(
        amain(app, quit_after=float(quit_after) if quit_after else None), loop_factory=qasync.QEventLoop
    )
