"""`precis chat --workspace/--allow/--yes`, the terminal prompt's answers, and `precis mcp`, in subprocesses
against the loopback server (and the prompt itself with a real pipe as its input)."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time

import pytest

from desktop.tools.permissions import Answer, PermissionRequest
from desktop.tools.types import ToolSpec
from tests.test_cli import cli_env, run  # noqa: F401 - the fixture
from tests.test_tools_mcp import server_config, write_mcp
from tests.tools_helpers import make_workspace


def test_without_a_workspace_no_builtin_tools_are_offered(cli_env, fake_api):  # noqa: F811
    fake_api.queue_text("plain")
    res = run(["chat", "hello"], cli_env)
    assert res.returncode == 0, res.stderr
    assert "tools" not in fake_api.message_requests()[0].body


def test_a_tool_needing_approval_ends_a_non_interactive_run_with_a_reason(cli_env, fake_api, tmp_path):  # noqa: F811
    ws = make_workspace(tmp_path / "ws")
    fake_api.queue_tool_use("write", {"file_path": "out.txt", "content": "hi"}, id="tw")
    res = run(["chat", "--workspace", str(ws), "--allow", "read", "write a file"], cli_env, input_text="")
    assert res.returncode == 1
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("precis: error: the tool write needs approval") and "--allow write" in last
    assert not (ws / "out.txt").exists() and len(fake_api.message_requests()) == 1


def test_allow_lets_the_listed_tool_run(cli_env, fake_api, tmp_path):  # noqa: F811
    ws = make_workspace(tmp_path / "ws")
    fake_api.queue_tool_use("write", {"file_path": "out.txt", "content": "hi"}, id="tw")
    fake_api.queue_text("written")
    res = run(
        ["chat", "--workspace", str(ws), "--allow", "read,write", "write a file"], cli_env, input_text=""
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout == "written\n" and (ws / "out.txt").read_text() == "hi"
    assert "tool write: ok" in res.stderr


def test_an_interactive_run_asks_on_the_terminal(cli_env, fake_api, tmp_path):  # noqa: F811
    ws = make_workspace(tmp_path / "ws")
    fake_api.queue_tool_use(
        "edit", {"file_path": "src/config.py", "old_string": "read()", "new_string": "read(1)"}, id="te"
    )
    fake_api.queue_text("edited")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", "chat", "--workspace", str(ws), "edit it"],
        env=cli_env,
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(follower)
    try:
        seen = b""
        deadline = time.monotonic() + 60
        while b"[d]eny" not in seen and time.monotonic() < deadline and proc.poll() is None:
            # The prompt goes to stderr; the terminal only carries our answer.
            if select.select([proc.stderr], [], [], 0.1)[0]:
                seen += os.read(proc.stderr.fileno(), 4096)
        assert b"[d]eny" in seen and b"+    return open(path).read(1)" in seen
        os.write(leader, b"o\n")
        out, err = (b.decode() for b in proc.communicate(timeout=60))
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out == "edited\n" and "read(1)" in (ws / "src" / "config.py").read_text()


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        ("o\n", Answer.ONCE),
        ("chat\n", Answer.CHAT),
        ("A\n", Answer.ALWAYS),
        ("d\n", Answer.DENY),
        ("\n", Answer.DENY),
        ("", None),
    ],
)
async def test_each_terminal_answer(monkeypatch, typed, answer, capsys):
    from desktop.cli.tools_cli import terminal_asker

    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    spec = ToolSpec("run", "builtin", "run", {"name": "run"})
    got = await terminal_asker(PermissionRequest(1, "t1", spec, {"command": "ls"}))
    assert got == answer
    assert '"command": "ls"' in capsys.readouterr().err


def test_mcp_list_and_import_from_claude_desktop(cli_env, precis_home, tmp_path):  # noqa: F811
    write_mcp(precis_home, {"calc": server_config()})
    listing = run(["mcp", "list", "--check", "--json"], cli_env)
    assert listing.returncode == 0, listing.stderr
    rows = json.loads(listing.stdout)
    assert rows[0]["name"] == "calc" and rows[0]["state"] == "ready" and "add" in rows[0]["tools"]
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs"]}}}))
    imported = run(["mcp", "import-claude-desktop", str(source)], cli_env)
    assert imported.returncode == 0 and imported.stdout == "fs\n"
    plain = run(["mcp", "list"], cli_env)
    assert [line.split()[0] for line in plain.stdout.splitlines()] == ["calc", "fs"]
    missing = run(["mcp", "import-claude-desktop", str(tmp_path / "nope.json")], cli_env)
    assert missing.returncode == 1 and "no Claude Desktop configuration" in missing.stderr
