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
from desktop.store import Store


@dataclass(slots=True)
class Runtime:
    paths: Paths
    settings: Settings
    store: Store
    engine: ChatEngine


@asynccontextmanager
async def open_runtime(*, model: str | None = None, credentials: Credentials | None = None,
                       tools: ToolRunner | None = None, background: bool = True,
                       adjust: Callable[[Settings], None] | None = None) -> AsyncIterator[Runtime]:
    """Open the store and the engine for this process's PRECIS_HOME (or the platform folders); close both.
    Logs never show a credential from here on."""
    redact.install_log_filter()
    if credentials is not None:
        redact.remember(credentials.api_key, credentials.auth_token)
    paths = Paths.resolve().ensure()
    settings = Settings.load(paths)
    if model:
        settings.model = model
    if adjust is not None:
        adjust(settings)
    store = await Store.open(paths.database)
    engine = ChatEngine(store, paths, settings, credentials, tools=tools, background=background)
    try:
        yield Runtime(paths, settings, store, engine)
    finally:
        await engine.close()
        await store.close()
