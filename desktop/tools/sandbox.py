"""The run tool's sandbox: each command runs under bubblewrap (``bwrap``, Linux).

Inside, the file system is the machine's, read-only, with the workspace the one writable folder; the homes,
``/tmp``, ``/var/tmp`` and the session's runtime folder (the keyring's and the session bus's sockets) are
empty; Précis's own folders are hidden even where they lie inside the workspace. ``/proc`` is fresh in a new PID
namespace, so no process of the user's session (Précis's own, with its key in its environment) can be seen.
The environment is cleared and only PATH, HOME, the locale and TERM are set. The network is shared unless the
``command_network`` setting turns it off (package installs need it; off gives a namespace with only ``lo``).

Where bwrap is missing or cannot start (no user namespaces in a container, another system than Linux),
``sandbox_problem`` says why in one sentence, and the permission prompt shows it before the user approves.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

# Variables a command keeps (when set), besides PATH and HOME: the locale, the time zone, who the user is.
KEPT = (
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LC_NUMERIC",
    "LC_TIME",
    "TZ",
    "USER",
    "LOGNAME",
)
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _base(bwrap: str, network: bool) -> list[str]:
    args = [
        bwrap,
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]
    return args if network else [*args, "--unshare-net"]


@functools.cache
def sandbox_problem(network: bool = True) -> str | None:
    """None when a sandbox starts here; otherwise why not, in one sentence (checked once per process)."""
    if not sys.platform.startswith("linux"):
        return "the command sandbox (bubblewrap) exists on Linux only"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        done = subprocess.run(
            [*_base(bwrap, network), "--", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap did not start ({type(exc).__name__}: {exc})"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return f"bubblewrap cannot start here ({said[0] if said else f'exit code {done.returncode}'})"
    return None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _existing(paths: Sequence[Path]) -> list[Path]:
    out = []
    for p in paths:
        try:
            real = p.resolve()
        except (OSError, RuntimeError):
            continue
        if real.is_dir() and real not in out:
            out.append(real)
    return out


def environment() -> dict[str, str]:
    """What a sandboxed command sees: PATH, HOME, the locale and TERM, nothing of the app's."""
    env = {
        "PATH": os.environ.get("PATH") or DEFAULT_PATH,
        "HOME": str(Path.home()),
        "TERM": "dumb",
        "TMPDIR": "/tmp",
    }
    env.update({k: os.environ[k] for k in KEPT if os.environ.get(k)})
    return env


def wrap(command: str, workspace: Path, *, network: bool = True, hidden: Sequence[Path] = ()) -> list[str]:
    """The bwrap command line that runs ``command`` with ``/bin/sh -c`` in the workspace."""
    bwrap = shutil.which("bwrap") or "bwrap"
    ws = workspace.resolve()
    uid = os.getuid() if hasattr(os, "getuid") else 0
    runtime = [Path(os.environ["XDG_RUNTIME_DIR"])] if os.environ.get("XDG_RUNTIME_DIR") else []
    # Emptied before the workspace is bound (the workspace may lie under one of them).
    emptied = _existing(
        [
            Path.home(),
            Path("/home"),
            Path("/root"),
            Path("/tmp"),
            Path("/var/tmp"),
            Path("/run/user"),
            Path(f"/run/user/{uid}"),
            *runtime,
        ]
    )
    # Hidden after it: secrets stay out of reach even in a workspace that contains them.
    secret = _existing([*hidden, Path.home() / ".local" / "share" / "keyrings", *runtime])
    args = _base(bwrap, network)
    for folder in emptied:
        if not any(_inside(folder, other) for other in emptied if other != folder):
            args += ["--tmpfs", str(folder)]
    args += ["--bind", str(ws), str(ws)]
    for folder in secret:
        if _inside(folder, ws):
            args += ["--tmpfs", str(folder)]
    args += ["--chdir", str(ws), "--clearenv"]
    for name, value in environment().items():
        args += ["--setenv", name, value]
    return [*args, "--", "/bin/sh", "-c", command]
