"""One streamed reply: folds stream parts into content blocks and commits them as they arrive.

Text is committed on a clock and at every block end, so a crash loses at most FLUSH_INTERVAL of it plus the time
one commit takes, and a stalled stream still gets what arrived saved. The clock keeps its cadence whatever a
commit takes, and no commit ever holds up the stream: while another program holds the database's lock, the text
stays in memory and the next tick (or the final commit, which waits) writes it.

The final commit stores a reply the provider cut short (the output limit, a full window, or a stream that ended
without message_stop) as "cut", and gives a tool call whose id an earlier call of the reply already has an id of
its own: two calls with one id cannot both be answered, and the API refuses the request that sends them.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from msgspec.structs import replace

from desktop.engine.history.storage import Storage
from desktop.engine.providers.provider import STREAM_ENDED, PartKind, StreamPart
from desktop.engine.types import CUT_STOP_REASONS, Block, Status, StoredMessage, Usage

FLUSH_INTERVAL = 0.4  # seconds between progressive commits (the README promises at most 0.5 s lost)
# meta key of a reply whose tool calls shared an id: {the id given to a later call: the id it came with}
DUPLICATE_IDS = "duplicate_tool_ids"


def unique_tool_ids(content: list[Block]) -> tuple[list[Block], dict[str, str]]:
    """``content`` with every tool_use id unique: a call whose id an earlier call has gets ``<id>_dup<n>``.
    Returns the content and {new id: the id it came with} (empty, and the same list, when nothing changed)."""
    ids = [str(b.get("id")) for b in content if b.get("type") == "tool_use"]
    if len(set(ids)) == len(ids):
        return content, {}
    taken, seen = set(ids), set()
    renamed: dict[str, str] = {}
    out: list[Block] = []
    for block in content:
        if block.get("type") == "tool_use":
            old = str(block.get("id"))
            if old in seen:
                n = 2
                while f"{old[:240]}_dup{n}" in taken:
                    n += 1
                new = f"{old[:240]}_dup{n}"
                taken.add(new)
                renamed[new] = old
                block = {**block, "id": new}
            seen.add(old)
        out.append(block)
    return out, renamed


class ReplyRecorder:
    def __init__(self, store: Storage, reply: StoredMessage):
        self.store = store
        self.reply = reply  # as last committed
        self.blocks: dict[int, Block] = {}
        self.usage = Usage()
        self.stop_reason: str | None = None
        self.renamed: dict[str, str] = {}  # tool_use ids the final commit gave: {new id: the id it came with}
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

    @property
    def cut_short(self) -> bool:
        """The provider stopped the reply early: the output limit, a full window, or an unfinished stream."""
        return self.stop_reason in CUT_STOP_REASONS or self.stop_reason == STREAM_ENDED

    async def flush(self, status: Status = "streaming", meta: dict[str, Any] | None = None) -> StoredMessage:
        """Commit what arrived so far (and the final status and meta). A reply the provider stopped at the output
        limit, a full window or the end of an unfinished stream is stored "cut", never "complete" (it is sent on
        like one). The final commit makes the reply's tool_use ids unique (see ``unique_tool_ids``)."""
        if status == "complete" and self.cut_short:
            status = "cut"
        if status != "streaming":
            content, renamed = unique_tool_ids(self.content)
            if renamed:
                self.blocks = dict(enumerate(content))
                self.renamed |= renamed
            if self.renamed:  # kept with the reply: its tool round answers those calls with an error
                meta = {**(self.reply.meta if meta is None else meta), DUPLICATE_IDS: dict(self.renamed)}
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
