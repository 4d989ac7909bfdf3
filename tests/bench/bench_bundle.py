"""Bundle benchmark: builds the one-folder bundle (``packaging/build.sh``, PyInstaller) and runs its smoke test
(``packaging/smoke_bundle.py``): a chat against the loopback test server, the window opening it, then the
bundle's cold start against the dev venv's in the same run (spawn -> window shown, offscreen, medians).

Run: ``.venv/bin/python -m tests.bench.bench_bundle`` (``--runs N``, ``--no-build`` to reuse dist/precis).
Slow (a build takes minutes), so it lives here and not in CI. Exit status 1 when the build or the smoke fails.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-build", action="store_true")
    args, _ = parser.parse_known_args(argv)
    built_s = None
    if not args.no_build:
        start = time.perf_counter()
        subprocess.run(["bash", str(ROOT / "packaging" / "build.sh")], check=True)
        built_s = time.perf_counter() - start
    res = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "smoke_bundle.py"), "--json", "--runs", str(args.runs)],
        capture_output=True,
        text=True,
    )
    if not res.stdout.strip():
        print(res.stderr, file=sys.stderr)
        return 1
    result = json.loads(res.stdout)
    cold = result.get("cold_start_ms", {})
    print("| figure | bundle | venv | bundle / venv |")
    print("|---|---|---|---|")
    print(
        f"| cold start, spawn -> window shown (median of {args.runs}) | {cold.get('bundle')} ms | "
        f"{cold.get('venv')} ms | {result.get('cold_start_ratio')} |"
    )
    print(f"| size on disk | {result['bundle_mb']} MB | | |")
    if built_s is not None:
        print(f"| build time | {built_s:.0f} s | | |")
    print(
        f"smoke: chat against the test server {'ok' if result.get('chat_reply_ok') else 'FAILED'}, window "
        f"opened it ({result.get('chat_rows_shown', 0)} rows), icon and style sheet loaded: {result['passed']}"
    )
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
