"""The CLI's side of tools: `precis chat --workspace/--allow/--yes/--allow-unsandboxed`, the terminal
permission prompt, and `precis mcp list | import-claude-desktop`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.cli.common import CliError
from desktop.cli.wording import cli, word
from desktop.engine.messages import QT_TRANSLATE_NOOP

if TYPE_CHECKING:
    from desktop.engine.config.settings import Paths, Settings
    from desktop.runtime import ToolboxFactory
    from desktop.store.tool_log import ToolLog
    from desktop.tools.permissions import Answer, PermissionRequest
    from desktop.tools.toolbox import Toolbox

ANSWERS = {"o": "once", "c": "chat", "a": "always", "d": "deny", "": "deny"}

TOOL_STATES = {  # how a finished call is named on the terminal
    "ok": QT_TRANSLATE_NOOP("Cli", "ok"),
    "error": QT_TRANSLATE_NOOP("Cli", "error"),
    "denied": QT_TRANSLATE_NOOP("Cli", "denied"),
    "cancelled": QT_TRANSLATE_NOOP("Cli", "cancelled"),
}

CHANGED = {  # what changed in an MCP server allowed before (permissions.DEFINITION_FIELDS)
    "command": QT_TRANSLATE_NOOP("Cli", "command"),
    "args": QT_TRANSLATE_NOOP("Cli", "arguments"),
    "cwd": QT_TRANSLATE_NOOP("Cli", "folder"),
    "env": QT_TRANSLATE_NOOP("Cli", "environment"),
    "url": QT_TRANSLATE_NOOP("Cli", "URL"),
    "headers": QT_TRANSLATE_NOOP("Cli", "headers"),
    "definition": QT_TRANSLATE_NOOP("Cli", "definition"),
}


NETWORK_NOTE = QT_TRANSLATE_NOOP(
    "Cli",
    "This command asks for the network: it could reach the internet, your local network and the services "
    "listening on this machine (the display, the session bus, agents' sockets).",
)


def changed_line(changed: tuple[str, ...]) -> str:
    """The sentence that says a server allowed before is not the same any more."""
    parts = ", ".join(cli(CHANGED.get(name, name)) for name in changed)
    return cli(
        QT_TRANSLATE_NOOP(
            "Cli",
            "This server changed since you allowed it (its {parts}): "
            "the approval given then does not cover it.",
        ),
        parts=parts,
    )


def _status(text: str) -> None:
    print(f"precis: {word(text)}", file=sys.stderr, flush=True)


def add_chat_arguments(chat: argparse.ArgumentParser) -> None:
    chat.add_argument(
        "--workspace", metavar="DIR", help="folder the built-in tools work in (none: no built-in tools)"
    )
    chat.add_argument("--allow", default="", metavar="TOOL,...", help="tools that run without asking")
    chat.add_argument("--yes", action="store_true", help="run every tool without asking")
    chat.add_argument(
        "--allow-unsandboxed",
        action="store_true",
        help="where the command sandbox (bubblewrap) cannot start, let --yes and --allow run commands anyway, "
        "with your user's full access (without it they refuse)",
    )


def add_mcp_commands(sub: Any) -> None:
    mcp = sub.add_parser("mcp", help="MCP servers")
    mcp_sub = mcp.add_subparsers(dest="mcp_command", required=True)
    listing = mcp_sub.add_parser("list", help="list the configured MCP servers")
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--check", action="store_true", help="start each enabled server and list its tools")
    imp = mcp_sub.add_parser("import-claude-desktop", help="add Claude Desktop's MCP servers")
    imp.add_argument("path", nargs="?", help="claude_desktop_config.json (default: Claude Desktop's own)")


async def terminal_asker(request: PermissionRequest) -> Answer | None:
    """Ask on the terminal (stderr for the question, stdin for the answer); end of input denies."""
    from desktop.tools.permissions import Answer

    server = (
        cli(QT_TRANSLATE_NOOP("Cli", "built-in"))
        if request.server_label == "built-in"
        else request.server_label
    )
    lines = [
        cli(
            QT_TRANSLATE_NOOP("Cli", "{tool} ({server}) wants to run with:"),
            tool=request.spec.name,
            server=server,
        ),
        request.arguments_text(1_500),
    ]
    if request.diff:
        lines.append(request.diff[:4_000])
    if request.changed:
        lines.append(changed_line(request.changed))
    if request.asks_network:
        lines.append(cli(NETWORK_NOTE))
    lines.append(
        cli(QT_TRANSLATE_NOOP("Cli", "Allow? [o]nce / for this [c]hat / [a]lways for this tool / [d]eny: "))
    )
    sys.stderr.write("\n".join(lines))
    sys.stderr.flush()
    try:
        reply = await asyncio.to_thread(sys.stdin.readline)
    except (OSError, ValueError):
        return None
    if not reply:
        return None
    return Answer(ANSWERS.get(reply.strip().lower()[:1], "deny"))


def chat_toolbox(args: argparse.Namespace) -> ToolboxFactory:
    from desktop.runtime import toolbox_factory

    workspace: Path | None = None
    if args.workspace:
        workspace = Path(args.workspace).expanduser()
        if not workspace.is_dir():
            raise CliError(
                cli(QT_TRANSLATE_NOOP("Cli", "--workspace {path}: not a folder"), path=args.workspace)
            )
    interactive = sys.stdin is not None and sys.stdin.isatty() and args.message != "-"
    allow = [a for a in args.allow.split(",") if a.strip()]
    factory = toolbox_factory(
        workspace=workspace, allow=allow, yes=args.yes, asker=terminal_asker if interactive else None
    )
    if not getattr(args, "allow_unsandboxed", False):
        return factory

    def unsandboxed(paths: Paths, settings: Settings, log: ToolLog) -> Toolbox:
        box = factory(paths, settings, log)
        box.policy.allow_unsandboxed = True  # the user said so: --yes and --allow cover unconfined commands
        return box

    return unsandboxed


def _print_tool_event(event: Any) -> None:
    from desktop.tools.events import ToolCallFinished

    if isinstance(event, ToolCallFinished):
        _status(
            cli(
                QT_TRANSLATE_NOOP("Cli", "tool {name}: {status} ({seconds} s)"),
                name=event.name,
                status=cli(TOOL_STATES.get(event.status, event.status)),
                seconds=f"{event.duration:.2f}",
            )
        )


async def start_servers(toolbox: Any, engine: Any) -> None:
    engine.subscribe(
        _print_tool_event
    )  # a chat's tool events come from its conversation, on the engine's bus
    for problem in toolbox.mcp_problems:
        _status(f"mcp.json: {problem}")
    await toolbox.start_servers()
    for server in toolbox.servers.values():
        if server.state == "failed":
            _status(
                cli(
                    QT_TRANSLATE_NOOP("Cli", "MCP server {name} did not start: {error} (log: {log})"),
                    name=server.config.name,
                    error=str(server.error),
                    log=str(server.log_path),
                )
            )


async def cmd_mcp(args: argparse.Namespace) -> int:
    from desktop.engine.config.settings import Paths
    from desktop.tools.mcp_config import CONFIG_NAME, import_claude_desktop, load_config

    paths = Paths.resolve().ensure()
    target = paths.config_dir / CONFIG_NAME
    if args.mcp_command == "import-claude-desktop":
        source = Path(args.path).expanduser() if args.path else None
        imported, problems = import_claude_desktop(target, source)
        for problem in problems:
            _status(problem)
        if not imported and problems:
            raise CliError(problems[0])
        _status(
            cli(
                QT_TRANSLATE_NOOP("Cli", "imported {n} server(s) into {path}"),
                n=len(imported),
                path=str(target),
            )
        )
        for name in imported:
            print(name)
        return 0
    config = load_config(target)
    for problem in config.problems:
        _status(problem)
    rows: list[dict[str, Any]] = [
        {"name": s.name, "transport": s.transport, "enabled": s.enabled, "where": s.where}
        for s in config.servers
    ]
    if args.check:
        from desktop.tools.mcp_host import McpServer

        for row, server_config in zip(rows, config.servers, strict=True):
            server = McpServer(server_config, paths.cache_dir / "mcp")
            status = await server.start()
            row |= {"state": status.state, "error": status.error, "tools": list(status.tools)}
            await server.stop()
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        _status(cli(QT_TRANSLATE_NOOP("Cli", "no MCP servers configured ({path})"), path=str(target)))
    for row in rows:
        state = row.get("state") or ("enabled" if row["enabled"] else "disabled")
        tools = f"  tools: {', '.join(row['tools'])}" if row.get("tools") else ""
        error = f"  error: {row['error']}" if row.get("error") else ""
        print(f"{row['name']}  [{row['transport']}, {state}]  {row['where']}{tools}{error}")
    return 0
