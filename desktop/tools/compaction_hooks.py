"""The compaction hooks' runner: the user's command before and after a compaction, sandboxed and timed.

Each hook is a shell command line (``settings.json``: ``compaction_hooks``), given its event as JSON on stdin. It
runs like the run tool's commands (``run_command.py``): under bubblewrap (``sandbox.py``: no capability, a plain
user inside even for root, system folders read-only) without the network, in the chat's workspace folder (or an
empty private folder when the chat has none, removed afterwards), with Précis's own folders hidden wherever they
are, in its own process group. At its time limit the whole group is killed. Where the
sandbox cannot start, a hook runs only when ``allow_unsandboxed`` is set (then as the user, without the app's
credentials in its environment); otherwise it is skipped with one sentence.

Whatever a hook does — fails, hangs, is missing — the compaction goes on as if there was no hook, and the
verdict's ``note`` says why. The pre hook vetoes with exit code 2 (its reason on stderr) or
``{"decision": "block", "reason": ...}`` on stdout, and adds focus with ``{"focus": ...}`` or, on exit 0, plain
text on stdout. The post hook's output is only logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct

from desktop.engine.compaction.hooks import (
    FOCUS_CHARS,
    GO_ON,
    POST,
    PRE,
    HookSettings,
    PostCompact,
    PreCompact,
    PreVerdict,
)

OUTPUT_CAP = 64 * 1024  # bytes kept of a hook's stdout and of its stderr (the rest is read and dropped)
SAID_CHARS = 200  # a hook's stderr line quoted in a sentence
VETO = 2  # the pre hook's exit code for "do not compact"
KILLING = frozenset(
    {signal.SIGHUP, signal.SIGINT, signal.SIGKILL, signal.SIGSEGV, signal.SIGTERM, signal.SIGABRT}
)
log = logging.getLogger(__name__)


def _kill_all(proc: asyncio.subprocess.Process) -> None:
    """Kill the hook's whole process group, its shell already gone or not (a child it left in the background
    dies too; run_command's kill stops at a shell that has exited)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sys.platform != "win32":
            os.killpg(proc.pid, signal.SIGKILL)
        elif proc.returncode is None:  # pragma: no cover - no process groups
            proc.kill()


# (session id, the chat's workspace folder from its state) -> the folder the chat's tools work in, or None.
WorkspaceOf = Callable[[int, str | None], Path | None]


class HookRun(Struct, frozen=True):
    """How one hook process ended: ``problem`` (it never ran: why), ``timed_out``, else ``code`` and output."""

    code: int | None = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    problem: str | None = None


def _first_line(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= SAID_CHARS else line[: SAID_CHARS - 1] + "…"


def failure(label: str, run: HookRun, limit: float, after: str) -> str | None:
    """The one sentence for a hook that did not run, timed out or exited non-zero (None: it exited 0)."""
    if run.problem is not None:
        return f"{label} was not run: {run.problem}; {after}"
    if run.timed_out:
        return f"{label} timed out after {limit:g} s; {after}"
    code = run.code
    if code == 0:
        return None
    said = _first_line(run.stderr)
    said = f": {said}" if said else ""
    if code is None or code < 0:
        how = f" by signal {-code}" if code is not None else ""
        return f"{label} was killed{how}; {after}"
    if code > 128 and code - 128 in KILLING:  # a shell's way of saying its command was killed
        return f"{label} was killed by signal {code - 128} (exit code {code}{said}); {after}"
    if code == 127:
        return f"{label}'s command was not found (exit code 127{said}); {after}"
    if code == 126:
        return f"{label}'s command could not be run (exit code 126{said}); {after}"
    return f"{label} failed (exit code {code}{said}); {after}"


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def pre_verdict(run: HookRun, limit: float) -> PreVerdict:
    """What the pre hook's run says: a veto (exit 2, or a JSON block), added focus, or go on (with why)."""
    if run.problem is not None or run.timed_out or run.code not in (0, VETO):
        return PreVerdict(note=failure(PRE, run, limit, "compacting without it."))
    answer = _json_object(run.stdout)
    focus: str | None = None
    if answer is not None:
        given = answer.get("focus")
        focus = given if isinstance(given, str) else None
    elif run.code == 0:
        focus = run.stdout  # plain text on success: focus to add
    focus = (focus.strip()[:FOCUS_CHARS] or None) if focus else None
    decision = str(answer.get("decision") or "").strip().lower() if answer is not None else ""
    if run.code == VETO or decision == "block":
        given = answer.get("reason") if answer is not None else None
        reason = given.strip() if isinstance(given, str) else ""
        reason = reason or run.stderr.strip() or ("" if answer is not None else run.stdout.strip())
        return PreVerdict(True, reason or f"exit code {run.code}", focus)
    return PreVerdict(focus=focus)


class CompactionHookRunner:
    """The ``CompactionHooks`` the runtime hands the engine. ``config`` is read at each compaction (a settings
    change applies to the next one); ``hidden``: Précis's own folders, out of a hook's sight; ``workspace_of``:
    the folder a chat's tools work in (the toolbox's answer), else the chat's own workspace folder."""

    def __init__(
        self,
        config: Callable[[], HookSettings],
        *,
        hidden: Sequence[Path] = (),
        workspace_of: WorkspaceOf | None = None,
    ):
        self._config = config
        self.hidden = tuple(hidden)
        self._workspace_of = workspace_of

    async def before(self, event: PreCompact) -> PreVerdict:
        config = self._config()
        if not config.pre:
            return GO_ON
        run = await self.run(
            config.pre,
            event.payload(),
            config.pre_timeout,
            event.session_id,
            event.workspace,
            allow_unsandboxed=config.allow_unsandboxed,
        )
        verdict = pre_verdict(run, config.pre_timeout)
        log.info(
            "session %s: pre-compaction hook: exit %s%s",
            event.session_id,
            run.code,
            " (timed out)" if run.timed_out else "",
        )
        if verdict.note:
            log.warning("session %s: %s", event.session_id, verdict.note)
        return verdict

    async def after(self, event: PostCompact) -> str | None:
        config = self._config()
        if not config.post:
            return None
        run = await self.run(
            config.post,
            event.payload(),
            config.post_timeout,
            event.session_id,
            event.workspace,
            allow_unsandboxed=config.allow_unsandboxed,
        )
        log.debug(
            "session %s: post-compaction hook: exit %s, stdout %r, stderr %r",
            event.session_id,
            run.code,
            run.stdout[:2000],
            run.stderr[:2000],
        )
        note = failure(POST, run, config.post_timeout, "the compaction is kept.")
        if note:
            log.warning("session %s: %s", event.session_id, note)
        return note

    def _folder(self, session_id: int, folder: str | None) -> Path | None:
        found = None
        if self._workspace_of is not None:
            try:
                found = self._workspace_of(session_id, folder)
            except OSError:
                found = None
        if found is None and folder:
            found = Path(folder)
        return found if found is not None and found.is_dir() else None

    async def run(
        self,
        command: str,
        payload: dict[str, Any],
        limit: float,
        session_id: int,
        folder: str | None,
        *,
        allow_unsandboxed: bool = False,
    ) -> HookRun:
        """Run ``command`` with ``payload`` as JSON on stdin, killed (its whole process group) after ``limit`` s."""
        from desktop.tools import sandbox  # loaded with the first hook, not with the window

        problem = await asyncio.to_thread(sandbox.sandbox_problem, False)
        if problem is not None and not allow_unsandboxed:
            return HookRun(
                problem=f'{problem}, so it cannot be sandboxed ("allow_unsandboxed": true in '
                "compaction_hooks runs it anyway)"
            )
        workspace = self._folder(session_id, folder)
        private = None
        if workspace is None:
            private = Path(tempfile.mkdtemp(prefix="precis-hook-"))  # 0700, empty
            workspace = private
        try:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8", errors="replace")
            return await _exchange(command, workspace, data, limit, self.hidden, sandboxed=problem is None)
        finally:
            if private is not None:
                shutil.rmtree(private, ignore_errors=True)


async def _exchange(
    command: str, workspace: Path, data: bytes, limit: float, hidden: Sequence[Path], *, sandboxed: bool
) -> HookRun:
    from desktop.tools import sandbox
    from desktop.tools.run_command import start_command

    pipe = asyncio.subprocess.PIPE
    try:
        if not sandboxed:  # the user allowed it (allow_unsandboxed)
            log.warning(
                "compaction hook: no sandbox (%s): it runs with the user's access",
                sandbox.sandbox_problem(False),
            )
        proc = await start_command(
            command, workspace, sandboxed=sandboxed, network=False, hidden=hidden, stdin=pipe, stderr=pipe
        )
    except OSError as exc:
        return HookRun(problem=f"it could not start ({type(exc).__name__}: {exc})")
    out, err = bytearray(), bytearray()

    async def feed() -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(data)
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):  # the hook did not read its input: its choice
            pass
        finally:
            with contextlib.suppress(Exception):
                proc.stdin.close()

    async def drain(stream: asyncio.StreamReader | None, sink: bytearray) -> None:
        assert stream is not None
        while chunk := await stream.read(65536):
            if len(sink) < OUTPUT_CAP:
                sink.extend(chunk[: OUTPUT_CAP - len(sink)])

    async def exchange() -> None:
        await asyncio.gather(feed(), drain(proc.stdout, out), drain(proc.stderr, err))
        await proc.wait()

    def text(raw: bytearray) -> str:
        return bytes(raw).decode("utf-8", errors="replace")

    try:
        await asyncio.wait_for(exchange(), limit)
    except TimeoutError:
        _kill_all(proc)
        await proc.wait()
        return HookRun(proc.returncode, text(out), text(err), timed_out=True)
    except asyncio.CancelledError:  # Stop: nothing the hook started keeps running
        _kill_all(proc)
        with contextlib.suppress(Exception):
            await asyncio.shield(proc.wait())
        raise
    finally:
        _kill_all(proc)  # what the hook left running in the background
    return HookRun(proc.returncode, text(out), text(err))
