"""Run mypy on desktop/ and hold it to a baseline that may only shrink.

packaging/mypy-baseline.json maps each file to the number of mypy errors it is allowed to have. The check fails
when a file has more errors than its count, or has errors and no count at all; it passes otherwise, and says so
when some counts dropped (then ``--update`` writes the smaller numbers down, so they cannot grow back).

    python packaging/typecheck.py                    check (what `packaging/dev.sh test` and `lint` run)
    python packaging/typecheck.py --update           rewrite the baseline; refuses if any count would grow
    python packaging/typecheck.py --update --allow-growth   rewrite it even then (say why in the commit)

mypy's settings are in pyproject.toml ([tool.mypy]).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "packaging" / "mypy-baseline.json"
# "path:line: error: message  [code]", optionally with a column after the line.
ERROR = re.compile(r"^(?P<file>[^:\n]+\.pyi?):(?P<line>\d+)(?::\d+)?: error: (?P<message>.*)$")


def run_mypy(targets: list[str]) -> tuple[dict[str, list[str]], str]:
    """Errors by file (repository-relative, forward slashes) and mypy's whole output.

    Exits with mypy's output when mypy itself could not run (bad configuration, a crash, a syntax error).
    """
    cmd = [sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty", "--show-error-codes", *targets]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    errors: dict[str, list[str]] = defaultdict(list)
    for line in output.splitlines():
        m = ERROR.match(line)
        if m:
            errors[Path(m["file"]).as_posix()].append(line)
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and not errors):
        sys.stderr.write(output)
        raise SystemExit(f"typecheck: mypy did not run cleanly (exit {proc.returncode})")
    return dict(errors), output


def load_baseline(path: Path) -> dict[str, int]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text("utf-8"))
    if not isinstance(data, dict) or not all(isinstance(v, int) and v >= 0 for v in data.values()):
        raise SystemExit(f"typecheck: {path} must be a JSON object of file -> error count")
    return {str(k): int(v) for k, v in data.items()}


def write_baseline(path: Path, counts: dict[str, int]) -> None:
    kept = {f: n for f, n in sorted(counts.items()) if n > 0}
    path.write_text(json.dumps(kept, indent=2) + "\n", "utf-8")


def compare(current: dict[str, int], baseline: dict[str, int]) -> tuple[dict[str, tuple[int, int]], int]:
    """Files over their allowance as {file: (now, allowed)}, and how many errors fewer than the baseline
    the files under it have in all."""
    grown = {f: (n, baseline.get(f, 0)) for f, n in current.items() if n > baseline.get(f, 0)}
    dropped = sum(
        allowed - current.get(f, 0) for f, allowed in baseline.items() if current.get(f, 0) < allowed
    )
    return grown, dropped


def _errors(n: int) -> str:
    return f"{n} error" if n == 1 else f"{n} errors"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", action="store_true", help="rewrite the baseline with the current counts")
    ap.add_argument("--allow-growth", action="store_true", help="with --update: let counts grow")
    ap.add_argument("--baseline", type=Path, default=BASELINE, help=argparse.SUPPRESS)
    ap.add_argument("targets", nargs="*", help=argparse.SUPPRESS)  # default: the files in [tool.mypy]
    args = ap.parse_args(argv)
    if args.allow_growth and not args.update:
        ap.error("--allow-growth only makes sense with --update")

    errors, _ = run_mypy(args.targets)
    current = {f: len(lines) for f, lines in errors.items()}
    baseline = load_baseline(args.baseline)
    grown, dropped = compare(current, baseline)
    total = sum(current.values())

    if args.update:
        if grown and not args.allow_growth:
            for f, (now, allowed) in sorted(grown.items()):
                print(f"typecheck: {f}: {_errors(now)}, baseline {allowed}", file=sys.stderr)
            print(
                "typecheck: refusing to grow the baseline (fix the errors, or pass --allow-growth)",
                file=sys.stderr,
            )
            return 1
        write_baseline(args.baseline, current)
        print(f"typecheck: baseline written: {_errors(total)} in {len(current)} files")
        return 0

    if grown:
        for f, (now, allowed) in sorted(grown.items()):
            what = f"baseline {allowed}" if f in baseline else "not in the baseline"
            print(f"typecheck: {f}: {_errors(now)}, {what}:", file=sys.stderr)
            for line in errors[f]:
                print(f"  {line}", file=sys.stderr)
        print(
            f"typecheck: FAILED: new mypy errors in {len(grown)} file(s) (the baseline only shrinks)",
            file=sys.stderr,
        )
        if dropped:
            print(f"typecheck: elsewhere {_errors(dropped)} fewer than the baseline", file=sys.stderr)
        return 1
    print(f"typecheck: ok, {_errors(total)}, none over the baseline")
    if dropped:
        print(
            f"typecheck: {_errors(dropped)} fewer than the baseline: run with --update to shrink the baseline"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
