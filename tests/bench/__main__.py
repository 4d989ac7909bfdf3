"""Run every benchmark: ``.venv/bin/python -m tests.bench`` (arguments after ``--`` go to each main()).

Each ``tests/bench/bench_*.py`` module with a ``main(argv)`` runs in turn, in name order, printing its own table.
A benchmark that fails is reported and the others still run; the exit status is 1 if any failed.
"""

from __future__ import annotations

import importlib
import sys
import time
import traceback
from pathlib import Path


def discover() -> list[str]:
    here = Path(__file__).resolve().parent
    return [f"tests.bench.{p.stem}" for p in sorted(here.glob("bench_*.py"))]


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    passthrough = args[args.index("--") + 1 :] if "--" in args else []
    failed: list[str] = []
    for name in discover():
        module = importlib.import_module(name)
        entry = getattr(module, "main", None)
        if not callable(entry):
            continue
        print(f"=== {name}", flush=True)
        start = time.perf_counter()
        try:
            code = entry(passthrough)
        except Exception:  # noqa: BLE001 - one broken benchmark must not hide the others' figures
            traceback.print_exc()
            code = 1
        if code:
            failed.append(name)
        print(
            f"--- {name}: {time.perf_counter() - start:.1f} s{'' if not code else ', FAILED'}\n", flush=True
        )
    if failed:
        print("failed:", ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
