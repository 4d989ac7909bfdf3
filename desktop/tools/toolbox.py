"""The tool runner the engine calls: per chat workspace tools and the configured MCP servers, each call
permission-checked, run concurrently with the others of its reply, timed, logged in the audit log, cancellable.

A session's workspace is kept in its state (``workspace``), so it survives restarts; the CLI fixes one for its
run instead (``precis chat --workspace DIR``; none: no built-in tools).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.engine.config.settings import Paths
from desktop.engine.turn.tooling import COMPACTED, PROJECT, EndTurn, ToolEvents
from desktop.engine.types import Block
from desktop.tools import deferral, recall
from desktop.tools.events import (
    McpChanged,
    PermissionAsked,
    PermissionSettled,
    ToolCallFinished,
    ToolCallStarted,
    ToolStatus,
)
from desktop.tools.mcp_config import CONFIG_NAME, McpConfig, McpServerConfig, load_config
from desktop.tools.mcp_host import McpServer
from desktop.tools.permissions import Answer, Asker, PermissionPolicy, PermissionRequest
from desktop.tools.types import BUILTIN, ToolOutcome, ToolSpec

if TYPE_CHECKING:
    from desktop.tools.workspace import Workspace

EXCERPT = 300
REINJECT_FILES = 5  # after a summary: at most this many files back in the context
REINJECT_FILE_CHARS = 20_000  # about 5K tokens each
REINJECT_TOTAL_TOKENS = 50_000
log = logging.getLogger(__name__)
_UNSET: Any = object()


class Toolbox:
    def __init__(
        self,
        paths: Paths,
        policy: PermissionPolicy,
        *,
        audit: Callable[..., Any] | None = None,
        workspace: Path | None = _UNSET,
        asker: Asker | None | str = "events",
        mcp: McpConfig | None = None,
        network: bool = True,
        recall: recall.RecallSource | None = None,
        outcomes: Callable[[int], Awaitable[dict[str, tuple[str, float | None]]]] | None = None,
    ):
        self.paths = paths
        self.recall = recall  # the chats' own histories, for the recall tool (None: not offered)
        self._compacted: set[int] = set()  # sessions whose requests offer recall
        self._projects: dict[
            int, int
        ] = {}  # session -> its project, whose knowledge and chats recall searches
        self.policy = policy
        self.network = network  # the run tool's commands may use the network (the command_network setting)
        self._audit = audit  # builds and stores an audit entry: audit(**fields) -> awaitable
        self._outcomes = outcomes  # reads back how a chat's calls ended (the audit log)
        self._fixed = workspace  # _UNSET: each session's own; None: no built-in tools
        # "events": the chat's conversation asks the views (PermissionAsked) and ``answer()`` settles it.
        self._by_event = asker == "events"
        self._asker: Asker | None = None if isinstance(asker, str) else asker
        self._watchers: list[Callable[[McpChanged], None]] = []
        self._workspaces: dict[int, Workspace | None] = {}
        self._deferred: set[int] = set()  # sessions whose requests offer the MCP tools through a search
        self._definitions: dict[tuple[tuple[str, ...], bool], list[dict[str, Any]]] = {}
        self._pending: dict[str, asyncio.Future[Answer | None]] = {}
        config = mcp if mcp is not None else load_config(self.mcp_path)
        self.mcp_problems = list(config.problems)
        self.servers: dict[str, McpServer] = {
            s.name: McpServer(s, paths.cache_dir / "mcp", self._server_changed) for s in config.servers
        }

    @property
    def mcp_path(self) -> Path:
        return self.paths.config_dir / CONFIG_NAME

    # --- MCP server changes (no chat's events: those go through the chat's conversation) -----------------
    def watch_servers(self, watcher: Callable[[McpChanged], None]) -> Callable[[], None]:
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher)

    def _server_changed(self, _server: McpServer) -> None:
        changed = McpChanged(0, tuple(s.status for s in self.servers.values()))
        for watcher in list(self._watchers):
            watcher(changed)

    # --- MCP servers ----------------------------------------------------------------------------------------
    def save_config(self) -> list[str]:
        from desktop.tools.mcp_config import save_config

        return save_config(self.mcp_path, McpConfig([s.config for s in self.servers.values()]))

    async def save_server(self, previous: str | None, config: McpServerConfig) -> list[str]:
        """Add a server (``previous`` None) or replace the one named ``previous``: saved in mcp.json with its
        secrets in the keyring, the old one stopped (the caller starts the new one). Returns problems."""
        from desktop.tools.mcp_config import forget_secrets

        old = self.servers.pop(previous, None) if previous is not None else None
        if old is not None:
            await old.stop()
        server = McpServer(config, self.paths.cache_dir / "mcp", self._server_changed)
        self.servers[config.name] = server
        problems = await asyncio.to_thread(self.save_config)
        if old is not None:
            await asyncio.to_thread(forget_secrets, old.config, config)
        self._server_changed(server)
        return problems

    async def remove_server(self, name: str) -> list[str]:
        """Stop the server and drop it from mcp.json and its secrets from the keyring. Returns problems."""
        from desktop.tools.mcp_config import forget_secrets

        server = self.servers.pop(name, None)
        if server is None:
            return []
        await server.stop()
        problems = await asyncio.to_thread(self.save_config)
        await asyncio.to_thread(forget_secrets, server.config, None)
        self._server_changed(server)
        return problems

    async def import_claude_desktop(self, source: Path | None = None) -> tuple[list[str], list[str]]:
        """Add Claude Desktop's servers to mcp.json and start the new ones. Returns (names, problems)."""
        from desktop.tools.mcp_config import import_claude_desktop

        names, problems = await asyncio.to_thread(import_claude_desktop, self.mcp_path, source)
        config = await asyncio.to_thread(load_config, self.mcp_path)
        for server in config.servers:
            if server.name in names and server.name not in self.servers:
                self.servers[server.name] = McpServer(
                    server, self.paths.cache_dir / "mcp", self._server_changed
                )
        await asyncio.gather(*(self.servers[n].start() for n in names if n in self.servers))
        return names, problems

    async def start_servers(self) -> None:
        await asyncio.gather(*(s.start() for s in self.servers.values() if s.config.enabled))

    async def close(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_result(None)
        await asyncio.gather(*(s.stop() for s in self.servers.values()), return_exceptions=True)

    # --- workspaces -----------------------------------------------------------------------------------------
    def workspace(self, session_id: int, state: Mapping[str, Any] | None = None) -> Workspace | None:
        # The built-in tools (workspace, file tools, sandbox) load with a chat's first tool definitions or
        # call, not with the toolbox: the window makes it before its first paint.
        from desktop.tools.workspace import Workspace

        if self._fixed is not _UNSET:
            return Workspace.at(self._fixed) if self._fixed is not None else None
        if state is not None:
            folder = state.get("workspace")
            current = self._workspaces.get(session_id)
            if not folder:
                self._workspaces[session_id] = None
            elif current is None or str(current.root) != str(folder):
                try:
                    self._workspaces[session_id] = Workspace.at(folder)
                except OSError as exc:
                    log.warning("session %s: workspace unavailable: %s", session_id, exc)
                    self._workspaces[session_id] = None
        return self._workspaces.get(session_id)

    def specs(self, session_id: int, state: Mapping[str, Any] | None = None) -> list[ToolSpec]:
        """Built-in tools first, then each ready MCP server's tools, by server name then tool name."""
        from desktop.tools.builtin import builtin_specs

        out = builtin_specs(self.network) if self.workspace(session_id, state) is not None else []
        project = self._projects.get(session_id) if state is None else state.get(PROJECT)
        if self.recall is not None and project is not None:  # the project's search, and the chat's own
            out.append(recall.PROJECT_SPEC)
        elif self.recall is not None and (
            session_id in self._compacted if state is None else state.get(COMPACTED)
        ):
            out.append(recall.SPEC)
        for name in sorted(self.servers):
            server = self.servers[name]
            if server.state == "ready":
                out.extend(server.specs)
        return out

    def definitions(
        self, session_id: int, state: Mapping[str, Any], window: int | None = None
    ) -> list[dict[str, Any]]:
        if state.get(COMPACTED):
            self._compacted.add(session_id)
        else:
            self._compacted.discard(session_id)
        if isinstance(project := state.get(PROJECT), int):
            self._projects[session_id] = project
        else:
            self._projects.pop(session_id, None)
        specs = self.specs(session_id, state)
        mcp = [s for s in specs if s.server != BUILTIN]
        deferred = deferral.should_defer(mcp, window)
        if deferred:
            self._deferred.add(session_id)
        else:
            self._deferred.discard(session_id)
        # The same list (the same dicts) while the tools are the same: the estimator knows them by sight.
        key = (tuple(s.digest or s.name for s in specs), deferred)
        cached = self._definitions.get(key)
        if cached is None:
            if len(self._definitions) > 64:
                self._definitions.clear()
            chosen = [s.definition for s in specs if not deferred or s.server == BUILTIN]
            extra = [deferral.SEARCH_DEFINITION, deferral.CALL_DEFINITION] if deferred else []
            cached = self._definitions[key] = [dict(d) for d in [*chosen, *extra]]
        return list(cached)

    async def outcomes(self, session_id: int) -> dict[str, tuple[str, float | None]]:
        """How each finished call of the chat ended (tool_use id -> ok | error | denied | cancelled, seconds)."""
        return await self._outcomes(session_id) if self._outcomes is not None else {}

    # --- permission prompts ----------------------------------------------------------------------------------
    def _asker_for(self, events: ToolEvents) -> Asker | None:
        if not self._by_event:
            return self._asker

        async def ask(request: PermissionRequest) -> Answer | None:
            return await self._ask_by_event(events, request)

        return ask

    async def _ask_by_event(self, events: ToolEvents, request: PermissionRequest) -> Answer | None:
        """The window answers through ``answer()``; nobody listening (no view) means no answer."""
        if not events.heard:
            return None
        future: asyncio.Future[Answer | None] = asyncio.get_running_loop().create_future()
        self._pending[request.id] = future
        events.report(PermissionAsked(request.session_id, request))
        try:
            return await future
        finally:
            self._pending.pop(request.id, None)
            answer = future.result() if future.done() and not future.cancelled() else None
            events.report(PermissionSettled(request.session_id, request.id, answer))

    def answer(self, request_id: str, answer: Answer | None) -> bool:
        future = self._pending.get(request_id)
        if future is None or future.done():
            return False
        future.set_result(answer)
        return True

    def pending(self) -> list[str]:
        return list(self._pending)

    # --- after a summary -------------------------------------------------------------------------------------
    def snapshot_files(self, session_id: int, paths: list[str]) -> str:
        """The files, as they are on disk now, within the re-injection budget (files gone or unreadable are
        skipped); '' when there is no workspace or nothing to show."""
        from desktop.engine.metering.tokens import estimate_text
        from desktop.tools.file_tools import FileTools

        workspace = self.workspace(session_id)
        if workspace is None:
            return ""
        parts, total = [], 0
        for rel in paths[:REINJECT_FILES]:
            try:  # through descriptors, like the read tool: a swapped folder cannot show an outside file
                text = FileTools(workspace).read_text(rel, 4 * REINJECT_FILE_CHARS)
                path = workspace.resolve(rel)
            except (OSError, ValueError):  # gone, not a regular file, too large, not UTF-8, outside
                continue
            if len(text) > REINJECT_FILE_CHARS:
                text = text[:REINJECT_FILE_CHARS] + "\n[… cut: read the rest with the read tool]"
            cost = estimate_text(text)
            if total + cost > REINJECT_TOTAL_TOKENS:
                break
            total += cost
            parts.append(f"=== {workspace.relative(path)} ===\n{text}")
        if not parts:
            return ""
        return (
            "<recent-files>\nThe files read or edited last before the summary, as they are on disk now:\n\n"
            + "\n\n".join(parts)
            + "\n</recent-files>"
        )

    # --- running ---------------------------------------------------------------------------------------------
    async def run(self, session_id: int, calls: list[Block], events: ToolEvents) -> list[Block]:
        specs = {s.name: s for s in self.specs(session_id)}
        if session_id in self._deferred:
            calls = [self._through_proxy(call, specs) for call in calls]
        outcomes = await asyncio.gather(*(self._one(session_id, call, specs, events) for call in calls))
        results = [_result(call, outcome) for call, (outcome, _stop) in zip(calls, outcomes, strict=True)]
        stops = [stop for _outcome, stop in outcomes if stop]
        if stops:
            raise EndTurn(stops[0], results)
        return results

    @staticmethod
    def _through_proxy(call: Block, specs: dict[str, ToolSpec]) -> Block:
        """A deferred tool's call: ``tool_call`` names the real tool, which is then asked, run and logged."""
        given = call.get("input") if isinstance(call.get("input"), dict) else {}
        if call.get("name") != deferral.CALL or not isinstance(given, dict):
            return call
        arguments = given.get("arguments")
        return {
            **call,
            "name": str(given.get("name") or ""),
            "input": arguments if isinstance(arguments, dict) else {},
        }

    async def _one(
        self, session_id: int, call: Block, specs: dict[str, ToolSpec], events: ToolEvents
    ) -> tuple[ToolOutcome, str]:
        use_id = str(call.get("id") or "")
        name = str(call.get("name") or "")
        if name == deferral.SEARCH and session_id in self._deferred:
            query = call.get("input", {}).get("query", "") if isinstance(call.get("input"), dict) else ""
            mcp = [s for s in specs.values() if s.server != BUILTIN]
            return ToolOutcome(deferral.search(mcp, str(query))), ""
        given = call.get("input")
        arguments: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
        spec = specs.get(name)
        if spec is None:
            return ToolOutcome(f"unknown tool {name!r}: it is not offered in this chat", is_error=True), ""
        if (
            spec in (recall.SPEC, recall.PROJECT_SPEC) and self.recall is not None
        ):  # the chat's own history: nothing to ask
            return await self._recall(session_id, use_id, spec, arguments, events), ""
        from desktop.tools.builtin import BuiltinTools

        workspace = self.workspace(session_id)
        builtin = (
            BuiltinTools(
                workspace,
                self.paths.spill_dir(session_id),
                network=self.network,
                hidden=(self.paths.config_dir, self.paths.data_dir, self.paths.cache_dir),
            )
            if spec.server == BUILTIN and workspace is not None
            else None
        )
        diff = builtin.diff(spec.tool, arguments) if builtin is not None else None
        request = PermissionRequest(session_id, use_id, spec, dict(arguments), diff)
        asker = self._asker_for(events)
        verdict = await self.policy.decide(request, asker)
        if not verdict.allowed:
            await self._record(session_id, use_id, spec, arguments, verdict.how, "denied", True)
            events.report(ToolCallFinished(session_id, use_id, name, ToolStatus.DENIED, 0.0, verdict.reason))
            stop = verdict.reason if asker is None else ""
            return ToolOutcome(f"Permission denied: {verdict.reason}", is_error=True), stop
        events.report(ToolCallStarted(session_id, use_id, name, spec.server, dict(arguments)))
        started = time.monotonic()
        try:
            if builtin is not None:
                outcome = await builtin.call(spec.tool, dict(arguments))
            elif spec.server in self.servers:
                outcome = await self.servers[spec.server].call(spec.tool, dict(arguments))
            else:
                outcome = ToolOutcome(f"{name}: no workspace is set for this chat", is_error=True)
        except asyncio.CancelledError:
            took = time.monotonic() - started
            events.report(ToolCallFinished(session_id, use_id, name, ToolStatus.CANCELLED, took, ""))
            asyncio.ensure_future(
                self._record(
                    session_id, use_id, spec, arguments, verdict.how, "cancelled", True, duration=took
                )
            )
            raise
        except Exception as exc:  # noqa: BLE001 - a failing tool is an error result, never a failed turn
            log.exception("tool %s failed", name)
            outcome = ToolOutcome(f"{name} failed: {type(exc).__name__}: {exc}", is_error=True)
        took = time.monotonic() - started
        status = ToolStatus.ERROR if outcome.is_error else ToolStatus.OK
        events.report(ToolCallFinished(session_id, use_id, name, status, took, outcome.text()[:EXCERPT]))
        await self._record(
            session_id,
            use_id,
            spec,
            arguments,
            verdict.how,
            status,
            outcome.is_error,
            exit_code=outcome.exit_code,
            duration=took,
        )
        return outcome, ""

    async def _recall(
        self, session_id: int, use_id: str, spec: ToolSpec, arguments: dict[str, Any], events: ToolEvents
    ) -> ToolOutcome:
        assert self.recall is not None
        events.report(ToolCallStarted(session_id, use_id, spec.name, spec.server, dict(arguments)))
        started = time.monotonic()
        try:
            outcome = await recall.run(self.recall, session_id, arguments, self._projects.get(session_id))
        except Exception as exc:  # noqa: BLE001 - a failing read is an error result, never a failed turn
            log.exception("recall failed")
            outcome = ToolOutcome(f"recall failed: {type(exc).__name__}: {exc}", is_error=True)
        took = time.monotonic() - started
        status = ToolStatus.ERROR if outcome.is_error else ToolStatus.OK
        events.report(ToolCallFinished(session_id, use_id, spec.name, status, took, outcome.text()[:EXCERPT]))
        await self._record(
            session_id, use_id, spec, arguments, "own history", status, outcome.is_error, duration=took
        )
        return outcome

    async def _record(
        self,
        session_id: int,
        use_id: str,
        spec: ToolSpec,
        arguments: dict[str, Any],
        how: str,
        outcome: str,
        is_error: bool,
        *,
        exit_code: int | None = None,
        duration: float | None = None,
    ) -> None:
        log.info(
            "session %s: tool %s (%s) %s [%s] %.3fs",
            session_id,
            spec.name,
            spec.server,
            outcome,
            how,
            duration or 0.0,
        )
        if self._audit is None:
            return
        try:
            await self._audit(
                session_id=session_id,
                tool_use_id=use_id,
                server=spec.server,
                tool=spec.tool,
                arguments=arguments,
                decision=how,
                outcome=outcome,
                is_error=is_error,
                exit_code=exit_code,
                duration=duration,
            )
        except Exception:  # noqa: BLE001 - the audit log never fails a call
            log.exception("audit record failed")


def _result(call: Block, outcome: ToolOutcome) -> Block:
    content: Any = outcome.content
    if isinstance(content, str) and not content.strip():
        content = "(no output)"
    block: Block = {"type": "tool_result", "tool_use_id": call.get("id"), "content": content}
    if outcome.is_error:
        block["is_error"] = True
    return block
