"""The command sandbox at its own layer (``desktop/tools/sandbox.py``): real bubblewrap processes, asked what a
command inside can see and do. Run as root (this machine, CI, containers) and as a normal user (``setpriv`` to
nobody), with Précis's home wherever it may be: under /opt, under /var, inside the workspace, around it.

Whether bubblewrap itself works here is asked without the code under test (``RAW``), so a sandbox that stops
starting fails these tests instead of skipping them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.tools import sandbox

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-ant-sandbox-layer-0123456789"
PID = os.getpid()
ZERO = "0000000000000000"
PYTHON = "/usr/bin/python3"
# What bwrap's fresh /dev holds, and what a shell adds to the environment it was given.
DEVICES = {
    "console",
    "core",
    "fd",
    "full",
    "mqueue",
    "null",
    "ptmx",
    "pts",
    "random",
    "shm",
    "stderr",
    "stdin",
}
DEVICES |= {"stdout", "tty", "urandom", "zero"}
SHELL_ENV = {
    "PATH",
    "HOME",
    "TERM",
    "TMPDIR",
    "PWD",
    "SHLVL",
    "_",
    "OLDPWD",
}  # a Python the sandbox shows (the venv's may live in a home)


def _raw_problem() -> str | None:
    """Why bubblewrap cannot make a user namespace here (None: it can), asked with a plain command line."""
    if not sys.platform.startswith("linux"):
        return "not Linux"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed"
    raw = [
        bwrap,
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
    ]
    done = subprocess.run([*raw, "true"], capture_output=True, text=True, timeout=30, check=False)
    return None if done.returncode == 0 else (done.stderr.strip() or f"exit code {done.returncode}")


RAW = _raw_problem()
needs_bwrap = pytest.mark.skipif(RAW is not None, reason=f"bubblewrap cannot run here: {RAW}")
needs_python = pytest.mark.skipif(not Path(PYTHON).is_file(), reason=f"{PYTHON} is missing")


@pytest.fixture(autouse=True)
def fresh_probe() -> Iterator[None]:
    """Each test asks bubblewrap again (tests change PATH and the platform)."""
    sandbox.sandbox_problem.cache_clear()
    yield
    sandbox.sandbox_problem.cache_clear()


def inside(
    command: str, workspace: Path, *, extra_env: dict[str, str] | None = None, **kw: object
) -> subprocess.CompletedProcess[str]:
    """``command`` run as the run tool runs it: the sandbox's command line and environment."""
    argv = sandbox.wrap(command, workspace, **kw)  # type: ignore[arg-type]
    return subprocess.run(
        argv,
        cwd="/",  # the command starts in the workspace whatever the caller's folder
        env={**sandbox.environment(), **(extra_env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def values(text: str) -> dict[str, str]:
    """``name=value`` lines of a command's output."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def host_folder(path: Path) -> Path:
    """A folder made for the test outside the homes and /tmp (skipped where a normal user cannot make one)."""
    try:
        path.mkdir(parents=True)
    except PermissionError:
        pytest.skip(f"cannot make {path} as this user")
    path.chmod(0o755)
    return path


@contextlib.contextmanager
def precis_home(root: Path) -> Iterator[tuple[Path, Path, Path]]:
    """A Précis home at ``root`` holding the key (key file, database, a log), readable by anyone on the host:
    only the sandbox keeps a command from it. Yields (config, data, cache), as ``Paths`` has them."""
    made = not root.exists()
    try:
        for name in ("config", "data", "cache"):
            (root / name).mkdir(parents=True, exist_ok=True)
            (root / name).chmod(0o755)
        (root / "config" / "keys.json").write_text(json.dumps({"anthropic": KEY}))
        (root / "data" / "precis.db").write_text(f"SQLite format 3\0{KEY}")
        (root / "cache" / "server.log").write_text(KEY)
        for file in root.rglob("*"):
            if file.is_file():
                file.chmod(0o644)
        yield root / "config", root / "data", root / "cache"
    finally:
        if made:
            shutil.rmtree(root, ignore_errors=True)
        else:
            for name in ("config", "data", "cache"):
                shutil.rmtree(root / name, ignore_errors=True)


def escapes(config: Path, data: Path, cache: Path) -> str:
    """Every way a command might reach the key: read it, search for it, unmount or remount what covers it (in a
    user namespace of its own too), through /proc."""
    key = config / "keys.json"
    return "; ".join(
        [
            f"cat {key} {data}/precis.db {cache}/server.log",
            f"grep -rs sk-ant-sandbox-layer {config.parent} /tmp . $HOME",
            f"umount {config}; umount -l {config}; umount {data}; cat {key}",
            f"unshare -Urm sh -c 'umount -l {config}; cat {key}'",
            f"mount -o remount,rw,bind / ; mount --bind / /mnt; cat /mnt{key}",
            f"cat /proc/1/root{key} /proc/self/root{key}",
            f"ls -la {config} {data} {cache}",
        ]
    )


# --- who the command is -----------------------------------------------------------------------------------------
@needs_bwrap
def test_a_command_has_no_capability_and_is_not_root_inside(tmp_path):
    out = inside(
        "grep ^Cap /proc/self/status; echo uid=$(id -u); echo gid=$(id -g); "
        "unshare -U true && echo nested=yes; unshare -Ur true && echo nested=yes",
        tmp_path,
    )
    caps = dict(line.split(":\t") for line in out.stdout.splitlines() if line.startswith("Cap"))
    assert caps == dict.fromkeys(("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"), ZERO), out.stdout
    seen = values(out.stdout)
    root = os.getuid() == 0
    assert seen["uid"] == str(1000 if root else os.getuid()) != "0"  # root outside: a plain user inside
    assert seen["gid"] == str(1000 if root else os.getgid()) != "0"
    assert "nested" not in seen  # no user namespace of its own in which to regain capabilities


@needs_bwrap
@pytest.mark.parametrize("network", [False, True])
def test_a_command_has_namespaces_of_its_own(tmp_path, network):
    names = ("user", "mnt", "pid", "ipc", "uts", "net", "cgroup")
    out = inside(
        "; ".join(f"echo {n}=$(readlink /proc/self/ns/{n})" for n in names), tmp_path, network=network
    )
    seen = values(out.stdout)
    host = {n: os.readlink(f"/proc/self/ns/{n}") for n in names}
    assert {n for n in names if seen[n] == host[n]} == ({"net"} if network else set()), out.stdout


@needs_bwrap
def test_a_command_sees_its_own_processes_only(tmp_path):
    out = inside("echo pid=$$; echo count=$(ls /proc | grep -c '^[0-9]')", tmp_path)
    seen = values(out.stdout)
    assert int(seen["pid"]) <= 3 and int(seen["count"]) <= 5, out.stdout


# --- what it can write ------------------------------------------------------------------------------------------
@needs_bwrap
def test_nothing_can_be_remounted_and_nothing_is_written_outside_the_workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    shown = host_folder(Path(f"/opt/precis-sandbox-test-{PID}"))  # a folder the sandbox shows, read-only
    targets = [shown / "pwned", *(Path(f"{top}/precis-pwned-{PID}") for top in ("/usr", "/etc", ""))]
    attempts = {
        "root": "mount -o remount,rw /",
        "rootbind": "mount -o remount,rw,bind /",
        "usr": "mount -o remount,rw,bind /usr",
        "opt": f"mount -o remount,rw,bind {shown}",
        "tmpfs": "mount -t tmpfs none /mnt",
        "bind": f"mount --bind {ws} /usr",
    }
    script = "; ".join(
        [
            *(f"{command} 2>/dev/null; echo {name}=$?" for name, command in attempts.items()),
            *(f"echo pwned > {target}" for target in targets),
            "echo ok > inside.txt",
        ]
    )
    try:
        out = inside(script, ws)
        written = [str(t) for t in targets if t.exists()]
    finally:
        for target in targets:
            target.unlink(missing_ok=True)
        shutil.rmtree(shown, ignore_errors=True)
    seen = values(out.stdout)
    assert {name: seen.get(name) for name in attempts if seen.get(name) == "0"} == {}, out.stdout
    assert written == []
    assert (ws / "inside.txt").read_text() == "ok\n"  # the workspace itself stays writable
    assert (ws / "inside.txt").stat().st_uid == os.getuid()  # and what it writes is the user's


# --- what it can read -------------------------------------------------------------------------------------------
HOMES = {
    "under-opt": lambda tmp: (Path(f"/opt/precis-test-xyz-{PID}"), tmp / "ws"),
    "under-var": lambda tmp: (Path(f"/var/lib/precis-test-{PID}"), tmp / "ws"),
    "in-the-workspace": lambda tmp: (tmp / "ws" / ".precis", tmp / "ws"),
    "is-the-workspace": lambda tmp: (tmp / "ws", tmp / "ws" / "config"),
    "around-the-workspace": lambda tmp: (
        Path(f"/opt/precis-test-around-{PID}"),
        Path(f"/opt/precis-test-around-{PID}/data/projects/ws"),
    ),
}


@needs_bwrap
@pytest.mark.parametrize("where", sorted(HOMES))
def test_the_key_and_the_database_are_out_of_reach_wherever_the_home_is(tmp_path, where):
    root, ws = HOMES[where](tmp_path)
    if not os.access(root.parent if root.parent.exists() else tmp_path, os.W_OK):
        pytest.skip(f"cannot make {root} as this user")
    with precis_home(root) as (config, data, cache):
        ws.mkdir(parents=True, exist_ok=True)
        assert KEY in (config / "keys.json").read_text()  # on the host, for anyone to read
        out = inside(
            escapes(config, data, cache) + "; echo mine > mine.txt; cat mine.txt",
            ws,
            hidden=(config, data, cache),
        )
        text = out.stdout + out.stderr
        assert KEY not in text and "sk-ant-sandbox-layer" not in text, text
        assert "mine" in out.stdout
        # The workspace is the user's, even inside a hidden folder; unless it is one of Précis's own.
        assert (ws / "mine.txt").exists() is (where != "is-the-workspace")


@needs_bwrap
def test_the_keyring_and_the_sessions_sockets_stay_hidden_in_a_workspace_that_holds_them(
    tmp_path, monkeypatch
):
    home = tmp_path / "home"
    keyrings = home / ".local" / "share" / "keyrings"
    keyrings.mkdir(parents=True)
    (keyrings / "login.keyring").write_text(KEY)
    runtime = home / "run"
    runtime.mkdir()
    (runtime / "bus").write_text(KEY)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    out = inside(f"cat {keyrings}/login.keyring {runtime}/bus; grep -rs sk-ant- .; echo ok > x", home)
    assert KEY not in out.stdout + out.stderr and (home / "x").read_text() == "ok\n"


@needs_bwrap
def test_a_command_sees_system_folders_an_empty_home_and_a_private_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("LANG", "C.UTF-8")
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = Path(tempfile.gettempdir()) / f"precis-host-tmp-{PID}"
    marker.write_text("host")
    unshown = REPO / "pyproject.toml"
    script = "; ".join(
        [
            'echo home="$HOME"',
            'echo homefiles=$(ls -A "$HOME" | wc -l)',
            'touch "$HOME/x" && echo homewritable=yes',
            "echo tmpmode=$(stat -c %a /tmp)",
            "touch /tmp/x && echo tmpwritable=yes",
            f"test -e {marker} && echo hosttmp=visible",
            f"test -e {unshown} && echo repo=visible",
            "test -e /sys/kernel && echo sys=visible",
            "echo devices=$(ls /dev | tr '\\n' ,)",
            "echo pwd=$(pwd)",
            "echo env=$(env | cut -d= -f1 | sort | tr '\\n' ,)",
            "echo term=$TERM; echo tmpdir=$TMPDIR; echo lang=$LANG",
            "echo sh=$(ls -l /bin/sh | wc -l)",
            "cat /etc/shadow /etc/gshadow 2>/dev/null | head -c 300",
        ]
    )
    try:
        out = inside(script, ws, extra_env={"PRECIS_CANARY": KEY})
    finally:
        marker.unlink()
    seen = values(out.stdout)
    assert seen["home"] == str(sandbox.home()) and seen["homefiles"] == "0" and seen["homewritable"] == "yes"
    assert (seen["tmpmode"], seen["tmpwritable"]) == ("1777", "yes")
    assert "hosttmp" not in seen and "sys" not in seen
    if not any(REPO.is_relative_to(f) for f in sandbox.SYSTEM):
        assert "repo" not in seen
    assert set(seen["devices"].strip(",").split(",")) <= DEVICES
    assert seen["pwd"] == str(ws.resolve())
    assert set(seen["env"].strip(",").split(",")) <= {*SHELL_ENV, *sandbox.KEPT}
    assert (seen["term"], seen["tmpdir"], seen["lang"]) == ("dumb", "/tmp", "C.UTF-8")
    assert "root:" not in out.stdout and KEY not in out.stdout  # the shadow files are covered


@needs_bwrap
def test_a_home_that_cannot_be_emptied_where_it_is_moves(tmp_path, monkeypatch):
    for given, expected in (("/", sandbox.FALLBACK_HOME), ("/usr/local", sandbox.FALLBACK_HOME)):
        monkeypatch.setenv("HOME", given)
        assert sandbox.home() == expected
        out = inside('echo home=$HOME; ls -A "$HOME" | wc -l; ls /usr/bin/env', tmp_path)
        assert values(out.stdout)["home"] == str(expected) and "/usr/bin/env" in out.stdout
    monkeypatch.setenv("HOME", f"/nonexistent-{PID}")  # nobody's: made empty where it is named
    assert sandbox.home() == Path(f"/nonexistent-{PID}")
    out = inside('echo home=$HOME; touch "$HOME/x" && echo ok=yes', tmp_path)
    assert values(out.stdout) == {"home": f"/nonexistent-{PID}", "ok": "yes"}


@needs_bwrap
def test_a_command_gets_the_callers_path_or_a_plain_one(tmp_path, monkeypatch):
    mine = "/usr/local/bin:/usr/bin:/bin:/opt/precis-test-tools"
    monkeypatch.setenv("PATH", mine)
    assert values(inside("echo path=$PATH", tmp_path).stdout)["path"] == mine
    monkeypatch.delenv("PATH")
    assert values(inside("echo path=$PATH", tmp_path).stdout)["path"] == sandbox.DEFAULT_PATH
    assert sandbox.DEFAULT_PATH.split(":")[:2] == ["/usr/local/sbin", "/usr/local/bin"]


@needs_bwrap
def test_a_link_that_a_shown_file_follows_is_shown(tmp_path, monkeypatch):
    shown = host_folder(Path(f"/opt/precis-test-link-{PID}"))
    unshown = host_folder(Path(f"/var/lib/precis-test-target-{PID}"))
    try:
        (unshown / "resolv.conf").write_text("nameserver 192.0.2.1\n")
        (unshown / "other").write_text("not followed\n")
        (shown / "resolv.conf").symlink_to(unshown / "resolv.conf")
        monkeypatch.setattr(sandbox, "FOLLOWED", (str(shown / "resolv.conf"), "/nonexistent/resolv.conf"))
        out = inside(f"cat {shown}/resolv.conf; cat {unshown}/other", tmp_path)
    finally:
        shutil.rmtree(shown, ignore_errors=True)
        shutil.rmtree(unshown, ignore_errors=True)
    assert "nameserver 192.0.2.1" in out.stdout and "not followed" not in out.stdout


# --- the network --------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def abstract_listener() -> Iterator[str]:
    """A unix socket in the abstract namespace (as X11, D-Bus and agents use), listening on the host."""
    name = f"precis-sandbox-test-{PID}-{time.monotonic_ns()}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind("\0" + name)
        server.listen(8)
        yield name
    finally:
        server.close()


CONNECT = (
    f'{PYTHON} -c "import socket, sys; s = socket.socket(socket.AF_UNIX); '
    "print('connected' if s.connect_ex(chr(0) + sys.argv[1]) == 0 else 'refused')\" "
)


@needs_bwrap
@needs_python
def test_the_hosts_abstract_sockets_are_closed_unless_the_network_is_allowed(tmp_path):
    with abstract_listener() as name:
        by_default = inside(CONNECT + name, tmp_path)
        closed = inside(CONNECT + name, tmp_path, network=False)
        opened = inside(CONNECT + name, tmp_path, network=True)
    assert (by_default.stdout.strip(), closed.stdout.strip(), opened.stdout.strip()) == (
        "refused",
        "refused",
        "connected",
    ), (by_default.stderr, opened.stderr)


@needs_bwrap
def test_without_the_network_only_loopback_is_there(tmp_path):
    host = [ln.split(":")[0].strip() for ln in Path("/proc/net/dev").read_text().splitlines() if ":" in ln]
    off = inside("cat /proc/net/dev", tmp_path)
    on = inside("cat /proc/net/dev", tmp_path, network=True)
    assert [ln.split(":")[0].strip() for ln in off.stdout.splitlines() if ":" in ln] == ["lo"]
    assert sorted(ln.split(":")[0].strip() for ln in on.stdout.splitlines() if ":" in ln) == sorted(host)


# --- its end ------------------------------------------------------------------------------------------------------
def _processes(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
    return found


@needs_bwrap
def test_a_command_dies_with_the_process_that_started_it(tmp_path):
    marker = f"{700_000 + PID}"
    argv = sandbox.wrap(f"sleep {marker}", tmp_path)
    starter = "import subprocess, sys; subprocess.Popen(sys.argv[1:]); sys.stdin.read()"
    parent = subprocess.Popen(
        [sys.executable, "-c", starter, *argv], stdin=subprocess.PIPE, env=sandbox.environment()
    )
    try:
        deadline = time.monotonic() + 30
        while not [p for p in _processes(marker) if p != parent.pid] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [p for p in _processes(marker) if p != parent.pid]
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while _processes(f"sleep {marker}") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _processes(f"sleep {marker}") == []
    finally:
        for pid in _processes(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()


# --- whether it can start -----------------------------------------------------------------------------------------
@needs_bwrap
def test_the_sandbox_starts_where_bubblewrap_does_and_its_probe_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert sandbox.sandbox_problem(False) is None and sandbox.sandbox_problem(True) is None
    assert list(tmp_path.iterdir()) == []


@needs_bwrap
def test_the_probe_asks_with_the_network_the_command_would_have(tmp_path, monkeypatch):
    real = shutil.which("bwrap")
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    refuse = 'case "$*" in *--unshare-net*) echo "bwrap: no network namespace" >&2; exit 1;; esac'
    fake.write_text(f'#!/bin/sh\n{refuse}\nexec {real} "$@"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ.get('PATH', '')}")
    assert sandbox.sandbox_problem() == "bubblewrap cannot start here (bwrap: no network namespace)"
    assert (
        sandbox.sandbox_problem(False) == sandbox.sandbox_problem() and sandbox.sandbox_problem(True) is None
    )


def test_without_bubblewrap_the_problem_is_one_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # the fallback forced: no bwrap on PATH
    assert sandbox.sandbox_problem() == "bubblewrap (bwrap) is not installed"
    monkeypatch.setattr(sys, "platform", "darwin")
    sandbox.sandbox_problem.cache_clear()
    assert sandbox.sandbox_problem() == "the command sandbox (bubblewrap) exists on Linux only"


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (
            "#!/bin/sh\necho 'bwrap: No permissions to create a new namespace' >&2\nexit 1\n",
            "bubblewrap cannot start here (bwrap: No permissions to create a new namespace)",
        ),
        ("#!/bin/sh\nexit 3\n", "bubblewrap cannot start here (exit code 3)"),
        ("#!/nonexistent/interpreter\n", "bubblewrap did not start (FileNotFoundError: "),
        ("#!/bin/sh\nexit 0\n", None),
    ],
)
def test_a_bubblewrap_that_fails_is_named_in_one_sentence(tmp_path, monkeypatch, script, expected):
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(script)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ.get('PATH', '')}")
    problem = sandbox.sandbox_problem()
    if expected is None:
        assert problem is None
    else:
        assert problem is not None and problem.startswith(expected) and "\n" not in problem, problem


# --- as a normal user ---------------------------------------------------------------------------------------------
NOBODY = 65534
CHILD = textwrap.dedent("""
    import json, os, subprocess, sys
    from pathlib import Path
    from desktop.tools import sandbox

    ws, root, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    hidden = [root / "config", root / "data", root / "cache"]

    def run(command, network=False):
        done = subprocess.run(sandbox.wrap(command, ws, network=network, hidden=hidden), cwd=ws,
                              env=sandbox.environment(), capture_output=True, text=True, timeout=60)
        return done.stdout + done.stderr

    print(json.dumps({
        "uid": os.getuid(),
        "problem": sandbox.sandbox_problem(False),
        "host_read": (root / "config" / "keys.json").read_text(),
        "status": run("grep ^Cap /proc/self/status; echo uid=$(id -u)"),
        "escapes": run(sys.argv[4]),
        "remount": run("mount -o remount,rw,bind / ; echo rc=$?; echo pwned > /usr/precis-nobody; echo ok > in.txt"),
        "closed": run(sys.argv[5] + name),
        "opened": run(sys.argv[5] + name, network=True),
    }))
""")


def _as_nobody() -> list[str] | None:
    setpriv = shutil.which("setpriv")
    if os.getuid() != 0 or setpriv is None:
        return None
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


@needs_bwrap
@needs_python
def test_as_a_normal_user_the_sandbox_holds_the_same(tmp_path):
    drop = _as_nobody()
    if drop is None:
        pytest.skip("needs root and setpriv to become a normal user (nobody)")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/nonexistent",
        "PYTHONPATH": str(REPO),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    check = subprocess.run(
        [*drop, PYTHON, "-c", "from desktop.tools import sandbox"], env=env, capture_output=True, text=True
    )
    if check.returncode != 0:
        pytest.skip(f"nobody cannot import the sandbox from {REPO}: {check.stderr.strip()[-200:]}")
    raw = [shutil.which("bwrap") or "bwrap", "--unshare-user", "--ro-bind", "/", "/", "true"]
    if subprocess.run([*drop, *raw], env=env, capture_output=True).returncode != 0:
        pytest.skip("a normal user cannot make a user namespace here")
    ws = Path(tempfile.mkdtemp(prefix="precis-nobody-ws-"))
    root = Path(f"/opt/precis-test-nobody-{PID}")
    try:
        os.chown(ws, NOBODY, NOBODY)
        with precis_home(root) as (config, data, cache), abstract_listener() as name:
            done = subprocess.run(
                [*drop, PYTHON, "-c", CHILD, str(ws), str(root), name, escapes(config, data, cache), CONNECT],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        wrote = Path("/usr/precis-nobody").exists()
        inside_file = (ws / "in.txt").read_text() if (ws / "in.txt").exists() else ""
    finally:
        Path("/usr/precis-nobody").unlink(missing_ok=True)
        shutil.rmtree(ws, ignore_errors=True)
    assert seen["uid"] == NOBODY and seen["problem"] is None
    assert KEY in seen["host_read"]  # outside the sandbox nobody can read it: only the sandbox hides it
    caps = [ln.split(":\t")[1] for ln in seen["status"].splitlines() if ln.startswith("Cap")]
    assert caps == [ZERO] * 5 and f"uid={NOBODY}" in seen["status"]
    assert KEY not in seen["escapes"] and "sk-ant-sandbox-layer" not in seen["escapes"]
    assert "rc=0" not in seen["remount"] and not wrote and inside_file == "ok\n"
    assert (seen["closed"].strip(), seen["opened"].strip()) == ("refused", "connected")
