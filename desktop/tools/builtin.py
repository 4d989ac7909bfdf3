"""The built-in workspace tools: read, glob, grep, write, edit, run.

File tools call the SDK's reference implementations (``anthropic.lib.tools.agent_toolset``), which confine
paths to the workspace and follow every symlink before the check; the workspace refuses absolute paths before
they get there. Definitions are written here, short and in a fixed order, so they stay in the cached prefix.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.engine.types import Block
from desktop.tools.run_command import run_command
from desktop.tools.types import BUILTIN, ToolOutcome, ToolSpec, definition_digest
from desktop.tools.workspace import SPILL_PREFIX, OutsideWorkspace, Workspace

if TYPE_CHECKING:
    from anthropic.lib.tools._beta_functions import BetaAsyncFunctionTool

DIFF_CHARS = 20_000  # a permission prompt shows at most this much of a write's or an edit's diff

_PATH = {"type": "string", "description": "Path relative to the workspace folder."}
DEFINITIONS: list[dict[str, Any]] = [
    {"name": "read", "description": "Read a text file of the workspace (images and PDFs come back as content). "
     "Use view_range [first_line, last_line] (1-based, last -1 = end) for long files; spilled tool output is "
     "read the same way through its @spill/ path.",
     "input_schema": {"type": "object", "properties": {
         "file_path": _PATH, "view_range": {"type": "array", "items": {"type": "integer"}}},
         "required": ["file_path"]}},
    {"name": "glob", "description": "List workspace files matching a glob pattern ('*' lists a folder, "
     "'**/*.py' searches the tree), newest first.",
     "input_schema": {"type": "object", "properties": {
         "pattern": {"type": "string"}, "path": _PATH}, "required": ["pattern"]}},
    {"name": "grep", "description": "Search workspace file contents for a regular expression; prints "
     "path:line:text.",
     "input_schema": {"type": "object", "properties": {
         "pattern": {"type": "string"}, "path": _PATH}, "required": ["pattern"]}},
    {"name": "write", "description": "Write a whole file (creating folders as needed).",
     "input_schema": {"type": "object", "properties": {
         "file_path": _PATH, "content": {"type": "string"}}, "required": ["file_path", "content"]}},
    {"name": "edit", "description": "Replace an exact string in a file; old_string must occur once unless "
     "replace_all is true.",
     "input_schema": {"type": "object", "properties": {
         "file_path": _PATH, "old_string": {"type": "string"}, "new_string": {"type": "string"},
         "replace_all": {"type": "boolean"}}, "required": ["file_path", "old_string", "new_string"]}},
    {"name": "run", "description": "Run a shell command in the workspace folder (a fresh shell each time); "
     "prints its output and exit code.",
     "input_schema": {"type": "object", "properties": {
         "command": {"type": "string"},
         "timeout_seconds": {"type": "number", "description": "Default 120, at most 600."}},
         "required": ["command"]}},
]
READ_ONLY = frozenset({"read", "glob", "grep"})
PATH_ARGS = {"read": "file_path", "write": "file_path", "edit": "file_path", "glob": "path", "grep": "path"}


def builtin_specs() -> list[ToolSpec]:
    return list(_SPECS)


_SPECS = tuple(ToolSpec(d["name"], BUILTIN, d["name"], d, d["name"] in READ_ONLY, digest=definition_digest(d))
               for d in DEFINITIONS)


class BuiltinTools:
    """The built-in tools of one workspace (and the session's spill folder, read-only through @spill/)."""

    def __init__(self, workspace: Workspace, spill_dir: Path | None = None):
        self.workspace = workspace
        self.spill_dir = spill_dir
        # The SDK's tool helpers: loaded with the SDK by the first request, so here (a tool call) they are ready.
        from anthropic.lib.tools.agent_toolset import (
            beta_edit_tool,
            beta_glob_tool,
            beta_grep_tool,
            beta_read_tool,
            beta_write_tool,
        )

        ctx = workspace.context()
        self._sdk: dict[str, BetaAsyncFunctionTool[Any]] = {
            "read": beta_read_tool(ctx), "glob": beta_glob_tool(ctx), "grep": beta_grep_tool(ctx),
            "write": beta_write_tool(ctx), "edit": beta_edit_tool(ctx),
        }

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        from anthropic.lib.tools._beta_functions import ToolError

        try:
            if name == "run":
                command = arguments.get("command")
                if not isinstance(command, str) or not command.strip():
                    return ToolOutcome("run: command is required", is_error=True)
                return await run_command(command, self.workspace.root, arguments.get("timeout_seconds"))
            if name == "read" and str(arguments.get("file_path", "")).startswith(SPILL_PREFIX):
                return await self._read_spill(arguments)
            tool = self._sdk.get(name)
            if tool is None:
                return ToolOutcome(f"unknown tool {name}", is_error=True)
            key = PATH_ARGS.get(name)
            if key and arguments.get(key):
                self.workspace.resolve(str(arguments[key]))  # refuse absolute paths and escapes first
            result = await tool.call(dict(arguments))
        except OutsideWorkspace as exc:
            return ToolOutcome(f"{name}: {exc}", is_error=True)
        except ToolError as exc:
            return ToolOutcome(self._scrub(exc.content), is_error=True)
        except (ValueError, TypeError) as exc:
            return ToolOutcome(f"{name}: invalid arguments ({exc})", is_error=True)
        return ToolOutcome(self._scrub(result))

    def _scrub(self, content: Any) -> str | list[Block]:
        if isinstance(content, str):
            return self.workspace.scrub(content)
        return [dict(b) for b in content]

    async def _read_spill(self, arguments: dict[str, Any]) -> ToolOutcome:
        if self.spill_dir is None or not self.spill_dir.is_dir():
            return ToolOutcome("read: no spilled output in this chat", is_error=True)
        from anthropic.lib.tools._beta_functions import ToolError
        from anthropic.lib.tools.agent_toolset import AgentToolContext, beta_read_tool

        inner = str(arguments["file_path"])[len(SPILL_PREFIX):]
        tool = beta_read_tool(AgentToolContext(workdir=self.spill_dir))
        try:
            Workspace(self.spill_dir.resolve()).resolve(inner)
            result = await tool.call({**arguments, "file_path": inner})
        except OutsideWorkspace as exc:
            return ToolOutcome(f"read: {exc}", is_error=True)
        except ToolError as exc:
            return ToolOutcome(str(exc.content).replace(str(self.spill_dir), "@spill"), is_error=True)
        return ToolOutcome(result if isinstance(result, str) else [dict(b) for b in result])

    def diff(self, name: str, arguments: dict[str, Any]) -> str | None:
        """What a write or an edit would change, as a unified diff (None for other tools or a bad path)."""
        if name not in ("write", "edit"):
            return None
        rel = str(arguments.get("file_path") or "")
        try:
            path = self.workspace.resolve(rel)
            before = path.read_text("utf-8") if path.is_file() else ""
        except (OutsideWorkspace, OSError, UnicodeDecodeError):
            return None
        if name == "write":
            after = str(arguments.get("content") or "")
        else:
            old, new = str(arguments.get("old_string") or ""), str(arguments.get("new_string") or "")
            if not old or old not in before:
                return None
            after = before.replace(old, new) if arguments.get("replace_all") else before.replace(old, new, 1)
        lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                     fromfile=f"a/{rel}", tofile=f"b/{rel}")
        text = "".join(lines)
        return text[:DIFF_CHARS] + ("\n[diff cut]" if len(text) > DIFF_CHARS else "")
