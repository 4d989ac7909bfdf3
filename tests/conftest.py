"""Shared fixtures: an isolated PRECIS_HOME, an in-memory keyring, the loopback test server, a real store.

Async tests marked ``qt`` run on a qasync loop (qt-desktop-notes §3.1); others on a plain asyncio loop.
Never use qtbot.waitSignal inside an async test: await a future the signal resolves instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before anything imports Qt
os.environ.setdefault("QT_API", "pyside6")  # qasync must pick PySide6

import keyring  # noqa: E402
import pytest  # noqa: E402
from keyring.backend import KeyringBackend  # noqa: E402

from tests.fakeapi import FakeAnthropic  # noqa: E402

API_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
    "PRECIS_CONTEXT_WINDOW",
)


class MemoryKeyring(KeyringBackend):
    """A real keyring backend that keeps passwords in a dict (never on disk)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.passwords.pop((service, username), None)


# qasync 0.28 leaves a closed loop's timers registered with Qt; if the loop's timer QObject is then garbage
# collected, Qt can deliver a timer event to freed memory (segfault in QTimerInfoList::activateTimers). Keeping
# every loop alive lets a stopped timer kill itself on its next event instead (fixed upstream after 0.28).
_LOOPS: list[asyncio.AbstractEventLoop] = []


def _qasync_loop() -> asyncio.AbstractEventLoop:
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    app.setQuitOnLastWindowClosed(False)  # a test closing its window must not stop the loop
    loop = qasync.QEventLoop(app)
    _LOOPS.append(loop)
    return loop


def _events_in_the_tests_loop() -> None:
    """pytest-qt processes Qt events between a test's phases, when no asyncio loop runs, and the qasync loop's
    due callbacks then ran outside it: a window task woken there failed its next store call with "no running
    event loop". In the app the loop always runs, so the test's loop is marked running while pytest-qt does it."""
    import pytestqt.plugin

    process = pytestqt.plugin._process_events

    def in_the_loop() -> None:
        loop = _LOOPS[-1] if _LOOPS else None
        if loop is None or loop.is_closed() or asyncio._get_running_loop() is not None:
            process()
            return
        asyncio._set_running_loop(loop)
        try:
            process()
        finally:
            asyncio._set_running_loop(None)

    pytestqt.plugin._process_events = in_the_loop


def pytest_asyncio_loop_factories(config, item):  # noqa: ANN001 - pytest hook
    if item.get_closest_marker("qt"):
        return {"qasync": _qasync_loop}
    return {"asyncio": asyncio.new_event_loop}


@pytest.fixture(autouse=True)
def _garbage_collected_between_tests():
    """Cyclic garbage is collected after each test, never in the middle of one. A collection that fell inside a
    paint event freed a hover card left by an earlier test while Qt painted it, and the suite crashed (a
    segfault, at the same test each run); in the app the gauge and its card live as long as the window."""
    gc.disable()
    yield
    gc.enable()
    gc.collect()
    # What survived moves out of the collector's sight: a full collection after each test then reads only what
    # that test made (reading the whole heap — the SDK, Qt, every earlier test's survivors — took 0.2-0.7 s a test,
    # two thirds of the fast tier's time).
    gc.freeze()


@pytest.fixture(autouse=True)
def _windows_left_open_are_stilled():
    """A window a failed test left open stops its timers at that test's end: fired in a later test, with that
    test's loop gone, they reported the first failure again as errors of tests that had passed."""
    yield
    import sys

    if "desktop.ui.window.main_window" not in sys.modules:
        return
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from desktop.ui.window.main_window import MainWindow

    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, MainWindow):
            for timer in widget.findChildren(QTimer):
                timer.stop()


@pytest.fixture(autouse=True)
def precis_home(tmp_path, monkeypatch):
    """Every test gets its own PRECIS_HOME and no inherited provider settings."""
    home = tmp_path / "precis-home"
    monkeypatch.setenv("PRECIS_HOME", str(home))
    for name in API_ENV:
        monkeypatch.delenv(name, raising=False)
    from desktop.engine.config import secrets

    monkeypatch.setattr(secrets, "_session_key", None)
    return home


@pytest.fixture(autouse=True)
def memory_keyring():
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def pytest_configure(config):  # noqa: ANN001 - pytest hook
    config.addinivalue_line(
        "markers",
        "in_process: fake_api is the scripted provider's script, no HTTP (tests/scripted_provider.py)",
    )
    config.addinivalue_line(
        "markers", "loopback: about HTTP, SSE or the SDK: the loopback server even in an in_process module"
    )
    config.addinivalue_line(
        "markers",
        "slow: outside the fast tier (a window, a subprocess, a long scenario); "
        "`packaging/dev.sh test -m 'not slow'` runs the rest",
    )
    _events_in_the_tests_loop()


# The tiers: the whole suite is what CI runs; the fast tier (-m "not slow") is what a newcomer runs first. A test is
# slow when it builds the window (a Qt fixture), runs the CLI or a benchmark in a subprocess, or lives in a file
# that took longest in the last measured run (docs/architecture.md, "The tests").
WINDOW_FIXTURES = frozenset({"qtbot", "qapp", "window", "view", "run_cli"})
SLOW_FILES = frozenset(
    {  # each holds tests of 5 s or more (processes killed at every point, a wheel built, CLI runs)
        "test_bad_inputs.py",
        "test_install.py",
        "test_hostile_inputs.py",
        "test_importer.py",
        "test_tools_safety.py",
        "test_compaction_property.py",
        "test_compaction_cuts_property.py",
        "test_bill.py",
        "test_tools_mcp.py",
        "test_profile_compaction.py",
        "test_store_faults.py",
        "test_cli.py",
        "test_session_cache.py",
        "test_continue.py",
        "test_message_pins.py",
        "test_corpus.py",
        "test_tools_cli.py",
        "test_tools_bounds.py",
        "test_recall.py",
        "test_versions.py",
        "test_bench_scale.py",
        "test_settings_validation.py",
        "test_startup.py",
        "test_tools_mcp_http.py",
        "test_shutdown.py",
        "test_failing_summariser.py",
        "test_compaction_hooks.py",
        "test_replay_smoke.py",
        "test_needles.py",
        "test_degraded_summaries.py",
        "test_hostile_server.py",
        "test_hostile_local.py",
        "test_cli_pty.py",
        "test_window_defects_x11_run.py",
    }
)


def pytest_collection_modifyitems(config, items):  # noqa: ANN001 - pytest hook
    for item in items:
        if (
            item.get_closest_marker("qt")
            or WINDOW_FIXTURES & set(getattr(item, "fixturenames", ()))
            or (item.path.name in SLOW_FILES)
        ):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def fake_api(request, monkeypatch):
    """The loopback Anthropic-compatible server, with the environment pointing at it; for a test marked
    ``in_process``, the same script and records answered in-process (engines built on it get its provider)."""
    if request.node.get_closest_marker("in_process") and not request.node.get_closest_marker("loopback"):
        from tests.scripted_provider import ScriptedAnthropic, active

        with active(ScriptedAnthropic(window=200_000)) as script:
            monkeypatch.setenv("ANTHROPIC_BASE_URL", script.base_url)
            monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
            yield script
        return
    with FakeAnthropic(window=200_000) as srv:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        yield srv


@contextlib.asynccontextmanager
async def _open_engine(settings_changes: dict | None = None, credentials=None):  # noqa: ANN001
    """A real engine over a real store in this test's PRECIS_HOME (the app's own wiring), recording every
    event it emits."""
    from desktop.engine.config.secrets import Credentials
    from desktop.runtime import open_runtime

    def adjust(settings) -> None:  # noqa: ANN001
        for name, value in (settings_changes or {}).items():
            setattr(settings, name, value)

    creds = Credentials(api_key="test-key", source="env") if credentials is None else credentials or None
    async with open_runtime(credentials=creds, adjust=adjust) as runtime:
        engine = runtime.engine
        from tests import scripted_provider

        scripted_provider.attach(
            engine
        )  # a test marked in_process: no provider of this engine opens a socket
        engine.events = []  # type: ignore[attr-defined]
        engine.subscribe(engine.events.append)  # type: ignore[attr-defined]
        yield engine


@pytest.fixture
async def engine(fake_api):
    """The engine against the loopback server (default settings)."""
    async with _open_engine() as eng:
        yield eng


@pytest.fixture
async def small_engine(fake_api, monkeypatch):
    """An engine whose model has an 8,000-token window, like the server's (compaction happens quickly)."""
    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "8000")
    fake_api.window = 8_000
    async with _open_engine({"max_output_tokens": 1024}) as eng:
        yield eng


_WINDOW_ENGINES: dict[int, object] = {}
TASK_GRACE = 20.0  # seconds a cancelled task may take to end (shielded writes finish first)


async def _no_task_left_behind() -> None:
    """What the window started ends with it: a task still running once the bridge closed is cancelled here,
    while the store is open, and one that ignores its cancel fails the test by name (the event loop's close
    would otherwise wait for it for ever)."""
    me = asyncio.current_task()
    left = [t for t in asyncio.all_tasks() if t is not me and not t.done()]
    for task in left:
        task.cancel()
    if left:
        _done, stuck = await asyncio.wait(left, timeout=TASK_GRACE)
        assert not stuck, f"tasks that ignored their cancel: {[t.get_coro() for t in stuck]}"


def engine_of(window):  # noqa: ANN001, ANN201
    """The engine behind a test window (widgets never reach it; tests check what it stored)."""
    return _WINDOW_ENGINES[id(window)]


@pytest.fixture
async def window(qtbot, fake_api):
    """The real main window over a real engine and store, on the qasync loop (mark the test ``qt``)."""
    from desktop.ui.bridge import Bridge
    from desktop.ui.window.main_window import MainWindow

    # No credentials given: the window reads the key from the environment, as the app does.
    async with _open_engine(credentials=False) as engine:
        bridge = Bridge(engine)
        win = MainWindow(bridge, engine.paths.config_dir / "window.ini")
        _WINDOW_ENGINES[id(win)] = engine
        win.show()
        await win.start()
        yield win
        _WINDOW_ENGINES.pop(id(win), None)
        # Stop the engine side first so no late signal reaches a window that is being destroyed.
        await bridge.close()
        await _no_task_left_behind()
    win.close()
    win.deleteLater()
    # What the engine's close or the window's own close started (a provider's close, a late timer's task) ends
    # here too: left to the loop's close, a task that ignores its cancel hangs the run instead of failing by name.
    await _no_task_left_behind()


@pytest.fixture
def view(qtbot):  # noqa: ANN001, ANN201
    """A shown chat view over an empty model, links kept in the app (the chat-view tests' common start)."""
    from desktop.ui.transcript.chat_model import ChatModel
    from desktop.ui.transcript.chat_view import ChatView

    v = ChatView()
    v.open_links_externally = False
    v.setModel(ChatModel(v))
    v.resize(640, 480)
    qtbot.addWidget(v)
    v.show()
    qtbot.waitExposed(v)
    return v
