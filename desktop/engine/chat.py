"""The chat engine: one turn = stored history -> request -> stream -> events -> persisted reply.

It talks to views only through events (subscribe()). It never imports Qt; `precis chat` and the window drive
the same object.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from desktop.engine import assemble
from desktop.engine.calibration import Calibration
from desktop.engine.catalog import ModelCatalog
from desktop.engine.context import ContextSnapshot, context_report
from desktop.engine.errors import ChatError, classify
from desktop.engine.events import (
    CommandOutput,
    ContextChanged,
    EngineEvent,
    MessageAdded,
    MessageRemoved,
    MessageUpdated,
    StatusChanged,
    TextDelta,
    ThinkingDelta,
    TurnDone,
    TurnError,
    UsageUpdate,
)
from desktop.engine.measure import ContextMeter, RequestFacts
from desktop.engine.provider import Provider, StreamPart
from desktop.engine.secrets import Credentials, load_credentials
from desktop.engine.settings import Paths, Settings
from desktop.engine.types import Block, CompactionRecord, SessionInfo, StoredMessage, Usage

FLUSH_INTERVAL = 0.5  # seconds between progressive commits of streamed text (a crash loses at most this)
TITLE_CHARS = 60

Listener = Callable[[EngineEvent], None]


@dataclass(slots=True)
class Gathered:
    session: SessionInfo
    model: str
    compaction: CompactionRecord | None
    history: list[StoredMessage]  # after the boundary, every status
    system: list[Block]
    tools: list[dict[str, Any]]


class ChatEngine:
    def __init__(
        self,
        store: Any,
        paths: Paths,
        settings: Settings,
        credentials: Credentials | None = None,
    ):
        self.store = store
        self.paths = paths
        self.settings = settings
        self._credentials = credentials
        self._provider: Provider | None = None
        self._listeners: list[Listener] = []
        self._turns: dict[int, asyncio.Task[Any]] = {}
        self.catalog = ModelCatalog(settings.model_overrides)
        self.calibration = Calibration()
        self.meter = ContextMeter(self.catalog, self.calibration)
        self._loaded = False
        self._windows_asked: set[str] = set()

    # --- wiring -------------------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def emit(self, event: EngineEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    @property
    def provider(self) -> Provider:
        if self._provider is None:
            creds = self._credentials or load_credentials()
            self._provider = Provider(self.settings, creds)
        return self._provider

    async def _load(self) -> None:
        """Learned facts (calibration, windows from overflow errors) persist across runs."""
        if self._loaded:
            return
        self._loaded = True
        self.calibration = Calibration.from_dict(await self.store.get_kv("calibration"))
        self.catalog = ModelCatalog(self.settings.model_overrides, await self.store.get_kv("learned_windows"))
        self.meter = ContextMeter(self.catalog, self.calibration)

    async def reconfigure(self, settings: Settings, credentials: Credentials | None = None) -> None:
        """New settings or key: the next request uses a fresh client."""
        self.settings = settings
        self._credentials = credentials
        self.catalog = ModelCatalog(settings.model_overrides, self.catalog.learned())
        self.meter = ContextMeter(self.catalog, self.calibration)
        if self._provider is not None:
            await self._provider.close()
            self._provider = None

    async def close(self) -> None:
        for task in list(self._turns.values()):
            task.cancel()
        if self._turns:
            await asyncio.gather(*self._turns.values(), return_exceptions=True)
        if self._provider is not None:
            await self._provider.close()

    def busy(self, session_id: int) -> bool:
        task = self._turns.get(session_id)
        return task is not None and not task.done()

    # --- public entry points ------------------------------------------------------------------------
    async def send(self, session_id: int, text: str, attachments: list[Block] | None = None) -> StoredMessage | None:
        """Commit the user's message first, then run the turn. Returns the assistant message (or None)."""
        content: list[Block] = list(attachments or [])
        if text.strip():
            content.append({"type": "text", "text": text})
        if not content:
            raise ValueError("empty message")
        if self.busy(session_id):
            raise RuntimeError("a reply is still streaming in this session")
        user = await self.store.add_message(session_id, "user", content)
        self.emit(MessageAdded(session_id, user))
        await self._maybe_title(session_id, text)
        return await self._start_turn(session_id)

    async def retry(self, session_id: int) -> StoredMessage | None:
        """Resend the stored history; the user's message is already there, failed partial replies are skipped."""
        if self.busy(session_id):
            raise RuntimeError("a reply is still streaming in this session")
        return await self._start_turn(session_id)

    async def command(self, session_id: int, text: str) -> bool:
        """Slash commands. Their feedback never enters the transcript. Returns False for plain text."""
        name, _, arg = text.strip().partition(" ")
        if name == "/context":
            snapshot = await self.publish_context(session_id)
            self.emit(CommandOutput(session_id, "Context", context_report(snapshot)))
            return True
        return False

    def stop(self, session_id: int) -> bool:
        task = self._turns.get(session_id)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    # --- the turn -----------------------------------------------------------------------------------
    async def _start_turn(self, session_id: int) -> StoredMessage | None:
        task = asyncio.ensure_future(self._turn(session_id))
        self._turns[session_id] = task
        try:
            return await task
        finally:
            if self._turns.get(session_id) is task:
                del self._turns[session_id]

    async def gather(self, session_id: int) -> Gathered:
        """Everything a request or a measurement of this session is made from."""
        await self._load()
        session = await self.store.get_session(session_id)
        if session is None:
            raise LookupError(f"no session {session_id}")
        model = session.model or self.settings.model
        compaction = await self.store.active_compaction(session_id)
        after = compaction.covers_through_message_id if compaction else 0
        history = await self.store.messages(session_id, after_id=after)
        return Gathered(session, model, compaction, history, assemble.system_blocks(), [])

    def request_from(self, g: Gathered) -> dict[str, Any]:
        messages = assemble.with_summary(assemble.history_to_api(g.history), g.compaction)
        request: dict[str, Any] = {
            "model": g.model,
            "max_tokens": self.settings.max_output_tokens,
            "system": g.system,
            "messages": _alternate(messages),
        }
        if g.tools:
            request["tools"] = g.tools
        return request

    async def build_request(self, session_id: int) -> dict[str, Any]:
        return self.request_from(await self.gather(session_id))

    def _facts(self, session_id: int, g: Gathered) -> RequestFacts:
        sendable = [m for m in g.history if m.status in assemble.SENDABLE]
        prefix = [{"type": "text", "text": assemble.summary_text(g.compaction)}] if g.compaction else []
        estimate = self.meter.whole_estimate(session_id, g.model, g.system, g.tools, prefix, sendable)
        return RequestFacts(
            boundary=g.compaction.id if g.compaction else 0,
            last_id=sendable[-1].id if sendable else 0,
            count=len(sendable),
            estimate=estimate,
        )

    async def measure(self, session_id: int, draft: str = "") -> ContextSnapshot:
        g = await self.gather(session_id)
        await self._ask_window(g.model)
        count = len(await self.store.compactions(session_id))
        state = await self.store.get_state(session_id)
        return self.meter.snapshot(
            session_id=session_id,
            model=g.model,
            system=g.system,
            tools=g.tools,
            compaction=g.compaction,
            compaction_count=count,
            history=g.history,
            max_output=self.settings.max_output_tokens,
            session_cost=await self.session_cost(session_id),
            breaker_open=int(state.get("breaker_failures", 0)) >= 3,
            draft=draft,
        )

    async def session_cost(self, session_id: int) -> float | None:
        total = 0.0
        for model, usage in await self.store.usage_rows(session_id):
            cost = self.catalog.cost(model or self.settings.model, usage)
            if cost is None:
                return None
            total += cost
        return total

    async def publish_context(self, session_id: int, draft: str = "") -> ContextSnapshot:
        snapshot = await self.measure(session_id, draft)
        self.emit(ContextChanged(session_id, snapshot))
        return snapshot

    async def _ask_window(self, model: str) -> None:
        """Unknown model: ask the provider once (models.retrieve) before calling it capacity unknown."""
        if model in self._windows_asked or self.catalog.info(model).window_source != "unknown":
            return
        self._windows_asked.add(model)
        if self._credentials is None and not load_credentials().present:
            return
        window, _max_out = await self.provider.model_window(model)
        if window:
            await self._learn_window(model, int(window))

    async def _learn_window(self, model: str, window: int) -> None:
        if self.catalog.learn_window(model, window):
            await self.store.set_kv("learned_windows", self.catalog.learned())

    async def _turn(self, session_id: int) -> StoredMessage | None:
        self.emit(StatusChanged(session_id, "Sending…"))
        reply: StoredMessage | None = None
        blocks: dict[int, Block] = {}
        usage = Usage()
        stop_reason: str | None = None
        dirty = False
        lock = asyncio.Lock()

        async def flush(status: str = "streaming") -> None:
            nonlocal reply, dirty
            async with lock:
                if reply is None:
                    return
                content = [blocks[i] for i in sorted(blocks)]
                kept = usage if usage.prompt_tokens else None
                dirty = False
                await self.store.update_message(reply.id, content=content, status=status, usage=kept)
                reply = replace(reply, content=content, status=status, usage=kept)

        async def flush_periodically() -> None:
            # Commit on a clock, not only when deltas arrive: a stalled stream still gets its text saved.
            while True:
                await asyncio.sleep(FLUSH_INTERVAL)
                if dirty:
                    await flush()

        flusher: asyncio.Task[None] | None = None
        try:
            gathered = await self.gather(session_id)
            request = self.request_from(gathered)
            facts = self._facts(session_id, gathered)
            reply = await self.store.add_message(session_id, "assistant", [], status="streaming",
                                                 model=request["model"], meta={"request": facts.to_json()})
            self.emit(MessageAdded(session_id, reply))
            self.emit(StatusChanged(session_id, "Waiting for the reply…"))
            flusher = asyncio.ensure_future(flush_periodically())
            current = -1
            async for part in self.provider.stream(request):
                current = self._apply(part, blocks, current)
                dirty = True
                if part.kind == "usage" and part.usage is not None:
                    usage = part.usage
                    stop_reason = part.stop_reason or stop_reason
                    self.emit(UsageUpdate(session_id, reply.id, usage))
                elif part.kind == "text":
                    self.emit(TextDelta(session_id, reply.id, part.text))
                elif part.kind == "thinking":
                    self.emit(ThinkingDelta(session_id, reply.id, part.text))
                elif part.kind == "stop":
                    usage = part.usage or usage
                    stop_reason = part.stop_reason
                elif part.kind == "block_stop":
                    await flush()
            flusher.cancel()
            await flush("complete")
            assert reply is not None
            reply = replace(reply, meta={**reply.meta, "stop_reason": stop_reason})
            await self.store.update_message(reply.id, meta=reply.meta)
            if usage.prompt_tokens and self.calibration.observe(request["model"], facts.estimate,
                                                                usage.prompt_tokens):
                await self.store.set_kv("calibration", self.calibration.to_dict())
            self.emit(StatusChanged(session_id, "", busy=False))
            self.emit(TurnDone(session_id, reply))
            await self.publish_context(session_id)
            return reply
        except asyncio.CancelledError:
            # Stop: keep what arrived, marked interrupted. Shielded so the commit survives the cancellation.
            if flusher:
                flusher.cancel()
            if reply is not None:
                await asyncio.shield(flush("interrupted"))
                self.emit(TurnDone(session_id, reply))
            self.emit(StatusChanged(session_id, "Stopped", busy=False))
            return reply
        except Exception as exc:  # noqa: BLE001 - every failure becomes a typed error for the user
            if flusher:
                flusher.cancel()
            error = classify(exc)
            found = error.detail.get("overflow")
            if found is not None and found.limit:
                await self._learn_window(request["model"], found.limit)
            if reply is not None:
                await self._settle_failed(reply, flush, error)
            self._report(session_id, error)
            return None

    async def _settle_failed(self, reply: StoredMessage, flush: Any, error: ChatError) -> None:
        """A failed attempt: drop an empty row; keep partial text visible, marked 'error' (never resent)."""
        await flush("error")
        current = await self.store.get_message(reply.id)
        if current is None or not current.content:
            await self.store.delete_message(reply.id)
            self.emit(MessageRemoved(reply.session_id, reply.id))
            return
        current = replace(current, meta={**current.meta, "error": error.message})
        await self.store.update_message(current.id, meta=current.meta)
        self.emit(MessageUpdated(current.session_id, current))

    @staticmethod
    def _apply(part: StreamPart, blocks: dict[int, Block], current: int) -> int:
        """Fold one stream part into the reply's blocks; returns the index of the open block."""
        if part.kind == "block_start" and part.block is not None:
            blocks[part.index] = dict(part.block)
            return part.index
        if part.kind == "text" and current in blocks:
            blocks[current]["text"] = blocks[current].get("text", "") + part.text
        elif part.kind == "thinking" and current in blocks:
            blocks[current]["thinking"] = blocks[current].get("thinking", "") + part.text
        elif part.kind == "block_stop" and part.block is not None:
            blocks[part.index] = dict(part.block)
        return current

    def _report(self, session_id: int, error: ChatError) -> None:
        self.emit(StatusChanged(session_id, "", busy=False))
        self.emit(TurnError(session_id, error.kind, error.message, error.retryable, detail=error.detail))

    async def _maybe_title(self, session_id: int, text: str) -> None:
        session = await self.store.get_session(session_id)
        if session and session.title in ("", "New chat") and text.strip():
            title = " ".join(text.split())[:TITLE_CHARS]
            await self.store.update_session(session_id, title=title)


def _alternate(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge consecutive same-role messages so roles alternate (e.g. two user sends after a failure)."""
    out: list[dict[str, Any]] = []
    for msg in messages:
        if out and out[-1]["role"] == msg["role"]:
            out[-1] = {"role": msg["role"], "content": [*out[-1]["content"], *msg["content"]]}
        else:
            out.append({"role": msg["role"], "content": list(msg["content"])})
    while out and out[0]["role"] != "user":
        out.pop(0)
    return out
