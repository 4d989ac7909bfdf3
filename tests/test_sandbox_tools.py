"""The sandbox as the tools use it: the run tool and the compaction hooks hide Précis's folders wherever the home
is, without a caller naming them; a command has no network unless the setting gives it to all or the call asks
(and its approval is its own, and the prompts say what it opens); where no sandbox can start, --yes and --allow
refuse to run commands in one sentence unless --allow-unsandboxed says otherwise. Real processes throughout; the
missing bubblewrap is a PATH without it.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.engine.compaction.hooks import HookSettings
from desktop.engine.config.settings import HOOK_DEFAULTS, Paths, Settings
from desktop.tools import sandbox
from desktop.tools.builtin import DEFINITIONS, BuiltinTools, builtin_specs
from desktop.tools.compaction_hooks import CompactionHookRunner
from desktop.tools.permissions import (
    UNCONFINED,
    UNSANDBOXED_REFUSAL,
    Answer,
    PermissionPolicy,
    PermissionRequest,
)
from desktop.tools.run_command import precis_folders, run_command
from desktop.tools.types import BUILTIN, ToolSpec
from desktop.tools.workspace import Workspace
from tests.test_cli import cli_env, run  # noqa: F401 - the fixture
from tests.test_sandbox import KEY, PID, RAW, precis_home
from tests.tools_helpers import make_workspace

needs_bwrap = pytest.mark.skipif(RAW is not None, reason=f"bubblewrap cannot run here: {RAW}")
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap is Linux's")
RUN = ToolSpec("run", BUILTIN, "run", {"name": "run"})


@pytest.fixture(autouse=True)
def fresh_probe() -> Iterator[None]:
    sandbox.sandbox_problem.cache_clear()
    yield
    sandbox.sandbox_problem.cache_clear()


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without bubblewrap: a PATH without it."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


@pytest.fixture
def opt_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path, Path]]:
    """PRECIS_HOME under /opt (outside $HOME, /tmp and the workspace): what this process's Paths name."""
    root = Path(f"/opt/precis-test-tools-{PID}")
    if not os.access("/opt", os.W_OK):
        pytest.skip("cannot make a Précis home under /opt as this user")
    monkeypatch.setenv("PRECIS_HOME", str(root))
    with precis_home(root) as folders:
        yield folders


def interfaces(text: str) -> list[str]:
    return sorted(line.split(":")[0].strip() for line in text.splitlines() if ":" in line and "|" not in line)


HOST = interfaces(Path("/proc/net/dev").read_text()) if sys.platform == "linux" else []


# --- Précis's folders, without a caller naming them ------------------------------------------------------------
def test_precis_folders_are_this_processes_own_and_the_callers(monkeypatch, tmp_path):
    monkeypatch.setenv("PRECIS_HOME", str(tmp_path / "home"))
    assert precis_folders((tmp_path / "x",)) == (
        tmp_path / "x",
        tmp_path / "home" / "config",
        tmp_path / "home" / "data",
        tmp_path / "home" / "cache",
    )


@needs_bwrap
async def test_the_run_tool_hides_the_key_of_a_home_under_opt(opt_home, tmp_path):
    config, data, _cache = opt_home
    tools = BuiltinTools(Workspace.at(tmp_path))  # no folder named: the process's own are hidden anyway
    out = await tools.call(
        "run", {"command": f"cat {config}/keys.json {data}/precis.db; ls {config}; echo done"}
    )
    assert KEY not in out.text() and "done" in out.text()


@needs_bwrap
async def test_a_compaction_hook_hides_the_key_of_a_home_under_opt(opt_home, tmp_path):
    config, _data, _cache = opt_home
    ws = tmp_path / "ws"
    ws.mkdir()
    runner = CompactionHookRunner(
        lambda: HookSettings.of(dict(HOOK_DEFAULTS)), workspace_of=lambda _s, _f: ws
    )
    done = await runner.run(f"cat {config}/keys.json; echo done", {}, 30, 1, str(ws))
    assert done.code == 0 and KEY not in done.stdout + done.stderr and "done" in done.stdout


# --- the network ---------------------------------------------------------------------------------------------------
@needs_bwrap
async def test_a_command_has_no_network_unless_the_setting_or_the_call_gives_it(tmp_path):
    ws = Workspace.at(tmp_path)
    direct = await run_command("cat /proc/net/dev", tmp_path)
    plain = await BuiltinTools(ws).call("run", {"command": "cat /proc/net/dev"})
    asked = await BuiltinTools(ws).call("run", {"command": "cat /proc/net/dev", "network": True})
    not_quite = await BuiltinTools(ws).call("run", {"command": "cat /proc/net/dev", "network": "yes"})
    setting = await BuiltinTools(ws, network=True).call("run", {"command": "cat /proc/net/dev"})
    assert interfaces(direct.text()) == interfaces(plain.text()) == interfaces(not_quite.text()) == ["lo"]
    assert interfaces(asked.text()) == interfaces(setting.text()) == HOST


def test_the_network_is_off_by_default_in_the_settings(tmp_path):
    paths = Paths(tmp_path / "config", tmp_path / "data", tmp_path / "cache")
    assert Settings.load(paths, env={}).command_network is False
    paths.config_dir.mkdir()
    paths.settings_file.write_text(json.dumps({"command_network": True}))
    assert Settings.load(paths, env={}).command_network is True


def test_the_run_tool_offers_the_network_as_a_question():
    run_definition = next(d for d in DEFINITIONS if d["name"] == "run")
    assert run_definition["input_schema"]["properties"]["network"]["type"] == "boolean"
    assert "no network" in run_definition["description"]


def _request(arguments: dict[str, object], spec: ToolSpec = RUN) -> PermissionRequest:
    return PermissionRequest(1, "t1", spec, dict(arguments))


def test_only_a_built_in_command_with_network_true_asks_for_it():
    assert _request({"command": "curl x", "network": True}).asks_network
    assert not _request({"command": "curl x"}).asks_network
    assert not _request({"command": "curl x", "network": "true"}).asks_network
    assert not _request({"command": "x", "network": True}, ToolSpec("read", BUILTIN, "read", {})).asks_network
    mcp = ToolSpec("mcp__s__run", "s", "run", {})
    assert not _request({"command": "x", "network": True}, mcp).asks_network


async def test_allowing_commands_for_a_chat_never_covers_one_that_asks_for_the_network():
    asked: list[bool] = []

    async def asker(request: PermissionRequest) -> Answer:
        asked.append(request.asks_network)
        return Answer.CHAT

    policy = PermissionPolicy()
    plain = {"command": "ls"}
    networked = {"command": "pip install x", "network": True}
    for arguments in (plain, plain, networked, networked, plain):
        assert (await policy.decide(_request(arguments), asker)).allowed
    assert asked == [False, True]  # each asked once, and never one for the other
    always = PermissionPolicy()

    async def always_asker(request: PermissionRequest) -> Answer:
        asked.append(request.asks_network)
        return Answer.ALWAYS

    await always.decide(_request(networked), always_asker)
    assert (await always.decide(_request(networked), None)).how == "saved"
    assert not (await always.decide(_request(plain), None)).allowed


async def test_the_terminal_prompt_says_what_the_network_opens(monkeypatch, capsys):
    from desktop.cli.tools_cli import terminal_asker

    monkeypatch.setattr(sys, "stdin", io.StringIO("o\n"))
    assert await terminal_asker(_request({"command": "pip install x", "network": True})) == Answer.ONCE
    said = capsys.readouterr().err
    assert "asks for the network" in said and "the session bus" in said
    monkeypatch.setattr(sys, "stdin", io.StringIO("d\n"))
    assert await terminal_asker(_request({"command": "ls"})) == Answer.DENY
    assert "network" not in capsys.readouterr().err


def test_the_window_prompt_says_what_the_network_opens(qapp):
    from desktop.ui.tools.permission_prompt import PermissionPrompt

    prompt = PermissionPrompt()
    prompt.show_session(1)
    prompt.ask(_request({"command": "pip install x", "network": True}))
    assert prompt.changed.text() == prompt.network_text() and not prompt.changed.isHidden()
    assert "asks for the network" in prompt.network_text()
    prompt.settled(prompt.current.id if prompt.current else "")
    prompt.ask(_request({"command": "ls"}))
    assert prompt.changed.isHidden()
    prompt.close_all()


# --- where no sandbox can start -----------------------------------------------------------------------------------
async def test_without_a_sandbox_a_command_runs_only_where_the_user_was_told(no_bwrap, tmp_path):
    refused = await run_command("echo ran > marker.txt", tmp_path)
    assert refused.is_error and "was not run" in refused.text() and "not installed" in refused.text()
    assert not (tmp_path / "marker.txt").exists()
    told = await run_command("echo ran > marker.txt", tmp_path, unconfined=True)
    assert not told.is_error and (tmp_path / "marker.txt").read_text() == "ran\n"
    # The built-in tool's spec says unconfined there (its prompt warned), so its command runs.
    assert {s.name: s.origin for s in builtin_specs()}["run"] == UNCONFINED
    (tmp_path / "marker.txt").unlink()
    out = await BuiltinTools(Workspace.at(tmp_path)).call("run", {"command": "echo ran > marker.txt"})
    assert not out.is_error and (tmp_path / "marker.txt").exists()


async def test_yes_and_allow_refuse_an_unconfined_command_unless_allowed():
    unconfined = ToolSpec("run", BUILTIN, "run", {"name": "run"}, origin=UNCONFINED)
    request = _request({"command": "ls"}, unconfined)
    for policy in (
        PermissionPolicy(yes=True),
        PermissionPolicy(allow=["run"]),
        PermissionPolicy(allow=["*"]),
    ):
        verdict = await policy.decide(request, None)
        assert (verdict.allowed, verdict.reason) == (False, UNSANDBOXED_REFUSAL)
    assert UNSANDBOXED_REFUSAL.count(". ") == 0 and "--allow-unsandboxed" in UNSANDBOXED_REFUSAL
    assert (await PermissionPolicy(yes=True, allow_unsandboxed=True).decide(request, None)).how == "yes"
    assert (
        await PermissionPolicy(allow=["run"], allow_unsandboxed=True).decide(request, None)
    ).how == "allow-list"
    assert (await PermissionPolicy(yes=True).decide(_request({"command": "ls"}), None)).how == "yes"

    async def warned(_request: PermissionRequest) -> Answer:
        return Answer.ONCE

    assert (await PermissionPolicy().decide(request, warned)).allowed  # the prompt warned: the user's call


@pytest.mark.slow
def test_precis_chat_yes_refuses_commands_without_bubblewrap_unless_allowed(cli_env, fake_api, tmp_path):  # noqa: F811
    empty = tmp_path / "empty-path"
    empty.mkdir()
    env = {**cli_env, "PATH": str(empty)}
    ws = make_workspace(tmp_path / "ws")
    fake_api.queue_tool_use("run", {"command": "echo ran > marker.txt"}, id="t1")
    refused = run(["chat", "--workspace", str(ws), "--yes", "run it"], env, input_text="")
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines()[-1].startswith(f"precis: error: {UNSANDBOXED_REFUSAL}")
    assert not (ws / "marker.txt").exists()
    fake_api.queue_tool_use("run", {"command": "echo ran > marker.txt"}, id="t2")
    fake_api.queue_text("ran it")
    allowed = run(
        ["chat", "--workspace", str(ws), "--yes", "--allow-unsandboxed", "run it"], env, input_text=""
    )
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout == "ran it\n" and (ws / "marker.txt").read_text() == "ran\n"


@needs_bwrap
@pytest.mark.slow
def test_precis_chat_yes_runs_commands_in_the_sandbox(cli_env, fake_api, tmp_path):  # noqa: F811
    ws = make_workspace(tmp_path / "ws")
    fake_api.queue_tool_use("run", {"command": "grep ^CapEff /proc/self/status > caps.txt"}, id="t1")
    fake_api.queue_text("done")
    done = run(["chat", "--workspace", str(ws), "--yes", "check"], cli_env, input_text="")
    assert done.returncode == 0, done.stderr
    assert (ws / "caps.txt").read_text().split() == ["CapEff:", "0000000000000000"]
