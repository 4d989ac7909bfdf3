"""The layers of compaction, read from their source: one executor writes, the decisions above it do no I/O.

``compactor.Compactor`` is built from parts, each importing only those before it: the marks (``limits``), the
cost model, the planner, the policy (state in, decision out) and the executor, the one part that writes the
store or changes the session view. These scans keep a write, an await or an upward import from creeping into a
part that must not have it.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
COMPACTION = ROOT / "desktop" / "engine" / "compaction"
PACKAGE = "desktop.engine.compaction"

# The store's writes (the Storage protocol's) and the session view's mutators.
STORE_WRITES = frozenset(
    {
        "add_compaction",
        "update_state",
        "add_spend",
        "set_kv",
        "add_message",
        "delete_compaction",
        "add_user_message",
        "update_message",
        "delete_message",
        "truncate_from",
        "clear_history",
        "branch_at",
        "restore_branch",
        "switch_version",
        "set_estimates",
        "create_session",
        "update_session",
        "delete_session",
        "set_pinned",
        "move_profile",
        "import_session",
    }
)
VIEW_MUTATORS = frozenset(
    {"compacted", "state_changed", "spent", "remember", "invalidate", "forget", "take_unbilled"}
)
WRITES = STORE_WRITES | VIEW_MUTATORS
WRITER = "executor.py"
# The parts that decide (no I/O, no awaits), lowest first; each may import only those before it.
PURE = ("limits", "cost_model", "planner", "policy")
ORDER = (*PURE, "executor", "compactor")


def writes_in(source: str) -> list[str]:
    """The writes a module's code names (``x.add_compaction(...)``, a bound ``x.compacted`` kept for later, or
    ``getattr(x, "update_state")``), as "line: name"."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in WRITES:
            found.append(f"{node.lineno}: {node.attr}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in WRITES
        ):
            found.append(f"{node.lineno}: {node.args[1].value}")
    return found


def awaits_in(source: str) -> list[str]:
    """Every ``await``, ``async def``, ``async for`` and ``async with`` in a module, as "line: kind"."""
    kinds = (ast.Await, ast.AsyncFunctionDef, ast.AsyncFor, ast.AsyncWith)
    return [
        f"{node.lineno}: {type(node).__name__}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, kinds)
    ]


def parts_imported(source: str) -> set[str]:
    """The compaction parts (of ORDER) a module imports, anywhere in it (TYPE_CHECKING blocks and functions too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {part for part in ORDER if f"{PACKAGE}.{part}" in names}


def source(name: str) -> str:
    return (COMPACTION / name).read_text("utf-8")


def test_the_scans_see_what_they_look_for():
    assert writes_in("async def f(self):\n    await self.shared.store.add_compaction(1)\n") == [
        "2: add_compaction"
    ]
    assert writes_in("def f(view):\n    keep = view.state_changed\n") == ["2: state_changed"]
    assert writes_in("def f(store):\n    return getattr(store, 'add_spend')\n") == ["2: add_spend"]
    assert writes_in("def f(store, view):\n    return store.user_messages(1), view.used(2)\n") == []
    assert awaits_in("async def f():\n    await g()\n") == ["1: AsyncFunctionDef", "2: Await"]
    assert awaits_in("def f():\n    return g()\n") == []
    assert parts_imported(
        "from desktop.engine.compaction import policy\nfrom desktop.engine.compaction.planner import Plan\n"
    ) == {"policy", "planner"}


def test_only_the_executor_writes_the_store_or_changes_the_view():
    offenders = {
        path.name: found
        for path in sorted(COMPACTION.glob("*.py"))
        if path.name != WRITER and (found := writes_in(path.read_text("utf-8")))
    }
    assert offenders == {}
    # ... and it is the one that does (the scan would pass vacuously if the writes had moved elsewhere).
    named = {entry.split(": ")[1] for entry in writes_in(source(WRITER))}
    assert {"add_compaction", "update_state", "add_spend", "compacted", "state_changed", "spent"} <= named


def test_the_policy_and_the_parts_below_it_never_await():
    offenders = {part: found for part in PURE if (found := awaits_in(source(f"{part}.py")))}
    assert offenders == {}


def test_the_parts_decide_without_reaching_the_store():
    offenders = {
        part: sorted(
            {
                f"{n.lineno}: {n.attr}"
                for n in ast.walk(ast.parse(source(f"{part}.py")))
                if isinstance(n, ast.Attribute) and n.attr in ("store", "gather")
            }
        )
        for part in PURE
    }
    assert {part: found for part, found in offenders.items() if found} == {}


def test_each_part_imports_only_the_parts_before_it():
    upward = {
        part: sorted(imported - set(ORDER[:rank]))
        for rank, part in enumerate(ORDER)
        if (imported := parts_imported(source(f"{part}.py")))
        if imported - set(ORDER[:rank])
    }
    assert upward == {}
