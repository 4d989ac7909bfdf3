"""The one place the parts are wired together: paths -> settings -> store -> engine.

The window, every CLI command, the importer and the tests open Précis through ``open_runtime``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from desktop.engine import redact
from desktop.engine.chat import ChatEngine, ToolRunner
from desktop.engine.secrets import Credentials
from desktop.engine.settings import Paths, Settings
from desktop.engine.storage import StorageError
from desktop.store import Store
from desktop.store import errors as store_errors

__all__ = ["Runtime", "StorageError", "open_runtime"]


@dataclass(slots=True)
class Runtime:
    paths: Paths
    settings: Settings
    store: Store
    engine: ChatEngine


@asynccontextmanager
async def open_runtime(*, model: str | None = None, credentials: Credentials | None = None,
                       tools: ToolRunner | None = None, background: bool = True,
                       adjust: Callable[[Settings], None] | None = None,
                       readonly: bool = False) -> AsyncIterator[Runtime]:
    """Open the store and the engine for this process's PRECIS_HOME (or the platform folders); close both.
    Logs never show a credential from here on. ``readonly``: a command that only reads creates no folder and
    writes nothing to the database (it works on read-only media and while another program holds the lock).
    A folder or database that cannot be used raises ``StorageError`` with the sentence to show."""
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
    store = await Store.open(paths.database, readonly=readonly)
    engine = ChatEngine(store, paths, settings, credentials, tools=tools, background=background)
    try:
        yield Runtime(paths, settings, store, engine)
    finally:
        await engine.close()
        await store.close()
