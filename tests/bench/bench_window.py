"""Window benchmark: cold start, first paint of a 10,000-message session, peak memory.

Run: ``.venv/bin/python -m tests.bench.bench_window`` (``--runs N``, ``--json``).

Set-up. A throwaway PRECIS_HOME gets one session of 10,000 rows made from the corpus transcripts
(tests/corpus.py, imported with desktop.engine.importer and concatenated, cycling through the files), then
a small newest session, so the window opens the small one at start. The loopback fake API
(tests/fakeapi) stands in for Anthropic, so no request leaves the machine.

Every run is a fresh ``python -m desktop`` subprocess (imports, SQLite cache and Qt start cold), offscreen, with
PRECIS_BENCH_REPORT set: the app (desktop/ui/app.py) paints the shown window, writes timestamps and quits.

* cold start    process spawn -> window shown, session list loaded, newest session open and painted;
                baseline: a bare QApplication showing an empty QWidget, same interpreter, same way;
                also the same start with an empty home (the first session is created), and with the
                10,000-message session as the newest one (reopened at start, its context measured).
* first paint   request to open the 10,000-message session -> the chat view has painted its rows;
                baseline: opening a 2-message session in the same home. "settled" adds the context
                measurement the open also triggers (the gauge), which reads every row after the boundary.
* peak RSS      ru_maxrss of that process (os.wait4), against the small-session run.

Medians of ``--runs`` runs (5 by default).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.engine.claude_code import read_transcript
from desktop.engine.importer import plan_import
from desktop.store.repo import Repo
from tests.corpus import corpus_or_exit
from tests.fakeapi import FakeAnthropic

ROOT = Path(__file__).resolve().parents[2]
TARGET_ROWS = 10_000
TARGETS = {"cold_start_ms": 1000.0, "first_paint_ms": 300.0, "peak_rss_mb": 350.0}

BARE_QT = """
import json, sys, time
from PySide6.QtWidgets import QApplication, QWidget
app = QApplication(sys.argv)
w = QWidget(); w.resize(1100, 760); w.show(); w.repaint()
json.dump({"shown_at": time.time()}, open(sys.argv[1], "w"))
"""


@dataclass(slots=True)
class Home:
    path: Path
    big_id: int
    small_id: int
    rows: int
    db_mb: float


def build_home(path: Path, rows: int = TARGET_ROWS, *, big_newest: bool = False) -> Home:
    """A PRECIS_HOME whose database holds a ``rows``-message session built from the corpus (opened at start
    when ``big_newest``) and a 2-message session."""
    files = sorted(corpus_or_exit(), key=lambda p: p.stat().st_size, reverse=True)
    plans = [plan_import(read_transcript(p)) for p in files]
    data: list[dict[str, Any]] = []
    while len(data) < rows:
        for plan in plans:
            data.extend(plan.rows[: rows - len(data)])
    repo = Repo(path / "data" / "precis.db")
    try:
        big = repo.create_session(f"{rows:,} messages from the corpus", plans[0].model)
        repo.add_messages(big.id, data)
        small = repo.create_session("small", plans[0].model)
        repo.add_messages(small.id, [
            {"role": "user", "content": [{"type": "text", "text": "Hello"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Hi! How can I help?"}]},
        ])
        repo.update_session(big.id if big_newest else small.id)  # the window opens the newest at start
        count = repo.count_messages(big.id)
    finally:
        repo.close()
    db = path / "data" / "precis.db"
    return Home(path, big.id, small.id, count, db.stat().st_size / 1e6)


def _env(home: Path, base_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PRECIS_"))}
    env.update(PRECIS_HOME=str(home), QT_QPA_PLATFORM="offscreen", ANTHROPIC_API_KEY="bench-key",
               ANTHROPIC_BASE_URL=base_url, PYTHONPATH=str(ROOT))
    return env


def run_once(args: list[str], env: dict[str, str], report: Path) -> dict[str, Any]:
    """Spawn, wait, and return the child's report plus spawn time and its own peak RSS."""
    report.unlink(missing_ok=True)
    spawned = time.time()
    proc = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0 or not report.exists():
        raise RuntimeError(f"{args} failed ({proc.returncode}): {err[-2000:]}")
    data = json.loads(report.read_text())
    data.update(spawned=spawned, rss_mb=usage.ru_maxrss / 1024)  # Linux: ru_maxrss is in KiB
    return data


def app_run(home: Path, base_url: str, report: Path, open_id: int | None = None) -> dict[str, Any]:
    env = _env(home, base_url) | {"PRECIS_BENCH_REPORT": str(report)}
    if open_id is not None:
        env["PRECIS_BENCH_OPEN"] = str(open_id)
    return run_once([sys.executable, "-m", "desktop"], env, report)


def median_ms(runs: list[dict[str, Any]], start: str, end: str) -> float:
    return statistics.median((r[end] - r[start]) * 1000 for r in runs)


def measure(runs: int = 5) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="precis-bench-") as tmp, FakeAnthropic(window=200_000) as api:
        tmp_path = Path(tmp)
        t0 = time.perf_counter()
        home = build_home(tmp_path / "home")
        build_s = time.perf_counter() - t0
        big_home = build_home(tmp_path / "big-home", big_newest=True)
        empty = tmp_path / "empty-home"
        report = tmp_path / "report.json"
        url = api.base_url

        bare = [run_once([sys.executable, "-c", BARE_QT, str(report)], _env(empty, url), report)
                for _ in range(runs)]
        cold_empty = [app_run(tmp_path / f"empty-{i}", url, report) for i in range(runs)]
        cold = [app_run(home.path, url, report) for _ in range(runs)]
        cold_big = [app_run(big_home.path, url, report) for _ in range(runs)]
        small = [app_run(home.path, url, report, home.small_id) for _ in range(runs)]
        big = [app_run(home.path, url, report, home.big_id) for _ in range(runs)]

    assert all(r["rows"] >= 2 for r in small) and all(r["rows"] > 0 for r in big)
    out = {
        "runs": runs,
        "session_rows": home.rows,
        "db_mb": round(home.db_mb, 1),
        "build_home_s": round(build_s, 2),
        "view_rows_after_open": big[0]["rows"],
        "bare_qt_ms": median_ms(bare, "spawned", "shown_at"),
        "cold_start_empty_home_ms": median_ms(cold_empty, "spawned", "shown_at"),
        "cold_start_ms": median_ms(cold, "spawned", "shown_at"),
        "cold_start_big_newest_ms": median_ms(cold_big, "spawned", "shown_at"),
        "peak_rss_big_newest_mb": statistics.median(r["rss_mb"] for r in cold_big),
        "first_paint_small_ms": median_ms(small, "open_at", "painted_at"),
        "first_paint_ms": median_ms(big, "open_at", "painted_at"),
        "settled_small_ms": median_ms(small, "open_at", "settled_at"),
        "settled_ms": median_ms(big, "open_at", "settled_at"),
        "peak_rss_bare_qt_mb": statistics.median(r["rss_mb"] for r in bare),
        "peak_rss_small_mb": statistics.median(r["rss_mb"] for r in small),
        "peak_rss_mb": statistics.median(r["rss_mb"] for r in big),
        "cold_start_all_ms": [round((r["shown_at"] - r["spawned"]) * 1000, 1) for r in cold],
        "first_paint_all_ms": [round((r["painted_at"] - r["open_at"]) * 1000, 1) for r in big],
    }
    return out


def print_table(r: dict[str, Any]) -> None:
    print(f"Window: {r['session_rows']:,}-message session ({r['db_mb']} MB database, built in {r['build_home_s']} s), "
          f"median of {r['runs']} fresh processes, offscreen")
    print(f"{'measure':<34}{'value':>10}{'baseline':>10}{'ratio':>8}{'target':>9}  ok   baseline is")
    rows = [
        ("cold start (home with 10k session)", "cold_start_ms", "bare_qt_ms", "ms", "bare QApplication + QWidget"),
        ("cold start (empty home)", "cold_start_empty_home_ms", "bare_qt_ms", "ms", "bare QApplication + QWidget"),
        ("cold start, 10k session reopened", "cold_start_big_newest_ms", "cold_start_ms", "ms",
         "cold start, small session"),
        ("first paint, open 10k session", "first_paint_ms", "first_paint_small_ms", "ms", "opening a 2-msg session"),
        ("open 10k session, gauge settled", "settled_ms", "settled_small_ms", "ms", "opening a 2-msg session"),
        ("peak RSS, 10k session open", "peak_rss_mb", "peak_rss_small_mb", "MB", "2-msg session process"),
        ("peak RSS, 10k session reopened", "peak_rss_big_newest_mb", "peak_rss_small_mb", "MB",
         "2-msg session process"),
        ("peak RSS, bare Qt", "peak_rss_bare_qt_mb", "peak_rss_bare_qt_mb", "MB", "itself"),
    ]
    for label, key, base, unit, what in rows:
        target = TARGETS.get(key)
        ok = "" if target is None else ("yes" if r[key] <= target else "NO")
        tgt = f"{target:>6.0f}{unit:<2}" if target is not None else f"{'':>8}"
        ratio = r[key] / r[base] if r[base] else float("inf")
        print(f"{label:<34}{r[key]:>8.0f}{unit:<2}{r[base]:>8.0f}{unit:<2}{ratio:>7.2f}x{tgt} {ok:>4}   {what}")
    print(f"rows in the view after opening: {r['view_rows_after_open']} (newest page; older rows load on scroll)")
    print(f"cold start runs (ms): {r['cold_start_all_ms']}   first paint runs (ms): {r['first_paint_all_ms']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    result = measure(args.runs)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
