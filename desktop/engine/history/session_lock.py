"""The per-session lock a running turn holds in the database, so two processes never run a turn in the same
session at once (their requests would merge histories and each store its reply as if alone).

The lock is a row (session, pid, host, heartbeat). A turn refreshes it while it runs and deletes it at the end; a
row whose process is gone, or that nothing refreshed for a minute, is stale and taken over. A second process
says it waits (``on_wait``, once per wait), waits a little for the first turn to end, then refuses with one
sentence; nothing of its own was stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections.abc import AsyncIterator, Callable

from desktop.engine import messages as M
from desktop.engine.history.storage import LockHolder, Storage, StorageError

STALE_AFTER = 60.0  # seconds without a heartbeat after which a lock is taken over
BEAT_EVERY = 5.0


def wait_for_busy_session() -> float:
    """How long a turn waits for another process's turn in the same session (PRECIS_SESSION_WAIT seconds)."""
    try:
        value = float(os.environ.get("PRECIS_SESSION_WAIT", "10"))
    except ValueError:
        return 10.0
    return value if 0 <= value <= 3600 else 10.0


class SessionBusy(RuntimeError):
    """Another process runs a turn in this session; ``str()`` is the sentence for the user."""

    def __init__(self, holder: LockHolder, waited: float):
        here = holder.host == socket.gethostname()
        super().__init__(
            M.say(
                M.SESSION_BUSY if here else M.SESSION_BUSY_ELSEWHERE,
                session=holder.session_id,
                pid=holder.pid,
                host=holder.host,
                waited=round(waited),
            )
        )
        self.holder = holder


class SessionLocks:
    """This process's session locks; re-entrant per session (edit-and-resend sends within its own hold)."""

    def __init__(self, store: Storage, *, wait: float | None = None):
        self.store = store
        self.wait = wait_for_busy_session() if wait is None else wait
        self.pid = os.getpid()
        self.host = socket.gethostname()
        self._held: dict[int, int] = {}
        self._beats: dict[int, asyncio.Task[None]] = {}
        self._releasing: set[asyncio.Task[None]] = set()
        self.on_wait: Callable[[LockHolder], None] | None = None  # told once when a claim finds the chat busy

    def held(self, session_id: int) -> bool:
        return session_id in self._held

    @contextlib.asynccontextmanager
    async def hold(self, session_id: int) -> AsyncIterator[None]:
        """Hold the session's lock. Holders in this process share it (nested calls, or a Retry that starts while
        the failed send is still returning); it is given back when the last of them leaves."""
        if session_id not in self._held:
            await self._claim(session_id)
            if session_id not in self._beats:  # another holder may have claimed while this one waited
                self._beats[session_id] = asyncio.ensure_future(self._beat(session_id))
        self._held[session_id] = self._held.get(session_id, 0) + 1
        try:
            yield
        finally:
            self._held[session_id] -= 1
            if not self._held[session_id]:
                del self._held[session_id]
                self._beats.pop(session_id).cancel()
                # In the background, so the caller gets its reply without one more round trip; the database
                # thread runs calls in order, so a later claim of this process cannot overtake it. A stopped
                # turn still gives the lock back (else others wait for it to go stale).
                task = asyncio.ensure_future(self._release(session_id))
                self._releasing.add(task)
                task.add_done_callback(self._releasing.discard)

    async def _release(self, session_id: int) -> None:
        with contextlib.suppress(StorageError):
            await self.store.release_session(session_id, self.pid)

    async def settle(self) -> None:
        """Wait for the locks being given back (before the store closes)."""
        if self._releasing:
            await asyncio.gather(*self._releasing, return_exceptions=True)

    async def _claim(self, session_id: int) -> None:
        started = time.monotonic()
        told = False
        while True:
            holder = await self.store.claim_session(session_id, self.pid, self.host, STALE_AFTER)
            if holder is None:
                return
            if not told and self.on_wait is not None:
                told = True
                self.on_wait(holder)
            waited = time.monotonic() - started
            if waited >= self.wait:
                raise SessionBusy(holder, waited)
            await asyncio.sleep(min(0.25, self.wait - waited))

    async def _beat(self, session_id: int) -> None:
        while True:
            await asyncio.sleep(BEAT_EVERY)
            with contextlib.suppress(StorageError):  # a lock held elsewhere for a while: the next beat
                await self.store.beat_session(session_id, self.pid)
