"""Connections to MCP servers (the official ``mcp`` client), one owner task per server.

The client's context (anyio task groups) is entered and left by the same task, which lives as long as the
connection; calls come from any task. Starting, listing and calling are bounded by timeouts, so a hung server is
an error, never a hung turn. A stdio server's messages come through our bounded transport (mcp_stdio): one past
its limit stops the server with a sentence. A server's stderr goes to a log file the window shows; a crashed server
is marked failed and can be restarted. A server that cannot start says why: its command not found, or how it
exited and the first line it wrote on stderr (never only "Connection closed").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from msgspec import Struct

from desktop.engine import lazy_imports
from desktop.engine.config.files import PRIVATE_FILE, private_dir, tighten
from desktop.engine.types import Block
from desktop.tools.mcp_config import McpServerConfig
from desktop.tools.types import ToolOutcome, ToolSpec, definition_digest

START_TIMEOUT = 30.0
CALL_TIMEOUT = 120.0
LOG_TAIL = 20_000
LOG_LIMIT = 1024 * 1024  # bytes of a server's stderr kept in its log per start; the rest is counted, not kept
FLOOD_BYTES = 16_000_000  # stderr past this in one run: the server is stopped
GARBAGE_LINES = 20  # lines on stdout that are not MCP messages: the server is stopped
RESULT_CHARS = 1_000_000  # a tool answer's text is cut here (the model gets a note saying so)
STDERR_LINE = 300  # characters of an exited server's first stderr line in its error
STDERR_WAIT = 0.5  # seconds an exited server's stderr is given to reach its copier
_NAME = re.compile(r"[^A-Za-z0-9_-]+")
log = logging.getLogger(__name__)


def tool_name(server: str, tool: str) -> str:
    """The name the model calls: mcp__<server>__<tool>, within the API's 64 characters."""
    return f"mcp__{_NAME.sub('_', server)}__{_NAME.sub('_', tool)}"[:64]


class ServerStatus(Struct, frozen=True):
    """An MCP server's state and the tools it offers."""

    name: str
    state: str  # disabled | stopped | starting | ready | failed
    error: str = ""
    tools: tuple[str, ...] = ()
    where: str = ""


class McpServer:
    def __init__(
        self, config: McpServerConfig, log_dir: Path, changed: Callable[[McpServer], None] | None = None
    ):
        self.config = config
        self.log_path = log_dir / f"{_NAME.sub('_', config.name)}.log"
        self.state = "stopped" if config.enabled else "disabled"
        self.error = ""
        self.specs: list[ToolSpec] = []
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._changed = changed
        self._refused = ""  # the last HTTP error status the server answered (the client reports it vaguely)
        self._ready: asyncio.Future[None] | None = None
        self._faulted = ""  # why the server was stopped for misbehaving
        self._garbage = 0  # lines of its output that were not MCP messages, this run
        self._exit: Any = None  # mcp_stdio.Exit of this run's process (stdio servers)
        # This run's stderr copier: its first line says why a start failed.
        self._stderr: StderrPipe | None = None

    @property
    def status(self) -> ServerStatus:
        return ServerStatus(
            self.config.name, self.state, self.error, tuple(s.tool for s in self.specs), self.config.where
        )

    def _set(self, state: str, error: str = "") -> None:
        self.state, self.error = state, error
        if self._changed is not None:
            self._changed(self)

    def log_tail(self) -> str:
        try:
            data = self.log_path.read_bytes()[-LOG_TAIL:]
        except OSError:
            return ""
        return data.decode(errors="replace")

    def _params(self) -> Any:
        if self.config.url:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = create_mcp_http_client(headers=self.config.headers or None)
            http.event_hooks["response"].append(self._note_status)
            return streamable_http_client(self.config.url, http_client=http)
        from mcp.client.stdio import StdioServerParameters

        command, args = server_command(self.config)
        return StdioServerParameters(
            command=command, args=args, env=self.config.env or None, cwd=self.config.cwd or None
        )

    async def _note_status(self, response: Any) -> None:
        if response.status_code >= 400:
            self._refused = f"HTTP {response.status_code} {response.reason_phrase}".strip()

    def _explain(self, exc: BaseException) -> str:
        """The failure in words; for an HTTP server, with the status it answered (401: check the headers); for a
        stdio server that exited, how it exited and the first line of its stderr."""
        if (ended := self._ended()) is not None:
            return ended
        text = _describe(exc)
        if self._refused:
            hint = " (check the URL and headers)" if self._refused[5:8] in ("401", "403", "404") else ""
            text = f"{text}: the server answered {self._refused}{hint}"
        return text

    def _ended(self) -> str | None:
        """How this run's process exited, in words (None: it did not, or it is no stdio server)."""
        code = getattr(self._exit, "code", None)
        if code is None or (code == 0 and not self._first_stderr()):
            return None
        if code == 127:  # the shell's and env's "command not found"
            why = f"command not found: {self.config.command}"
        elif code == 126:
            why = f"{self.config.command} could not be run (not an executable program)"
        elif code < 0:
            why = f"it was killed by signal {-code}"
        else:
            why = f"it exited with code {code}"
        first = self._first_stderr()
        return f"{why}: {first}" if first else why

    def _first_stderr(self) -> str:
        pipe = self._stderr
        return _describe(RuntimeError(pipe.first_line)) if pipe is not None and pipe.first_line else ""

    async def _heard(self) -> None:
        """Let the stderr copier read what an exited server wrote (it reads in its own thread)."""
        pipe = self._stderr
        if pipe is not None and getattr(self._exit, "code", None) not in (None, 0):
            await asyncio.to_thread(pipe.heard.wait, STDERR_WAIT)

    async def start(self, timeout: float | None = None) -> ServerStatus:
        if self.state == "ready" or not self.config.enabled:
            return self.status
        timeout = START_TIMEOUT if timeout is None else timeout
        self._set("starting")
        self._refused = ""
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._ready, self._faulted, self._garbage = ready, "", 0
        self._stop = asyncio.Event()
        self._task = asyncio.ensure_future(self._own(ready, self._stop))
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            ready.cancel()  # the owner's late failure is nobody's to retrieve
            await self._halt(grace=0)  # it is stuck in the handshake: nothing to wind down politely
            self._set("failed", f"did not answer within {timeout:g} s; it was stopped")
        except ServerFault as exc:
            await self._halt(grace=0)
            self._set("failed", str(exc))
        except Exception as exc:  # noqa: BLE001 - any start failure is the server's error, in words
            await self._halt()
            await self._heard()
            self._set("failed", self._explain(exc))
        return self.status

    def _fault(self, why: str) -> None:
        """The server misbehaves (garbage or a flood on its output): stop it, with ``why`` as its error."""
        if self._faulted:
            return
        self._faulted = why
        ready = self._ready
        if ready is not None and not ready.done():
            ready.set_exception(ServerFault(why))  # start() stops it and says why
            return
        self._set("failed", why)
        if self._stop is not None:
            self._stop.set()

    async def _on_message(self, message: Any) -> None:
        """Notifications and transport faults from the client; a line that is not JSON-RPC is a fault, and one
        past the transport's limit stops the server at once."""
        from desktop.tools.mcp_stdio import MessageTooLarge

        if isinstance(message, MessageTooLarge):
            self._fault(f"{message}; it was stopped")
        elif isinstance(message, Exception):
            self._garbage += 1
            if self._garbage >= GARBAGE_LINES:
                self._fault(
                    f"its output is not MCP messages ({self._garbage} lines that are not JSON-RPC); "
                    "it was stopped"
                )

    async def _own(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        errlog = open_log(self.log_path)
        errlog.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting {self.config.where}\n")
        errlog.flush()
        stderr: StderrPipe | None = None
        self._exit, self._stderr = None, None
        try:
            if not self.config.url and (missing := missing_command(self.config)):
                errlog.write(f"{missing}\n")
                raise ServerFault(missing)
            await lazy_imports.load(lazy_imports.MCP)  # the first server: the client stack, off the loop
            from mcp import Client

            params = self._params()
            if self.config.url:
                client = Client(params, read_timeout_seconds=CALL_TIMEOUT, message_handler=self._on_message)
            else:
                from desktop.tools.mcp_stdio import Exit, bounded_stdio_client

                loop = asyncio.get_running_loop()

                def flooded(why: str) -> None:  # from the copier's thread; a past run's copier stops nothing
                    loop.call_soon_threadsafe(lambda: self._fault(why) if self._ready is ready else None)

                stderr = self._stderr = StderrPipe(errlog, flooded)
                self._exit = Exit()
                client = Client(
                    bounded_stdio_client(params, stderr.writer, ended=self._exit),
                    read_timeout_seconds=CALL_TIMEOUT,
                    message_handler=self._on_message,
                )
            async with client:
                listed = await client.list_tools()
                self.specs = [self._spec(t) for t in sorted(listed.tools, key=lambda t: t.name)]
                self._client = client
                if not ready.done():
                    ready.set_result(None)
                self._set("ready")
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError("cancelled"))
            elif not stop.is_set() and isinstance(exc, Exception):
                self._set("failed", self._explain(exc))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._client = None
            if stderr is not None:
                stderr.close()  # the server is gone: its pipe ends, the copier closes the log
            else:
                errlog.close()

    def _spec(self, tool: Any) -> ToolSpec:
        name = tool_name(self.config.name, tool.name)
        definition = {
            "name": name,
            "description": (tool.description or "")[:2000],
            "input_schema": tool.input_schema or {"type": "object"},
        }
        read_only = bool(tool.annotations and tool.annotations.read_only_hint)
        return ToolSpec(
            name,
            self.config.name,
            tool.name,
            definition,
            read_only,
            self.config.origin,
            definition_digest(definition),
        )

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float = CALL_TIMEOUT) -> ToolOutcome:
        client = self._client
        if client is None or self.state != "ready":
            return ToolOutcome(
                f"MCP server {self.config.name} is not running ({self.error or self.state}); "
                "restart it in Settings",
                is_error=True,
            )
        try:
            result = await asyncio.wait_for(client.call_tool(tool, arguments), timeout)
        except TimeoutError:
            self._set("failed", f"{tool} did not answer within {timeout:g} s")
            await self._halt()
            return ToolOutcome(
                f"MCP server {self.config.name}: {tool} did not answer within {timeout:g} s; "
                "the server was stopped",
                is_error=True,
            )
        except Exception as exc:  # noqa: BLE001 - a crashed server is an error result, never a failed turn
            await self._heard()
            why = self._faulted or self._explain(exc)  # stopped for misbehaving: that is the reason
            self._set("failed", why)
            await self._halt()
            return ToolOutcome(f"MCP server {self.config.name} failed: {why}", is_error=True)
        return bound_result(convert_result(result))

    async def _halt(self, grace: float = 10) -> None:
        if self._stop is not None:
            self._stop.set()
        task, self._task = self._task, None
        if task is not None and not task.done():
            try:
                if not grace:
                    raise TimeoutError
                await asyncio.wait_for(asyncio.shield(task), grace)
            except (TimeoutError, Exception):  # noqa: BLE001 - a server that will not stop is cancelled
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self._client = None

    async def stop(self) -> None:
        await self._halt()
        self.specs = []
        self._set("stopped" if self.config.enabled else "disabled")

    async def restart(self) -> ServerStatus:
        await self.stop()
        return await self.start()


class ServerFault(Exception):
    """A server misbehaved (its output is not MCP, or a flood); ``str()`` is the sentence."""


class StderrPipe:
    """A server's stderr, through a pipe: a thread copies it into the log up to ``LOG_LIMIT`` bytes a run and
    counts the rest; past ``FLOOD_BYTES`` it reports a flood once (the server is then stopped). Its first line
    is kept (``first_line``; ``heard`` is set once it is whole, or the pipe ended): why a failed start failed."""

    def __init__(self, log: TextIO, flooded: Callable[[str], None]):
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = open(write_fd, "w", encoding="utf-8", errors="replace")  # noqa: SIM115 - closed below
        self._reader = read_fd
        self._log = log
        self._flooded = flooded
        self.first_line = ""
        self.heard = threading.Event()
        self._start = bytearray()  # the beginning of the output, until its first non-empty line is whole
        self._thread = threading.Thread(target=self._copy, name="mcp-stderr", daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        kept = total = 0
        told = False
        try:
            while chunk := os.read(self._reader, 65_536):
                total += len(chunk)
                if not self.heard.is_set():
                    self._note_start(chunk)
                if kept < LOG_LIMIT:
                    piece = chunk[: LOG_LIMIT - kept]
                    kept += len(piece)
                    self._log.write(piece.decode("utf-8", "replace"))
                    if kept >= LOG_LIMIT:
                        self._log.write(f"\n[log cut at {LOG_LIMIT:,} bytes]\n")
                    self._log.flush()
                if total > FLOOD_BYTES and not told:
                    told = True
                    self._flooded(
                        f"it wrote more than {FLOOD_BYTES // 1_000_000} MB of messages; it was stopped"
                    )
        except (OSError, ValueError, RuntimeError):  # the log or the loop closed under it
            pass
        finally:
            if not self.heard.is_set():  # the output ended without a newline: its start is the line
                self.first_line = self._start.decode("utf-8", "replace").strip()[:STDERR_LINE]
                self.heard.set()
            os.close(self._reader)
            with contextlib.suppress(OSError, ValueError):
                self._log.close()

    def _note_start(self, chunk: bytes) -> None:
        self._start += chunk[: STDERR_LINE * 4]
        for line in bytes(self._start).splitlines(keepends=True):
            if line.endswith(b"\n") and line.strip():
                self.first_line = line.decode("utf-8", "replace").strip()[:STDERR_LINE]
                self.heard.set()
                return
        if len(self._start) >= STDERR_LINE * 4:  # one endless line: its start will do
            self.first_line = self._start.decode("utf-8", "replace").strip()[:STDERR_LINE]
            self.heard.set()

    def close(self) -> None:
        """Our end of the pipe: once the server (and any child holding it) is gone, the copier ends."""
        with contextlib.suppress(OSError):
            self.writer.close()


def bound_result(outcome: ToolOutcome) -> ToolOutcome:
    """A tool's answer within ``RESULT_CHARS`` of text (blocks beyond it are dropped), with a note when cut."""
    if isinstance(outcome.content, str):
        if len(outcome.content) <= RESULT_CHARS:
            return outcome
        cut = len(outcome.content) - RESULT_CHARS
        return ToolOutcome(
            outcome.content[:RESULT_CHARS] + f"\n[… {cut:,} characters cut: the answer was too long]",
            outcome.is_error,
            outcome.exit_code,
        )
    kept: list[Block] = []
    size = 0
    for block in outcome.content:
        size += len(str(block.get("text") or block.get("source") or ""))
        if size > RESULT_CHARS:
            kept.append({"type": "text", "text": "[… the rest of the answer was cut: it was too long]"})
            break
        kept.append(block)
    return ToolOutcome(kept, outcome.is_error, outcome.exit_code)


def open_log(path: Path) -> TextIO:
    """The server's log, appended to, readable by the user only (a log made 0644 before is tightened)."""
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE)
    tighten(path, PRIVATE_FILE)
    return open(fd, "a", encoding="utf-8", errors="replace")  # noqa: SIM115 - kept open by the caller


def missing_command(config: McpServerConfig) -> str | None:
    """Why a stdio server's command cannot be started, found before it is spawned (None: it can be). The program
    is looked for as the server would be started: on the PATH it gets, or relative to its folder."""
    command = config.command
    if not command.strip():
        return "no command is set"
    if os.sep in command or (os.altsep and os.altsep in command):
        target = Path(command).expanduser()
        if not target.is_absolute():
            target = Path(config.cwd or os.getcwd()) / target
        if not target.exists():
            return f"command not found: {command}"
        if target.is_dir() or not os.access(target, os.X_OK):
            return f"{command} could not be run (not an executable program)"
        return None
    path = (config.env or {}).get("PATH") or os.environ.get("PATH", os.defpath)
    if shutil.which(command, path=path) is None:
        return f"command not found: {command} (it is not on the PATH)"
    return None


def server_command(config: McpServerConfig) -> tuple[str, list[str]]:
    """The command line that starts a stdio server with only PATH, HOME and the variables its config names.

    The client passes a few more of ours (USER, LOGNAME, SHELL, TERM on POSIX) and has no way to leave them out; ``env -u``
    removes them in the child. Nothing secret is on the command line: only those names."""
    from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

    drop = [
        n for n in sorted(set(DEFAULT_INHERITED_ENV_VARS) - set(_KEPT) - set(config.env)) if n in os.environ
    ]
    if not drop or sys.platform == "win32" or not Path(_ENV).exists() or "=" in config.command:
        return config.command, list(config.args)
    unset = [a for n in drop for a in ("-u", n)]
    return _ENV, [*unset, "--", config.command, *config.args]


_ENV = "/usr/bin/env"
_KEPT = ("PATH", "HOME")


def convert_result(result: Any) -> ToolOutcome:
    from anthropic.lib.tools.mcp import UnsupportedMCPValueError, mcp_content  # loaded by the server's start

    blocks: list[Block] = []
    for item in result.content:
        try:
            blocks.append(dict(mcp_content(item)))
        except UnsupportedMCPValueError as exc:
            blocks.append({"type": "text", "text": f"[{exc}]"})
    if not blocks and result.structured_content is not None:
        import json

        blocks = [{"type": "text", "text": json.dumps(result.structured_content, ensure_ascii=False)}]
    if all(b.get("type") == "text" for b in blocks):
        text = "\n".join(str(b.get("text", "")) for b in blocks)
        return ToolOutcome(text or "(no output)", is_error=bool(result.is_error))
    return ToolOutcome(blocks, is_error=bool(result.is_error))


def _describe(exc: BaseException) -> str:
    # The SDK's ToolError, if the SDK is loaded at all (a failed start may come before it is).
    tool_error = getattr(sys.modules.get("anthropic.lib.tools._beta_functions"), "ToolError", None)
    if tool_error is not None and isinstance(exc, tool_error):
        return str(exc)
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:300]
