"""A chat's workspace folder: every path a built-in tool touches is confined to it.

Paths are taken relative to the workspace only. An absolute path, a ``..`` that climbs out, and a symlink that
points outside are refused; what the tools print back names files relative to the workspace, so no absolute
path of the user's machine reaches the model.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING

from msgspec import Struct

if TYPE_CHECKING:
    from anthropic.lib.tools.agent_toolset import AgentToolContext

SPILL_PREFIX = "@spill/"  # virtual folder: the session's spilled tool output, readable by the read tool


class OutsideWorkspace(ValueError):
    """A path that would leave the workspace."""


class Workspace(Struct, frozen=True):
    root: Path

    @classmethod
    def at(cls, folder: str | os.PathLike[str]) -> Workspace:
        root = Path(folder).expanduser().resolve()
        if not root.is_dir():
            raise NotADirectoryError(f"workspace {folder} is not a folder")
        return cls(root)

    def context(self) -> AgentToolContext:
        # The SDK's helpers, imported at the first tool call (the first request loaded the SDK), not at start.
        from anthropic.lib.tools.agent_toolset import AgentToolContext

        return AgentToolContext(workdir=self.root)

    def resolve(self, path: str) -> Path:
        """The real path inside the workspace that ``path`` names, or OutsideWorkspace."""
        if not isinstance(path, str) or not path.strip():
            raise OutsideWorkspace("a path relative to the workspace is required")
        if PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute() or path.startswith("~"):
            raise OutsideWorkspace(
                f"{path}: absolute paths are not allowed; use a path relative to the workspace"
            )
        from anthropic.lib.tools.agent_toolset import resolve_path

        try:
            return resolve_path(self.context(), path)
        except ValueError as exc:
            raise OutsideWorkspace(f"{path}: outside the workspace") from exc

    def relative(self, path: str | os.PathLike[str]) -> str:
        p = Path(path)
        try:
            return p.relative_to(self.root).as_posix() or "."
        except ValueError:
            return p.name

    def scrub(self, text: str) -> str:
        """Tool output with the workspace's absolute prefix taken out (paths read as workspace-relative)."""
        return text.replace(str(self.root) + os.sep, "").replace(str(self.root), ".")
