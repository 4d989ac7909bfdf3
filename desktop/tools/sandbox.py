"""The run tool's sandbox: each command runs under bubblewrap (``bwrap``, Linux), the same whoever runs Précis.

The command gets a user namespace of its own with every capability dropped and no way to make another one:
Précis run as root (a container) runs it as a plain user inside (uid and gid 1000), so it can neither remount
what is read-only nor unmount what hides a secret. It sees only what a command needs, never the machine's whole
tree: the system folders (``SYSTEM``) read-only, the workspace read-write, an empty private ``/tmp`` and an empty
home (HOME), a fresh ``/dev``, and a ``/proc`` of its own PID namespace (no process of the user's session, Précis
with its key in its environment included, can be seen). Précis's own folders (settings, key file, database,
caches) and the system's secret files (``SECRETS``: root owns them, and a command of root's can read what root
owns) are covered with something empty wherever they would show: in a system folder (a home under ``/opt``) or
in the workspace. The environment is cleared: PATH, HOME, TMPDIR, the locale and TERM only.

There is no network by default: a network namespace of its own has only ``lo``, and also closes the host's
abstract unix sockets (the display's, the session bus's, agents'), which belong to the network namespace.
``network=True`` shares the host's network and those sockets.

Where bwrap is missing or cannot start (no user namespaces, another system than Linux), ``sandbox_problem``
says why in one sentence, and the permission prompt shows it before the user approves. Standard library only,
so the normal-user tests can import it with the system's Python.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
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
# Shown read-only where they exist (a link, like /bin -> usr/bin, is made again as a link). Not /: the homes,
# /root, /srv, /var, /run, /mnt and /sys stay out, wherever Précis's home is.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix/store")
# Files of the shown folders that are links whose target is shown too (systemd-resolved keeps it in /run).
FOLLOWED = ("/etc/resolv.conf",)
# Covered where they exist: only root may read them, and a command started by root is root's on disk.
SECRETS = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/security/opasswd",
    "/etc/ssl/private",
)
SSH_KEYS = "/etc/ssh"  # its ssh_host_*_key files (the host's private keys) are covered too
SANDBOX_ID = 1000  # the uid and gid inside when Précis runs as root (a plain user's own ids are kept)
FALLBACK_HOME = Path("/tmp/home")  # when the user's home cannot be emptied where it is (/, a system folder)


def _real(path: Path) -> Path | None:
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _shown() -> tuple[list[Path], list[tuple[str, str]]]:
    """The system folders a command sees (real paths, bound read-only) and the links that lead to them."""
    folders: list[Path] = []
    links: list[tuple[str, str]] = []
    for name in SYSTEM:
        real = _real(Path(name))
        if real is None or not real.is_dir():
            continue
        if os.path.islink(name):
            links.append((os.readlink(name), name))
        if not any(_inside(real, folder) for folder in folders):
            folders.append(real)
    return folders, links


def home() -> Path:
    """The command's HOME, empty: the user's own path (so ``~/project`` still names the workspace), unless it
    holds a shown folder or lies in one (where an empty folder cannot be made): then ``FALLBACK_HOME``."""
    mine = Path.home()
    folders, _links = _shown()
    clashes = any(_inside(folder, mine) or _inside(mine, folder) for folder in folders)
    return FALLBACK_HOME if clashes else mine


def environment() -> dict[str, str]:
    """What a sandboxed command sees: PATH, HOME, TMPDIR, the locale and TERM, nothing of the app's."""
    env = {
        "PATH": os.environ.get("PATH") or DEFAULT_PATH,
        "HOME": str(home()),
        "TERM": "dumb",
        "TMPDIR": "/tmp",
    }
    env.update({k: os.environ[k] for k in KEPT if os.environ.get(k)})
    return env


def _covered(hidden: Sequence[Path]) -> list[Path]:
    """What is covered where it shows: Précis's folders, the keyring's, the session's runtime folder, and the
    system's secret files (each a real path; what does not exist is left out)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    candidates = [
        *hidden,
        Path.home() / ".local" / "share" / "keyrings",
        *([Path(runtime)] if runtime else []),
        *map(Path, SECRETS),
        *sorted(Path(SSH_KEYS).glob("ssh_host_*_key")),
    ]
    out: list[Path] = []
    for path in candidates:
        real = _real(path)
        if real is not None and real not in out:
            out.append(real)
    return out


def _cover(path: Path) -> list[str]:
    """Arguments that put something empty over ``path``: an empty tmpfs on a folder, /dev/null on a file (on
    a nodev mount: it cannot even be opened)."""
    if path.is_dir():
        return ["--tmpfs", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


def _base(bwrap: str, network: bool) -> list[str]:
    """The namespaces and the user: one argument group per line, each a guarantee of its own."""
    args = [bwrap, "--die-with-parent"]
    args += [
        "--unshare-user"
    ]  # root outside is a plain user inside, whose capabilities reach nothing outside
    if os.getuid() == 0:
        args += ["--uid", str(SANDBOX_ID), "--gid", str(SANDBOX_ID)]
    args += ["--disable-userns"]  # no nested namespace in which to regain capabilities
    args += ["--cap-drop", "ALL"]
    args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        args += ["--unshare-net"]  # only lo, and none of the host's abstract unix sockets
    return args


def wrap(command: str, workspace: Path, *, network: bool = False, hidden: Sequence[Path] = ()) -> list[str]:
    """The bwrap command line that runs ``command`` with ``/bin/sh -c`` in the workspace (``hidden``: Précis's
    own folders, never shown; ``network``: share the host's network)."""
    bwrap = shutil.which("bwrap") or "bwrap"
    ws = workspace.resolve()
    folders, links = _shown()
    args = _base(bwrap, network)
    for folder in folders:
        args += ["--ro-bind", str(folder), str(folder)]
    for target, name in links:
        args += ["--symlink", target, name]
    for name in FOLLOWED:
        real = _real(Path(name))
        if real is not None and not any(_inside(real, folder) for folder in folders):
            args += ["--ro-bind", str(real), str(real)]
    args += ["--dev", "/dev"]
    args += ["--proc", "/proc"]
    args += ["--perms", "1777", "--tmpfs", "/tmp"]
    args += ["--tmpfs", str(home())]
    shown = [*folders, ws]
    covered = [path for path in _covered(hidden) if any(_inside(path, where) for where in shown)]
    # A covered folder that holds the workspace is covered before the workspace is bound into it; the others
    # after, so that one inside the workspace (or the workspace itself) is covered too.
    for path in covered:
        if path in ws.parents:
            args += _cover(path)
    args += ["--bind", str(ws), str(ws)]
    for path in covered:
        if path not in ws.parents:
            args += _cover(path)
    args += ["--chdir", str(ws)]
    args += ["--clearenv"]
    for name, value in environment().items():
        args += ["--setenv", name, value]
    return [*args, "--", "/bin/sh", "-c", command]


@functools.cache
def sandbox_problem(network: bool = False) -> str | None:
    """None when a sandbox starts here; otherwise why not, in one sentence (checked once per process, with the
    very command line a command gets, in an empty workspace)."""
    if not sys.platform.startswith("linux"):
        return "the command sandbox (bubblewrap) exists on Linux only"
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    probe = Path(tempfile.mkdtemp(prefix="precis-sandbox-probe-"))
    try:
        done = subprocess.run(
            wrap("true", probe, network=network),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap did not start ({type(exc).__name__}: {exc})"
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return f"bubblewrap cannot start here ({said[0] if said else f'exit code {done.returncode}'})"
    return None
