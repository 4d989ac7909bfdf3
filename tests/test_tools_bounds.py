"""Bounded previews and inputs: the permission prompt's diff never reads more than a few MB of the target file,
and hostile MCP servers (garbage or a flood on their output, silence, a huge answer) are stopped with one
sentence instead of filling memory or hanging (tests/mcp_hostile.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs a turn in which the model writes to a file; the asker records the request's diff and denies. Prints the
# diff and the process's peak memory.
_WRITE_TURN = """
import asyncio, json, sys
from pathlib import Path
from tests.tools_helpers import tool_runtime

async def main():
    seen = []
    async def ask(request):
        seen.append(request.diff)
        from desktop.tools.permissions import Answer
        return Answer.DENY
    async with tool_runtime(workspace=Path(sys.argv[1]), asker=ask) as rt:
        sid = await rt.engine.new_session()
        await rt.engine.send(sid, "write it")
    # VmHWM belongs to this process's own memory map: ru_maxrss would carry over the forking pytest worker's
    # peak across exec (Linux keeps it), which is not this process's.
    status = Path("/proc/self/status").read_text()
    peak = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) // 1024
    print(json.dumps({"diff": seen[0] if seen else None, "peak_mb": peak}))

asyncio.run(main())
"""


def test_the_diff_preview_of_a_huge_file_reads_only_its_cap_and_says_it_is_too_large(
    fake_api, precis_home, tmp_path
):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with open(workspace / "big.txt", "wb") as fh:  # 700 MB, sparse: nothing on disk, all of it when read
        fh.truncate(700 * 1024 * 1024)
    fake_api.queue_tool_use("write", {"file_path": "big.txt", "content": "small\n"}, id="tw")
    fake_api.queue_text("denied then")
    env = {
        **os.environ,
        "PRECIS_HOME": str(precis_home),
        "ANTHROPIC_BASE_URL": fake_api.base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-c", _WRITE_TURN, str(workspace)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["diff"] is not None and "too large to preview" in result["diff"], result["diff"][:300]
    assert "700.0 MB" in result["diff"]
    assert result["peak_mb"] < 500, result["peak_mb"]  # the whole file would be 700 MB, and its diff more


def hostile(name: str, mode: str):
    from desktop.tools.mcp_config import McpServerConfig

    return McpServerConfig.from_json(
        name, {"command": sys.executable, "args": ["-m", "tests.mcp_hostile", mode], "cwd": str(ROOT)}
    )


def _gone(pid_before: set[int], mode: str) -> bool:
    """No process of this hostile mode is left running."""
    out = subprocess.run(["pgrep", "-f", f"tests.mcp_hostile {mode}"], capture_output=True, text=True).stdout
    return not ({int(p) for p in out.split()} - pid_before)


async def test_a_server_that_prints_garbage_is_stopped_with_one_sentence_not_at_the_timeout(tmp_path, caplog):
    from desktop.tools.mcp_host import McpServer

    server = McpServer(hostile("noisy", "garbage"), tmp_path / "logs")
    status = await server.start(timeout=600)  # the sentence comes from the garbage, long before a timeout
    assert status.state == "failed" and "not MCP messages" in status.error and "stopped" in status.error, (
        status
    )
    assert len(status.error.splitlines()) == 1
    assert (
        len([r for r in caplog.records if "JSONRPC" in r.getMessage()]) < 5
    )  # not one log line per bad line
    assert _gone(set(), "garbage")


async def test_a_server_that_never_answers_is_stopped_with_one_sentence(tmp_path):
    from desktop.tools.mcp_host import McpServer

    server = McpServer(hostile("mute", "silent"), tmp_path / "logs")
    status = await server.start(timeout=1)
    assert status.state == "failed" and status.error == "did not answer within 1 s; it was stopped", status
    assert server.state == "failed" and server._task is None
    assert _gone(set(), "silent")


async def test_a_server_that_floods_its_error_output_is_stopped_and_its_log_stays_bounded(tmp_path):
    from desktop.tools import mcp_host
    from desktop.tools.mcp_host import McpServer

    server = McpServer(hostile("loud", "stderr"), tmp_path / "logs")
    status = await server.start(timeout=600)
    assert status.state == "failed" and "wrote more than" in status.error and "stopped" in status.error, (
        status
    )
    assert server.log_path.stat().st_size < mcp_host.LOG_LIMIT + 10_000
    assert _gone(set(), "stderr")


async def test_a_huge_tool_answer_is_cut_to_a_bound(tmp_path):
    from desktop.tools import mcp_host
    from desktop.tools.mcp_host import McpServer

    server = McpServer(hostile("big", "big"), tmp_path / "logs")
    assert (await server.start(timeout=300)).state == "ready", server.error  # a loaded machine starts slowly
    try:
        outcome = await server.call("big", {})
    finally:
        await server.stop()
    text = outcome.text()
    assert len(text) <= mcp_host.RESULT_CHARS + 300 and "cut" in text


# Starts the server that writes one endless line on its stdout and prints its status and this process's peak
# memory. The address space is capped so that reading without a bound ends in a MemoryError here, not in a
# machine out of memory.
_LONG_LINE = """
import asyncio, json, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))
from desktop.tools.mcp_config import McpServerConfig
from desktop.engine import lazy_imports
from desktop.tools.mcp_host import McpServer

def peak_mb():
    status = Path("/proc/self/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) // 1024

async def main():
    await lazy_imports.load(lazy_imports.MCP)  # the client stack in memory before the baseline
    base = peak_mb()
    config = McpServerConfig.from_json("hog", {"command": sys.executable, "args": ["-m", "tests.mcp_hostile",
                                                                                    "long-line"], "cwd": sys.argv[2]})
    server = McpServer(config, Path(sys.argv[1]))
    status = await server.start(timeout=60)
    await server.stop()
    print(json.dumps({"state": status.state, "error": status.error, "grown_mb": peak_mb() - base}))

asyncio.run(main())
"""


def test_a_server_that_writes_one_endless_line_is_stopped_with_one_sentence_and_memory_stays_bounded(
    tmp_path,
):
    from desktop.tools import mcp_stdio

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _LONG_LINE, str(tmp_path / "logs"), str(ROOT)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    megabytes = mcp_stdio.MESSAGE_LIMIT // 1_000_000
    assert result["state"] == "failed", result
    assert result["error"] == f"it sent a message larger than {megabytes} MB; it was stopped", result
    # At most a few times the limit while the line is cut (reading it whole grew by 62 MB in 60 s, and on)
    assert result["grown_mb"] < 3 * megabytes, result["grown_mb"]
    assert _gone(set(), "long-line")


def test_lines_are_split_across_chunks_and_a_line_past_the_limit_is_reported_once_and_skipped():
    from desktop.tools.mcp_stdio import Lines

    lines = Lines(limit=10)
    assert lines.feed(b'{"a"') == []
    assert lines.feed(b': 1}\n\n  \n{"b"') == [b'{"a": 1}']  # blank lines are not messages
    assert lines.feed(b"\n" + b"x" * 11) == [b'{"b"', None]
    assert lines.feed(b"y" * 1000) == []  # the rest of the long line: skipped, not held
    assert lines._held == bytearray()
    assert lines.feed(b"z\nok\n") == [b"ok"]  # the next line is read again
    assert lines.feed(b"0123456789\n") == [b"0123456789"]  # exactly the limit is a message


async def test_an_answer_past_the_message_limit_stops_the_server_with_one_sentence(tmp_path):
    from desktop.tools.mcp_host import McpServer

    server = McpServer(hostile("huge", "huge"), tmp_path / "logs")
    assert (await server.start(timeout=300)).state == "ready", server.error
    try:
        outcome = await server.call("big", {})
    finally:
        await server.stop()
    assert outcome.is_error, outcome.text()[:200]
    assert outcome.text() == "MCP server huge failed: it sent a message larger than 8 MB; it was stopped"
    assert _gone(set(), "huge")
