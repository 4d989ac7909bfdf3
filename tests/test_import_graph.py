"""The import graph: no cycles among engine modules (imports for type checking included), and widgets reach
the engine only through the bridge."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
ENGINE = ROOT / "desktop" / "engine"
UI = ROOT / "desktop" / "ui"
# The ui modules allowed to import the engine: the bridge (the seam) and the composition root.
# The ui modules that may import the engine or the tools: the declared API, the bridge and the app's start-up.
UI_GATEWAYS = {"desktop.ui.api", "desktop.ui.bridge", "desktop.ui.app"}
PACKAGE_CONSTANTS = {"desktop.APP_NAME", "desktop.APP_ID", "desktop.__version__"}  # names, not modules
# Bundled files (icons, style sheets): a leaf that imports nothing of the app, so widgets may read it directly.
RESOURCES = "desktop.resources"


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: pathlib.Path) -> set[str]:
    """Every module this file imports anywhere (top level, in functions, under TYPE_CHECKING), absolute."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)  # `from pkg import module`
    return names


def engine_graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in ENGINE.rglob("*.py")}
    return {name: {m for m in imports_of(path) if m in files and m != name} for name, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_find_cycle_sees_a_cycle_and_its_absence():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_engine_modules_import_each_other_without_cycles():
    graph = engine_graph()
    assert (
        "desktop.engine.turn.chat" in graph
        and "desktop.engine.compaction.compactor" in graph["desktop.engine.turn.chat"]
    )
    # A package importing its own modules is how it re-exports them; the modules must not import it back.
    assert find_cycle(graph) is None


def test_widgets_import_only_the_window_api_and_ui_modules():
    offenders: dict[str, list[str]] = {}
    widgets = [p for p in UI.rglob("*.py") if module_name(p) not in UI_GATEWAYS and p.name != "__init__.py"]
    assert len(widgets) > 50  # every feature folder is read
    for path in widgets:
        bad = sorted(
            m
            for m in imports_of(path)
            if m.startswith("desktop.")
            and not m.startswith(("desktop.ui", RESOURCES))
            and m not in PACKAGE_CONSTANTS
        )
        if bad:
            offenders[module_name(path)] = bad
    assert offenders == {}


def test_the_resources_module_is_a_leaf():
    assert not [
        m
        for m in imports_of(ROOT / "desktop" / "resources.py")
        if m.startswith("desktop") and m not in PACKAGE_CONSTANTS | {"desktop"}
    ]


def test_the_bridge_never_reaches_the_database():
    assert not any(m.startswith(("desktop.store", "peewee")) for m in imports_of(UI / "bridge.py"))


# Loaded when first needed (a request, an MCP server, a formula), never to show the window: the SDK with its
# tool helpers is ~3,500 modules and ~80 MB, the MCP client stack (anyio, httpx, pydantic, starlette) ~30 MB.
LAZY = ("anthropic", "mcp", "matplotlib")


def module_level_imports(path: pathlib.Path) -> set[str]:
    """What importing this file imports: module-level statements and class bodies, not function bodies nor
    ``if TYPE_CHECKING:`` blocks."""
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
            elif isinstance(node, ast.If):
                if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)
            elif isinstance(node, ast.With | ast.ClassDef):
                visit(node.body)

    visit(ast.parse(path.read_text("utf-8")).body)
    return names


def test_module_level_imports_see_through_blocks_but_not_functions(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import os\nif TYPE_CHECKING:\n    import mcp\ntry:\n    import anthropic\nexcept ImportError:\n"
        "    pass\nclass A:\n    import json\ndef f():\n    import matplotlib\n"
    )
    assert module_level_imports(probe) == {"os", "anthropic", "json"}


def test_no_module_imports_the_sdk_the_mcp_stack_or_matplotlib_at_module_level():
    offenders = {
        module_name(p): sorted(m for m in module_level_imports(p) if m.split(".")[0] in LAZY)
        for p in (ROOT / "desktop").rglob("*.py")
    }
    assert {name: bad for name, bad in offenders.items() if bad} == {}


# The layers, highest first: a module may import its own layer or a lower one, never a higher one.
# cli (the `precis` commands) -> ui (widgets, the bridge, the window's composition root) -> runtime (the one
# place the parts are wired) -> store (SQLite) -> tools (tools, MCP, permissions) -> engine (pure asyncio).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("desktop.__main__", "desktop.cli"),
    ("desktop.ui",),
    ("desktop.runtime",),
    ("desktop.store",),
    ("desktop.tools",),
    ("desktop.engine",),
)
# Leaves usable from every layer: the package constants, the bundled files, the translations and the
# desktop-entry installer. They import nothing of the app but other leaves.
LEAVES = ("desktop", "desktop.resources", "desktop.i18n", "desktop.integration")
DESKTOP = ROOT / "desktop"


def desktop_graph() -> dict[str, set[str]]:
    """Every module of desktop/ -> the desktop modules it imports (anywhere in the file, TYPE_CHECKING included)."""
    files = {module_name(p): p for p in DESKTOP.rglob("*.py")}
    return {name: {m for m in imports_of(path) if m in files and m != name} for name, path in files.items()}


def within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def layer_of(module: str) -> int | None:
    """The layer's rank (0 the highest), None for a leaf."""
    if module in LEAVES or any(within(module, leaf) for leaf in LEAVES[1:]):
        return None
    ranks = [rank for rank, prefixes in enumerate(LAYERS) if any(within(module, p) for p in prefixes)]
    assert ranks, f"{module} belongs to no declared layer: add it to LAYERS or LEAVES"
    return ranks[0]


def test_layer_of_places_each_package():
    assert layer_of("desktop.cli.main") == 0 and layer_of("desktop.ui.bridge") == 1
    assert layer_of("desktop.runtime") == 2 and layer_of("desktop.store.repo") == 3
    assert layer_of("desktop.tools.toolbox") == 4 and layer_of("desktop.engine.compaction.tail") == 5
    assert layer_of("desktop.i18n.catalog") is None and layer_of("desktop") is None


def test_every_module_imports_only_its_own_layer_or_lower_ones():
    upward: list[str] = []
    for name, targets in desktop_graph().items():
        rank = layer_of(name)
        for target in sorted(targets):
            to = layer_of(target)
            if to is None:
                continue
            if rank is None or to < rank:  # a leaf importing a layer, or a layer importing a higher one
                upward.append(f"{name} -> {target}")
    assert upward == []


def test_the_store_never_imports_the_tools():
    graph = desktop_graph()
    assert {
        name: sorted(t for t in targets if within(t, "desktop.tools"))
        for name, targets in graph.items()
        if within(name, "desktop.store")
        if any(within(t, "desktop.tools") for t in targets)
    } == {}


def test_no_import_cycle_anywhere_in_desktop():
    graph = desktop_graph()
    assert "desktop.ui.window.main_window" in graph and "desktop.cli.main" in graph
    assert find_cycle(graph) is None


def test_no_window_helper_imports_the_main_window():
    importers = sorted(
        name for name, targets in desktop_graph().items() if "desktop.ui.window.main_window" in targets
    )
    assert importers == ["desktop.ui.app"]
