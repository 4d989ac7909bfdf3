"""Closing in bounded time: what the window and the app wait for when they close (drafts being written, tasks
being cancelled, connections being closed) gets a while to finish. What does not finish is named in the log with
where it is stuck and left behind, so closing never hangs; the store commits each write on its own, so nothing
committed is lost."""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Awaitable

log = logging.getLogger(__name__)

CLOSE_WAIT = 10.0  # seconds a closing step may take


async def bounded(what: str, work: Awaitable[object], seconds: float | None = None) -> bool:
    """Await ``work`` for at most ``seconds`` (default ``CLOSE_WAIT``); True when it finished (its errors are
    raised as usual). Past that, log what is still pending and where, and return False without waiting further."""
    seconds = CLOSE_WAIT if seconds is None else seconds
    future = asyncio.ensure_future(work)
    done, _pending = await asyncio.wait({future}, timeout=seconds)
    if done:
        future.result()
        return True
    current = asyncio.current_task()
    stacks = io.StringIO()
    for task in asyncio.all_tasks():
        if task is not current and task is not future and not task.done():
            task.print_stack(limit=8, file=stacks)
    log.warning(
        "closing: %s did not finish within %.0f s; going on without it\n%s", what, seconds, stacks.getvalue()
    )
    future.cancel()
    return False
