"""Libraries the app needs only for some work, imported when that work first comes, in a worker thread.

The Anthropic SDK (with its tool helpers, ~3,500 modules and ~80 MB) is needed for the first request, the MCP
client stack (mcp with anyio, httpx, pydantic, starlette: ~30 MB more) for the first MCP server. Neither is
needed to show the window, and importing either on the event loop (the UI thread in the window) would freeze
it for a second or more on a cold start: callers ``await load(...)`` before their first use instead.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import sys
import threading
from types import ModuleType

SDK = ("anthropic",)
# The client and transports McpServer uses, and the SDK's MCP helpers (they convert results).
MCP = (
    "mcp",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "mcp.shared._httpx_utils",
    "anthropic.lib.tools.mcp",
)
_done: set[str] = set()  # fully imported (a module in sys.modules may still be initialising in a thread)
# One loading thread at a time: two threads importing the SDK's modules at once (the first MCP server and the
# first request) can each hold a module the other waits for, and Python then hands one of them a partly
# initialised module (ImportError "partially initialized module").
_lock = threading.Lock()


def _import_all(names: tuple[str, ...]) -> None:
    with _lock:
        for name in names:
            importlib.import_module(name)
            _done.add(name)


async def load(names: tuple[str, ...]) -> None:
    """Import ``names`` in a worker thread unless they already are; returns once all are usable."""
    missing = tuple(n for n in names if n not in _done)
    if missing:
        await asyncio.to_thread(_import_all, missing)


def loaded(name: str) -> bool:
    return name in _done


def deferred(name: str) -> ModuleType:
    """The module ``name``, run only when one of its attributes is first read (``importlib.util.LazyLoader``):
    for the app's own modules that a module names at its top but needs only for some of its work (a summary's
    building blocks, which a chat's first measurement does not use). Already imported: that module."""
    found = sys.modules.get(name)
    if found is not None:
        return found
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)  # as an import binds a submodule on its package
    return module


def ran(name: str) -> bool:
    """Whether the module ``name`` has been imported and run (a ``deferred`` one not yet read has not)."""
    module = sys.modules.get(name)
    return module is not None and type(module) is ModuleType
