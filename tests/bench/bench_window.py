"""Window benchmark: cold start, first paint, open -> gauge filled, and peak memory, by session size.

Run: ``.venv/bin/python -m tests.bench.bench_window`` (``--sizes 10000,50000,100000``, ``--runs N``, ``--json``).

Set-up, per size N (default 10,000, 50,000 and 100,000): a throwaway PRECIS_HOME gets one session of N rows made
from the corpus transcripts (tests/corpus.py, imported with desktop.engine.history.importer and concatenated, cycling
through the files, written with ``Repo.add_messages``), a 2-message session, and a 2-message "start" session,
newest, which the window opens at start. The loopback fake API (tests/fakeapi) stands in for Anthropic, so no
request leaves the machine.

Every run is a fresh ``python -m desktop`` process (imports, SQLite cache and Qt start cold), offscreen, with
PRECIS_BENCH_REPORT set: the app (``_bench_report`` in desktop/ui/app.py) paints the shown window, with
PRECIS_BENCH_OPEN opens that session, writes timestamps and quits.

* cold start    process spawn -> window shown, session list loaded, newest session open and painted;
                baseline: a bare QApplication showing an empty QWidget, same interpreter, same way;
                also the same start with an empty home (the first session is created), with the N-message
                session in the home and the start session opened (the newest and the last shown: the window
                reopens the chat it showed last, so a home whose last run opened the N session would reopen it),
                and with the N-message session as the newest one (reopened at start; the window is shown before
                its gauge is measured, so only the time to the shown window is reported).
* first paint   request to open the N-message session -> the chat view has painted its rows;
                baseline: opening the 2-message session in the same home.
* settled       request to open it -> the engine's ContextChanged for that session has reached the window and
                the gauge has painted its figure (the measurement reads every row after the boundary);
                baseline: the same for the 2-message session. The start session is another one, so the only
                ContextChanged of the opened session is the one its opening caused.
* peak RSS      the child's ``ru_maxrss`` (os.wait4) over the whole open-and-settle run; baseline: the
                2-message session's run, and the bare Qt process.

Peak RSS is the child's own. Linux gives an exec'd child the peak RSS of the address space it was started
from (the kernel keeps the larger of the two, and Python's subprocess starts children with vfork, so that
is this process's peak: several hundred MB after building a 100,000-row home). Every child is therefore
started by a small launcher process (``LAUNCHER``: ``python -I -S``, os.posix_spawn, os.wait4) whose own peak is
the only floor left, about 10 MB. The table checks it: the bare Qt child also reports its own VmHWM from
/proc (the two must agree), and once more is started straight from this process the old way.

Each run of a size starts the four kinds of process in turn (cold start, open the small session, open the
large one, cold start with the large one newest), so a busy moment of a shared machine spreads over them.

Targets: cold start <= 1000 ms and first paint <= 300 ms at every size; open -> gauge filled <= 300 ms and peak
RSS <= 350 MB at up to 50,000 messages (none at 100,000). Medians of ``--runs`` runs (5 by default). The exit
status is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.engine.history.claude_code import read_transcript
from desktop.engine.history.importer import plan_import
from desktop.store.repo import Repo
from tests.corpus import corpus_or_exit
from tests.fakeapi import FakeAnthropic

ROOT = Path(__file__).resolve().parents[2]
SIZES = (10_000, 50_000, 100_000)
RUN_TIMEOUT = 180.0  # seconds for one app process; a run that never settles is killed and reported
TARGETS = {"cold_start_ms": 1000.0, "first_paint_ms": 300.0, "settled_ms": 300.0, "peak_rss_mb": 350.0}
TARGET_UP_TO = {"settled_ms": 50_000, "peak_rss_mb": 50_000}  # stated at 50k; none beyond

BARE_QT = """
import json, sys, time
from PySide6.QtWidgets import QApplication, QWidget
app = QApplication(sys.argv)
w = QWidget(); w.resize(1100, 760); w.show(); w.repaint()
shown = time.time()
hwm = next((int(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("VmHWM:")), None)
json.dump({"shown_at": shown, "hwm_mb": hwm}, open(sys.argv[1], "w"))
"""

# Starts every measured child and reports its rusage. Standard library only, no site: its own peak RSS (the
# floor under every child's ru_maxrss, see the module docstring) stays near the interpreter's minimum.
LAUNCHER = r"""
import json, os, sys, time

def hwm():
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None

print(json.dumps({"launcher_hwm_mb": hwm()}), flush=True)
for line in sys.stdin:
    job = json.loads(line)
    os.chdir(job["cwd"])
    err = os.open(job["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_DUP2, err, 2)]
    spawned = time.time()
    pid = os.posix_spawn(job["argv"][0], job["argv"], job["env"], file_actions=actions)
    os.close(err)
    deadline, timed_out = time.monotonic() + job["timeout"], False
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline and not timed_out:
            os.kill(pid, 9)
            timed_out = True
        time.sleep(0.005)
    print(json.dumps({"spawned": spawned, "code": os.waitstatus_to_exitcode(status), "timed_out": timed_out,
                      "rss_mb": usage.ru_maxrss / 1024, "launcher_hwm_mb": hwm()}), flush=True)
"""


class Launcher:
    """A long-lived small process that starts each child (so the child's ru_maxrss is not ours) and waits."""

    def __init__(self, scratch: Path):
        self.scratch = scratch
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", LAUNCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        self.hwm_mb = float(self._read()["launcher_hwm_mb"] or 0.0)

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the launcher exited")
        return json.loads(line)

    def run(
        self, argv: list[str], env: dict[str, str], timeout: float = RUN_TIMEOUT
    ) -> tuple[dict[str, Any], str]:
        assert self.proc.stdin is not None
        err = self.scratch / "child-stderr.txt"
        self.proc.stdin.write(
            json.dumps({"argv": argv, "env": env, "cwd": str(ROOT), "stderr": str(err), "timeout": timeout})
            + "\n"
        )
        self.proc.stdin.flush()
        out = self._read()
        self.hwm_mb = max(self.hwm_mb, float(out.get("launcher_hwm_mb") or 0.0))
        return out, err.read_text(errors="replace") if err.exists() else ""

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=10)


@dataclass(slots=True)
class Home:
    path: Path
    big_id: int
    small_id: int
    start_id: int
    rows: int
    db_mb: float


def corpus_rows(rows: int) -> tuple[list[dict[str, Any]], str | None]:
    files = sorted(corpus_or_exit(), key=lambda p: p.stat().st_size, reverse=True)
    plans = [plan_import(read_transcript(p)) for p in files]
    data: list[dict[str, Any]] = []
    while len(data) < rows:
        for plan in plans:
            data.extend(plan.rows[: rows - len(data)])
    return data, plans[0].model


def build_home(path: Path, rows: int) -> Home:
    """A PRECIS_HOME whose database holds a ``rows``-message session built from the corpus, a 2-message session
    and a 2-message start session (the newest: the window opens it at start)."""
    data, model = corpus_rows(rows)
    pair = [
        {"role": "user", "content": [{"type": "text", "text": "Hello"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Hi! How can I help?"}]},
    ]
    repo = Repo(path / "data" / "precis.db")
    try:
        big = repo.create_session(f"{rows:,} messages from the corpus", model)
        repo.add_messages(big.id, data)
        del data
        small = repo.create_session("small", model)
        repo.add_messages(small.id, pair)
        start = repo.create_session("start", model)
        repo.add_messages(start.id, pair)
        repo.update_session(start.id)  # the window opens the newest at start (measure_size switches it)
        count = repo.count_messages(big.id)
    finally:
        repo.close()
    db = path / "data" / "precis.db"
    return Home(path, big.id, small.id, start.id, count, db.stat().st_size / 1e6)


def make_newest(home: Home, session_id: int) -> None:
    """The window opens ``session_id`` at its next start: the newest chat, and the one it last showed."""
    repo = Repo(home.path / "data" / "precis.db")
    try:
        repo.update_session(session_id)
    finally:
        repo.close()
    # The window reopens the chat it showed last (window.ini, written at every open) before the newest one: a run
    # that opened the N-message session left it there, so "the N session in the home" started by reopening it.
    ini = home.path / "config" / "window.ini"
    if ini.exists():
        lines = ini.read_text(encoding="utf-8").splitlines()
        ini.write_text(
            "\n".join(f"last={session_id}" if line.startswith("last=") else line for line in lines) + "\n",
            encoding="utf-8",
        )


def _env(home: Path, base_url: str) -> dict[str, str]:
    # Without PYTHONDONTWRITEBYTECODE: an installed app starts from compiled bytecode, so the children may write
    # theirs (the warm-up run does) instead of compiling every module of the app at every start.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "PRECIS_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(
        PRECIS_HOME=str(home),
        QT_QPA_PLATFORM="offscreen",
        ANTHROPIC_API_KEY="bench-key",
        ANTHROPIC_BASE_URL=base_url,
        PYTHONPATH=str(ROOT),
    )
    return env


def run_once(launcher: Launcher, args: list[str], env: dict[str, str], report: Path) -> dict[str, Any]:
    """Start one child through the launcher, wait, and return its report plus spawn time and its peak RSS."""
    report.unlink(missing_ok=True)
    out, err = launcher.run(args, env)
    if out["timed_out"]:
        raise RuntimeError(f"{args} did not finish in {RUN_TIMEOUT:.0f} s (killed): {err[-2000:]}")
    if out["code"] != 0 or not report.exists():
        raise RuntimeError(f"{args} failed ({out['code']}): {err[-2000:]}")
    data = json.loads(report.read_text())
    data.update(spawned=out["spawned"], rss_mb=out["rss_mb"])  # Linux: ru_maxrss is in KiB
    return data


def run_direct(args: list[str], env: dict[str, str], report: Path) -> dict[str, Any]:
    """The old way, for the check only: a child of this process (subprocess, then os.wait4)."""
    report.unlink(missing_ok=True)
    proc = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    data = json.loads(report.read_text())
    data.update(rss_mb=usage.ru_maxrss / 1024)
    return data


def app_run(
    launcher: Launcher, home: Path, base_url: str, report: Path, open_id: int | None = None
) -> dict[str, Any]:
    env = _env(home, base_url) | {"PRECIS_BENCH_REPORT": str(report)}
    if open_id is not None:
        env["PRECIS_BENCH_OPEN"] = str(open_id)
    data = run_once(launcher, [sys.executable, "-m", "desktop"], env, report)
    if open_id is not None and not data.get("settled_at"):
        raise RuntimeError(f"the report of opening session {open_id} has no settled_at: {data}")
    return data


def med(runs: list[dict[str, Any]], start: str, end: str) -> float:
    return statistics.median((r[end] - r[start]) * 1000 for r in runs)


def rss(runs: list[dict[str, Any]]) -> float:
    return statistics.median(r["rss_mb"] for r in runs)


def measure_size(launcher: Launcher, tmp: Path, size: int, url: str, runs: int) -> dict[str, Any]:
    report = tmp / "report.json"
    t0 = time.perf_counter()
    home = build_home(tmp / f"home-{size}", size)
    build_s = time.perf_counter() - t0
    cold: list[dict[str, Any]] = []
    small: list[dict[str, Any]] = []
    big: list[dict[str, Any]] = []
    cold_big: list[dict[str, Any]] = []
    try:
        # The first open stores the per-row estimates the rows were written without (as after the upgrade to
        # schema v4): reported on its own; every later open reads the gauge from them.
        first = app_run(launcher, home.path, url, report, home.big_id)
        for _ in range(runs):  # round-robin, so a busy moment of the machine does not land on one figure only
            make_newest(home, home.start_id)  # the N session is in the home, not opened
            cold.append(app_run(launcher, home.path, url, report))
            small.append(app_run(launcher, home.path, url, report, home.small_id))
            big.append(app_run(launcher, home.path, url, report, home.big_id))
            make_newest(home, home.big_id)
            cold_big.append(app_run(launcher, home.path, url, report))
    finally:
        shutil.rmtree(home.path, ignore_errors=True)
    assert all(r["rows"] >= 2 for r in small) and all(r["rows"] > 0 for r in big)
    return {
        "size": size,
        "session_rows": home.rows,
        "db_mb": round(home.db_mb, 1),
        "build_home_s": round(build_s, 2),
        "view_rows_after_open": big[0]["rows"],
        "cold_start_ms": med(cold, "spawned", "shown_at"),
        "cold_start_big_newest_ms": med(cold_big, "spawned", "shown_at"),
        "first_paint_small_ms": med(small, "open_at", "painted_at"),
        "first_paint_ms": med(big, "open_at", "painted_at"),
        "settled_small_ms": med(small, "open_at", "settled_at"),
        "settled_ms": med(big, "open_at", "settled_at"),
        "settled_first_ms": (first["settled_at"] - first["open_at"]) * 1000,
        "peak_rss_first_mb": first["rss_mb"],
        "peak_rss_small_mb": rss(small),
        "peak_rss_mb": rss(big),
        "cold_start_all_ms": [round((r["shown_at"] - r["spawned"]) * 1000, 1) for r in cold],
        "first_paint_all_ms": [round((r["painted_at"] - r["open_at"]) * 1000, 1) for r in big],
        "settled_all_ms": [round((r["settled_at"] - r["open_at"]) * 1000, 1) for r in big],
        "peak_rss_all_mb": [round(r["rss_mb"], 1) for r in big],
    }


def measure(runs: int = 5, sizes: tuple[int, ...] = SIZES) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="precis-bench-") as tmp, FakeAnthropic(window=200_000) as api:
        tmp_path = Path(tmp)
        report = tmp_path / "report.json"
        url = api.base_url
        empty = tmp_path / "empty-home"
        launcher = Launcher(tmp_path)
        try:
            bare_args = [sys.executable, "-c", BARE_QT, str(report)]
            app_run(launcher, tmp_path / "warm-up", url, report)  # compiles the bytecode; not measured
            bare: list[dict[str, Any]] = []
            cold_empty: list[dict[str, Any]] = []
            for i in range(runs):  # in turn, so a busy moment of the machine lands on both
                bare.append(run_once(launcher, bare_args, _env(empty, url), report))
                cold_empty.append(app_run(launcher, tmp_path / f"empty-{i}", url, report))
            per_size = [measure_size(launcher, tmp_path, size, url, runs) for size in sizes]
            # The check, after this process has built the largest home: the old way inherits our peak.
            direct = run_direct(bare_args, _env(empty, url), report)
            launcher_hwm = launcher.hwm_mb
        finally:
            launcher.close()
    return {
        "runs": runs,
        "sizes": list(sizes),
        "bare_qt_ms": med(bare, "spawned", "shown_at"),
        "cold_start_empty_home_ms": med(cold_empty, "spawned", "shown_at"),
        "peak_rss_bare_qt_mb": rss(bare),
        "bare_qt_all_ms": [round((r["shown_at"] - r["spawned"]) * 1000) for r in bare],
        "cold_start_empty_home_all_ms": [round((r["shown_at"] - r["spawned"]) * 1000) for r in cold_empty],
        "rss_check": {
            "bare_qt_wait4_mb": rss(bare),
            "bare_qt_own_hwm_mb": statistics.median(r["hwm_mb"] for r in bare),
            "bare_qt_direct_child_mb": direct["rss_mb"],
            "bare_qt_direct_own_hwm_mb": direct["hwm_mb"],
            "launcher_peak_mb": launcher_hwm,
            "this_process_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        },
        "per_size": per_size,
    }


def target(key: str, size: int) -> float | None:
    limit = TARGETS.get(key)
    if limit is None or size > TARGET_UP_TO.get(key, sys.maxsize):
        return None
    return limit


def print_table(r: dict[str, Any]) -> None:
    print(
        f"Window, median of {r['runs']} fresh processes per figure, offscreen; sizes {', '.join(f'{s:,}' for s in r['sizes'])}"
    )
    print(f"{'measure':<40}{'value':>10}{'baseline':>10}{'ratio':>8}{'target':>9}  ok   baseline is")

    def line(label: str, value: float, base: float, unit: str, what: str, limit: float | None) -> None:
        ok = "" if limit is None else ("yes" if value <= limit else "NO")
        tgt = f"{limit:>6.0f}{unit:<2}" if limit is not None else f"{'':>8}"
        ratio = value / base if base else float("inf")
        print(f"{label:<40}{value:>8.0f}{unit:<2}{base:>8.0f}{unit:<2}{ratio:>7.2f}x{tgt} {ok:>4}   {what}")

    line(
        "cold start (empty home)",
        r["cold_start_empty_home_ms"],
        r["bare_qt_ms"],
        "ms",
        "bare QApplication + QWidget",
        TARGETS["cold_start_ms"],
    )
    print(
        f"   runs: bare QApplication {r['bare_qt_all_ms']} ms, cold start {r['cold_start_empty_home_all_ms']} ms"
    )
    for s in r["per_size"]:
        n, k = s["size"], f"{s['size'] // 1000}k"
        print(f"-- {s['session_rows']:,} messages ({s['db_mb']} MB database, built in {s['build_home_s']} s)")
        line(
            f"cold start (home with {k} session)",
            s["cold_start_ms"],
            r["bare_qt_ms"],
            "ms",
            "bare QApplication + QWidget",
            target("cold_start_ms", n),
        )
        line(
            f"cold start, {k} session reopened",
            s["cold_start_big_newest_ms"],
            s["cold_start_ms"],
            "ms",
            "cold start, small session",
            target("cold_start_ms", n),
        )
        line(
            f"first paint, open {k} session",
            s["first_paint_ms"],
            s["first_paint_small_ms"],
            "ms",
            "opening a 2-msg session",
            target("first_paint_ms", n),
        )
        line(
            f"open {k} session -> gauge filled",
            s["settled_ms"],
            s["settled_small_ms"],
            "ms",
            "opening a 2-msg session",
            target("settled_ms", n),
        )
        line(
            f"peak RSS, {k} session opened+settled",
            s["peak_rss_mb"],
            s["peak_rss_small_mb"],
            "MB",
            "2-msg session process",
            target("peak_rss_mb", n),
        )
        line(
            f"peak RSS, {k} session vs bare Qt",
            s["peak_rss_mb"],
            r["peak_rss_bare_qt_mb"],
            "MB",
            "bare Qt process",
            None,
        )
        line(
            f"first open ever, {k} -> gauge filled",
            s["settled_first_ms"],
            s["settled_ms"],
            "ms",
            "later opens (estimates stored)",
            None,
        )
        line(
            f"peak RSS, first open ever, {k}",
            s["peak_rss_first_mb"],
            s["peak_rss_mb"],
            "MB",
            "later opens",
            None,
        )
        print(
            f"   view rows after opening: {s['view_rows_after_open']} (newest page); runs: cold start "
            f"{s['cold_start_all_ms']} ms, first paint {s['first_paint_all_ms']} ms, "
            f"gauge filled {s['settled_all_ms']} ms, RSS {s['peak_rss_all_mb']} MB"
        )
    if len(r["per_size"]) > 1:
        first = r["per_size"][0]
        scale = ", ".join(
            f"{s['size'] // 1000}k {s['settled_ms'] / first['settled_ms']:.1f}x"
            for s in r["per_size"][1:]
            if first["settled_ms"]
        )
        print(f"gauge filled against the {first['size'] // 1000}k figure: {scale}")
    c = r["rss_check"]
    print(
        f"RSS check: bare Qt child's ru_maxrss {c['bare_qt_wait4_mb']:.0f} MB, its own VmHWM "
        f"{c['bare_qt_own_hwm_mb']:.0f} MB (must agree); launcher's peak {c['launcher_peak_mb']:.0f} MB (the floor); "
        f"started straight from this process (peak {c['this_process_peak_mb']:.0f} MB), the same child reads "
        f"{c['bare_qt_direct_child_mb']:.0f} MB with its own VmHWM {c['bare_qt_direct_own_hwm_mb']:.0f} MB"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--sizes",
        default=",".join(str(s) for s in SIZES),
        help="messages in the large session, comma-separated (default: %(default)s; '' measures "
        "only the cold start with an empty home)",
    )
    args = parser.parse_args(argv)
    sizes = tuple(sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()}))
    result = measure(args.runs, sizes)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
