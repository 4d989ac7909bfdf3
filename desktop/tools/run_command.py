"""The run tool: one shell command in the workspace, in its own process group, with a timeout and an output cap.

Each call is a fresh shell (no state carries from one call to the next), inside the sandbox (``sandbox.py``),
without the network unless it was given, and with Précis's own folders (this process's, besides those the caller
names) out of its sight. Where no sandbox can start, a command runs only when its caller says the user was told
(``unconfined``: the prompt's warning, or ``--allow-unsandboxed``), as the user, without the app's credentials in
its environment; otherwise it is not run, and says why. A timeout or a cancellation (Stop) kills the whole
process group, so nothing the command started keeps running.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any

from desktop.tools import sandbox
from desktop.tools.types import ToolOutcome

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 600.0
log = logging.getLogger(__name__)
OUTPUT_CAP = 1_000_000  # characters kept of a command's output; the ingest cap decides what requests carry


def precis_folders(hidden: Sequence[Path] = ()) -> tuple[Path, ...]:
    """``hidden`` and Précis's own folders as this process finds them (PRECIS_HOME, else the platform's): a
    caller that names none still hides the key file and the database."""
    from desktop.engine.config.settings import Paths

    paths = Paths.resolve()
    return (*hidden, paths.config_dir, paths.data_dir, paths.cache_dir)


def command_env() -> dict[str, str]:
    """The process environment without the app's own credentials: a command must not print the API key."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PRECIS_"))}


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sys.platform != "win32":
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - no process groups
            proc.kill()


async def _started(starting: Coroutine[Any, Any, asyncio.subprocess.Process]) -> asyncio.subprocess.Process:
    """The started process; a Stop while it starts still kills its whole group (asyncio would kill the first
    process only, and what it had started already would keep running)."""
    task = asyncio.ensure_future(starting)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            proc = await task
            _kill_group(proc)
            await proc.wait()
        raise


async def start_command(
    command: str,
    cwd: Path,
    *,
    sandboxed: bool,
    network: bool,
    hidden: Sequence[Path],
    stdin: int,
    stderr: int,
) -> asyncio.subprocess.Process:
    """Start ``command`` in ``cwd`` in a process group of its own, its output on a pipe: in the sandbox (Précis's
    folders and ``hidden`` out of its reach), or — ``sandboxed`` False, which the user allowed — as their shell."""
    pipe, group = asyncio.subprocess.PIPE, sys.platform != "win32"
    if sandboxed:
        argv = sandbox.wrap(command, cwd, network=network, hidden=precis_folders(hidden))
        started = asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=sandbox.environment(),
            stdin=stdin,
            stdout=pipe,
            stderr=stderr,
            start_new_session=group,
        )
    else:
        started = asyncio.create_subprocess_shell(
            command,
            cwd=cwd,
            env=command_env(),
            stdin=stdin,
            stdout=pipe,
            stderr=stderr,
            start_new_session=group,
        )
    return await _started(started)


async def run_command(
    command: str,
    cwd: Path,
    timeout: float | None = None,
    *,
    network: bool = False,
    hidden: Sequence[Path] = (),
    unconfined: bool = False,
) -> ToolOutcome:
    """Run ``command`` in ``cwd`` in the sandbox (``network``: the host's shared; ``hidden``: folders out of its
    reach besides Précis's own); without one only when ``unconfined`` says the user was told."""
    limit = min(MAX_TIMEOUT, max(1.0, float(timeout or DEFAULT_TIMEOUT)))
    problem = sandbox.sandbox_problem(network)
    if (
        problem is not None and not unconfined
    ):  # approved as a sandboxed command: never run it as the user instead
        return ToolOutcome(
            f"run: the command was not run: the sandbox cannot start ({problem})", is_error=True
        )
    if problem is not None:  # the prompt said so (or --allow-unsandboxed asked for no prompt)
        log.warning("run: no sandbox (%s): the command runs with the user's access", problem)
    proc = await start_command(
        command,
        cwd,
        sandboxed=problem is None,
        network=network,
        hidden=hidden,
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = 0
    cut = False

    async def read_all() -> None:
        nonlocal size, cut
        assert proc.stdout is not None
        while data := await proc.stdout.read(65536):
            if size < OUTPUT_CAP * 4:  # bytes: enough for OUTPUT_CAP characters of any UTF-8
                chunks.append(data)
            size += len(data)
        await proc.wait()

    try:
        await asyncio.wait_for(read_all(), limit)
    except TimeoutError:
        _kill_group(proc)
        await proc.wait()
        text = b"".join(chunks).decode(errors="replace")[:OUTPUT_CAP]
        return ToolOutcome(
            f"{text}\n[timed out after {limit:g} s: the command was killed]".lstrip("\n"), is_error=True
        )
    except asyncio.CancelledError:
        _kill_group(proc)
        with contextlib.suppress(Exception):
            await asyncio.shield(proc.wait())
        raise
    finally:
        _kill_group(proc)  # a background child left holding the pipe
    text = b"".join(chunks).decode(errors="replace")
    if len(text) > OUTPUT_CAP:
        text, cut = text[:OUTPUT_CAP], True
    code = proc.returncode if proc.returncode is not None else -1
    tail = f"\n[output cut at {OUTPUT_CAP:,} characters]" if cut else ""
    body = (text.rstrip("\n") + tail) or "(no output)"
    return ToolOutcome(f"{body}\n[exit code {code}]", is_error=code != 0, exit_code=code)
