"""Run as ``python -m tests.lazy_probe`` (tests/test_startup.py does, with PRECIS_HOME and the test server in
the environment): opens the runtime the way the app does, connects the configured MCP servers, sends one
message, and prints as JSON which thread first imported the Anthropic SDK and the MCP client, and when."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from importlib.abc import MetaPathFinder
from typing import Any

WATCHED = ("anthropic", "mcp")


class FirstImports(MetaPathFinder):
    """Notes the thread of the first import of each watched package; finds nothing itself."""

    def __init__(self) -> None:
        self.first: dict[str, str] = {}

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        top = name.partition(".")[0]
        if top in WATCHED:
            self.first.setdefault(top, threading.current_thread().name)


async def main(watch: FirstImports) -> dict[str, Any]:
    from desktop.engine.config.secrets import Credentials
    from desktop.runtime import open_runtime, toolbox_factory

    async with open_runtime(
        credentials=Credentials(api_key="test-key", source="env"),
        toolbox=toolbox_factory(workspace=None, yes=True),
    ) as rt:
        assert rt.toolbox is not None
        opened = dict(watch.first)
        await rt.toolbox.start_servers()
        states = {name: server.state for name, server in rt.toolbox.servers.items()}
        connected = dict(watch.first)
        sid = await rt.engine.new_session()
        reply = await rt.engine.send(sid, "hello")
    return {
        "at_open": opened,
        "after_connect": connected,
        "first": watch.first,
        "states": states,
        "reply": reply.content[0]["text"] if reply is not None else None,
    }


if __name__ == "__main__":
    finder = FirstImports()
    sys.meta_path.insert(0, finder)
    print(json.dumps(asyncio.run(main(finder))))
