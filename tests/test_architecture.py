"""Layering rules: the engine never imports Qt; only the store touches the database."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
QT_MODULES = ("PySide6", "qasync", "shiboken6", "PyQt5", "PyQt6")


def imported_modules(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_engine_sources_never_import_qt():
    offenders = {
        str(p.relative_to(ROOT)): sorted(n for n in imported_modules(p) if n.split(".")[0] in QT_MODULES)
        for p in (ROOT / "desktop" / "engine").rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_importing_every_engine_module_loads_no_qt():
    modules = [
        ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for p in (ROOT / "desktop" / "engine").rglob("*.py")
        if p.name != "__init__.py" or p.parent.name != "engine"
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m.removesuffix('.__init__'))\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r}]\n"
        "print(bad); raise SystemExit(1 if bad else 0)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_only_the_store_imports_peewee():
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "desktop").rglob("*.py")
        if "store" not in p.relative_to(ROOT).parts
        and any(n.split(".")[0] in ("peewee", "playhouse", "sqlite3") for n in imported_modules(p))
    ]
    assert offenders == []


def test_the_tools_package_never_imports_qt_and_the_engine_never_imports_it():
    tools = list((ROOT / "desktop" / "tools").rglob("*.py"))
    assert tools
    qt = {
        str(p.relative_to(ROOT)): sorted(n for n in imported_modules(p) if n.split(".")[0] in QT_MODULES)
        for p in tools
    }
    assert {k: v for k, v in qt.items() if v} == {}
    engine = {
        str(p.relative_to(ROOT)): sorted(n for n in imported_modules(p) if n.startswith("desktop.tools"))
        for p in (ROOT / "desktop" / "engine").rglob("*.py")
    }
    assert {k: v for k, v in engine.items() if v} == {}


def test_importing_every_tools_module_loads_no_qt():
    modules = [
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for p in (ROOT / "desktop" / "tools").rglob("*.py")
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r}]\n"
        "print(bad); raise SystemExit(1 if bad else 0)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


# The API's content-block types: a widget that names one is parsing raw blocks (desktop.engine.history.display does).
BLOCK_TYPES = frozenset(
    {
        "tool_use",
        "tool_result",
        "server_tool_use",
        "mcp_tool_use",
        "mcp_tool_result",
        "web_search_tool_result",
        "redacted_thinking",
        "base64",
    }
)


def block_reads(path: pathlib.Path) -> list[str]:
    """Where a file reads a content block: ``x.get("type")``, ``x["type"]``, ``x.get("source")``, or a block
    type's name as a string."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        key = None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in ("type", "source")
        ):
            key = f'.get("{node.args[0].value}")'
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and node.slice.value == "type"
        ):
            key = '["type"]'
        elif isinstance(node, ast.Constant) and node.value in BLOCK_TYPES:
            key = repr(node.value)
        if key:
            found.append(f"{path.name}:{node.lineno} {key}")
    return found


def test_block_reads_finds_each_way_of_reading_a_block(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        'a = b.get("type")\nc = d["type"]\ne = f.get("source")\ng = "tool_result"\n'
        'h = i.get("text")\nj = k["source"]\n',
        "utf-8",
    )
    assert [line.split(" ", 1)[1] for line in block_reads(probe)] == [
        '.get("type")',
        '["type"]',
        '.get("source")',
        "'tool_result'",
    ]


def test_no_widget_reads_a_content_block():
    """The engine hands the window display-ready rows (desktop.engine.history.display); widgets never parse blocks."""
    offenders = [hit for p in sorted((ROOT / "desktop" / "ui").rglob("*.py")) for hit in block_reads(p)]
    assert offenders == []
    assert block_reads(
        ROOT / "desktop" / "engine" / "history" / "display.py"
    )  # the scan sees blocks where they are read


def test_the_tool_runner_has_no_event_bus_of_its_own():
    """A chat's events have one emitter, its conversation: the tool runner hands the events of a call to the
    conversation that runs it (``run``'s ``events``), and keeps no listeners of its own that could reach the
    views another way."""
    from desktop.tools.toolbox import Toolbox

    assert not [name for name in ("subscribe", "emit", "_listeners") if hasattr(Toolbox, name)]
    tree = ast.parse((ROOT / "desktop" / "tools" / "toolbox.py").read_text("utf-8"))
    emits = [
        node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "emit"
    ]
    assert emits == []
