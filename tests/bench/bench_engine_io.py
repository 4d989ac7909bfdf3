"""Engine I/O benchmark: store round trips, gathers and measures for one plain turn and one manual compaction.

Run: ``.venv/bin/python -m tests.bench.bench_engine_io`` (``--json`` for machine-readable output,
``--baseline REV`` to compare against another commit); ``python -m tests.bench`` runs it with the others.

Two trees run the same scenario, each in a fresh interpreter with its own PRECIS_HOME, against one loopback
server (``tests.fakeapi.FakeAnthropic`` from this tree, started here, 8,000-token window):

* ``before``: the engine at commit ``a282ad8`` (checked out into a temporary detached worktree, removed
  afterwards, imported through PYTHONPATH);
* ``after``:  this tree.

Scenario: a session warmed up with six turns (a 225-word prompt and a 225-word reply each: about 4,500 tokens,
so a manual compaction has a head to summarise while a plain turn stays clear of the automatic threshold),
background work waited for; then counters reset, one plain turn (its figures are read as soon as the turn
returns; it crosses the prepare mark, and the background summary it starts is waited for and counted apart);
counters reset, one ``engine.compact(sid, "manual")`` (which drops that prepared summary and asks afresh).

Counting. After: ``Store.round_trips`` (every database call) and ``ChatEngine.shared.counts`` (``gathers``,
``measures``). Before: the old ``Store.call`` / ``Store.run`` (every old store method goes through them) and the
old ``ChatEngine.gather`` / ``ChatEngine.measure``, wrapped on the class. In both trees the store calls are
also logged by name. Model calls are the ``POST /v1/messages`` requests the server saw in each phase (the
child marks phase boundaries with a request the server records and answers 404).

Targets (after): ≤ 1 gather and ≤ 1 measure per model call, ≤ 8 round trips per plain turn, ≤ 12 per manual
compaction. The exit status is 1 if one is missed.

The child half of this file (``--child``) imports only the standard library and ``desktop``: it must work
with either tree's package.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

BASELINE = "a282ad8"
MODEL = "claude-test"
WINDOW = 8_000
MAX_OUTPUT = 1024
API_KEY = "test-key"
WARMUP_TURNS = 6
PROMPT_WORDS = 225
REPLY_WORDS = 225
MARK_PATH = "/v1/bench-mark/"
PHASES = ("warmup", "turn", "background", "compact")

# (phase, figure, limit, per model call?)
TARGETS: tuple[tuple[str, str, int, bool], ...] = (
    ("turn", "gathers", 1, True),
    ("turn", "measures", 1, True),
    ("turn", "round_trips", 8, False),
    ("compact", "gathers", 1, True),
    ("compact", "measures", 1, True),
    ("compact", "round_trips", 12, False),
)

_WORDS = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
    "pi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
)


def prose(n_words: int, seed: int) -> str:
    return " ".join(_WORDS[(seed * 7 + i) % len(_WORDS)] for i in range(n_words))


def prompt(i: int) -> str:
    return f"Instruction {i}: keep using tabs. " + prose(PROMPT_WORDS, i + 100)


def reply(i: int) -> str:
    return f"Answer {i}: " + prose(REPLY_WORDS, i)


def queue_replies(srv: Any) -> None:
    """Script every chat reply of the scenario up front (summary requests never take them)."""
    for i in range(WARMUP_TURNS + 1):
        srv.queue_text(reply(i))


# ------------------------------------------------------------------------------------ counting (child side)


class Meter:
    """Store round trips (with the repo method of each), gathers and measures since the last reset."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.gathers = 0
        self.measures = 0

    def record_store(self, store: Any) -> None:
        """Log every database call of this store instance by the repo method it runs."""
        call, run = store.call, store.run
        names = self.names

        async def logged_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            names.append(getattr(fn, "__name__", repr(fn)))
            return await call(fn, *args, **kwargs)

        def logged_run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            names.append(getattr(fn, "__name__", repr(fn)))
            return run(fn, *args, **kwargs)

        store.call, store.run = logged_call, logged_run

    def reset(self) -> None:
        self.names.clear()
        self.gathers = self.measures = 0

    def read(self) -> dict[str, Any]:
        return {
            "round_trips": len(self.names),
            "gathers": self.gathers,
            "measures": self.measures,
            "calls": list(self.names),
        }


class AfterMeter(Meter):
    """This tree counts for itself: ``Store.round_trips`` and ``engine.shared.counts``."""

    def __init__(self, engine: Any) -> None:
        super().__init__()
        self.store = engine.store
        self.counts = engine.shared.counts
        self.record_store(self.store)

    def reset(self) -> None:
        super().reset()
        self.store.round_trips = 0
        self.counts.clear()

    def read(self) -> dict[str, Any]:
        out = super().read()
        logged = out["round_trips"]
        out.update(
            round_trips=self.store.round_trips,
            gathers=self.counts["gathers"],
            measures=self.counts["measures"],
        )
        if logged != out["round_trips"]:  # something reached the database without Store.call/run
            out["unlogged_round_trips"] = out["round_trips"] - logged
        return out


def install_before_counters(meter: Meter) -> None:
    """The old engine has no counters: wrap its gather and measure on the class, before an engine exists."""
    from desktop.engine.turn.chat import ChatEngine

    gather, measure = ChatEngine.gather, ChatEngine.measure

    async def counted_gather(self: Any, *args: Any, **kwargs: Any) -> Any:
        meter.gathers += 1
        return await gather(self, *args, **kwargs)

    async def counted_measure(self: Any, *args: Any, **kwargs: Any) -> Any:
        meter.measures += 1
        return await measure(self, *args, **kwargs)

    ChatEngine.gather, ChatEngine.measure = counted_gather, counted_measure  # type: ignore[method-assign]


def http_mark(base_url: str) -> Callable[[str], None]:
    """Phase boundaries in the server's request log: a GET the server records (and answers 404)."""

    def mark(phase: str) -> None:
        req = urllib.request.Request(base_url.rstrip("/") + MARK_PATH + phase, headers={"x-api-key": API_KEY})
        with contextlib.suppress(urllib.error.HTTPError):  # the server answers 404, after recording it
            urllib.request.urlopen(req, timeout=10).close()

    return mark


async def wait_background(engine: Any, sid: int) -> None:
    if hasattr(engine, "tasks"):  # after: one task registry per session
        await engine.tasks.wait(sid, "prepare")
    else:  # before: the compactor kept its own background tasks
        await engine.compactor.wait_background(sid)


async def run_scenario(engine: Any, store: Any, meter: Meter, mark: Callable[[str], None]) -> dict[str, Any]:
    """Warm up, then one plain turn and one manual compaction, each counted from a reset. Replies must be queued
    (``queue_replies``)."""
    sid = (await store.create_session("bench", MODEL)).id
    mark("warmup")
    meter.reset()
    for i in range(WARMUP_TURNS):
        await engine.send(sid, prompt(i))
    await wait_background(engine, sid)
    warmup = meter.read()

    mark("turn")
    meter.reset()
    sent = await engine.send(sid, prompt(WARMUP_TURNS))
    turn = meter.read()
    mark("background")
    meter.reset()
    await wait_background(engine, sid)
    background = meter.read()

    mark("compact")
    meter.reset()
    outcome = await engine.compact(sid, "manual")
    compact = meter.read()
    mark("end")
    return {
        "warmup": warmup,
        "turn": turn,
        "background": background,
        "compact": compact,
        "turn_ok": sent is not None and sent.status == "complete",
        "compact_ok": bool(outcome.ok),
        "compact_message": outcome.message,
    }


async def _child_main() -> dict[str, Any]:
    import desktop
    from desktop.engine.config.secrets import Credentials

    base_url = os.environ["ANTHROPIC_BASE_URL"]
    creds = Credentials(api_key=API_KEY, source="env")
    mark = http_mark(base_url)
    try:
        from desktop.runtime import open_runtime
    except ImportError:
        open_runtime = None
    if open_runtime is not None:
        tree = "after"
        async with open_runtime(
            credentials=creds, adjust=lambda s: setattr(s, "max_output_tokens", MAX_OUTPUT)
        ) as runtime:
            result = await run_scenario(runtime.engine, runtime.store, AfterMeter(runtime.engine), mark)
    else:
        tree = "before"
        from desktop.engine.config.settings import Paths, Settings
        from desktop.engine.turn.chat import ChatEngine
        from desktop.store.store import Store

        meter = Meter()
        install_before_counters(meter)
        paths = Paths.resolve().ensure()
        settings = Settings.load(paths)
        settings.max_output_tokens = MAX_OUTPUT
        store = await Store.open(paths.database)
        meter.record_store(store)
        engine = ChatEngine(store, paths, settings, creds)
        try:
            result = await run_scenario(engine, store, meter, mark)
        finally:
            await engine.close()
            await store.close()
    return {"tree": tree, "desktop": str(Path(desktop.__file__).resolve().parent), **result}


# --------------------------------------------------------------------------------- the two runs (parent side)


def _root() -> Path:
    return Path(__file__).resolve().parents[2]


def phase_requests(requests: list[Any]) -> dict[str, dict[str, int]]:
    """Model calls per phase, split at the child's marks: chat and summary messages, token counts."""
    from tests.fakeapi import SUMMARY_MARKER

    out: dict[str, dict[str, int]] = {}
    phase: str | None = None
    for r in requests:
        if r.method == "GET" and r.path.startswith(MARK_PATH):
            phase = r.path[len(MARK_PATH) :]
            continue
        if phase not in PHASES:
            continue
        slot = out.setdefault(phase, {"chat": 0, "summary": 0, "count_tokens": 0})
        if r.method == "POST" and r.path == "/v1/messages":
            body = r.body if isinstance(r.body, dict) else {}
            system = str(body.get("system", ""))
            last_user = next(
                (m for m in reversed(body.get("messages") or []) if m.get("role") == "user"), None
            )
            summary = SUMMARY_MARKER in system or (last_user is not None and SUMMARY_MARKER in str(last_user))
            slot["summary" if summary else "chat"] += 1
        elif r.method == "POST" and r.path == "/v1/messages/count_tokens":
            slot["count_tokens"] += 1
    for p in PHASES:
        slot = out.setdefault(p, {"chat": 0, "summary": 0, "count_tokens": 0})
        slot["model_calls"] = slot["chat"] + slot["summary"]
    return out


def run_child(tree_root: Path, srv: Any, home: Path) -> dict[str, Any]:
    """The scenario in a fresh interpreter that imports ``desktop`` from ``tree_root``."""
    srv.clear_log()
    queue_replies(srv)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "PRECIS_")) and k != "PYTHONPATH"
    }
    env.update(
        PYTHONPATH=str(tree_root),
        PRECIS_HOME=str(home),
        PRECIS_CONTEXT_WINDOW=str(WINDOW),
        ANTHROPIC_BASE_URL=srv.base_url,
        ANTHROPIC_API_KEY=API_KEY,
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        QT_QPA_PLATFORM="offscreen",
    )
    out = home / "result.json"
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", "--out", str(out)],
        env=env,
        cwd=str(home),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"scenario failed under {tree_root} (exit {proc.returncode}):\n"
            f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    result = json.loads(out.read_text("utf-8"))
    if Path(result["desktop"]) != (tree_root / "desktop").resolve():
        raise RuntimeError(f"the child imported {result['desktop']}, not {tree_root / 'desktop'}")
    result["requests"] = phase_requests(srv.requests)
    result["unused_replies"] = srv.pending_replies
    return result


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(_root()), *args], capture_output=True, text=True)


def measure_both(baseline: str = BASELINE) -> dict[str, Any]:
    from tests.fakeapi import FakeAnthropic

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="precis-bench-io-") as tmp, FakeAnthropic(window=WINDOW) as srv:
        srv.window = WINDOW
        old = Path(tmp) / "before"
        added = _git("worktree", "add", "--detach", str(old), baseline)
        if added.returncode != 0:
            results["before_error"] = f"baseline {baseline} not available: {added.stderr.strip()}"
        else:
            try:
                (Path(tmp) / "home-before").mkdir()
                results["before"] = run_child(old, srv, Path(tmp) / "home-before")
            finally:
                _git("worktree", "remove", "--force", str(old))
                _git("worktree", "prune")
        (Path(tmp) / "home-after").mkdir()
        results["after"] = run_child(_root(), srv, Path(tmp) / "home-after")
    return results


# ------------------------------------------------------------------------------------------------ report


def figures(result: dict[str, Any], phase: str) -> dict[str, float]:
    counts = result[phase]
    calls = result["requests"][phase]["model_calls"] if "requests" in result else counts.get("model_calls", 0)
    per = max(calls, 1)
    return {
        "model_calls": calls,
        "round_trips": counts["round_trips"],
        "gathers": counts["gathers"],
        "measures": counts["measures"],
        "gathers_per_call": counts["gathers"] / per,
        "measures_per_call": counts["measures"] / per,
    }


def check_targets(result: dict[str, Any]) -> list[tuple[str, str, float, int, bool]]:
    """(phase, figure, value, limit, met) for every target, on one tree's result."""
    rows = []
    for phase, name, limit, per_call in TARGETS:
        f = figures(result, phase)
        value = f[f"{name}_per_call"] if per_call else f[name]
        met = value <= limit and (not per_call or f["model_calls"] > 0)
        rows.append((phase, f"{name} per model call" if per_call else name, value, limit, met))
    return rows


_LABELS = {
    "warmup": f"warm-up ({WARMUP_TURNS} turns)",
    "turn": "plain turn",
    "compact": "manual compaction",
    "background": "background work after the turn",
}
_ROWS = (
    ("model_calls", "model calls", None),
    ("round_trips", "store round trips", "round_trips"),
    ("gathers", "gathers", None),
    ("measures", "measures", None),
    ("gathers_per_call", "gathers per model call", "gathers"),
    ("measures_per_call", "measures per model call", "measures"),
)


def _target_for(phase: str, key: str) -> str:
    for p, name, limit, per_call in TARGETS:
        if p == phase and key == (f"{name}_per_call" if per_call else name):
            return f"≤ {limit}"
    return ""


def _num(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.2f}"


def _ratio(after: float, before: float | None) -> str:
    if before is None:
        return "n/a"
    if before == 0:
        return "=" if after == 0 else "new"
    return f"{after / before:.2f}"


def table_rows(results: dict[str, Any]) -> list[tuple[str, str, str, str, str, str, str]]:
    after = results["after"]
    before = results.get("before")
    rows = []
    for phase in ("turn", "compact"):
        fa = figures(after, phase)
        fb = figures(before, phase) if before else None
        for key, label, _ in _ROWS:
            target = _target_for(phase, key)
            met = ""
            if target:
                met = "yes" if fa[key] <= int(target[2:]) and fa["model_calls"] > 0 else "NO"
            rows.append(
                (
                    _LABELS[phase],
                    label,
                    _num(fb[key] if fb else None),
                    _num(fa[key]),
                    _ratio(fa[key], fb[key] if fb else None),
                    target,
                    met,
                )
            )
    return rows


def breakdown(result: dict[str, Any], phase: str) -> str:
    calls = Counter(result[phase]["calls"])
    return ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in calls.items()) or "none"


def report(results: dict[str, Any]) -> str:
    lines = []
    rows = table_rows(results)
    head = ("phase", "figure", "before", "after", "after/before", "target", "met")
    widths = [max(len(str(r[i])) for r in (*rows, head)) for i in range(len(head))]
    lines.append(
        "  ".join(
            h.ljust(w) if i < 2 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths, strict=True))
        )
    )
    for r in rows:
        lines.append(
            "  ".join(
                c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    if "before_error" in results:
        lines.append(f"(no baseline: {results['before_error']})")
    lines.append("")
    for tree in ("before", "after"):
        if tree not in results:
            continue
        res = results[tree]
        for phase in PHASES:
            req = res["requests"][phase]
            lines.append(
                f"{tree:>6} {_LABELS[phase]}: {res[phase]['round_trips']} round trips "
                f"[{breakdown(res, phase)}]; requests: {req['chat']} chat, {req['summary']} summary, "
                f"{req['count_tokens']} count_tokens"
            )
        if not res["turn_ok"] or not res["compact_ok"] or res["unused_replies"]:
            lines.append(
                f"{tree:>6} WARNING: turn ok={res['turn_ok']}, compaction ok={res['compact_ok']} "
                f"({res['compact_message']}), unused scripted replies={res['unused_replies']}"
            )
        if res["turn"].get("unlogged_round_trips") or res["compact"].get("unlogged_round_trips"):
            lines.append(f"{tree:>6} WARNING: round trips not seen by Store.call/run")
    lines.append("")
    lines.append("Markdown (for docs/benchmarks.md):")
    lines.append("")
    lines.append("| phase | figure | before (a282ad8) | after | after / before | target | met |")
    lines.append("|---|---|---:|---:|---:|---:|:--:|")
    for r in rows:
        lines.append("| " + " | ".join(r) + " |")
    return "\n".join(lines)


def failures(results: dict[str, Any]) -> list[str]:
    after = results["after"]
    out = [
        f"{_LABELS[p]}: {name} = {_num(v)} > {limit}"
        for p, name, v, limit, met in check_targets(after)
        if not met
    ]
    if not after["turn_ok"]:
        out.append("the plain turn did not complete")
    if not after["compact_ok"]:
        out.append(f"the manual compaction did not compact: {after['compact_message']}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--baseline", default=BASELINE, help="commit of the 'before' engine")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        Path(args.out).write_text(json.dumps(asyncio.run(_child_main())), "utf-8")
        return 0
    results = measure_both(args.baseline)
    missed = failures(results)
    if args.json:
        print(json.dumps({**results, "missed": missed}, indent=2))
    else:
        print(
            "Engine I/O per plain turn and per manual compaction (counts, not timings; ratios against the "
            f"{args.baseline} engine run in the same process)"
        )
        print(report(results))
        print()
        print("targets missed: " + "; ".join(missed) if missed else "all targets met")
    return 1 if missed else 0


if __name__ == "__main__":
    if "--child" in sys.argv:
        # Run as a file: sys.path[0] is tests/bench, so ``desktop`` comes from PYTHONPATH (the tree under test).
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.exit(main())
