"""The built-in tools under attack, with real processes: a crash while a file is written, a folder swapped for a
link to the outside while the tools use it, and an approved command looking for the key.

Each test drives the real tools (``BuiltinTools``) in a child process or against a concurrent one; nothing of
the tools is stubbed.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from desktop.tools.builtin import BuiltinTools, builtin_specs
from desktop.tools.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="kill, renameat2 and /proc are Linux's")

# A child that runs one call of a real tool when its parent says go.
CHILD = textwrap.dedent("""
    import asyncio, json, pathlib, resource, signal, sys
    import anthropic.lib.tools.agent_toolset  # loaded by the first request in the app, before any tool call
    from desktop.tools.builtin import BuiltinTools
    from desktop.tools.workspace import Workspace

    root, name, arguments, fsize = sys.argv[1], sys.argv[2], json.loads(pathlib.Path(sys.argv[3]).read_text()), int(sys.argv[4])
    tools = BuiltinTools(Workspace.at(root))
    sys.stdout.write("ready\\n")
    sys.stdout.flush()
    sys.stdin.readline()
    if fsize:  # a crash at the write itself: the kernel kills the process past this size (SIGXFSZ)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    out = asyncio.run(tools.call(name, arguments))
    sys.stdout.write(out.text() + "\\n")
""")


def _child(root: Path, name: str, arguments: dict[str, object], fsize: int = 0) -> subprocess.Popen[str]:
    import json

    given = root.parent / "arguments.json"  # outside the workspace, beside it
    given.write_text(json.dumps(arguments))
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), name, str(given), str(fsize)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


def _snapshot(path: Path, folder: bool) -> tuple[object, ...]:
    """The target's inode, size and time (``folder``: and the names beside it, a temporary file's too)."""
    try:
        st = path.stat()
        now: tuple[object, ...] = (st.st_ino, st.st_size, st.st_mtime_ns)
    except FileNotFoundError:  # between an unlink and a rename
        now = (0, 0, 0)
    return (*now, tuple(sorted(os.listdir(path.parent)))) if folder else now


def _kill_when_changed(proc: subprocess.Popen[str], target: Path, folder: bool) -> bool:
    """Say go, then SIGKILL the child the moment the target (``folder``: or its folder) changes. True: killed."""
    before = _snapshot(target, folder)
    assert proc.stdin is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()
    while proc.poll() is None:
        if _snapshot(target, folder) != before:
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait()
    return proc.returncode == -signal.SIGKILL


# --- 1. atomic writes --------------------------------------------------------------------------------------------


@pytest.mark.timeout(900)  # a child process per round, each loading the SDK as the app has by its first call
@pytest.mark.parametrize("tool", ["write", "edit"])
def test_a_kill_the_moment_the_file_changes_leaves_the_old_or_the_new_content(tmp_path, tool):
    root = tmp_path / "ws"
    root.mkdir()
    target = root / "big.txt"
    # edit reads the whole file, under the tools' 256 KiB cap; write takes any size
    line = "o" * 99 + "\n"
    old = line * (2_400 if tool == "edit" else 20_000) + "MARKER\n"
    new = old.replace("MARKER", "EDITED") if tool == "edit" else "n" * 99 + "\n" * 40_000
    arguments = (
        {"file_path": "big.txt", "old_string": "MARKER", "new_string": "EDITED"}
        if tool == "edit"
        else {"file_path": "big.txt", "content": new}
    )
    seen = []
    for round_ in range(6):  # odd rounds: killed as soon as anything appears in the folder (a temporary file)
        target.write_text(old)
        os.chmod(target, 0o640)
        killed = _kill_when_changed(_child(root, tool, arguments), target, folder=round_ % 2 == 1)
        content = target.read_text()
        seen.append(
            (killed, "old" if content == old else "new" if content == new else f"torn ({len(content)})")
        )
    assert all(what in ("old", "new") for _killed, what in seen), seen
    assert oct(target.stat().st_mode & 0o777) == oct(0o640)  # the mode is kept


@pytest.mark.timeout(300)
@pytest.mark.parametrize("tool", ["write", "edit"])
def test_a_crash_in_the_middle_of_the_write_leaves_the_old_content(tmp_path, tool):
    root = tmp_path / "ws"
    root.mkdir()
    target = root / "notes.txt"
    old = "keep me\n" * 2_000 + "MARKER\n"
    target.write_text(old)
    new_text = old.replace("MARKER", "EDITED" * 200)
    arguments = (
        {"file_path": "notes.txt", "old_string": "MARKER", "new_string": "EDITED" * 200}
        if tool == "edit"
        else {"file_path": "notes.txt", "content": new_text}
    )
    proc = _child(root, tool, arguments, fsize=len(old) + 10)  # the new content cannot be written whole
    assert proc.stdin is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()
    proc.communicate()
    assert proc.returncode == -signal.SIGXFSZ
    assert target.read_text() == old


async def test_write_keeps_the_mode_and_creates_private_by_the_umask(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "run.sh").write_text("echo old\n")
    os.chmod(root / "run.sh", 0o755)
    tools = BuiltinTools(Workspace.at(root))
    assert not (await tools.call("write", {"file_path": "run.sh", "content": "echo new\n"})).is_error
    assert (root / "run.sh").read_text() == "echo new\n" and (root / "run.sh").stat().st_mode & 0o777 == 0o755
    assert not (
        await tools.call("edit", {"file_path": "run.sh", "old_string": "new", "new_string": "newer"})
    ).is_error
    assert (root / "run.sh").stat().st_mode & 0o777 == 0o755
    assert [p.name for p in root.iterdir()] == ["run.sh"]  # no temporary file left behind


# --- 2. confinement under a swap race ---------------------------------------------------------------------------

SWAPPER = textwrap.dedent("""
    import ctypes, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    sys.stdout.write("ready\\n")
    sys.stdout.flush()
    while True:
        if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
            raise OSError(ctypes.get_errno(), "renameat2")
""")
SWAPS = 400


@pytest.fixture
def swapped(tmp_path):
    """A workspace whose folder ``d`` is swapped with a link to an outside folder, over and over."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (root / "d" / "secret.txt").write_text("inside\n")
    (outside / "secret.txt").write_text("top secret\n")
    (root / "swap").symlink_to(outside)
    proc = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(root / "d"), str(root / "swap")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    yield BuiltinTools(Workspace.at(root)), outside
    proc.kill()
    proc.wait()


async def test_writes_never_land_outside_while_a_folder_is_swapped_for_a_link(swapped):
    tools, outside = swapped
    for i in range(SWAPS):
        await tools.call("write", {"file_path": f"d/f{i}.txt", "content": "x"})
        await tools.call(
            "edit", {"file_path": "d/secret.txt", "old_string": "secret", "new_string": "edited"}
        )
    landed = sorted(p.name for p in outside.iterdir() if p.name != "secret.txt")
    assert (len(landed), landed[:5]) == (0, [])
    assert (outside / "secret.txt").read_text() == "top secret\n"


async def test_reads_and_searches_never_see_outside_while_a_folder_is_swapped_for_a_link(swapped):
    tools, _outside = swapped
    leaked = []
    for _ in range(SWAPS):
        for name, arguments in (
            ("read", {"file_path": "d/secret.txt"}),
            ("grep", {"pattern": "secret", "path": "d"}),
            ("glob", {"pattern": "*", "path": "d"}),
        ):
            out = await tools.call(name, arguments)
            if "top secret" in out.text():
                leaked.append(name)
    assert (len(leaked), sorted(set(leaked))) == (0, [])


# --- 3. the command sandbox ---------------------------------------------------------------------------------------

KEY = "sk-ant-sandbox-test-0123456789"


def test_an_approved_command_reads_no_key_and_writes_nothing_outside(tmp_path):
    from desktop.tools.sandbox import sandbox_problem

    if sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    home = tmp_path / "home"
    root = home / "projects" / "ws"
    root.mkdir(parents=True)
    precis = home / ".precis"
    (precis / "config").mkdir(parents=True)
    (precis / "config" / "key").write_text(KEY)  # as a private key file would hold it
    (home / ".local" / "share" / "keyrings").mkdir(parents=True)
    (home / ".local" / "share" / "keyrings" / "login.keyring").write_text(KEY)
    outside = tmp_path / "outside"
    outside.mkdir()
    probe_file = (
        REPO / f".sandbox-probe-{os.getpid()}"
    )  # a folder neither hidden nor the workspace: read-only
    probe = "; ".join(
        [
            "tr '\\0' '\\n' < /proc/$PPID/environ",
            "tr '\\0' '\\n' < /proc/1/environ",
            "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done",
            "env",
            f"cat {precis}/config/key",
            f"cat {home}/.local/share/keyrings/*",
            "grep -rs sk-ant- ~ /tmp /run",
            f"echo pwned > {outside}/a",
            f"echo pwned > {home}/b",
            f"echo pwned > /tmp/{probe_file.name}",
            f"echo pwned > {probe_file}",
            "echo ok > inside.txt",
        ]
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PRECIS_HOME": str(precis),
        "ANTHROPIC_API_KEY": KEY,
        "PRECIS_API_KEY": KEY,
        "DBUS_SESSION_BUS_ADDRESS": f"unix:path={outside}/bus",
    }
    script = textwrap.dedent(f"""
        import asyncio
        from desktop.tools.builtin import BuiltinTools
        from desktop.tools.workspace import Workspace
        out = asyncio.run(BuiltinTools(Workspace.at({str(root)!r})).call("run", {{"command": {probe!r}}}))
        print(out.text())
    """)
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
        )
        wrote_beside = probe_file.exists()
    finally:
        probe_file.unlink(missing_ok=True)
    assert not wrote_beside
    assert done.returncode == 0, done.stderr
    assert KEY not in done.stdout and "sk-ant-" not in done.stdout
    assert "DBUS_SESSION_BUS_ADDRESS" not in done.stdout and "PRECIS_" not in done.stdout
    assert sorted(p.name for p in outside.iterdir()) == []
    assert not (home / "b").exists() and not (Path("/tmp") / probe_file.name).exists()
    assert (root / "inside.txt").read_text() == "ok\n"  # the workspace itself stays writable


def test_the_prompt_says_so_when_the_sandbox_cannot_start(tmp_path, monkeypatch):
    from desktop.tools import sandbox

    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on PATH
    sandbox.sandbox_problem.cache_clear()
    try:
        tools = BuiltinTools(Workspace.at(tmp_path))
        preview = tools.diff("run", {"command": "make test"})
        assert preview is not None and "make test" in preview and "without the sandbox" in preview
        origins = {s.name: s.origin for s in builtin_specs()}
        assert origins["run"] != origins["read"]  # an approval of the sandboxed run does not carry over
    finally:
        sandbox.sandbox_problem.cache_clear()


def test_the_sandbox_problem_is_one_sentence_when_bwrap_fails(tmp_path, monkeypatch):
    from desktop.tools import sandbox

    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ.get('PATH', '')}")
    sandbox.sandbox_problem.cache_clear()
    try:
        problem = sandbox.sandbox_problem()
        assert problem is not None and "No permissions" in problem and "\n" not in problem
    finally:
        sandbox.sandbox_problem.cache_clear()


def test_the_network_is_off_when_the_setting_says_so(tmp_path):
    from desktop.tools.sandbox import sandbox_problem

    if sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")

    async def interfaces(network: bool) -> str:
        tools = BuiltinTools(Workspace.at(tmp_path), network=network)
        return (await tools.call("run", {"command": "cat /proc/net/dev"})).text()

    assert "lo:" in asyncio.run(interfaces(False))
    assert (
        asyncio.run(interfaces(False)).count(":") < asyncio.run(interfaces(True)).count(":")
        or len([ln for ln in Path("/proc/net/dev").read_text().splitlines() if ":" in ln]) == 1
    )


def test_the_network_setting_is_read_from_settings_json(tmp_path):
    import json

    from desktop.engine.config.settings import Paths, Settings

    paths = Paths(tmp_path / "config", tmp_path / "data", tmp_path / "cache")
    # Off by default (issue 35): a command reaches the network (and the host's abstract sockets) only when the
    # setting, or the user's answer to a call that asks for it, opens it.
    assert Settings.load(paths, env={}).command_network is False
    paths.config_dir.mkdir()
    paths.settings_file.write_text(json.dumps({"command_network": True}))
    assert Settings.load(paths, env={}).command_network is True
    paths.settings_file.write_text(json.dumps({"command_network": "off"}))
    loaded = Settings.load(paths, env={})
    assert loaded.command_network is False and any("command_network" in p for p in loaded.problems)
