"""Helpers of the fault-injection tests: `precis` in a subprocess, databases in odd states, another process holding
the database's lock, small file systems. Real parts only: the real CLI, real SQLite files, real mounts."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

PY = sys.executable


def run(
    args: list[str] | list[bytes],
    env: dict[str, str],
    *,
    input_bytes: bytes | None = None,
    timeout: float = 60,
    preexec=None,
) -> subprocess.CompletedProcess[str]:  # noqa: ANN001
    res = subprocess.run(
        [PY, "-m", "desktop", *args],
        env=env,
        input=input_bytes,
        capture_output=True,
        timeout=timeout,
        preexec_fn=preexec,
    )
    return subprocess.CompletedProcess(
        res.args, res.returncode, res.stdout.decode("utf-8", "replace"), res.stderr.decode("utf-8", "replace")
    )


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def one_line(res: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a refused command (no traceback, no usage block)."""
    assert "Traceback" not in res.stderr, res.stderr
    got = lines(res.stderr)
    assert len(got) == 1, res.stderr
    return got[0]


def error_line(res: subprocess.CompletedProcess[str]) -> str:
    """The one error line among the status lines of a command that failed part-way."""
    assert "Traceback" not in res.stderr, res.stderr
    errors = [line for line in lines(res.stderr) if line.startswith("precis: error:")]
    assert len(errors) == 1, res.stderr
    return errors[0]


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with a hash of its bytes: "nothing was written" is this staying equal."""
    out: dict[str, str] = {}
    if folder.is_file():
        return {folder.name: hashlib.sha256(folder.read_bytes()).hexdigest()}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def seed(db: Path, sessions: int = 1, exchanges: int = 3) -> None:
    """A real Précis database with a few sessions, written through the store, closed cleanly."""
    from desktop.store import Store

    store = Store.open_sync(db)
    repo = store.repo
    for s in range(sessions):
        sid = store.run(repo.create_session, f"chat {s + 1}", "claude-sonnet-4-6").id
        for i in range(exchanges):  # on the database thread: its one connection is closed (and checkpointed)
            store.run(
                repo.add_message, sid, "user", [{"type": "text", "text": f"question {i} " + "x" * 3000}]
            )
            store.run(
                repo.add_message, sid, "assistant", [{"type": "text", "text": f"answer {i} " + "y" * 3000}]
            )
    store.close_sync()
    assert not db.with_name(db.name + "-wal").exists()


def message_count(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    finally:
        con.close()


LOCKER = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline() if float(sys.argv[2]) < 0 else time.sleep(float(sys.argv[2]))
con.execute("COMMIT")
"""


@contextlib.contextmanager
def lock_held(db: Path, seconds: float = -1) -> Iterator[subprocess.Popen[str]]:
    """Another process holds the database's write lock for ``seconds`` (or until the block ends when < 0)."""
    proc = subprocess.Popen(
        [PY, "-c", LOCKER, str(db), str(seconds)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        yield proc
    finally:
        if proc.poll() is None and seconds < 0:
            assert proc.stdin is not None
            proc.stdin.write("\n")
            proc.stdin.flush()
        proc.wait(60)


@contextlib.contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path | None]:
    """A size-limited tmpfs at ``where`` (None when this process may not mount one)."""
    where.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if res.returncode != 0:
        print(f"tmpfs not mountable here: {res.stderr.strip() or res.returncode}")
        yield None
        return
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def remount_read_only(where: Path) -> bool:
    return subprocess.run(["mount", "-o", "remount,ro", str(where)], capture_output=True).returncode == 0


def fsize_limit(limit: int):  # noqa: ANN201 - a preexec_fn
    """A child whose files may not grow past ``limit`` bytes (the fallback for a full disk)."""
    import resource
    import signal

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def env_for(home: Path, base_url: str | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PRECIS_"))}
    env["PRECIS_HOME"] = str(home)
    if base_url:
        env.update(ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="test-key")
    env.update(extra)
    return env
