"""A real streamable-HTTP MCP server for the tests, built with the mcp package's server side and served by
uvicorn on loopback.

``python -m tests.mcp_http_server --token T`` prints ``PORT <n>`` once it listens. Every request must carry
``Authorization: Bearer T`` (else 401), so a test sees the configured headers reach the server. Tools: add
(read-only), whoami (the X-Client header of the call's HTTP request).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("precis-http-test")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def whoami(ctx: Context) -> str:
    """The X-Client header this call came with."""
    request: Any = ctx.request_context.request
    return f"client: {request.headers.get('x-client', '(none)')}"


def require_token(app: Any, token: str) -> Any:
    expected = f"Bearer {token}".encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send(
                {"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]}
            )
            await send({"type": "http.response.body", "body": b"missing or wrong token"})
            return
        await app(scope, receive, send)

    return guarded


async def main(token: str) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = require_token(server.streamable_http_app(), token)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    web = uvicorn.Server(config)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    await web.serve(sockets=[sock])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--token", required=True)
    asyncio.run(main(ap.parse_args().token))
    sys.exit(0)
