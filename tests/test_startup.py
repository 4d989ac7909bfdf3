"""Start-up: the window shows itself without the Anthropic SDK or the MCP client stack (they cost ~110 MB and
most of a cold start), and each loads when first needed, in a worker thread, so the event loop (the UI thread in
the window) never stalls on the import."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_faults import env_for, seed
from tests.test_tools_mcp import server_config, write_mcp

ROOT = Path(__file__).resolve().parent.parent
HEAVY = {"anthropic", "mcp", "anyio", "starlette", "uvicorn", "sse_starlette", "matplotlib"}


def test_the_window_paints_its_first_chat_without_the_sdk_or_the_mcp_stack(tmp_path, fake_api):
    home = tmp_path / "home"
    seed(home / "data" / "precis.db", sessions=1, exchanges=1)  # a 2-message chat, opened at start
    report = tmp_path / "startup.json"
    env = env_for(
        home,
        fake_api.base_url,
        QT_QPA_PLATFORM="offscreen",
        PRECIS_QUIT_AFTER="0",
        PRECIS_STARTUP_REPORT=str(report),
    )
    gui = Path(sys.executable).with_name("precis-gui")  # the entry point a user starts
    res = subprocess.run([str(gui)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    loaded = set(json.loads(report.read_text("utf-8"))["packages"])
    assert {"PySide6", "desktop", "peewee", "markdown_it"} <= loaded  # the list is what the window loaded
    assert loaded & HEAVY == set()
    assert not fake_api.message_requests()


# What a first start (an empty home, the key in the environment) needs none of before its first paint: the
# keyring stack (keyring, secretstorage, cryptography, jeepney: asked only when no key is in the environment),
# Pillow (images in a history), the Markdown parser and Pygments (nothing to render yet).
FIRST_START_WAITS = HEAVY | {
    "keyring",
    "secretstorage",
    "cryptography",
    "jeepney",
    "PIL",
    "markdown_it",
    "mdit_py_plugins",
    "pygments",
    # the .ts parser (a language other than English only), peewee's extensions (one
    # field class was all the schema used; the migration steps load playhouse.migrate)
    "xml",
    "playhouse",
}


# What the window needs of its own code only after its first paint (issue 22: start-up at most 3x a bare
# QApplication): the compaction policy and its building blocks (first needed by a chat's measurement or request),
# steering, the Claude Code importer, export, profile edits, and the dialogs (settings, search, MCP servers,
# instructions, summary editor, compaction preview), each imported when first used.
LATER_MODULES = {
    "desktop.engine.compaction.compactor",
    "desktop.engine.compaction.summary_maker",
    "desktop.engine.compaction.steering",
    "desktop.engine.compaction.limits",
    "desktop.engine.compaction.cost_model",
    "desktop.engine.compaction.planner",
    "desktop.engine.compaction.policy",
    "desktop.engine.compaction.executor",
    "desktop.engine.compaction.summary_prompt",
    "desktop.engine.compaction.request_shape",
    "desktop.engine.compaction.microcompact",
    "desktop.engine.compaction.snip",
    "desktop.engine.compaction.decisions",
    "desktop.engine.compaction.ledger",
    "desktop.engine.compaction.sections",
    "desktop.engine.compaction.salvage",
    "desktop.engine.compaction.cache_breakpoints",
    "desktop.engine.compaction.tail",
    "desktop.engine.history.importer",
    "desktop.engine.history.claude_code",
    "desktop.engine.history.export",
    "desktop.engine.config.profile_edits",
    "desktop.ui.settings.settings_dialog",
    "desktop.ui.settings.threshold_settings",
    "desktop.ui.settings.language_box",
    "desktop.ui.sidebar.search_dialog",
    "desktop.ui.settings.mcp_page",
    "desktop.ui.settings.mcp_form",
    "desktop.ui.settings.instructions_dialog",
    "desktop.ui.transcript.summary_editor",
    "desktop.ui.transcript.compact_preview",
    # the gauge's detail card (a third of the window's widgets), built when first hovered, clicked or opened
    "desktop.ui.gauge.hover_card",
    "desktop.ui.gauge.breakdown_bar",
    "desktop.ui.gauge.bill_rows",
    "desktop.ui.gauge.cache_rows",
    "desktop.ui.tools.permission_prompt",  # built with the first permission request
    "desktop.ui.transcript.find_bar",  # built when first opened (Ctrl+F)
    "desktop.ui.transcript.pins_dialog",
    "desktop.ui.window.shortcuts_dialog",  # dialogs' classes, imported where they are opened
    # the built-in tools, with a chat's first tool definitions or call (the toolbox itself is made at start)
    "desktop.tools.builtin",
    "desktop.tools.file_tools",
    "desktop.tools.run_command",
    "desktop.tools.sandbox",
    "desktop.tools.confined",
    "desktop.tools.workspace",
}


def _first_start_report(tmp_path, fake_api) -> dict:
    """What a first start of ``python -m desktop`` reports of itself at its first paint (PRECIS_STARTUP_REPORT)."""
    report = tmp_path / "startup.json"
    env = env_for(
        tmp_path / "home",
        fake_api.base_url,
        QT_QPA_PLATFORM="offscreen",
        PRECIS_QUIT_AFTER="0",
        PRECIS_STARTUP_REPORT=str(report),
    )
    res = subprocess.run(
        [sys.executable, "-m", "desktop"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    return json.loads(report.read_text("utf-8"))


def test_a_first_start_paints_before_loading_what_it_needs_only_later(tmp_path, fake_api):
    """Third-party packages (the keyring stack, images, markdown) and the app's own later modules."""
    started = _first_start_report(tmp_path, fake_api)
    packages, modules = set(started["packages"]), set(started["desktop_modules"])
    assert {"PySide6", "desktop", "peewee"} <= packages  # the lists are what the window loaded
    assert {
        "desktop.engine.turn.chat",
        "desktop.ui.window.main_window",
        "desktop.engine.compaction",
    } <= modules
    assert {
        "desktop.ui.transcript.memory_ui",
        "desktop.ui.window.shortcuts",
    } <= modules  # the dialogs' openers are there
    assert packages & FIRST_START_WAITS == set()
    assert sorted(modules & LATER_MODULES) == []
    assert (
        started["dialog_classes"] == []
    )  # on main: PinsDialog and ShortcutsDialog, defined with their openers
    # PySide6 classes the window never uses: on main the chat view's first viewport() call made every QWidget
    # subclass of QtWidgets (75, with their enums) to wrap the viewport Qt had made.
    assert {"QtWidgets.QWizard", "QtWidgets.QMdiArea", "QtWidgets.QCalendarWidget"} & set(
        started["qt_classes"]
    ) == set()
    assert "QtWidgets.QListView" in started["qt_classes"]  # the list is what the window made


def test_a_first_start_is_in_fusion_without_making_qstyle_in_python(tmp_path, fake_api):
    """QStyle's class brings ~15 enums with ~600 members (~10 ms): on main setStyle("Fusion") made it (the style
    it returns is wrapped) and so did the chat rows' focus check (option.state is a QStyle flag)."""
    started = _first_start_report(tmp_path, fake_api)
    assert started["styles"] == ["QStyleSheetStyle", "QFusionStyle"]
    assert "QtWidgets.QStyle" not in started["qt_classes"]
    assert "QtWidgets.QListView" in started["qt_classes"]  # the list is what the window made


def test_the_cyclic_collector_waits_for_the_first_paint_then_skips_what_the_start_made(tmp_path, fake_api):
    """On main it ran ~30 times before the first paint (~25 ms) over objects that live as long as the app."""
    gc = _first_start_report(tmp_path, fake_api)["gc"]
    assert gc["enabled"]  # on again once the first chat has painted
    assert gc["collected_while_off"] == 0  # from the entry point to the first paint
    assert (
        gc["frozen"] > 50_000
    )  # the start's modules, classes and functions (~74,000), out of later collections


def test_the_records_a_first_start_defines_are_structs_not_dataclasses(tmp_path, fake_api):
    """A dataclass compiles its generated methods when it is defined, ~0.7 ms a class (a frozen one more): on main
    103 of them were 75 ms of a 450 ms start before the window's first paint. A msgspec Struct is defined in
    ~0.02 ms. Two stay dataclasses, each for a field left out of equality: Settings (what loading found wrong,
    the environment's overrides) and the display's ToolCall (its whole input, out of equality and hash)."""
    import dataclasses
    import importlib

    import msgspec

    records, kept = 0, []
    for name in _first_start_report(tmp_path, fake_api)["desktop_modules"]:
        for value in list(vars(importlib.import_module(name)).values()):
            if not isinstance(value, type) or value.__module__ != name:
                continue
            if dataclasses.is_dataclass(value):
                kept.append(f"{name}.{value.__qualname__}")
            elif issubclass(value, msgspec.Struct):
                records += 1
    assert records > 50  # the list is what the window loaded
    assert sorted(kept) == [
        "desktop.engine.config.settings.Settings",
        "desktop.engine.history.display.ToolCall",
    ]


def test_the_sdk_and_the_mcp_client_load_when_first_needed_off_the_loop(tmp_path, fake_api):
    home = tmp_path / "home"
    write_mcp(home, {"calc": server_config()})
    fake_api.queue_text("hello back")
    res = subprocess.run(
        [sys.executable, "-m", "tests.lazy_probe"],
        env=env_for(home, fake_api.base_url),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    probe = json.loads(res.stdout.strip().splitlines()[-1])
    assert probe["at_open"] == {}  # the runtime (store, engine, toolbox) opens without either
    assert probe["states"] == {"calc": "ready"} and probe["reply"] == "hello back"
    assert set(probe["first"]) == {"anthropic", "mcp"}
    assert "MainThread" not in probe["first"].values(), probe  # imported in a worker thread


def test_the_first_mcp_server_and_the_first_request_can_load_at_once():
    """Two threads importing the SDK's modules at once each hold a module the other waits for, and Python hands
    one a partly initialised module: the loads take turns."""
    code = (
        "import asyncio\nfrom desktop.engine import lazy_imports as L\n"
        "async def both():\n    await asyncio.gather(L.load(L.MCP), L.load(L.SDK))\n"
        "asyncio.run(both())\nimport anthropic, mcp\nprint(anthropic.AsyncAnthropic.__name__, mcp.Client.__name__)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["AsyncAnthropic", "Client"]


async def test_opening_chats_loads_no_sdk_until_the_user_types(window, fake_api, qtbot):
    from tests.test_window import until

    first = window.session_id
    window.bridge.spawn(window.bridge.new_session())
    await until(lambda: window.session_id not in (None, first))
    await window.bridge.open_session(first)
    window._measure_draft()  # what the draft timer does after an open: measure the (empty) draft
    await asyncio.sleep(0)  # that measure has started
    assert window.bridge._sdk_warm is None  # reading chats needs no SDK
    window.composer.edit.setPlainText("a question is coming")
    window._measure_draft()  # a pause in typing
    await until(lambda: window.bridge._sdk_warm is not None)  # typing: it loads, off the loop
    await until(lambda: window.bridge._sdk_warm.done())
    assert window.bridge._sdk_warm.exception() is None


def test_pyside_learns_which_modules_use_it_without_reading_their_source_through_linecache(tmp_path):
    """PySide6 asks, for every module imported after it, whether its source names PySide6 (its ``__feature__``
    switches apply to those only). It read each module with inspect.getsource, which parses the file into
    linecache and keeps it there: ~300 modules before the first paint. The window answers from the file's bytes:
    the same answers, nothing kept."""
    (tmp_path / "names_qt.py").write_text("from PySide6.QtCore import QObject\n", "utf-8")
    (tmp_path / "plain.py").write_text("VALUE = 1\n", "utf-8")
    code = (
        "import json, linecache, sys\nimport desktop.ui.app\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\nimport names_qt, plain\n"
        "table = sys.modules['shibokensupport.feature'].pyside_feature_dict\n"
        "print(json.dumps({'cached': sorted(f for f in linecache.cache if f.endswith(('names_qt.py', 'plain.py'))),"
        " 'names_qt': table.get('names_qt'), 'plain': table.get('plain')}))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    seen = json.loads(res.stdout.strip().splitlines()[-1])
    assert (seen["names_qt"], seen["plain"]) == (0, -1)  # 0: uses PySide6 (features apply); -1: ignored
    assert seen["cached"] == []


@pytest.fixture
def sdk_not_loaded(monkeypatch):
    """As in a fresh window process: nothing loaded through lazy_imports yet (an earlier test may have)."""
    from desktop.engine import lazy_imports

    monkeypatch.setattr(lazy_imports, "_done", set())


def window_questions(fake_api) -> list[str]:
    return [r.path for r in fake_api.requests if r.path.startswith("/v1/models/")]


async def test_reading_chats_asks_the_provider_for_no_window_until_the_sdk_is_loaded(
    sdk_not_loaded, window, fake_api, qtbot
):
    """The gauge of a chat opened while the SDK is not loaded shows the window the catalog (or what the provider
    reported in an earlier run) gives: asking the provider would import the SDK (seconds of a cold start, in a
    thread that takes the interpreter from the opening chats). Typing loads the SDK; the question follows."""
    from desktop.engine.events import ContextChanged
    from tests.test_window import until

    sid = window.session_id
    measured: list[ContextChanged] = []
    window.bridge.engine_event.connect(
        lambda e: measured.append(e) if isinstance(e, ContextChanged) and e.session_id == sid else None
    )
    await window.bridge.open_session(sid)
    await until(lambda: bool(measured))
    await asyncio.gather(*window.bridge._tasks)  # the start's measurement too: each gauge is done
    assert measured[-1].snapshot.window  # the gauge has its figure
    assert window_questions(fake_api) == []
    window.composer.edit.setPlainText("a question is coming")
    window._measure_draft()  # a pause in typing: the SDK loads, off the loop
    await until(lambda: window.bridge._sdk_warm is not None and window.bridge._sdk_warm.done())
    await until(lambda: bool(window_questions(fake_api)))  # now the provider is asked, once
    assert window_questions(fake_api) == [f"/v1/models/{measured[-1].snapshot.model}"]


async def test_measuring_a_draft_before_the_chats_first_figure_asks_the_provider_nothing(engine, fake_api):
    """The draft timer can measure a chat just opened before the opening's own measurement is done: that path
    reads the chat too, so it asks the provider for no window either (it loaded the SDK during a 50k open)."""
    sid = await engine.new_session()
    snapshot = await engine.publish_draft(sid, "a draft")
    assert snapshot.window  # the catalog's figure
    assert window_questions(fake_api) == []


def _schema(db) -> dict[str, object]:
    """What a database's schema is: every table, index and trigger with its SQL, and each table's columns."""
    entries = sorted(
        db.execute_sql("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall(),
        key=lambda row: (row[0], row[1]),
    )
    columns = {
        name: db.execute_sql(f'PRAGMA table_xinfo("{name}")').fetchall()
        for kind, name, _, _ in entries
        if kind == "table"
    }
    return {"entries": entries, "columns": columns}


def test_a_new_database_has_the_schema_of_one_migrated_from_the_oldest_version(tmp_path):
    import peewee as pw

    from desktop.store import Store, migrations
    from desktop.store.schema import build_models

    old = tmp_path / "v1.db"
    db = pw.SqliteDatabase(str(old))
    with db.atomic():  # a database as schema v1 wrote it
        migrations._v1(db, build_models(db))
        db.execute_sql("PRAGMA user_version = 1")
    db.close()
    migrated, fresh = Store.open_sync(old), Store.open_sync(tmp_path / "new.db")
    try:
        assert migrations.schema_version(fresh.repo.db) == migrations.CURRENT_VERSION
        assert migrations.schema_version(migrated.repo.db) == migrations.CURRENT_VERSION
        assert _schema(fresh.repo.db) == _schema(migrated.repo.db)
        assert len(_schema(fresh.repo.db)["columns"]) > 10  # the comparison saw the tables
    finally:
        migrated.close_sync()
        fresh.close_sync()


@pytest.fixture
def steps_run(monkeypatch) -> list[int]:
    """Which migration steps run (each still does its work)."""
    from desktop.store import migrations

    ran: list[int] = []
    for number, step in list(migrations.STEPS.items()):

        def recorded(db, models, step=step, number=number):
            ran.append(number)
            step(db, models)

        monkeypatch.setitem(migrations.STEPS, number, recorded)
    return ran


def test_a_first_start_makes_its_database_at_the_current_schema_without_migrating(tmp_path, steps_run):
    """A new database was made by running every migration step since v1 (twelve transactions, the migrator's
    imports) on a first start; it is made at the current schema at once. Old databases still migrate."""
    from desktop.store import Store, migrations

    fresh = Store.open_sync(tmp_path / "new.db")
    fresh.close_sync()
    assert steps_run == []
    readonly = Store.open_sync(tmp_path / "missing.db", readonly=True)  # a read on no database: one in memory
    readonly.close_sync()
    assert steps_run == []
    import peewee as pw

    from desktop.store.schema import build_models

    db = pw.SqliteDatabase(str(tmp_path / "v10.db"))
    migrations.upgrade(db, build_models(db), target=10)
    db.close()
    steps_run.clear()
    Store.open_sync(tmp_path / "v10.db").close_sync()
    assert steps_run == list(range(11, migrations.CURRENT_VERSION + 1))  # 11, 12, ... up to the current one


# Modules whose regular expressions are compiled on first use (desktop.engine.lazy_re), not at import: most are
# needed only by a reply, an error, a document or a summary.
LAZY_PATTERNS = (
    "desktop.engine.metering.tokens",
    "desktop.engine.providers.overflow",
    "desktop.engine.redact",
    "desktop.engine.compaction.summary_prompt",
    "desktop.engine.compaction.sections",
)


def test_importing_the_window_and_the_summary_modules_compiles_none_of_their_patterns():
    code = (
        "import json, re, sys\ncompiled = set()\noriginal = re.compile\n"
        "def recording(pattern, flags=0):\n"
        "    compiled.add(sys._getframe(1).f_globals.get('__name__'))\n"
        "    return original(pattern, flags)\n"
        "re.compile = recording\n"
        "import desktop.ui.app, desktop.ui.window.main_window, desktop.ui.bridge\n"
        f"for name in {LAZY_PATTERNS!r}:\n    __import__(name)\n"
        f"print(json.dumps({{'loaded': [n for n in {LAZY_PATTERNS!r} if n in sys.modules],"
        " 'compiled': sorted(n for n in compiled if n)}))\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert res.returncode == 0, res.stderr
    seen = json.loads(res.stdout.strip().splitlines()[-1])
    assert seen["loaded"] == list(LAZY_PATTERNS)
    assert "desktop.engine.config.catalog" in seen["compiled"]  # the recorder saw the app's own compiles
    assert sorted(set(seen["compiled"]) & set(LAZY_PATTERNS)) == []


# What a chat's first measurement (the gauge) does not run: the summary's building blocks (the salvage of a
# refused summary, the artifact ledger and its decisions, the user's steering), which the compaction policy names
# at its top and runs only with a summary.
SUMMARY_ONLY = (
    "desktop.engine.compaction.steering",
    "desktop.engine.compaction.salvage",
    "desktop.engine.compaction.ledger",
    "desktop.engine.compaction.decisions",
)


def test_a_chats_first_measurement_runs_none_of_the_summary_modules(tmp_path, fake_api):
    code = (
        "import asyncio, json, sys, types\nfrom desktop.runtime import open_runtime\n"
        "def ran(name):  # imported and run (a module deferred with importlib's LazyLoader has not run yet)\n"
        "    return type(sys.modules.get(name)) is types.ModuleType\n"
        "async def main():\n"
        "    async with open_runtime() as runtime:\n"
        "        sid = await runtime.engine.new_session()\n"
        "        snapshot = await runtime.engine.publish_context(sid, ask_window=False)\n"
        f"        print(json.dumps({{'window': snapshot.window, 'policy': ran('desktop.engine.compaction.compactor'),"
        f" 'ran': [n for n in {SUMMARY_ONLY!r} if ran(n)]}}))\n"
        "asyncio.run(main())\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        env=env_for(tmp_path / "home", fake_api.base_url),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    seen = json.loads(res.stdout.strip().splitlines()[-1])
    assert seen["window"] and seen["policy"]  # measured, by the compaction policy
    assert seen["ran"] == []


async def test_the_gauges_detail_card_is_built_when_first_needed_and_shows_the_latest_figure(window, qtbot):
    """The card holds 51 of the window's ~150 widgets and is hidden until a hover, a click or the keyboard opens
    it: the window's first paint builds none of it."""
    from desktop.engine.events import ContextChanged
    from desktop.ui.gauge.hover_card import HoverCard
    from tests.test_window import until

    sid = window.session_id
    measured: list[ContextChanged] = []
    window.bridge.engine_event.connect(
        lambda e: measured.append(e) if isinstance(e, ContextChanged) and e.session_id == sid else None
    )
    await window.bridge.open_session(sid)
    await until(lambda: bool(measured) and window.gauge.snapshot() is not None)
    assert window.gauge.findChildren(HoverCard) == []  # measured and painted, no card yet
    card = window.gauge.card  # what a hover or Enter reaches
    assert window.gauge.findChildren(HoverCard) == [card]
    assert card.value("used").text() and card.value("model").text() == window.gauge.snapshot().model


# --- the chat list and the first chat read no chat whole (issue 37 item 4) ----------------------------------------


def _kept_counts_match(repo) -> None:  # noqa: ANN001
    """Each chat's kept count is the rows on its active path, and the list's newest usage the newest one there."""
    for info in repo.list_sessions():
        real = repo.db.execute_sql(
            "SELECT COUNT(*) FROM messages WHERE session_id = ? AND off_path IS NULL", (info.id,)
        ).fetchone()[0]
        newest = [m.usage for m in repo.messages(info.id) if m.usage is not None]
        assert (info.id, info.message_count) == (info.id, real)
        assert info.last_usage == (newest[-1] if newest else None)
        assert repo.get_session(info.id) == info


def test_the_kept_message_count_follows_every_write(tmp_path):
    """The list's count is kept by the schema (triggers on messages), not counted at each read: right after each
    way rows are written, deleted, or leave and join the active path."""
    from desktop.engine.history.storage import ImportPlan
    from desktop.engine.types import Usage
    from desktop.store.repo import Repo

    repo = Repo(tmp_path / "x.db")
    try:
        a = repo.create_session("a").id
        b = repo.create_session("b").id
        assert [s.message_count for s in repo.list_sessions()] == [0, 0]
        user = repo.add_user_message(a, [{"type": "text", "text": "hi"}], title="hello")
        reply = repo.add_message(a, "assistant", [], status="streaming", model="m")
        repo.update_message(
            reply.id, content=[{"type": "text", "text": "yo"}], status="complete", usage=Usage(1, 2)
        )
        repo.add_messages(
            b, [{"role": "user", "content": [{"type": "text", "text": str(i)}]} for i in range(7)]
        )
        _kept_counts_match(repo)
        second = repo.add_message(a, "user", [{"type": "text", "text": "again"}])
        repo.add_message(a, "assistant", [{"type": "text", "text": "ok"}], usage=Usage(3, 4), model="m")
        fork = repo.branch_at(a, second.id)  # an edit: the old version leaves the path
        _kept_counts_match(repo)
        repo.add_message(a, "user", [{"type": "text", "text": "edited"}])
        _kept_counts_match(repo)
        assert repo.switch_version(a, second.id + 2, -1)  # back to the first version
        _kept_counts_match(repo)
        repo.delete_message(user.id)
        last = repo.messages(b)[-3].id
        repo.truncate_from(b, last)
        _kept_counts_match(repo)
        assert [s.message_count for s in repo.list_sessions("b")] == [4]
        repo.clear_history(a)
        _kept_counts_match(repo)
        rows = [{"role": "user", "content": [{"type": "text", "text": "q"}]}] * 3
        session, _ = repo.import_session(ImportPlan("imported", "m", rows))
        assert session.message_count == 3
        _kept_counts_match(repo)
        repo.delete_session(b)
        _kept_counts_match(repo)
        assert fork.removed  # the edit did take rows off the path
    finally:
        repo.close()


def test_an_upgraded_database_counts_its_stored_chats(tmp_path):
    """The count's step counts what a database already holds (versions off the path left out)."""
    import peewee as pw

    from desktop.store import migrations
    from desktop.store.repo import Repo
    from desktop.store.schema import build_models

    path = tmp_path / "v15.db"
    db = pw.SqliteDatabase(str(path))
    migrations.upgrade(db, build_models(db), target=15)
    db.execute_sql(
        "INSERT INTO sessions (title, created_at, updated_at) VALUES ('old', 1, 1), ('empty', 1, 1)"
    )
    for i in range(5):
        db.execute_sql(
            "INSERT INTO messages (session_id, role, content, status, created_at, off_path, usage) "
            "VALUES (1, 'user', '[]', 'complete', 1, ?, ?)",
            (1 if i == 4 else None, '{"input_tokens": 7}' if i == 2 else None),
        )
    db.close()
    repo = Repo(path)
    try:
        assert {s.title: s.message_count for s in repo.list_sessions()} == {"old": 4, "empty": 0}
        assert repo.get_session(1).last_usage.input_tokens == 7
        _kept_counts_match(repo)
    finally:
        repo.close()


def _history(path: Path, rows: int) -> list[int]:
    """A database whose chats hold ``rows`` messages with replies, ``rows`` without any usage, and two: their ids."""
    from desktop.engine.types import Usage
    from desktop.store import Store

    store = Store.open_sync(path)
    try:
        repo = store.repo
        talk = [
            {"role": "user", "content": [{"type": "text", "text": f"q{i}"}]}
            if i % 2 == 0
            else {
                "role": "assistant",
                "content": [{"type": "text", "text": f"a{i}"}],
                "model": "m",
                "usage": Usage(1, 1),
            }
            for i in range(rows)
        ]
        big = repo.create_session("big").id
        repo.add_messages(big, talk)
        quiet = repo.create_session("no replies").id
        repo.add_messages(quiet, [{"role": "user", "content": [{"type": "text", "text": "x"}]}] * rows)
        small = repo.create_session("small").id
        repo.add_messages(small, talk[:2])
        return [small, quiet, big]
    finally:
        store.close_sync()


def _start_reads(path: Path, sessions: list[int], monkeypatch) -> tuple[int, list[str]]:  # noqa: ANN001
    """SQLite's virtual-machine steps (in hundreds) and the statements of what a start and a turn read: the store
    opened (with its crash sweep), the chat list, each chat's session row, newest page and the read before a
    request."""
    import sqlite3

    from desktop.store import Store

    steps = [0]
    seen: list[str] = []
    connect = sqlite3.connect

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003
        con = connect(*args, **kwargs)
        con.set_trace_callback(seen.append)
        con.set_progress_handler(lambda: steps.__setitem__(0, steps[0] + 1), 100)
        return con

    monkeypatch.setattr(sqlite3, "connect", counted)
    store = Store.open_sync(path)
    try:
        repo = store.repo
        assert [s.id for s in repo.list_sessions()] == sessions  # the newest first
        for sid in sessions:
            assert repo.get_session(sid) is not None
            page = repo.page(sid, size=100)
            assert page is not None and page.has_older == (sid != sessions[0])
            assert repo.since(sid, page.messages[-1].id) is not None
    finally:
        store.close_sync()
        monkeypatch.undo()
    return steps[0], seen


def test_listing_and_opening_chats_costs_the_same_whatever_the_history(tmp_path, monkeypatch):
    """What every start reads (the chat list with each chat's count and newest usage, the newest chat's page and
    session row) and a turn's read before its request do the same work with ten times the history: the counts are
    kept, the newest usage and "older rows?" are index lookups (a chat without replies included). Measured in
    SQLite's own steps, so a busy machine does not matter; before, the list counted every chat's rows."""
    small = tmp_path / "small.db"
    large = tmp_path / "large.db"
    few, _ = _start_reads(small, _history(small, 1_500), monkeypatch)
    many, statements = _start_reads(large, _history(large, 15_000), monkeypatch)
    assert many < few * 1.3 + 20, (few, many)
    assert any("message_count" in q for q in statements)  # the list read the kept count


def test_no_start_read_scans_the_messages(tmp_path, monkeypatch):
    """The same reads, statement by statement: SQLite's plan for each reads messages through an index (the crash
    sweep's partial one included), never by scanning the table."""
    import sqlite3

    path = tmp_path / "x.db"
    _, statements = _start_reads(path, _history(path, 2_000), monkeypatch)
    con = sqlite3.connect(path)
    try:
        reads = [
            q for q in statements if "messages" in q and q.lstrip().upper().startswith(("SELECT", "UPDATE"))
        ]
        assert len(reads) > 10
        for statement in reads:
            plan = [str(row[-1]) for row in con.execute(f"EXPLAIN QUERY PLAN {statement}")]
            scans = [step for step in plan if re.match(r"SCAN (messages|m|t\d+)\b", step)]
            assert all("messages_streaming" in step for step in scans), (statement, plan)
    finally:
        con.close()
