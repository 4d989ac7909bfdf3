"""MCP servers through the official client, against a real stdio server written with the mcp package's
server side (tests/mcp_server.py): tools offered and called in a turn, stderr captured, a crashed or hung
server is a clear error and restarts, and the configuration's shape and import."""

from __future__ import annotations

import json
import os
import stat
import sys

from desktop.engine.events import TurnError
from desktop.tools.mcp_config import (
    KEYRING,
    McpConfig,
    McpServerConfig,
    import_claude_desktop,
    load_config,
    save_config,
)
from desktop.tools.mcp_host import McpServer
from desktop.tools.permissions import Answer, changed_parts
from tests.tools_helpers import tool_runtime


def server_config(name: str = "calc", **extra) -> dict:
    return {"command": sys.executable, "args": ["-m", "tests.mcp_server"], "cwd": str(_repo()), **extra}


def _repo():
    from pathlib import Path

    return Path(__file__).resolve().parent.parent


def write_mcp(home, servers: dict) -> None:
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


async def test_a_stdio_server_tool_is_offered_and_called_in_a_turn(fake_api, precis_home, tmp_path):
    write_mcp(precis_home, {"calc": server_config()})
    fake_api.queue_tool_use("mcp__calc__add", {"a": 20, "b": 22}, id="tm")
    fake_api.queue_tool_use("mcp__calc__shout", {"text": "hi"}, id="ts")
    fake_api.queue_text("42 it is")
    async with tool_runtime(
        workspace=None, allow=["mcp__calc__shout"], settings={"auto_approve_read_only": True}
    ) as rt:
        await rt.toolbox.start_servers()
        server = rt.toolbox.servers["calc"]
        assert server.state == "ready", server.error
        sid = await rt.engine.new_session()
        reply = await rt.engine.send(sid, "add them")
        messages = await rt.store.messages(sid)
        audit = await rt.tool_log.audit(sid)
        log_text = server.log_tail()
    results = {b["tool_use_id"]: b for m in messages for b in m.content if b.get("type") == "tool_result"}
    assert results["tm"]["content"] == "42" and results["ts"]["content"] == "HI"
    assert reply is not None and reply.content[0]["text"] == "42 it is"
    names = [t["name"] for t in fake_api.message_requests()[0].body["tools"]]
    assert (
        names == sorted(names) and "mcp__calc__add" in names
    )  # a fixed order, no built-ins without a workspace
    assert [(a.server, a.tool, a.decision) for a in audit] == [
        ("calc", "add", "read-only"),
        ("calc", "shout", "allow-list"),
    ]
    assert "precis-test MCP server starting" in log_text and "shouting hi" in log_text


async def test_a_crashed_server_is_an_error_result_and_restarts(precis_home, tmp_path):
    server = McpServer(McpServerConfig.from_json("calc", server_config()), tmp_path / "logs")
    assert (await server.start()).state == "ready"
    crashed = await server.call("crash", {})
    assert crashed.is_error and "calc" in crashed.text() and server.state == "failed"
    again = await server.call("add", {"a": 1, "b": 1})
    assert again.is_error and "restart" in again.text()
    assert (await server.restart()).state == "ready"
    assert (await server.call("add", {"a": 1, "b": 1})).text() == "2"
    await server.stop()


async def test_a_hung_server_call_times_out(precis_home, tmp_path):
    server = McpServer(McpServerConfig.from_json("calc", server_config()), tmp_path / "logs")
    await server.start()
    hung = await server.call("hang", {}, timeout=1.0)
    assert hung.is_error and "did not answer within 1 s" in hung.text() and server.state == "failed"
    await server.stop()


async def test_a_server_that_cannot_start_is_a_clear_failure(tmp_path):
    bad = McpServer(
        McpServerConfig.from_json("nope", {"command": str(tmp_path / "missing-binary")}), tmp_path
    )
    status = await bad.start(timeout=10)
    assert status.state == "failed" and status.error
    silent = McpServer(McpServerConfig.from_json("mute", {"command": "sleep", "args": ["30"]}), tmp_path)
    status = await silent.start(timeout=1.0)
    assert status.state == "failed" and "did not answer within 1 s" in status.error


async def test_a_failed_server_never_hangs_the_turn(fake_api, precis_home):
    write_mcp(precis_home, {"calc": server_config()})
    fake_api.queue_tool_use("mcp__calc__crash", {}, id="tc")
    fake_api.queue_text("the server broke")
    async with tool_runtime(workspace=None, yes=True) as rt:
        await rt.toolbox.start_servers()
        sid = await rt.engine.new_session()
        reply = await rt.engine.send(sid, "crash it")
        messages = await rt.store.messages(sid)
    assert reply is not None and not [e for e in rt.events if isinstance(e, TurnError)]
    result = next(b for m in messages for b in m.content if b.get("type") == "tool_result")
    assert result["is_error"] and "calc failed" in result["content"]


def test_config_keeps_unknown_keys_the_enable_switch_and_secrets_out_of_the_file(tmp_path, memory_keyring):
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "a": {
                        "command": "srv",
                        "args": ["--x"],
                        "env": {"TOKEN": "s3cret"},
                        "autoApprove": ["read"],
                    },
                    "b": {
                        "url": "https://example.test/mcp",
                        "headers": {"Authorization": "Bearer abc"},
                        "disabled": True,
                    },
                    "broken": {"args": []},
                }
            }
        )
    )
    config = load_config(path)
    assert [s.name for s in config.servers] == ["a", "b"] and config.problems == [
        "broken: needs a command or a url"
    ]
    assert config.get("b").enabled is False and config.get("b").transport == "http"
    assert save_config(path, config) == []
    written = json.loads(path.read_text())["mcpServers"]
    assert written["a"]["env"]["TOKEN"] == KEYRING and written["a"]["autoApprove"] == ["read"]
    assert "abc" not in path.read_text() and "s3cret" not in path.read_text()
    again = load_config(path)
    assert again.get("a").env["TOKEN"] == "s3cret" and again.get("b").headers["Authorization"] == "Bearer abc"
    assert again.get("a").origin != McpServerConfig("a", command="srv").origin  # bound to command and args


def test_import_from_claude_desktop_adds_new_servers_only(tmp_path):
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(
        json.dumps(
            {
                "mcpServers": {"fs": {"command": "npx", "args": ["fs"]}, "calc": {"command": "other"}},
                "globalShortcut": "x",
            }
        )
    )
    target = tmp_path / "mcp.json"
    save_config(target, McpConfig([McpServerConfig("calc", command="mine")]))
    imported, problems = import_claude_desktop(target, source)
    assert imported == ["fs"] and problems == []
    merged = load_config(target)
    assert merged.get("calc").command == "mine" and merged.get("fs").args == ["fs"]


async def test_mcp_definitions_past_a_tenth_of_the_window_are_searched_and_called_through_two_small_tools(
    fake_api, precis_home, monkeypatch
):
    # In a 3,000-token window the test server's five tool definitions are more than 10 %: requests offer a
    # search and a proxy instead, the same two for the whole session, so the cached prefix never changes.
    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "3000")
    fake_api.window = 3_000
    write_mcp(precis_home, {"calc": server_config()})
    fake_api.queue_tool_use("tool_search", {"query": "add integers"}, id="s1")
    fake_api.queue_tool_use("tool_call", {"name": "mcp__calc__add", "arguments": {"a": 2, "b": 3}}, id="c1")
    fake_api.queue_text("5 it is")
    async with tool_runtime(workspace=None, settings={"auto_approve_read_only": True}) as rt:
        await rt.toolbox.start_servers()
        assert rt.toolbox.servers["calc"].state == "ready"
        sid = await rt.engine.new_session()
        reply = await rt.engine.send(sid, "add 2 and 3")
        messages = await rt.store.messages(sid)
        audit = await rt.tool_log.audit(sid)
    requests = fake_api.message_requests()
    assert all([t["name"] for t in r.body["tools"]] == ["tool_search", "tool_call"] for r in requests)
    results = {b["tool_use_id"]: b for m in messages for b in m.content if b.get("type") == "tool_result"}
    assert "mcp__calc__add" in results["s1"]["content"] and "input_schema" in results["s1"]["content"]
    assert results["c1"]["content"] == "5" and not results["c1"].get("is_error")
    assert reply is not None and reply.content[0]["text"] == "5 it is"
    assert [(a.server, a.tool, a.decision) for a in audit] == [("calc", "add", "read-only")]


async def test_a_stdio_server_gets_only_the_environment_its_config_names_plus_path_and_home(
    tmp_path, monkeypatch
):
    # Précis's own environment holds the key and the user's session; the server sees none of it.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("PRECIS_HOME", str(tmp_path / "home"))
    for name, value in (("USER", "someone"), ("LOGNAME", "someone"), ("SHELL", "/bin/sh"), ("TERM", "xterm")):
        monkeypatch.setenv(name, value)
    server = McpServer(
        McpServerConfig.from_json("calc", server_config(env={"GIVEN": "yes", "TERM": "dumb"})),
        tmp_path / "logs",
    )
    assert (await server.start()).state == "ready", server.error
    try:
        seen = json.loads((await server.call("environ", {})).text())
    finally:
        await server.stop()
    assert seen.get("GIVEN") == "yes" and seen.get("TERM") == "dumb"  # what the config names, as it names it
    # LC_CTYPE: the server's own Python sets it when it starts in the C locale (PEP 538).
    assert set(seen) - {"PATH", "HOME", "GIVEN", "TERM", "LC_CTYPE"} == set(), sorted(seen)


async def test_a_server_log_is_readable_by_its_owner_only(tmp_path):
    old = os.umask(0o022)
    try:
        logs = tmp_path / "logs"
        logs.mkdir()
        (logs / "was.log").write_text("from an older Précis\n")  # created 0644 by an older version
        for name in ("new", "was"):
            server = McpServer(
                McpServerConfig.from_json(name, {"command": str(tmp_path / "missing-binary")}), logs
            )
            assert (await server.start(timeout=10)).state == "failed"
            assert stat.S_IMODE(server.log_path.stat().st_mode) == 0o600, name
    finally:
        os.umask(old)


async def test_an_always_approval_covers_the_whole_server_definition_and_a_change_asks_again(
    fake_api, precis_home, tmp_path
):
    # "Always" given to a server; then the same command and arguments run in another folder, with another
    # environment or another URL header: each is another server, so each asks again and says what changed.
    approved = McpServerConfig.from_json("calc", server_config(env={"MODE": "safe"}))
    (tmp_path / "elsewhere").symlink_to(_repo())  # another folder that starts the same server
    (tmp_path / "third").symlink_to(_repo())
    changes = {
        "cwd": {"cwd": str(tmp_path / "elsewhere")},
        "env": {"env": {"MODE": "other"}},
        "env+cwd": {"env": {"MODE": "safe", "MORE": "1"}, "cwd": str(tmp_path / "third")},
    }
    for label, change in changes.items():
        changed = McpServerConfig.from_json("calc", {**server_config(env={"MODE": "safe"}), **change})
        assert changed.origin != approved.origin, label
    asked = []

    async def ask(request):
        asked.append(request)
        return Answer.DENY

    for label, change in [("same", {}), *changes.items()]:
        write_mcp(precis_home, {"calc": {**server_config(env={"MODE": "safe"}), **change}})
        fake_api.queue_tool_use("mcp__calc__echo", {"text": "hi"}, id=f"t-{len(asked)}")
        fake_api.queue_text("done")
        async with tool_runtime(workspace=None, asker=ask) as rt:
            if label == "same":
                await rt.tool_log.save_approval("calc", "echo", approved.origin)
            await rt.toolbox.start_servers()
            config = rt.toolbox.servers["calc"].config
            assert rt.toolbox.servers["calc"].state == "ready", rt.toolbox.servers["calc"].error
            spec_origin = config.origin
            sid = await rt.engine.new_session()
            await rt.engine.send(sid, "echo")
            audit = await rt.tool_log.audit(sid)
        if label == "same":
            assert spec_origin == approved.origin and audit[0].decision == "saved" and not asked
        else:
            assert audit[0].decision == "denied", label
    assert [r.changed for r in asked] == [("cwd",), ("env",), ("cwd", "env")]


def test_an_approval_hash_covers_every_field_and_keeps_no_secret(tmp_path):
    base = McpServerConfig("s", command="srv", args=["a"], env={"TOKEN": "s3cret-value"}, cwd="/x")
    variants = [
        McpServerConfig("s", command="srv2", args=["a"], env={"TOKEN": "s3cret-value"}, cwd="/x"),
        McpServerConfig("s", command="srv", args=["b"], env={"TOKEN": "s3cret-value"}, cwd="/x"),
        McpServerConfig("s", command="srv", args=["a"], env={"TOKEN": "other"}, cwd="/x"),
        McpServerConfig("s", command="srv", args=["a"], env={"TOKEN": "s3cret-value"}, cwd="/y"),
    ]
    assert len({base.origin, *(v.origin for v in variants)}) == 5
    web = McpServerConfig("w", url="https://example.test/mcp", headers={"Authorization": "Bearer abc"})
    assert (
        web.origin
        != McpServerConfig(
            "w", url="https://example.test/mcp", headers={"Authorization": "Bearer xyz"}
        ).origin
    )
    assert "s3cret" not in base.origin and "abc" not in web.origin
    assert changed_parts(base.origin, variants[3].origin) == ("cwd",)
    assert changed_parts("0123456789abcdef0123456789abcdef", base.origin) == (
        "definition",
    )  # an older approval
