"""A streamable-HTTP MCP server (tests/mcp_http_server.py, the mcp package's server side under uvicorn on
loopback) reached through the host: its tools offered and called in a turn with the configured headers on
every request; without the right header it is a clear failure, never a hung turn."""

from __future__ import annotations

import contextlib
import subprocess
import sys

import pytest

from desktop.tools.mcp_config import McpServerConfig
from desktop.tools.mcp_host import McpServer
from tests.test_tools_mcp import _repo, write_mcp
from tests.tools_helpers import tool_runtime

TOKEN = "tok-http-42"


@pytest.fixture
def http_server():
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp_http_server", "--token", TOKEN],
        cwd=_repo(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_an_http_server_tool_is_called_in_a_turn_with_the_configured_headers(
    fake_api, precis_home, http_server
):
    write_mcp(
        precis_home,
        {
            "web": {
                "url": http_server,
                "headers": {"Authorization": f"Bearer {TOKEN}", "X-Client": "precis-test"},
            }
        },
    )
    fake_api.queue_tool_use("mcp__web__add", {"a": 40, "b": 2}, id="ta")
    fake_api.queue_tool_use("mcp__web__whoami", {}, id="tw")
    fake_api.queue_text("42, from precis-test")
    async with tool_runtime(
        workspace=None, allow=["mcp__web__whoami"], settings={"auto_approve_read_only": True}
    ) as rt:
        await rt.toolbox.start_servers()
        server = rt.toolbox.servers["web"]
        assert server.state == "ready", server.error
        assert server.status.tools == ("add", "whoami")
        sid = await rt.engine.new_session()
        reply = await rt.engine.send(sid, "add and tell me who you are")
        messages = await rt.store.messages(sid)
        audit = await rt.tool_log.audit(sid)
    results = {b["tool_use_id"]: b for m in messages for b in m.content if b.get("type") == "tool_result"}
    assert results["ta"]["content"] == "42" and results["tw"]["content"] == "client: precis-test"
    assert reply is not None and reply.content[0]["text"] == "42, from precis-test"
    names = [t["name"] for t in fake_api.message_requests()[0].body["tools"]]
    assert names == ["mcp__web__add", "mcp__web__whoami"]
    assert [(a.server, a.tool, a.decision) for a in audit] == [
        ("web", "add", "read-only"),
        ("web", "whoami", "allow-list"),
    ]


async def test_an_http_server_refusing_the_headers_is_a_clear_failure(http_server, tmp_path):
    wrong = McpServer(
        McpServerConfig("web", url=http_server, headers={"Authorization": "Bearer wrong"}), tmp_path / "logs"
    )
    status = await wrong.start(timeout=15)
    assert status.state == "failed", status.error
    assert status.error == (
        "Server returned an error response: the server answered HTTP 401 Unauthorized "
        "(check the URL and headers)"
    )
    await wrong.stop()
