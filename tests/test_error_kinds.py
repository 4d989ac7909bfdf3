"""One list of error kinds (desktop/engine/providers/errors.py ErrorKind): every kind the code gives a ChatError or a
TurnError, and every kind the window or the CLI compares with, is on it."""

from __future__ import annotations

import ast
import pathlib

from desktop.engine.providers.errors import ERROR_KINDS

ROOT = pathlib.Path(__file__).resolve().parent.parent


def kinds_used() -> dict[str, set[str]]:
    """Where each string literal is used as an error kind: ChatError("k", ...), TurnError(sid, "k", ...),
    ``x.kind == "k"`` / ``x.kind in ("k", ...)`` on an error."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / "desktop").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            literals: list[ast.expr] = []
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id == "ChatError" and node.args:
                    literals = [node.args[0]]
                elif node.func.id == "TurnError" and len(node.args) > 1:
                    literals = [node.args[1]]
            elif (
                isinstance(node, ast.Compare)
                and isinstance(node.left, ast.Attribute)
                and node.left.attr == "kind"
                and "error" in ast.unparse(node.left.value).lower()
            ):
                for right in node.comparators:
                    literals += list(right.elts) if isinstance(right, ast.Tuple) else [right]
            for lit in literals:
                if isinstance(lit, ast.Constant) and isinstance(lit.value, str):
                    found.setdefault(lit.value, set()).add(path.name)
    return found


def test_every_error_kind_in_use_is_on_the_one_list():
    used = kinds_used()
    assert {"auth", "overflow", "media", "storage", "tool_permission"} <= used.keys()
    assert {k: sorted(v) for k, v in used.items() if k not in ERROR_KINDS} == {}
    assert len(set(ERROR_KINDS)) == len(ERROR_KINDS)
