"""An idle session's summary, prepared shortly before its prompt cache expires, when the estimate says it pays.

After the cache lapses the next turn writes the whole prompt again; a summary made a moment before, while the
prefix is still a cache read, lets that turn write the smaller compacted prompt instead. The timer runs on an
injectable scheduler and clock (tests fire it by hand; nothing sleeps).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from desktop.engine.metering.cache_clock import LEAD


class Timer(Protocol):
    def cancel(self) -> None: ...


class Scheduler(Protocol):
    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer: ...


class LoopScheduler:
    """The running asyncio loop's timers."""

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        return asyncio.get_running_loop().call_later(delay, callback)


class IdleTimers:
    """One timer per session, re-armed after every request: it fires LEAD seconds before the cache expires."""

    def __init__(
        self, clock: Callable[[], float], fire: Callable[[int], None], scheduler: Scheduler | None = None
    ):
        self.clock = clock
        self.scheduler: Scheduler = scheduler or LoopScheduler()
        self._fire = fire
        self._timers: dict[int, Timer] = {}

    def arm(self, session_id: int, last_request: float | None, ttl: float) -> None:
        self.cancel(session_id)
        if last_request is None:
            return
        delay = max(0.0, last_request + ttl - LEAD - self.clock())
        self._timers[session_id] = self.scheduler.call_later(delay, lambda: self._due(session_id))

    def _due(self, session_id: int) -> None:
        self._timers.pop(session_id, None)
        self._fire(session_id)

    def cancel(self, session_id: int) -> None:
        timer = self._timers.pop(session_id, None)
        if timer is not None:
            timer.cancel()

    def armed(self, session_id: int) -> bool:
        return session_id in self._timers

    def keep_only(self, session_id: int | None) -> None:
        """The window switched chats: an idle summary is prepared only for the open one."""
        for other in list(self._timers):
            if other != session_id:
                self.cancel(other)

    def cancel_all(self) -> None:
        for session_id in list(self._timers):
            self.cancel(session_id)
