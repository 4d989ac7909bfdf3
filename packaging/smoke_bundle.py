"""Smoke test of the one-folder bundle (``packaging/build.sh --smoke``), with the loopback test server:

1. the bundle's ``precis chat --new`` sends a message and prints the server's reply (the SDK, the store, the
   engine, all frozen);
2. the bundle's ``precis install-desktop`` (into a scratch folder) names the bundle's ``precis-gui``; that
   ``precis-gui`` starts offscreen, opens that chat, reports what it loaded (icon, style sheet,
   rows of the chat) and quits;
3. cold start, bundle against the dev venv (``python -m desktop``) in this same run: process spawn -> window
   shown, medians of ``--runs`` fresh processes each, with the same home.

Prints one JSON object (``--json``) or a few lines; exits 1 when a step fails.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakeapi import FakeAnthropic  # noqa: E402

REPLY = "Hello from the loopback server."


def env_for(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "PRECIS_", "QT_", "PYTHON", "VIRTUAL_ENV"))
    }
    env.update(
        PRECIS_HOME=str(home),
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="test-key",
        QT_QPA_PLATFORM="offscreen",
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        **extra,
    )
    return env


def folder_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()) / 2**20


def shown_ms(command: list[str], env: dict[str, str], work: Path) -> float:
    """Spawn -> the window is shown and painted (the app's PRECIS_BENCH_REPORT), in milliseconds."""
    report = work / "bench.json"
    report.unlink(missing_ok=True)
    start = time.time()
    subprocess.run(
        command,
        env={**env, "PRECIS_BENCH_REPORT": str(report)},
        check=True,
        timeout=120,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return (json.loads(report.read_text("utf-8"))["shown_at"] - start) * 1000


def smoke(bundle: Path, runs: int) -> dict[str, object]:
    out: dict[str, object] = {"bundle": str(bundle), "bundle_mb": round(folder_mb(bundle), 1)}
    with FakeAnthropic(window=200_000, reply_text=REPLY) as server, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        home = work / "home"
        env = env_for(home, server.base_url)
        chat = subprocess.run(
            [str(bundle / "precis"), "chat", "--new", "Say hello"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        out["chat_exit"] = chat.returncode
        out["chat_reply_ok"] = REPLY in chat.stdout
        if chat.returncode or REPLY not in chat.stdout:
            out["chat_stderr"] = chat.stderr[-2000:]
            return out
        subprocess.run(
            [str(bundle / "precis"), "install-desktop", "--data-home", str(work / "share")],
            env=env,
            check=True,
            capture_output=True,
            timeout=60,
        )
        entry = (work / "share" / "applications" / "io.github.precis.Precis.desktop").read_text("utf-8")
        out["desktop_entry_exec"] = next(line[5:] for line in entry.splitlines() if line.startswith("Exec="))
        startup, bench = work / "startup.json", work / "open.json"
        gui = subprocess.run(
            [str(bundle / "precis-gui")],
            timeout=120,
            capture_output=True,
            text=True,
            env={
                **env,
                "PRECIS_STARTUP_REPORT": str(startup),
                "PRECIS_BENCH_REPORT": str(bench),
                "PRECIS_BENCH_OPEN": "1",
            },
        )
        out["gui_exit"] = gui.returncode
        out["gui_warnings"] = [
            line for line in gui.stderr.splitlines() if "Cannot open" in line or "Error" in line
        ]
        if gui.returncode or not startup.exists() or not bench.exists():
            out["gui_stderr"] = gui.stderr[-2000:]
            return out
        out["startup"] = json.loads(startup.read_text("utf-8"))
        out["chat_rows_shown"] = json.loads(bench.read_text("utf-8")).get("rows", 0)
        venv_cmd = [str(ROOT / ".venv" / "bin" / "python"), "-m", "desktop"]
        bundle_cmd = [str(bundle / "precis-gui")]
        shown_ms(
            bundle_cmd, env, work
        )  # first run ever: page cache and the home's first start out of the way
        times: dict[str, list[float]] = {"bundle": [], "venv": []}
        for _ in range(runs):  # interleaved, so a busy moment of the machine hits both
            times["bundle"].append(shown_ms(bundle_cmd, env, work))
            times["venv"].append(shown_ms(venv_cmd, env, work))
        out["cold_start_ms"] = {k: round(statistics.median(v)) for k, v in times.items()}
        out["cold_start_ratio"] = round(
            statistics.median(times["bundle"]) / statistics.median(times["venv"]), 2
        )
    return out


def passed(result: dict[str, object]) -> bool:
    startup = result.get("startup")
    return (
        result.get("chat_reply_ok") is True
        and result.get("gui_exit") == 0
        and isinstance(startup, dict)
        and bool(startup.get("icon_renders"))
        and bool(startup.get("svg_renders"))
        and bool(startup.get("stylesheet_is_shipped"))
        and int(str(result.get("chat_rows_shown", 0))) >= 2
        and str(result.get("desktop_entry_exec", "")).endswith("/precis-gui")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", nargs="?", default=str(ROOT / "dist" / "precis"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    bundle = Path(args.bundle)
    if not (bundle / "precis-gui").exists():
        print(f"smoke_bundle: no bundle at {bundle} (run packaging/build.sh)", file=sys.stderr)
        return 2
    result = smoke(bundle, args.runs)
    ok = passed(result)
    if args.json:
        print(json.dumps({**result, "passed": ok}, indent=1))
    else:
        cold = result.get("cold_start_ms", {})
        print(
            f"bundle {result['bundle_mb']} MB; chat against the test server: "
            f"{'ok' if result.get('chat_reply_ok') else 'FAILED'}; window opened the chat "
            f"({result.get('chat_rows_shown', 0)} rows), icon and style sheet "
            f"{'loaded' if ok else 'NOT loaded'}; cold start bundle {cold.get('bundle')} ms, "
            f"venv {cold.get('venv')} ms ({result.get('cold_start_ratio')}x)"
        )
        if not ok:
            print(json.dumps(result, indent=1), file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
