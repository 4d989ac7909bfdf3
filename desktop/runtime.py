"""The one place the parts are wired together: paths -> settings -> store -> engine.

The window, every CLI command, the importer and the tests open Précis through ``open_runtime``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from desktop.engine import redact
from desktop.engine.compaction.hooks import HookSettings
from desktop.engine.config.secrets import Credentials
from desktop.engine.config.settings import Paths, Settings
from desktop.engine.events import StorageWaiting
from desktop.engine.history.storage import StorageError
from desktop.engine.turn import shutdown
from desktop.engine.turn.chat import ChatEngine, ToolRunner
from desktop.store import Store
from desktop.store import errors as store_errors
from desktop.store.tool_log import AuditEntry, ToolLog
from desktop.tools.compaction_hooks import CompactionHookRunner
from desktop.tools.permissions import Asker, PermissionPolicy
from desktop.tools.toolbox import Toolbox

__all__ = ["Runtime", "StorageError", "open_runtime"]

ToolboxFactory = Callable[[Paths, Settings, ToolLog], Toolbox]


class Runtime(Struct):
    """The opened parts: paths, settings, store, engine and tools."""

    paths: Paths
    settings: Settings
    store: Store
    engine: ChatEngine
    tool_log: ToolLog | None = None
    toolbox: Toolbox | None = field(default=None)


def toolbox_factory(
    *,
    workspace: Path | None | Any = ...,
    allow: Iterable[str] = (),
    yes: bool = False,
    asker: Asker | None | str = "events",
) -> ToolboxFactory:
    """How the window (defaults: each chat's own workspace, prompts through events) and ``precis chat`` (a fixed
    workspace or none, --allow/--yes, a terminal prompt or nobody to ask) build their toolbox."""

    def make(paths: Paths, settings: Settings, log: ToolLog) -> Toolbox:
        policy = PermissionPolicy(log, allow=allow, yes=yes, auto_read_only=settings.auto_approve_read_only)

        async def audit(**entry: Any) -> None:
            await log.record(AuditEntry(**entry))

        kwargs: dict[str, Any] = {} if workspace is ... else {"workspace": workspace}
        return Toolbox(
            paths,
            policy,
            audit=audit,
            asker=asker,
            network=settings.command_network,
            outcomes=log.outcomes,
            **kwargs,
        )

    return make


def compaction_hooks(engine: ChatEngine, box: Toolbox | None) -> CompactionHookRunner:
    """The user's compaction hooks (``settings.compaction_hooks``, read at each compaction), run in the folder the
    chat's tools work in, with Précis's own folders hidden as from the run tool."""
    paths = engine.paths

    def workspace_of(session_id: int, folder: str | None) -> Path | None:
        # The toolbox's answer: the CLI's --workspace, else the chat's folder (as its tools see it).
        found = None if box is None else box.workspace(session_id, {"workspace": folder} if folder else None)
        return found.root if found is not None else (Path(folder) if folder else None)

    return CompactionHookRunner(
        lambda: HookSettings.of(engine.settings.compaction_hooks),
        hidden=(paths.config_dir, paths.data_dir, paths.cache_dir),
        workspace_of=workspace_of,
    )


@asynccontextmanager
async def open_runtime(
    *,
    model: str | None = None,
    credentials: Credentials | None = None,
    tools: ToolRunner | None = None,
    toolbox: ToolboxFactory | None = None,
    background: bool = True,
    adjust: Callable[[Settings], None] | None = None,
    readonly: bool = False,
    lock_notice: Callable[[str], None] | None = None,
) -> AsyncIterator[Runtime]:
    """Open the store and the engine for this process's PRECIS_HOME (or the platform folders); close both.
    ``toolbox`` builds the tool runner (``tools`` gives one ready-made). Logs never show a credential from here
    on. ``readonly``: a command that only reads creates no folder and writes nothing to the database (it works
    on read-only media and while another program holds the lock). A folder or database that cannot be used
    raises ``StorageError`` with the sentence to show. ``lock_notice``: told when the database is held by another
    program and the work waits (None: the engine's listeners hear it as ``StorageWaiting``)."""
    redact.install_log_filter()
    if credentials is not None:
        redact.remember(credentials.api_key, credentials.auth_token)
    paths = Paths.resolve()
    if not readonly:
        try:
            paths.ensure()
        except OSError as exc:
            raise store_errors.from_os_error(exc, paths.data_dir) from None
    settings = Settings.load(paths)
    if model:
        settings.model = model
    if adjust is not None:
        adjust(settings)
    store = await Store.open(paths.database, readonly=readonly, on_lock_wait=lock_notice)
    tool_log = ToolLog(store)
    if not readonly:
        await tool_log.answer_orphans()  # a crash mid-tool: every tool_use gets its (interrupted) result
    box = toolbox(paths, settings, tool_log) if toolbox is not None else None
    if box is not None and box.recall is None:
        box.recall = store  # the recall tool reads the chat's own history
    engine = ChatEngine(store, paths, settings, credentials, tools=box or tools, background=background)
    # Said within 2 s of a wait for another program's lock.
    store.on_lock_wait = lock_notice or (lambda text: engine.emit(StorageWaiting(0, text)))
    engine.shared.compaction_hooks = compaction_hooks(engine, box)
    try:
        yield Runtime(paths, settings, store, engine, tool_log, box)
    finally:
        await engine.close()
        if box is not None:
            await shutdown.bounded("stopping the MCP servers", box.close())
        await store.close()
