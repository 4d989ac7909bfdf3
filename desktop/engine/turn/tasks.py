"""Everything that runs for a session, in one registry: turns, compactions (manual, automatic, background,
reactive, which run inside a turn) and, later, tool executions.

Stop cancels whatever runs; "busy" and the session's activity are derived from here and nowhere else.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

from msgspec import Struct

T = TypeVar("T")

JobKind = Literal["turn", "compact", "prepare"]


class Activity(enum.StrEnum):
    """What a session is doing. Views word it; they never parse status text."""

    IDLE = "idle"
    SENDING = "sending"  # preparing the context and sending the request
    WAITING = "waiting"  # sent, nothing streamed yet
    STREAMING = "streaming"
    COMPACTING = "compacting"  # a summary (or snip) is being made before the user can go on
    RECOVERING = "recovering"  # the provider said "too long": compacting harder, then resending
    PREPARING = "preparing"  # a summary is being prepared in the background; sending stays possible
    TOOLS = "tools"  # running the tools the model asked for (or waiting for a permission answer)

    @property
    def busy(self) -> bool:
        """The composer shows Stop instead of Send."""
        return self not in (Activity.IDLE, Activity.PREPARING)

    @property
    def compacting(self) -> bool:
        """The gauge shows its moving segment."""
        return self in (Activity.COMPACTING, Activity.RECOVERING)


class Job(Struct):
    """A chat's running task and its kind (a turn, a compaction, or a summary prepared in the background)."""

    kind: JobKind
    task: asyncio.Task[Any]

    @property
    def foreground(self) -> bool:
        return self.kind != "prepare"


class TaskRegistry:
    """Jobs per session. ``on_change(session_id)`` runs whenever the session's activity or jobs change."""

    def __init__(self, on_change: Callable[[int], None]):
        self._jobs: dict[int, list[Job]] = {}
        self._activity: dict[int, Activity] = {}
        self._stopped: set[int] = set()
        self._on_change = on_change

    # --- reading --------------------------------------------------------------------------------------
    def jobs(self, session_id: int) -> list[Job]:
        return [j for j in self._jobs.get(session_id, []) if not j.task.done()]

    def busy(self, session_id: int) -> bool:
        return any(j.foreground for j in self.jobs(session_id))

    def running(self, session_id: int, kind: JobKind) -> asyncio.Task[Any] | None:
        return next((j.task for j in self.jobs(session_id) if j.kind == kind), None)

    def activity(self, session_id: int) -> Activity:
        if self.busy(session_id):
            return self._activity.get(session_id, Activity.SENDING)
        return Activity.PREPARING if self.running(session_id, "prepare") else Activity.IDLE

    def take_stopped(self, session_id: int) -> bool:
        """Whether the session went idle because of stop(); answered once, for the emitter."""
        if self.busy(session_id) or session_id not in self._stopped:
            return False
        self._stopped.discard(session_id)
        return True

    # --- running --------------------------------------------------------------------------------------
    def start(self, session_id: int, kind: JobKind, coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        if kind != "prepare" and self.busy(session_id):
            coro.close()
            raise RuntimeError("this chat is busy: stop it or wait until it has finished")
        task = asyncio.ensure_future(coro)
        self._jobs.setdefault(session_id, []).append(Job(kind, task))
        if kind != "prepare":
            self._stopped.discard(session_id)
            self._activity[session_id] = Activity.SENDING if kind == "turn" else Activity.COMPACTING
        task.add_done_callback(lambda _t: self._finished(session_id))
        self._on_change(session_id)
        return task

    async def run(self, session_id: int, kind: JobKind, coro: Coroutine[Any, Any, T], stopped: T) -> T:
        """Start a foreground job and wait for it. stop() cancels the job, not the caller, who gets ``stopped``
        if the job had no chance to answer for itself; cancelling the caller cancels the job too."""
        task = self.start(session_id, kind, coro)
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and (current is None or not current.cancelling()):
                return stopped
            raise

    def set_activity(self, session_id: int, activity: Activity) -> None:
        if self._activity.get(session_id) != activity:
            self._activity[session_id] = activity
            self._on_change(session_id)

    def stop(self, session_id: int, kinds: tuple[JobKind, ...] = ("turn", "compact", "prepare")) -> bool:
        """Cancel the session's jobs of these kinds. Each job leaves the old state whole (it commits at its end
        or in shielded steps). Returns whether anything was running."""
        found = [j for j in self.jobs(session_id) if j.kind in kinds]
        if any(j.foreground for j in found):
            self._stopped.add(session_id)
        for job in found:
            job.task.cancel()
        return bool(found)

    async def wait(self, session_id: int, kind: JobKind) -> None:
        task = self.running(session_id, kind)
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    def _finished(self, session_id: int) -> None:
        jobs = self.jobs(session_id)
        if jobs:
            self._jobs[session_id] = jobs
        else:
            self._jobs.pop(session_id, None)
        if not self.busy(session_id):
            self._activity.pop(session_id, None)
        self._on_change(session_id)

    def sessions(self) -> list[int]:
        return [sid for sid in self._jobs if self.jobs(sid)]

    async def close(self) -> None:
        tasks = [j.task for sid in list(self._jobs) for j in self.jobs(sid)]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
