"""The engine's side of tools: what a tool runner must do. The engine never imports an implementation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from desktop.engine.events import EngineEvent
from desktop.engine.types import Block

# Set in the state a runner's ``definitions`` is given when the chat has a compaction: its earlier messages are
# out of the model's view, so a runner may offer a way to read them back (the recall tool).
COMPACTED = "compacted"
# Set (to the project's id) when the chat belongs to a project whose recall reaches across it: a runner may offer
# a search of the project's knowledge and its other chats.
PROJECT = "project"


class ToolEvents(Protocol):
    """Where a runner's events for one chat go: that chat's conversation, the only emitter of its events."""

    @property
    def heard(self) -> bool:
        """Someone listens to the chat's events (a permission asked by event can be answered)."""
        ...

    def report(self, event: EngineEvent) -> None: ...


class ToolRunner(Protocol):
    """Answers the tool_use blocks of a reply with tool_result blocks (one per call, is_error on failure), and
    says which tools a session's requests offer (in a fixed order, so they stay in the cached prefix)."""

    def definitions(
        self, session_id: int, state: Mapping[str, Any], window: int | None = None
    ) -> list[dict[str, Any]]:
        """``window``: the model's context window, for a runner that offers fewer definitions in a small one."""
        ...

    async def run(self, session_id: int, calls: list[Block], events: ToolEvents) -> list[Block]:
        """``events``: the chat's conversation, which publishes what the calls report (started, finished,
        a permission asked and settled)."""
        ...


class EndTurn(Exception):  # noqa: N818 - a stop, not a failure
    """The runner answered the calls (``results``, stored as usual) but the turn must end here with ``reason``,
    e.g. a tool needs approval in a run where nobody can be asked."""

    def __init__(self, reason: str, results: list[Block]):
        super().__init__(reason)
        self.reason = reason
        self.results = results


CANCELLED = "[cancelled: the user pressed Stop before this tool finished]"


def cancelled_results(calls: list[Block]) -> list[Block]:
    return [
        {"type": "tool_result", "tool_use_id": c.get("id"), "is_error": True, "content": CANCELLED}
        for c in calls
        if c.get("id")
    ]
