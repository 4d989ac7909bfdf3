"""One streamed reply: folds stream parts into content blocks and commits them as they arrive.

Text is committed on a clock and at every block end, so a crash loses at most FLUSH_INTERVAL of it plus the time
one commit takes, and a stalled stream still gets what arrived saved. The clock keeps its cadence whatever a
commit takes, and no commit ever holds up the stream: while another program holds the database's lock, the text
stays in memory and the next tick (or the final commit, which waits) writes it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from msgspec.structs import replace

from desktop.engine.history.storage import Storage
from desktop.engine.providers.provider import PartKind, StreamPart
from desktop.engine.types import CUT_STOP_REASONS, Block, Status, StoredMessage, Usage

FLUSH_INTERVAL = 0.4  # seconds between progressive commits (the README promises at most 0.5 s lost)


class ReplyRecorder:
    def __init__(self, store: Storage, reply: StoredMessage):
        self.store = store
        self.reply = reply  # as last committed
        self.blocks: dict[int, Block] = {}
        self.usage = Usage()
        self.stop_reason: str | None = None
        self._open = -1
        self._dirty = False
        self._lock = asyncio.Lock()
        self._clock: asyncio.Task[None] | None = None
        self._pending: asyncio.Future[None] | None = None  # the progressive commit in flight
        self._final = False

    def start_clock(self) -> None:
        self._clock = asyncio.ensure_future(self._tick())

    def stop_clock(self) -> None:
        if self._clock is not None:
            self._clock.cancel()
            self._clock = None

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            # A fixed cadence: a slow commit does not push the next one later.
            due = max(due + FLUSH_INTERVAL, loop.time())
            await asyncio.sleep(due - loop.time())
            self.commit_soon()

    def commit_soon(self) -> None:
        """Commit what arrived, in the background, unless a commit is already in flight (the next tick takes
        what arrives meanwhile). Never waits: the stream goes on while the database is slow or locked."""
        if self._dirty and (self._pending is None or self._pending.done()):
            self._pending = asyncio.ensure_future(self._progressive())

    async def _progressive(self) -> None:
        if self._final:  # the final commit has begun: it carries this text
            return
        with contextlib.suppress(
            Exception
        ):  # kept in memory (flush marks it dirty again); the next tick retries
            await self.flush()

    def apply(self, part: StreamPart) -> None:
        """Fold one stream part into the reply's blocks."""
        self._dirty = True
        if part.kind is PartKind.BLOCK_START and part.block is not None:
            self.blocks[part.index] = dict(part.block)
            self._open = part.index
        elif part.kind is PartKind.TEXT and self._open in self.blocks:
            block = self.blocks[self._open]
            block["text"] = block.get("text", "") + part.text
        elif part.kind is PartKind.THINKING and self._open in self.blocks:
            block = self.blocks[self._open]
            block["thinking"] = block.get("thinking", "") + part.text
        elif part.kind is PartKind.BLOCK_STOP and part.block is not None:
            self.blocks[part.index] = dict(part.block)
        elif part.kind is PartKind.USAGE and part.usage is not None:
            self.usage = part.usage
            self.stop_reason = part.stop_reason or self.stop_reason
        elif part.kind is PartKind.STOP:
            self.usage = part.usage or self.usage
            self.stop_reason = part.stop_reason

    @property
    def content(self) -> list[Block]:
        return [self.blocks[i] for i in sorted(self.blocks)]

    async def flush(self, status: Status = "streaming", meta: dict[str, Any] | None = None) -> StoredMessage:
        """Commit what arrived so far (and the final status and meta). A reply the provider stopped at the output
        limit or a full window is stored "cut", never "complete" (it is sent on like one)."""
        if status == "complete" and self.stop_reason in CUT_STOP_REASONS:
            status = "cut"
        if status != "streaming":
            # Never let a progressive commit land after the final one (it would write 'streaming' back).
            self._final = True
            pending = self._pending
            if pending is not None and not pending.done() and pending is not asyncio.current_task():
                with contextlib.suppress(BaseException):
                    await asyncio.shield(pending)
        async with self._lock:
            content = self.content
            kept = self.usage if self.usage.prompt_tokens else None
            self._dirty = False
            try:
                await self.store.update_message(
                    self.reply.id, content=content, status=status, usage=kept, meta=meta
                )
            except BaseException:
                self._dirty = True  # not committed: the text stays in memory for the next try
                raise
            self.reply = replace(
                self.reply,
                content=content,
                status=status,
                usage=kept,
                meta=meta if meta is not None else self.reply.meta,
            )
            return self.reply
