"""What goes wrong on this machine is one sentence too (issue 35): the database held by another process, a write
refused by the file size limit or by a failing disk, odd usage numbers, an MCP server that cannot start, and the
folders Précis makes under a permissive umask. Real parts: real SQLite files, another process holding the lock, a
real file size limit, a real EIO, real server processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import re
import stat
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from desktop.engine.history.storage import StorageError, StorageLocked
from desktop.engine.types import Usage
from desktop.store import Store
from desktop.store import errors as store_errors
from desktop.tools.mcp_config import McpServerConfig
from desktop.tools.mcp_host import McpServer
from tests.cli_faults import env_for, fsize_limit, lock_held, one_line, seed


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "home" / "data" / "precis.db"
    seed(path)
    return path


# --- the database held by another process --------------------------------------------------------------------
async def _write_under_lock(db, hold: float) -> tuple[list[tuple[float, str]], float, BaseException | None]:
    """A write while another process holds the write lock for ``hold`` seconds (-1: until the write gives up):
    what the store said meanwhile (seconds after the write began, sentence), how long the write took, how it
    failed."""
    store = await Store.open(db)
    said: list[tuple[float, str]] = []
    failed: BaseException | None = None
    try:
        sid = (await store.list_sessions())[0].id
        with lock_held(db, hold):
            started = time.monotonic()
            store.on_lock_wait = lambda text: said.append((time.monotonic() - started, text))
            try:
                await store.add_message(sid, "user", [{"type": "text", "text": "under the lock"}])
            except StorageError as exc:
                failed = exc
            took = time.monotonic() - started
    finally:
        await store.close()
    return said, took, failed


async def test_a_locked_database_is_said_within_two_seconds_and_the_write_lands(db):
    said, took, failed = await _write_under_lock(db, 3.0)
    assert failed is None and took >= 2.5, (failed, took)
    assert len(said) == 1, said
    when, text = said[0]
    assert when <= 2.0, when
    assert "is locked by another program (perhaps another Précis)" in text and str(db) in text
    assert "waiting up to 60 s" in text


async def test_a_lock_held_past_the_wait_gives_up_in_one_sentence(db, monkeypatch):
    monkeypatch.setenv("PRECIS_LOCK_WAIT", "2")
    said, took, failed = await _write_under_lock(db, -1)
    assert isinstance(failed, StorageLocked) and re.search(r"stayed locked for [23] s", str(failed)), failed
    assert [t for _, t in said] and said[0][0] <= 2.0 and took < 5


def test_the_cli_says_the_database_is_held_while_it_waits_then_answers(db, fake_api):
    env = env_for(db.parent.parent, fake_api.base_url)
    fake_api.queue_text("after the wait")
    with lock_held(db, 8.0):  # longer than the CLI takes to start
        res = subprocess.run(
            [sys.executable, "-m", "desktop", "chat", "--session", "1", "hello"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert res.returncode == 0, res.stderr
    assert "after the wait" in res.stdout
    assert "is locked by another program (perhaps another Précis)" in res.stderr


# --- writes the disk refuses ---------------------------------------------------------------------------------
def test_a_write_past_the_file_size_limit_says_so(db, fake_api):
    """ulimit -f: the write fails with EFBIG, which SQLite reports as an I/O error and peewee then hides behind
    "cannot rollback - no transaction is active"."""
    env = env_for(db.parent.parent, fake_api.base_url)
    fake_api.queue_text("never stored")
    res = subprocess.run(
        [sys.executable, "-m", "desktop", "chat", "--session", "1", "-"],
        env=env,
        input="x" * 200_000,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=fsize_limit(db.stat().st_size),
    )
    line = one_line(res)
    assert res.returncode == 1
    assert (
        "rollback" not in line and "file size limit, ulimit -f" in line and "nothing was changed" in line
    ), line


@contextlib.contextmanager
def _real_eio() -> Iterator[OSError]:
    """An EIO from the kernel: reading a terminal whose other side is gone."""
    main, other = os.openpty()
    os.close(other)
    try:
        os.read(main, 1)
    except OSError as exc:
        assert exc.errno == errno.EIO
        yield exc
    finally:
        os.close(main)


def test_an_input_output_error_is_said_in_words(tmp_path):
    with _real_eio() as exc:
        said = str(store_errors.from_os_error(exc, tmp_path / "precis.db"))
    assert "[Errno" not in said and "input/output error" in said and str(tmp_path) in said, said


EIO_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* Writes to files whose path holds $EIO_MATCH fail with EIO, as on a failing disk. */
static int hit(int fd) {
    const char *match = getenv("EIO_MATCH");
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (!match || n <= 0) return 0;
    path[n] = 0;
    return strstr(path, match) != NULL;
}
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) {
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "pwrite64");
    if (hit(fd)) { errno = EIO; return -1; }
    return real(fd, buf, n, off);
}
"""


def test_a_database_write_the_disk_fails_is_said_in_words(db, tmp_path, fake_api):
    """A real failing write under SQLite (a libc shim makes its pwrite fail with EIO)."""
    if (
        not sys.platform.startswith("linux")
        or subprocess.run(["cc", "--version"], capture_output=True).returncode
    ):
        pytest.skip("needs Linux and a C compiler for the shim")
    (tmp_path / "eio.c").write_text(EIO_SHIM)
    shim = tmp_path / "eio.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", shim, tmp_path / "eio.c", "-ldl"], check=True)
    env = env_for(db.parent.parent, fake_api.base_url, LD_PRELOAD=str(shim), EIO_MATCH="precis.db")
    res = subprocess.run(
        [sys.executable, "-m", "desktop", "chat", "--session", "1", "hello"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = one_line(res)
    assert res.returncode == 1 and "disk reported an input/output error" in line and str(db) in line, line
    assert "disk I/O error" not in line and "[Errno" not in line


# --- usage numbers SQLite cannot hold ------------------------------------------------------------------------
async def test_usage_numbers_out_of_range_never_keep_a_reply_from_being_saved(db):
    store = await Store.open(db)
    try:
        sid = (await store.list_sessions())[0].id
        row = await store.add_message(sid, "assistant", [], status="streaming")
        odd = Usage(input_tokens=-5, output_tokens=10**30, cache_read_input_tokens=7)
        await store.update_message(
            row.id, content=[{"type": "text", "text": "kept"}], status="complete", usage=odd
        )
        saved = await store.get_message(row.id)
        await store.add_spend(sid, "summary", [("claude-test", odd)])
    finally:
        await store.close()
    assert saved is not None and saved.status == "complete" and saved.content[0]["text"] == "kept"
    assert saved.usage == Usage(input_tokens=0, output_tokens=0, cache_read_input_tokens=7)


# --- MCP servers that cannot start ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("config", "said"),
    [
        pytest.param(
            {"command": "precis-no-such-server"}, "command not found: precis-no-such-server", id="name"
        ),
        pytest.param({"command": "./nowhere/server"}, "command not found: ./nowhere/server", id="path"),
        pytest.param(
            {"command": "sh", "args": ["-c", "echo 'fatal: no config file' >&2; echo more >&2; exit 3"]},
            "it exited with code 3: fatal: no config file",
            id="exit-code-and-stderr",
        ),
    ],
)
async def test_an_mcp_server_that_cannot_start_says_why(tmp_path, config, said):
    server = McpServer(
        McpServerConfig.from_json("broken", {**config, "cwd": str(tmp_path)}), tmp_path / "logs"
    )
    started = time.monotonic()
    status = await server.start(timeout=20)
    assert status.state == "failed" and status.error.startswith(said), status.error
    assert "Connection closed" not in status.error and time.monotonic() - started < 10
    assert said.split(": ")[-1] in server.log_tail()  # the reason, or what the server wrote, is in its log


# --- folders under a permissive umask ------------------------------------------------------------------------
@contextlib.contextmanager
def _umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_every_folder_precis_makes_is_private_under_umask_000(precis_home, fake_api):
    from desktop.engine.compaction.ingest import cap_content
    from desktop.tools.mcp_host import open_log
    from tests.conftest import _open_engine

    assert not precis_home.exists()
    with _umask(0):
        async with _open_engine() as engine:
            paths = engine.paths
            spill = paths.spill_dir(7)
            cap_content([{"type": "text", "text": "x" * 60_000}], key="m1", spill_dir=spill)
            await asyncio.to_thread(lambda: open_log(paths.cache_dir / "mcp" / "calc.log").close())
    folders = [
        precis_home,
        paths.config_dir,
        paths.data_dir,
        paths.cache_dir,
        paths.data_dir / "spill",
        spill,
        paths.cache_dir / "mcp",
    ]
    assert {str(f): oct(_mode(f)) for f in folders} == {str(f): "0o700" for f in folders}
    assert _mode(paths.database) == 0o600


@pytest.mark.qt
async def test_the_window_says_the_database_is_held_whatever_chat_is_open(window):
    from desktop.engine.events import StorageWaiting
    from tests.conftest import engine_of

    said = "The database is locked by another program (perhaps another Précis); waiting up to 60 s for it."
    engine_of(window).emit(StorageWaiting(0, said))
    assert window.toast.isVisible() and window.toast.text() == said
