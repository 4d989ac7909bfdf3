"""One streamed reply: folds stream parts into content blocks and commits them as they arrive.

Text is committed on a clock and at every block end, so a crash loses at most FLUSH_INTERVAL of it and a
stalled stream still gets what arrived saved.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace

from desktop.engine.provider import StreamPart
from desktop.engine.storage import Storage
from desktop.engine.types import Block, Status, StoredMessage, Usage

FLUSH_INTERVAL = 0.5  # seconds between progressive commits of streamed text


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

    def start_clock(self) -> None:
        self._clock = asyncio.ensure_future(self._tick())

    def stop_clock(self) -> None:
        if self._clock is not None:
            self._clock.cancel()
            self._clock = None

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_INTERVAL)
            if self._dirty:
                with contextlib.suppress(Exception):  # the next flush (or the final one) reports a failure
                    await self.flush()

    def apply(self, part: StreamPart) -> None:
        """Fold one stream part into the reply's blocks."""
        self._dirty = True
        if part.kind == "block_start" and part.block is not None:
            self.blocks[part.index] = dict(part.block)
            self._open = part.index
        elif part.kind == "text" and self._open in self.blocks:
            block = self.blocks[self._open]
            block["text"] = block.get("text", "") + part.text
        elif part.kind == "thinking" and self._open in self.blocks:
            block = self.blocks[self._open]
            block["thinking"] = block.get("thinking", "") + part.text
        elif part.kind == "block_stop" and part.block is not None:
            self.blocks[part.index] = dict(part.block)
        elif part.kind == "usage" and part.usage is not None:
            self.usage = part.usage
            self.stop_reason = part.stop_reason or self.stop_reason
        elif part.kind == "stop":
            self.usage = part.usage or self.usage
            self.stop_reason = part.stop_reason

    @property
    def content(self) -> list[Block]:
        return [self.blocks[i] for i in sorted(self.blocks)]

    async def flush(self, status: Status = "streaming", meta: dict | None = None) -> StoredMessage:
        """Commit what arrived so far (and the final status and meta)."""
        async with self._lock:
            content = self.content
            kept = self.usage if self.usage.prompt_tokens else None
            self._dirty = False
            await self.store.update_message(self.reply.id, content=content, status=status, usage=kept, meta=meta)
            self.reply = replace(self.reply, content=content, status=status, usage=kept,
                                 meta=meta if meta is not None else self.reply.meta)
            return self.reply
