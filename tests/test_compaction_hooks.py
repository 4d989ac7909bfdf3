"""Compaction hooks: the user's command before a compaction (veto, added focus) and after it (told what was cut),
run as real processes, sandboxed like the run tool's commands, killed at their limit, and never in the chat's way."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from desktop.engine.compaction import hooks
from desktop.engine.compaction.hooks import (
    GO_ON,
    HookSettings,
    NoHooks,
    PostCompact,
    PreCompact,
    PreVerdict,
    cut_of,
    post_compact,
    pre_compact,
)
from desktop.engine.config.settings import HOOK_DEFAULTS, Paths, Settings
from desktop.engine.types import StoredMessage
from desktop.tools import sandbox
from desktop.tools.compaction_hooks import CompactionHookRunner

NO_SANDBOX = sandbox.sandbox_problem(False)
needs_sandbox = pytest.mark.skipif(
    NO_SANDBOX is not None, reason=f"the sandbox cannot run here: {NO_SANDBOX}"
)


def _visible_python() -> str | None:
    """A Python the sandbox shows (it empties the homes and /tmp, where a pyenv or a venv's own may live)."""
    hidden = [Path.home().resolve(), Path("/home"), Path("/root"), Path("/tmp"), Path("/var/tmp")]
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3", sys.executable):
        real = Path(candidate).resolve()
        if real.is_file() and not any(real.is_relative_to(h) for h in hidden):
            return str(real)
    return None


PY = _visible_python()
needs_python = pytest.mark.skipif(
    PY is None, reason="no Python outside the homes and /tmp for the sandbox to run"
)


def runner(
    workspace: Path | None = None, hidden: tuple[Path, ...] = (), **config: object
) -> CompactionHookRunner:
    settings = HookSettings.of({**HOOK_DEFAULTS, **config})
    return CompactionHookRunner(
        lambda: settings,
        hidden=hidden,
        workspace_of=lambda _sid, folder: workspace or (Path(folder) if folder else None),
    )


def pre_event(
    trigger: str = "manual", focus: str | None = "the parser", workspace: Path | None = None
) -> PreCompact:
    return PreCompact(
        7,
        trigger,
        "claude-haiku-4-5",
        120_000,
        42,
        focus,  # type: ignore[arg-type]
        str(workspace) if workspace else None,
    )


def script(folder: Path, name: str, body: str) -> str:
    """A hook script in ``folder`` (the workspace: outside it the sandbox shows an empty /tmp); its command line."""
    path = folder / name
    path.write_text(body, "utf-8")
    return f"{PY} {shlex.quote(str(path))}" if name.endswith(".py") else f"sh {shlex.quote(str(path))}"


def sleeper(case: int) -> tuple[str, str]:
    """A long ``sleep`` whose command line is unique to this test run: (command, marker to look for)."""
    marker = f"{800_000 + os.getpid()}.{case}"
    return f"sleep {marker}", marker


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def unsandboxed(monkeypatch):
    """As on a machine where bubblewrap cannot start."""
    monkeypatch.setattr(
        sandbox, "sandbox_problem", lambda network=True: "bubblewrap (bwrap) is not installed"
    )


def marked(marker: str) -> list[int]:
    """Processes whose command line holds ``marker`` (whatever their PID namespace)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    """The process runs (a zombie left for a container's init to reap runs nothing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


# --- the pre hook: veto ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("trigger", ["manual", "auto", "background"])
async def test_a_pre_hook_exiting_2_vetoes_the_compaction_with_its_reason(ws, trigger):
    hook = runner(
        ws, pre=script(ws, "veto.sh", "cat >/dev/null\necho 'a release build is running' >&2\nexit 2\n")
    )
    verdict = await pre_compact(hook, pre_event(trigger, workspace=ws))
    assert verdict.blocked and verdict.reason == "a release build is running"
    assert verdict.note == "The pre-compaction hook stopped this compaction: a release build is running"


async def test_a_json_block_vetoes_too(ws):
    body = 'echo \'{"decision": "block", "reason": "not during the demo"}\'\n'
    verdict = await pre_compact(runner(ws, pre=script(ws, "block.sh", body)), pre_event(workspace=ws))
    assert verdict.blocked and verdict.reason == "not during the demo"


@pytest.mark.parametrize(
    "body", ["echo nope >&2\nexit 2\n", 'echo \'{"decision": "block", "reason": "no"}\'\n']
)
async def test_a_veto_never_stops_a_reactive_compaction(ws, body):
    verdict = await pre_compact(
        runner(ws, pre=script(ws, "veto.sh", body)), pre_event("reactive", workspace=ws)
    )
    assert not verdict.blocked and verdict.reason == ""
    assert verdict.note is not None and "\n" not in verdict.note
    assert verdict.note.startswith("The pre-compaction hook asked not to compact (")
    assert verdict.note.endswith("too long for the model, so this compaction goes on.")


# --- the pre hook: focus -----------------------------------------------------------------------------------------
async def test_a_pre_hook_adds_focus_as_json(ws):
    body = 'cat >/dev/null\necho \'{"focus": "keep the migration plan"}\'\n'
    verdict = await pre_compact(runner(ws, pre=script(ws, "focus.sh", body)), pre_event(workspace=ws))
    assert verdict == PreVerdict(focus="keep the migration plan")
    assert verdict.focus_with("the parser") == "the parser\n\nkeep the migration plan"
    assert verdict.focus_with(None) == "keep the migration plan"


async def test_a_pre_hook_adds_plain_text_focus_up_to_2000_characters(ws):
    body = "cat >/dev/null\nprintf '  keep the API names  \\n'\nhead -c 3000 /dev/zero | tr '\\0' x\n"
    verdict = await pre_compact(runner(ws, pre=script(ws, "focus.sh", body)), pre_event(workspace=ws))
    assert not verdict.blocked and verdict.note is None and verdict.focus is not None
    assert verdict.focus.startswith("keep the API names  \nxxx") and len(verdict.focus) == 2_000


async def test_the_pre_hook_reads_its_event_on_stdin(ws):
    verdict = await pre_compact(runner(ws, pre="cat > event.json"), pre_event("auto", workspace=ws))
    assert verdict == GO_ON
    assert json.loads((ws / "event.json").read_text("utf-8")) == {
        "event": "pre_compact",
        "session_id": 7,
        "trigger": "auto",
        "model": "claude-haiku-4-5",
        "tokens_before": 120_000,
        "messages": 42,
        "focus": "the parser",
    }


# --- failures never block --------------------------------------------------------------------------------------
@pytest.mark.parametrize("sandboxed", [pytest.param(True, marks=needs_sandbox), False])
async def test_a_hook_past_its_limit_is_killed_with_all_it_started(ws, monkeypatch, sandboxed):
    if not sandboxed:
        monkeypatch.setattr(
            sandbox, "sandbox_problem", lambda network=True: "bubblewrap (bwrap) is not installed"
        )
    sleep, marker = sleeper(int(sandboxed))
    body = f"echo $$ > {shlex.quote(str(ws / 'pid'))}\n{sleep} &\n{sleep}\n"
    hook = runner(ws, pre=script(ws, "slow.sh", body), pre_timeout=1, allow_unsandboxed=True)
    started = time.monotonic()
    verdict = await pre_compact(hook, pre_event(workspace=ws))
    took = time.monotonic() - started
    assert took < 1 + 2
    assert verdict == PreVerdict(note="The pre-compaction hook timed out after 1 s; compacting without it.")
    for _ in range(
        50
    ):  # SIGKILL is delivered at once; the kernel reaps a killed PID namespace a moment later
        if not marked(marker):
            break
        await asyncio.sleep(0.05)
    assert marked(marker) == []
    if not sandboxed:  # outside a PID namespace the shell's own pid means something here
        assert not alive(int((ws / "pid").read_text()))


async def test_stop_during_a_hook_kills_it(ws):
    sleep, marker = sleeper(2)
    hook = runner(ws, pre=sleep, pre_timeout=60)
    task = asyncio.ensure_future(pre_compact(hook, pre_event(workspace=ws)))
    for _ in range(100):
        if marked(marker):
            break
        await asyncio.sleep(0.05)
    assert marked(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(50):
        if not marked(marker):
            break
        await asyncio.sleep(0.05)
    assert marked(marker) == []


async def test_a_missing_command_goes_on_with_one_sentence(ws):
    hook = runner(ws, pre="no-such-precis-hook --now", post="no-such-precis-hook --after")
    verdict = await pre_compact(hook, pre_event(workspace=ws))
    assert not verdict.blocked and verdict.focus is None
    assert verdict.note is not None and verdict.note.startswith(
        "The pre-compaction hook's command was not found (exit code 127"
    )
    assert verdict.note.endswith("; compacting without it.") and "\n" not in verdict.note
    note = await post_compact(hook, post_event(ws))
    assert note is not None and note.startswith("The post-compaction hook's command was not found")


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("echo broken >&2\nexit 3\n", "failed (exit code 3: broken)"),
        ("kill -ABRT $$\n", "was killed by signal 6"),
    ],
)
async def test_a_failing_hook_goes_on_with_one_sentence(ws, body, said):
    verdict = await pre_compact(runner(ws, pre=script(ws, "fail.sh", body)), pre_event(workspace=ws))
    assert verdict.note is not None and not verdict.blocked and verdict.focus is None
    assert verdict.note.startswith(f"The pre-compaction hook {said}")
    assert verdict.note.endswith("; compacting without it.") and "\n" not in verdict.note


async def test_without_a_sandbox_a_hook_runs_only_when_allowed(ws, unsandboxed):
    command = script(ws, "touch.sh", f"cat >/dev/null\ntouch {shlex.quote(str(ws / 'ran'))}\necho more\n")
    verdict = await pre_compact(runner(ws, pre=command), pre_event(workspace=ws))
    assert not (ws / "ran").exists() and not verdict.blocked and verdict.focus is None
    assert verdict.note == (
        "The pre-compaction hook was not run: bubblewrap (bwrap) is not installed, so it cannot "
        'be sandboxed ("allow_unsandboxed": true in compaction_hooks runs it anyway); compacting '
        "without it."
    )
    verdict = await pre_compact(runner(ws, pre=command, allow_unsandboxed=True), pre_event(workspace=ws))
    assert (ws / "ran").exists() and verdict == PreVerdict(focus="more")


async def test_a_hook_implementation_that_raises_is_a_hook_that_failed():
    class Broken:
        async def before(self, event: PreCompact) -> PreVerdict:
            raise RuntimeError("bug")

        async def after(self, event: PostCompact) -> str | None:
            raise OSError("bug")

    verdict = await pre_compact(Broken(), pre_event())
    assert verdict == PreVerdict(note="The pre-compaction hook failed (RuntimeError); compacting without it.")
    assert await post_compact(Broken(), post_event(None)) == (
        "The post-compaction hook failed (OSError); the compaction is kept."
    )


async def test_no_hook_set_changes_nothing(ws):
    assert await pre_compact(NoHooks(), pre_event()) == GO_ON
    assert await post_compact(NoHooks(), post_event(ws)) is None
    assert await pre_compact(runner(ws), pre_event(workspace=ws)) == GO_ON
    assert await post_compact(runner(ws), post_event(ws)) is None


# --- the post hook -------------------------------------------------------------------------------------------------
def rows(count: int, size: int = 10) -> list[StoredMessage]:
    out = []
    for i in range(1, count + 1):
        role = "user" if i % 2 else "assistant"
        content = [{"type": "text", "text": f"m{i} " + "y" * size}]
        if role == "assistant":
            content.append(
                {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"file_path": "a.py"}}
            )
        out.append(StoredMessage(i, 7, role, content))  # type: ignore[arg-type]
    return out


def post_event(ws: Path | None, cut: list[StoredMessage] | None = None) -> PostCompact:
    return PostCompact(
        7,
        "auto",
        "claude-haiku-4-5",
        "## Goal\nShip it.",
        250,
        250,
        120_000,
        30_000,
        cut_of(cut if cut is not None else rows(3)),
        str(ws) if ws else None,
    )


async def test_the_post_hook_receives_the_compaction_as_json(ws):
    hook = runner(ws, post=script(ws, "after.sh", "cat > got.json\necho ignored\n"))
    assert await post_compact(hook, post_event(ws, rows(250, size=3_000))) is None
    got = json.loads((ws / "got.json").read_text("utf-8"))
    assert {k: v for k, v in got.items() if k != "cut"} == {
        "event": "post_compact",
        "session_id": 7,
        "trigger": "auto",
        "model": "claude-haiku-4-5",
        "summary": "## Goal\nShip it.",
        "covers_through_message_id": 250,
        "messages_summarised": 250,
        "tokens_before": 120_000,
        "tokens_after": 30_000,
    }
    assert len(got["cut"]) == 200 and [c["id"] for c in got["cut"]] == list(range(51, 251))  # the newest 200
    assert got["cut"][0] == {"id": 51, "role": "user", "text": ("m51 " + "y" * 3_000)[:2_000]}
    assert all(len(c["text"]) <= 2_000 for c in got["cut"])
    short = cut_of(rows(2))
    assert short[1].text == 'm2 yyyyyyyyyy\n\n[tool call read: {"file_path": "a.py"}]'


async def test_a_post_hook_past_its_limit_is_stopped_and_the_compaction_kept(ws):
    hook = runner(ws, post="sleep 30", post_timeout=1)
    started = time.monotonic()
    note = await post_compact(hook, post_event(ws))
    assert time.monotonic() - started < 3
    assert note == "The post-compaction hook timed out after 1 s; the compaction is kept."


# --- the sandbox -----------------------------------------------------------------------------------------------
@needs_sandbox
async def test_a_hook_sees_neither_files_outside_its_workspace_nor_precis_own(tmp_path, precis_home):
    from desktop.runtime import open_runtime

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside secret", "utf-8")
    paths = Paths.resolve().ensure()
    assert paths.config_dir.is_relative_to(precis_home)
    # The chat's workspace is Précis's own home here: its folders stay hidden even inside the workspace.
    workspace = precis_home
    peek = (
        f"cat {shlex.quote(str(outside / 'secret.txt'))} {shlex.quote(str(paths.config_dir / 'settings.json'))}"
        f" > seen.txt 2>&1; ls -A {shlex.quote(str(paths.config_dir))} > listed.txt; cat > event.json"
    )
    settings = Settings()
    settings.compaction_hooks = {**HOOK_DEFAULTS, "post": peek}
    settings.instructions = "config secret"
    settings.save(paths)
    async with open_runtime() as rt:
        assert rt.settings.compaction_hooks["post"] == peek
        assert await post_compact(rt.engine.shared.compaction_hooks, post_event(workspace)) is None
    seen = (workspace / "seen.txt").read_text("utf-8")
    assert "outside secret" not in seen and "config secret" not in seen
    assert seen.count("No such file") == 2
    assert (workspace / "listed.txt").read_text("utf-8") == ""  # the config folder is an empty one there
    assert json.loads((workspace / "event.json").read_text("utf-8"))["event"] == "post_compact"


@needs_sandbox
@needs_python
async def test_a_hook_has_no_network_and_none_of_the_apps_environment(ws, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-not-for-hooks")
    body = (
        "import os, socket, sys\nsys.stdin.read()\n"
        "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n    print('online')\n"
        "except OSError:\n    print('offline')\n"
        "print(' '.join(sorted(k for k in os.environ if k.startswith(('ANTHROPIC', 'PRECIS')))) or 'clean')\n"
    )
    verdict = await pre_compact(runner(ws, pre=script(ws, "net.py", body)), pre_event(workspace=ws))
    assert verdict.focus == "offline\nclean"


async def test_without_a_workspace_a_hook_runs_in_an_empty_private_folder_removed_after(tmp_path):
    hook = runner(None, pre="cat >/dev/null; pwd; ls -A | wc -l")
    verdict = await pre_compact(hook, pre_event(workspace=None))
    assert verdict.focus is not None
    folder, count = verdict.focus.split("\n")
    assert Path(folder).name.startswith("precis-hook-") and count.strip() == "0"
    assert not Path(folder).exists()


# --- settings ----------------------------------------------------------------------------------------------------
def load(tmp_path: Path, data: object) -> Settings:
    paths = Paths.resolve({"PRECIS_HOME": str(tmp_path / "home")}).ensure()
    paths.settings_file.write_text(json.dumps(data), "utf-8")
    return Settings.load(paths, {})


def test_the_hooks_settings_load_and_an_older_file_has_none(tmp_path):
    assert load(tmp_path, {"model": "claude-haiku-4-5"}).compaction_hooks == HOOK_DEFAULTS
    s = load(
        tmp_path, {"compaction_hooks": {"pre": " ./pre.sh ", "post": "notify-send done", "pre_timeout": 5}}
    )
    assert s.problems == []
    assert s.compaction_hooks == {
        **HOOK_DEFAULTS,
        "pre": "./pre.sh",
        "post": "notify-send done",
        "pre_timeout": 5.0,
    }
    assert HookSettings.of(s.compaction_hooks) == HookSettings(
        "./pre.sh", "notify-send done", 5.0, 30.0, False
    )
    assert HookSettings.of(Settings().compaction_hooks) == HookSettings()


@pytest.mark.parametrize(
    ("value", "expected", "said"),
    [
        ("./pre.sh", HOOK_DEFAULTS, "compaction_hooks: expected an object"),
        ({"pre": 3}, HOOK_DEFAULTS, "compaction_hooks.pre: expected text"),
        ({"pre": "a\0b"}, HOOK_DEFAULTS, "compaction_hooks.pre: expected text"),
        ({"post_timeout": 10_000}, {**HOOK_DEFAULTS, "post_timeout": 600.0}, "compaction_hooks.post_timeout"),
        ({"pre_timeout": "soon"}, HOOK_DEFAULTS, "compaction_hooks.pre_timeout: expected a number"),
        (
            {"allow_unsandboxed": "yes"},
            HOOK_DEFAULTS,
            "compaction_hooks.allow_unsandboxed: expected true or false",
        ),
        ({"pre": "x", "when": "always"}, {**HOOK_DEFAULTS, "pre": "x"}, "compaction_hooks: unknown key"),
    ],
)
def test_wrong_hooks_settings_are_reported_and_never_break_the_file(tmp_path, value, expected, said):
    s = load(tmp_path, {"model": "claude-haiku-4-5", "compaction_hooks": value})
    assert s.model == "claude-haiku-4-5" and s.compaction_hooks == expected
    assert len(s.problems) == 1 and s.problems[0].startswith(said), s.problems
    paths = Paths.resolve({"PRECIS_HOME": str(tmp_path / "home")})
    s.save(paths)
    again = Settings.load(paths, {})
    assert again.problems == [] and again == s


def test_null_hooks_are_no_hooks(tmp_path):
    s = load(tmp_path, {"compaction_hooks": None})
    assert s.problems == [] and s.compaction_hooks == HOOK_DEFAULTS


def test_the_engine_side_never_imports_the_tools():
    source = Path(hooks.__file__).read_text("utf-8")
    assert "desktop.tools" not in source and "subprocess" not in source


async def test_the_runtime_runs_hooks_where_the_chats_tools_work(ws, tmp_path, precis_home):
    from desktop.runtime import open_runtime, toolbox_factory

    paths = Paths.resolve().ensure()
    settings = Settings()
    settings.compaction_hooks = {**HOOK_DEFAULTS, "pre": "cat >/dev/null; pwd", "allow_unsandboxed": True}
    settings.save(paths)
    other = tmp_path / "other"
    other.mkdir()
    async with open_runtime(toolbox=toolbox_factory(workspace=ws, yes=True)) as rt:  # precis chat --workspace
        verdict = await pre_compact(rt.engine.shared.compaction_hooks, pre_event(workspace=other))
        assert verdict.focus == str(ws.resolve())
    async with open_runtime(toolbox=toolbox_factory()) as rt:  # the window: each chat's own folder
        verdict = await pre_compact(rt.engine.shared.compaction_hooks, pre_event(workspace=other))
        assert verdict.focus == str(other.resolve())
        rt.settings.compaction_hooks = {**HOOK_DEFAULTS}  # read at each compaction: a change applies at once
        assert await pre_compact(rt.engine.shared.compaction_hooks, pre_event(workspace=other)) == GO_ON


# --- through the engine: the executor asks before a summary and tells after it -------------------------------------
@pytest.fixture
async def hooked(fake_api, monkeypatch, ws):
    from tests.conftest import _open_engine

    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "8000")
    fake_api.window = 8_000
    config = {
        **HOOK_DEFAULTS,
        "pre": script(ws, "pre.sh", "cat > pre.json\necho 'the parser changes'\n"),
        "post": script(ws, "post.sh", "cat > post.json\n"),
    }
    async with _open_engine({"max_output_tokens": 1024, "compaction_hooks": config}) as engine:
        yield engine


@needs_sandbox
async def test_the_engine_asks_the_pre_hook_before_a_summary_and_tells_the_post_hook_after(
    hooked, fake_api, ws
):
    from tests.test_compaction_engine import converse, summary_requests

    sid = (await hooked.store.create_session("h", "claude-test")).id
    await hooked.update_state(sid, {"workspace": str(ws)})
    await converse(hooked, fake_api, sid, 6)
    outcome = await hooked.compact(sid, "manual")
    assert outcome.ok, outcome.message
    asked = json.loads((ws / "pre.json").read_text("utf-8"))
    assert asked["event"] == "pre_compact" and asked["trigger"] == "manual" and asked["session_id"] == sid
    # The hook's words are the summary's focus.
    assert "the parser changes" in json.dumps(summary_requests(fake_api)[-1].body)
    for _ in range(100):  # the post hook runs beside the chat: it is not waited for
        if (ws / "post.json").exists() and (ws / "post.json").stat().st_size:
            break
        await asyncio.sleep(0.1)
    told = json.loads((ws / "post.json").read_text("utf-8"))
    record = await hooked.store.active_compaction(sid)
    assert (
        told["summary"] == record.summary
        and told["covers_through_message_id"] == record.covers_through_message_id
    )
    assert told["cut"] and told["cut"][-1]["id"] == record.covers_through_message_id


@needs_sandbox
async def test_the_engine_honours_a_veto_and_writes_nothing(hooked, fake_api, ws):
    from tests.test_compaction_engine import converse, summary_requests

    (ws / "pre.sh").write_text("cat >/dev/null\necho 'a demo is running' >&2\nexit 2\n", "utf-8")
    sid = (await hooked.store.create_session("v", "claude-test")).id
    await hooked.update_state(sid, {"workspace": str(ws)})
    await converse(hooked, fake_api, sid, 6)
    outcome = await hooked.compact(sid, "manual")
    assert not outcome.ok and "a demo is running" in outcome.message
    assert await hooked.store.active_compaction(sid) is None and summary_requests(fake_api) == []
