"""A real stdio MCP server for the tests, built with the mcp package's server side.

Run as ``python -m tests.mcp_server``. Tools: add (read-only), echo, shout (writes to stderr first), crash (the
process exits mid-call), hang (never answers), environ (the names and values of its environment, as JSON).
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("precis-test")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@server.tool()
def shout(text: str) -> str:
    """Log to stderr, then answer in capitals."""
    print(f"shouting {text}", file=sys.stderr, flush=True)
    return text.upper()


@server.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    os._exit(3)


@server.tool()
def hang() -> str:
    """Never answer."""
    time.sleep(3600)
    return "late"


@server.tool()
def environ() -> str:
    """The server's environment variables, as a JSON object."""
    import json

    return json.dumps(dict(os.environ))


if __name__ == "__main__":
    print("precis-test MCP server starting", file=sys.stderr, flush=True)
    server.run()
