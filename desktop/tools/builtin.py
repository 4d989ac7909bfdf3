"""The built-in workspace tools: read, glob, grep, write, edit, run.

The file tools (``file_tools.py``) take paths relative to the workspace only and reach files through
descriptors walked from it, never through a link, so nothing outside can be read or written even while the
workspace changes under them; writes are atomic. ``run`` runs in the sandbox (``sandbox.py``) where it can
start, without the network unless the ``command_network`` setting gives it to every command or the call asks
for it (``"network": true``, which the prompt names and the approval is bound to); where no sandbox can start,
its permission prompt says so. Definitions are written here, short and in a fixed order, so they stay in the
cached prefix.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from desktop.engine.types import Block
from desktop.tools.file_tools import FileTools, ToolFailure
from desktop.tools.permissions import UNCONFINED as UNCONFINED
from desktop.tools.permissions import asks_network
from desktop.tools.run_command import run_command
from desktop.tools.sandbox import sandbox_problem
from desktop.tools.types import BUILTIN, ToolOutcome, ToolSpec, definition_digest
from desktop.tools.workspace import SPILL_PREFIX, Workspace

_PATH = {"type": "string", "description": "Path relative to the workspace folder."}
DEFINITIONS: list[dict[str, Any]] = [
    {
        "name": "read",
        "description": "Read a text file of the workspace (images and PDFs come back as content). "
        "Use view_range [first_line, last_line] (1-based, last -1 = end) for long files; spilled tool output is "
        "read the same way through its @spill/ path.",
        "input_schema": {
            "type": "object",
            "properties": {"file_path": _PATH, "view_range": {"type": "array", "items": {"type": "integer"}}},
            "required": ["file_path"],
        },
    },
    {
        "name": "glob",
        "description": "List workspace files matching a glob pattern ('*' lists a folder, "
        "'**/*.py' searches the tree), newest first.",
        "input_schema": {
            "type": "object",
            "properties": {"pattern": {"type": "string"}, "path": _PATH},
            "required": ["pattern"],
        },
    },
    {
        "name": "grep",
        "description": "Search workspace file contents for a regular expression; prints path:line:text.",
        "input_schema": {
            "type": "object",
            "properties": {"pattern": {"type": "string"}, "path": _PATH},
            "required": ["pattern"],
        },
    },
    {
        "name": "write",
        "description": "Write a whole file (creating folders as needed).",
        "input_schema": {
            "type": "object",
            "properties": {"file_path": _PATH, "content": {"type": "string"}},
            "required": ["file_path", "content"],
        },
    },
    {
        "name": "edit",
        "description": "Replace an exact string in a file; old_string must occur once unless "
        "replace_all is true.",
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": _PATH,
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"},
            },
            "required": ["file_path", "old_string", "new_string"],
        },
    },
    {
        "name": "run",
        "description": "Run a shell command in the workspace folder (a fresh shell each time, sandboxed: "
        "system folders read-only, an empty home and /tmp, no network unless asked); prints its output and "
        "exit code.",
        "input_schema": {
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "timeout_seconds": {"type": "number", "description": "Default 120, at most 600."},
                "network": {
                    "type": "boolean",
                    "description": "true if the command needs the network (downloads, package installs); "
                    "the user is asked.",
                },
            },
            "required": ["command"],
        },
    },
]
READ_ONLY = frozenset({"read", "glob", "grep"})
PATH_ARGS = {"read": "file_path", "write": "file_path", "edit": "file_path", "glob": "path", "grep": "path"}


def builtin_specs(network: bool = False) -> list[ToolSpec]:
    """The built-in tools; ``run`` bound to another origin where the sandbox cannot start, so an approval given
    to sandboxed commands never lets an unconfined one through without its warning."""
    if sandbox_problem(network) is None:
        return list(_SPECS)
    return [replace(s, origin=UNCONFINED) if s.name == "run" else s for s in _SPECS]


_SPECS = tuple(
    ToolSpec(d["name"], BUILTIN, d["name"], d, d["name"] in READ_ONLY, digest=definition_digest(d))
    for d in DEFINITIONS
)


class BuiltinTools:
    """The built-in tools of one workspace (and the session's spill folder, read-only through @spill/).
    ``network``: every command has the network (otherwise only a call that asks for it); ``hidden``: folders
    commands never see, besides Précis's own."""

    def __init__(
        self,
        workspace: Workspace,
        spill_dir: Path | None = None,
        *,
        network: bool = False,
        hidden: Sequence[Path] = (),
    ):
        self.workspace = workspace
        self.spill_dir = spill_dir
        self.network = network
        self.hidden = tuple(hidden)
        self.files = FileTools(workspace)

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        try:
            if name == "run":
                command = arguments.get("command")
                if not isinstance(command, str) or not command.strip():
                    return ToolOutcome("run: command is required", is_error=True)
                return await run_command(
                    command,
                    self.workspace.root,
                    arguments.get("timeout_seconds"),
                    network=self.network or asks_network(name, arguments),
                    hidden=self.hidden,
                    # Approved as unconfined (its spec's origin said so, and the prompt warned) or not at all.
                    unconfined=sandbox_problem(self.network) is not None,
                )
            if name == "read" and str(arguments.get("file_path", "")).startswith(SPILL_PREFIX):
                return await self._read_spill(arguments)
            if name not in PATH_ARGS:
                return ToolOutcome(f"unknown tool {name}", is_error=True)
            result = await asyncio.to_thread(self._file_call, self.files, name, arguments)
        except ToolFailure as exc:
            return ToolOutcome(self.workspace.scrub(str(exc)), is_error=True)
        except (ValueError, TypeError) as exc:
            return ToolOutcome(f"{name}: invalid arguments ({exc})", is_error=True)
        return ToolOutcome(self._scrub(result))

    @staticmethod
    def _file_call(files: FileTools, name: str, arguments: dict[str, Any]) -> str | list[Block]:
        """One file tool's call with the model's arguments (checked for presence and type here)."""

        def text(key: str, required: bool = True) -> str | None:
            value = arguments.get(key)
            if value is None and not required:
                return None
            if not isinstance(value, str):
                raise ToolFailure(f"{name}: {key} must be text")
            return value

        if name == "read":
            view = arguments.get("view_range")
            if view is not None and not isinstance(view, list):
                raise ToolFailure("read: view_range must be [start_line, end_line]")
            return files.read(text("file_path") or "", view)
        if name == "glob":
            return files.glob(text("pattern") or "", text("path", False))
        if name == "grep":
            return files.grep(text("pattern") or "", text("path", False))
        if name == "write":
            return files.write(text("file_path") or "", text("content") or "")
        return files.edit(
            text("file_path") or "",
            text("old_string") or "",
            text("new_string") or "",
            bool(arguments.get("replace_all")),
        )

    def _scrub(self, content: str | list[Block]) -> str | list[Block]:
        if isinstance(content, str):
            return self.workspace.scrub(content)
        return [dict(b) for b in content]

    async def _read_spill(self, arguments: dict[str, Any]) -> ToolOutcome:
        if self.spill_dir is None or not self.spill_dir.is_dir():
            return ToolOutcome("read: no spilled output in this chat", is_error=True)
        inner = str(arguments["file_path"])[len(SPILL_PREFIX) :]
        spill = FileTools(Workspace(self.spill_dir.resolve()))
        view = arguments.get("view_range")
        try:
            result = await asyncio.to_thread(spill.read, inner, view if isinstance(view, list) else None)
        except ToolFailure as exc:
            return ToolOutcome(str(exc).replace(str(self.spill_dir.resolve()), "@spill"), is_error=True)
        return ToolOutcome(result if isinstance(result, str) else [dict(b) for b in result])

    def diff(self, name: str, arguments: dict[str, Any]) -> str | None:
        """What a write or an edit would change, as a unified diff (None for other tools or a bad path)."""
        if name == "run":
            return self.run_preview(arguments)
        from desktop.tools import diff_preview  # difflib loads with the first permission prompt, not at start

        return diff_preview.preview(name, arguments, self.files.read_text)

    def run_preview(self, arguments: dict[str, Any]) -> str | None:
        """What the prompt adds for a command: nothing in the sandbox, the warning where none can start."""
        problem = sandbox_problem(self.network)
        if problem is None:
            return None
        return (
            f"$ {arguments.get('command') or ''}\n\n"
            f"This command will run without the sandbox ({problem}): it can read and change everything your "
            "user account can, Précis's own files included. Approve it only if you trust it."
        )
