"""Hostile stdio MCP servers for the bounds tests: ``python -m tests.mcp_hostile MODE``.

garbage: prints lines that are not JSON-RPC on stdout, without end. silent: reads its input and never answers.
stderr: writes megabytes to stderr, without end. long-line: one line of stdout with no end. big: a real server
whose tool ``big`` answers with 3 MB of text; huge: the same with 20 MB (one message past the transport's limit).
"""

from __future__ import annotations

import sys
import time


def main(mode: str) -> None:
    if mode == "garbage":
        line = "this is not JSON-RPC " * 8 + "\n"
        while True:
            sys.stdout.write(line)
    elif mode == "silent":
        for _line in sys.stdin:
            pass
        time.sleep(3600)
    elif mode == "stderr":
        chunk = "noise " * 10_000 + "\n"
        while True:
            sys.stderr.write(chunk)
    elif mode == "long-line":
        chunk = "x" * 65_536
        while True:
            sys.stdout.write(chunk)
    elif mode in ("big", "huge"):
        from mcp.server.mcpserver import MCPServer

        server = MCPServer("precis-hostile")
        size = 3_000_000 if mode == "big" else 20_000_000

        @server.tool()
        def big() -> str:
            """3 MB of text (20 MB when huge)."""
            return "y" * size

        server.run()


if __name__ == "__main__":
    main(sys.argv[1])
