"""One-line mutants of a source file, each run against the tests of its own layer: which ones the tests notice.

    python -m tests.bench.mutants desktop/tools/confined.py desktop/tools/sandbox.py
    python -m tests.bench.mutants FILE [--tests tests/test_x.py ...] [--timeout S] [--jobs N] [--list] [--only N,...]

Each mutant changes one construct on one line: a statement deleted (made ``pass``), a condition negated (``if``,
``while``, a conditional expression, an ``assert``, a comprehension's ``if``), a comparison swapped (``==``/``!=``,
``<``/``<=``, ``>``/``>=``, ``in``/``not in``, ``is``/``is not``), a constant changed (0 <-> 1, n -> n + 1,
True <-> False), a ``not`` removed, ``and``/``or`` swapped. Imports and docstrings are left alone.

A file's tests are ``tests/test_<name>.py`` (``--tests`` names others). Each mutant runs them with ``pytest -x``
in a copy of the tree (``desktop/``, ``tests/``, ``pyproject.toml``) in a temporary folder, so the working tree
is never touched and the tests' own child processes import the mutant too; a mutant is killed when the tests
fail or pass the time limit, and survives when they pass. The file is rewritten from its syntax tree
(``ast.unparse``), and the unmutated rewrite must pass first.

Mutants listed in ``EQUIVALENT`` change no behaviour a test could see on Linux (a platform default that exists
here, a buffer size, a durability call): they are reported with their reason and left out of the score, which is
killed / (mutants - equivalent). The exit status is 1 when a survivor is left.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COPIED = ("desktop", "tests", "pyproject.toml")
SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
SYMBOLS = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}

# (file, its statement's first line as ast.unparse writes it, the mutation) -> why no test can tell the mutant from
# the original (``--list`` prints the keys).
C = "desktop/tools/confined.py"
S = "desktop/tools/sandbox.py"
_LINUX_FLAG = "the default of a flag Linux defines: never used here"
_RACE_FREE = (
    "RACE_FREE = {os.open, os.stat, os.mkdir, os.rename, os.unlink} <= os.supports_dir_fd and bool(_NOFOLLOW)"
)
_TEMP = "temp = f'.{name[:200]}.{secrets.token_hex(4)}.tmp'"
_PROBE = (
    "done = subprocess.run(wrap('true', probe, network=network), stdin=subprocess.DEVNULL, capture_output=True, "
    "timeout=30, check=False)"
)
EQUIVALENT: dict[tuple[str, str, str], str] = {
    (C, "_NOFOLLOW = getattr(os, 'O_NOFOLLOW', 0)", "0 -> 1"): _LINUX_FLAG,
    (C, "_DIRECTORY = getattr(os, 'O_DIRECTORY', 0)", "0 -> 1"): _LINUX_FLAG,
    (C, "_CLOEXEC = getattr(os, 'O_CLOEXEC', 0)", "0 -> 1"): _LINUX_FLAG,
    (C, "_NONBLOCK = getattr(os, 'O_NONBLOCK', 0)", "0 -> 1"): _LINUX_FLAG,
    (C, _RACE_FREE, "and -> or"): "both sides are true on Linux",
    (C, _RACE_FREE, "<= -> <"): "os.supports_dir_fd holds more than these five calls on Linux",
    (C, "if _NONBLOCK and hasattr(os, 'set_blocking'):", "and -> or"): "both sides are true on Linux",
    (C, "def open(self, name: str, flags: int, mode: int=438) -> int:", "438 -> 439"): "the mode of an open "
    "that creates nothing (the one caller that creates gives its own)",
    (C, "while (chunk := os.read(fd, 1 << 20)):", "20 -> 21"): "a read's size: the same bytes in fewer reads",
    (C, _TEMP, "4 -> 5"): "the temporary name's random part: ten hex digits instead of eight",
    (C, _TEMP, "200 -> 201"): "the temporary name's length: 215 bytes instead of 214, under every limit",
    (
        C,
        "fd = where.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 384 if mode is not None else "
        "438)",
        "384 -> 385",
    ): "the temporary file's mode until fchmod gives it the old file's (0601 for a moment, never readable by "
    "others)",
    (C, "os.fsync(fd)", "delete"): "durability across a power cut: no test can see it",
    (C, "os.fsync(where.fd)", "delete"): "the rename's durability across a power cut: no test can see it",
    (S, "return None", "delete"): "the function ends there: it returns None either way",
    (S, _PROBE, "30 -> 31"): "the probe's time limit: bwrap answers in milliseconds",
    (S, "shutil.rmtree(probe, ignore_errors=True)", "True -> False"): "the probe's empty folder is always "
    "removed: there is no error to ignore",
}


@dataclass(frozen=True)
class Mutant:
    file: str  # relative to the repository
    index: int  # the site's node, in ast.walk order
    kind: str  # delete | negate | compare | constant | not | boolop
    position: int  # which operator of a comparison
    line: int
    text: str  # the line as ast.unparse writes the statement or expression around the site
    description: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.file, self.text, self.description)


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _statement_of(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST:
    while not isinstance(node, ast.stmt) and node in parents:
        node = parents[node]
    return node


def _shown(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str:
    """The line a reader finds the site on: its statement's first line as unparsed (the key of EQUIVALENT)."""
    lines = ast.unparse(_statement_of(node, parents)).splitlines()
    return next(line for line in lines if not line.startswith("@"))


def sites(path: Path, relative: str) -> list[Mutant]:
    """Every one-line mutant of the file, in a fixed order."""
    tree = ast.parse(path.read_text("utf-8"))
    parents = _parents(tree)
    out: list[Mutant] = []

    def add(index: int, node: ast.AST, kind: str, description: str, position: int = 0) -> None:
        line = getattr(node, "lineno", 0) or getattr(_statement_of(node, parents), "lineno", 0)
        out.append(Mutant(relative, index, kind, position, line, _shown(node, parents), description))

    for index, node in enumerate(ast.walk(tree)):
        if (
            isinstance(node, ast.stmt)
            and not isinstance(node, ast.Import | ast.ImportFrom | ast.Pass | ast.Global | ast.Nonlocal)
            and not _is_docstring(node)
            and node.lineno == node.end_lineno
        ):
            add(index, node, "delete", "delete")
        if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert) and not _negated(node.test):
            add(index, node, "negate", "negate")
        if isinstance(node, ast.comprehension):
            for position, condition in enumerate(node.ifs):
                if not _negated(condition):
                    add(index, condition, "negate", "negate", position)
        if isinstance(node, ast.Compare):
            for position, op in enumerate(node.ops):
                swapped = SWAPS[type(op)]
                add(index, node, "compare", f"{SYMBOLS[type(op)]} -> {SYMBOLS[swapped]}", position)
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            add(index, node, "constant", f"{node.value} -> {not node.value}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, int):
            add(index, node, "constant", f"{node.value} -> {_changed(node.value)}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            add(index, node, "not", "remove not")
        if isinstance(node, ast.BoolOp):
            add(index, node, "boolop", "and -> or" if isinstance(node.op, ast.And) else "or -> and")
    return out


def _negated(test: ast.expr) -> bool:
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)


def _changed(value: int) -> int:
    return {0: 1, 1: 0}.get(value, value + 1)


def _replace(parent: ast.AST, old: ast.AST, new: ast.AST) -> None:
    """Put ``new`` where ``old`` is among ``parent``'s fields."""
    for name, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, name, new)
            return
        if isinstance(value, list) and any(item is old for item in value):
            value[[i for i, item in enumerate(value) if item is old][0]] = new
            return
    raise LookupError(f"{old!r} is not a child of {parent!r}")


def mutated(source: str, mutant: Mutant) -> str:
    """The file's source with the one change made (the rest as ``ast.unparse`` writes it)."""
    tree = ast.parse(source)
    nodes = list(ast.walk(tree))
    node = nodes[mutant.index]
    parents = _parents(tree)
    if mutant.kind == "delete":
        _replace(parents[node], node, ast.Pass())
    elif mutant.kind == "negate" and isinstance(node, ast.comprehension):
        node.ifs[mutant.position] = ast.UnaryOp(ast.Not(), node.ifs[mutant.position])
    elif mutant.kind == "negate" and isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
        node.test = ast.UnaryOp(ast.Not(), node.test)
    elif mutant.kind == "compare" and isinstance(node, ast.Compare):
        node.ops[mutant.position] = SWAPS[type(node.ops[mutant.position])]()
    elif mutant.kind == "constant" and isinstance(node, ast.Constant):
        node.value = (not node.value) if isinstance(node.value, bool) else _changed(node.value)
    elif mutant.kind == "not" and isinstance(node, ast.UnaryOp):
        _replace(parents[node], node, node.operand)
    elif mutant.kind == "boolop" and isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    else:
        raise ValueError(f"cannot apply {mutant}")
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


# --- running ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    verdict: str  # killed | survived | timeout
    seconds: float
    said: str = ""  # the first failure pytest named


class Tree:
    """A copy of the tree the tests run in; one file of it is replaced by each mutant in turn."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="precis-mutants-"))
        for name in COPIED:
            source = REPO / name
            if source.is_dir():
                shutil.copytree(
                    source, self.root / name, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
                )
            else:
                shutil.copy2(source, self.root / name)
        # The normal-user tests run the sandbox from this copy as nobody.
        for folder, _dirs, files in os.walk(self.root):
            os.chmod(folder, 0o755)
            for file in files:
                os.chmod(os.path.join(folder, file), 0o644)

    def put(self, relative: str, source: str) -> None:
        target = self.root / relative
        target.write_text(source, "utf-8")
        for cached in (target.parent / "__pycache__").glob(f"{target.stem}.*.pyc"):
            cached.unlink()

    def run(self, tests: list[str], timeout: float) -> tuple[str, float, str]:
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
            cwd=self.root,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "QT_QPA_PLATFORM": "offscreen"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return "timeout", time.monotonic() - started, ""
        took = time.monotonic() - started
        failed = next((ln for ln in out.splitlines() if ln.startswith(("FAILED", "ERROR"))), "")
        if proc.returncode == 0:
            return "survived", took, ""
        if proc.returncode in (2, 3, 4, 5) and not failed:  # pytest could not run the tests at all
            return "killed", took, out.strip().splitlines()[-1] if out.strip() else "pytest did not run"
        return "killed", took, failed

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _tests_of(relative: str) -> list[str]:
    return [f"tests/test_{Path(relative).stem}.py"]


def run_file(
    relative: str,
    tests: list[str],
    timeout: float | None,
    jobs: int,
    only: set[int] | None,
    say: Callable[[str], None],
) -> list[Outcome]:
    source = (REPO / relative).read_text("utf-8")
    mutants = sites(REPO / relative, relative)
    chosen = [(i, m) for i, m in enumerate(mutants, 1) if only is None or i in only]
    trees = [Tree() for _ in range(max(1, jobs))]
    try:
        trees[0].put(relative, ast.unparse(ast.parse(source)) + "\n")
        verdict, took, said = trees[0].run(tests, timeout or 600)
        if verdict != "survived":
            raise SystemExit(
                f"mutants: {relative}'s tests fail unmutated ({said or verdict}): fix them first"
            )
        limit = timeout or max(60.0, 5 * took)
        say(
            f"{relative}: {len(mutants)} mutants, tests {' '.join(tests)} ({took:.1f} s unmutated, limit {limit:.0f} s)"
        )
        free = list(trees)

        def one(item: tuple[int, Mutant]) -> Outcome:
            number, mutant = item
            tree = free.pop()
            try:
                tree.put(relative, mutated(source, mutant))
                verdict, took, said = tree.run(tests, limit)
            finally:
                free.append(tree)
            outcome = Outcome(mutant, verdict, took, said)
            say(
                f"  [{number}/{len(mutants)}] line {mutant.line} {mutant.description}: {verdict} ({took:.1f} s)"
            )
            return outcome

        with ThreadPoolExecutor(max_workers=len(trees)) as pool:
            return list(pool.map(one, chosen))
    finally:
        for tree in trees:
            tree.remove()


def report(relative: str, outcomes: list[Outcome], say: Callable[[str], None]) -> bool:
    """Print the figures and each survivor; True when no survivor is left outside EQUIVALENT."""
    equivalent = [o for o in outcomes if o.mutant.key in EQUIVALENT]
    counted = [o for o in outcomes if o.mutant.key not in EQUIVALENT]
    killed = [o for o in counted if o.verdict in ("killed", "timeout")]
    survivors = [o for o in counted if o.verdict == "survived"]
    score = 100.0 * len(killed) / len(counted) if counted else 100.0
    say(
        f"{relative}: {len(outcomes)} mutants, {len(equivalent)} equivalent, {len(counted)} change behaviour, "
        f"{len(killed)} killed ({sum(o.verdict == 'timeout' for o in killed)} by the time limit), "
        f"{len(survivors)} survived: score {score:.1f} %"
    )
    for o in survivors:
        say(f"  survived: line {o.mutant.line}: {o.mutant.description}: {o.mutant.text}")
    for o in equivalent:
        note = " (killed anyway)" if o.verdict != "survived" else ""
        say(f"  equivalent: line {o.mutant.line}: {o.mutant.description}: {EQUIVALENT[o.mutant.key]}{note}")
    return not survivors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.mutants", description=__doc__.splitlines()[0]
    )
    parser.add_argument("files", nargs="+", help="source files, relative to the repository")
    parser.add_argument(
        "--tests", nargs="+", help="test files to run (default: tests/test_<name>.py per file)"
    )
    parser.add_argument(
        "--timeout", type=float, help="seconds per mutant (default: 5x the unmutated run, 60+)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once, each in its own copy")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--only", help="run only these mutants (numbers from --list, comma-separated)")
    args = parser.parse_args(argv)

    def say(text: str) -> None:
        print(text, flush=True)

    only = {int(n) for n in args.only.split(",")} if args.only else None
    clean = True
    for relative in args.files:
        if args.list:
            for number, mutant in enumerate(sites(REPO / relative, relative), 1):
                mark = "  (equivalent)" if mutant.key in EQUIVALENT else ""
                say(f"{number:4} {relative}:{mutant.line} {mutant.description}: {mutant.text}{mark}")
            continue
        started = time.monotonic()
        outcomes = run_file(relative, args.tests or _tests_of(relative), args.timeout, args.jobs, only, say)
        clean = report(relative, outcomes, say) and clean
        say(f"{relative}: {time.monotonic() - started:.0f} s\n")
    return 0 if clean else 1


if __name__ == "__main__":
    raise SystemExit(main())
