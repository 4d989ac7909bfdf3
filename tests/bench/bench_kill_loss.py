"""How much streamed text a kill loses: `precis chat` streams a steady reply, gets SIGKILL at a random moment, and
the text it had printed is compared with what the database holds.

The loss is measured in seconds of stream: the kill time less the time the committed prefix had been printed
(what the user saw in the last that many seconds is gone). docs/benchmarks.md promises at most half a second.

    .venv/bin/python -m tests.bench.bench_kill_loss [--kills 12] [--strict]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tests.fakeapi import FakeAnthropic, Fault

PROMISE = 0.5  # seconds (docs/benchmarks.md, docs/architecture.md)


def one_kill(server: FakeAnthropic, home: Path, after: float) -> float:
    """Stream, kill ``after`` seconds into the reply, return the seconds of printed text not committed."""
    server.queue_fault(Fault.slow(0.01))  # 20 characters every 10 ms: 2,000 characters a second
    server.queue_text("x" * 200_000)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PRECIS_"))}
    env.update(PRECIS_HOME=str(home), ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="test-key")
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", "chat", "--new", "stream"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    seen: list[tuple[float, int]] = []  # (time, characters printed so far)
    total = 0

    def read() -> None:
        nonlocal total
        fd = proc.stdout.fileno()  # type: ignore[union-attr]
        while chunk := os.read(fd, 65536):
            total += len(chunk)
            seen.append((time.monotonic(), total))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while not seen:
        time.sleep(0.005)
    time.sleep(after)
    killed_at = time.monotonic()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    reader.join(10)
    con = sqlite3.connect(home / "data" / "precis.db")
    try:
        row = con.execute("SELECT content FROM messages WHERE role='assistant' ORDER BY id DESC").fetchone()
    finally:
        con.close()
    blocks = json.loads(row[0]) if row else []
    committed = len(blocks[0].get("text", "")) if blocks else 0
    printed_at = next((t for t, n in seen if n >= committed), killed_at)
    return max(0.0, killed_at - printed_at)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_kill_loss")
    parser.add_argument("--kills", type=int, default=12)
    parser.add_argument("--strict", action="store_true", help="exit 1 when a kill lost more than the promise")
    args = parser.parse_args(argv)
    rng = random.Random(11)
    losses = []
    with FakeAnthropic(window=200_000) as server, tempfile.TemporaryDirectory() as tmp:
        for i in range(args.kills):
            losses.append(one_kill(server, Path(tmp) / f"home{i}", rng.uniform(0.3, 3.0)))
    losses.sort()
    print(
        f"kills: {len(losses)}  lost seconds of streamed text: median {statistics.median(losses):.3f}  "
        f"p90 {losses[int(0.9 * (len(losses) - 1))]:.3f}  max {losses[-1]:.3f}  (promise: ≤ {PROMISE} s)"
    )
    return 1 if args.strict and losses[-1] > PROMISE else 0


if __name__ == "__main__":
    raise SystemExit(main())
