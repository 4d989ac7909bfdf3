"""Opening the real runtime with a toolbox, for the tool tests."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.engine.config.secrets import Credentials
from desktop.engine.turn.chat import ChatEngine
from desktop.runtime import open_runtime, toolbox_factory
from desktop.store import Store
from desktop.store.tool_log import ToolLog
from desktop.tools.toolbox import Toolbox
from tests import scripted_provider


@dataclass
class Rig:
    engine: ChatEngine
    store: Store
    toolbox: Toolbox
    tool_log: ToolLog
    events: list[Any] = field(default_factory=list)


@contextlib.asynccontextmanager
async def tool_runtime(
    *, workspace: Any = ..., settings: dict[str, Any] | None = None, **policy: Any
) -> AsyncIterator[Rig]:
    """A runtime whose toolbox works in ``workspace`` (a Path, None, or ... for each chat's own), recording every
    engine and toolbox event in ``runtime.events``."""

    def adjust(s: Any) -> None:
        for name, value in (settings or {}).items():
            setattr(s, name, value)

    async with open_runtime(
        credentials=Credentials(api_key="test-key", source="env"),
        adjust=adjust,
        toolbox=toolbox_factory(workspace=workspace, **policy),
    ) as rt:
        assert rt.toolbox is not None and rt.tool_log is not None
        scripted_provider.attach(rt.engine)
        rig = Rig(rt.engine, rt.store, rt.toolbox, rt.tool_log)
        rt.engine.subscribe(rig.events.append)
        rt.toolbox.watch_servers(rig.events.append)
        yield rig


def make_workspace(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "config.py").write_text("def parse_config(path):\n    return open(path).read()\n")
    (root / "src" / "main.py").write_text("from config import parse_config\n\nparse_config('a.toml')\n")
    return root
