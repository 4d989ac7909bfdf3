"""The chat engine: one turn = stored history -> request -> stream -> events -> persisted reply.

It talks to views only through events (subscribe()). It never imports Qt; `precis chat` and the window drive
the same object. Context management (desktop/engine/compactor.py) runs before each request: cheap stages first,
a summary only when they are not enough, and a reactive recovery when the provider still says "too long".
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from desktop.engine import assemble
from desktop.engine import compaction as cp
from desktop.engine.calibration import Calibration
from desktop.engine.catalog import ModelCatalog
from desktop.engine.compactor import NEAR_THRESHOLD, Compactor, Outcome
from desktop.engine.context import ContextSnapshot, context_report
from desktop.engine.errors import ChatError, classify
from desktop.engine.events import (
    CommandOutput,
    CompactionChanged,
    ContextChanged,
    EngineEvent,
    MessageAdded,
    MessageRemoved,
    MessageUpdated,
    Notice,
    StatusChanged,
    TextDelta,
    ThinkingDelta,
    TurnDone,
    TurnError,
    UsageUpdate,
)
from desktop.engine.measure import ContextMeter, RequestFacts, draft_cost
from desktop.engine.overflow import detect_stop_reason
from desktop.engine.provider import Provider, StreamPart
from desktop.engine.secrets import Credentials, load_credentials
from desktop.engine.settings import Paths, Settings
from desktop.engine.types import Block, CompactionRecord, SessionInfo, StoredMessage, Usage

FLUSH_INTERVAL = 0.5  # seconds between progressive commits of streamed text (a crash loses at most this)
TITLE_CHARS = 60
RECOVERY_FRACTION = 0.5  # reactive compaction rebuilds the request within this share of the window

Listener = Callable[[EngineEvent], None]


@dataclass(slots=True)
class Gathered:
    """Everything one request (or one measurement) of a session is made from."""

    session: SessionInfo
    model: str
    compaction: CompactionRecord | None
    history: list[StoredMessage]  # after the boundary, every status, as stored
    sendable: list[StoredMessage]  # what requests carry: sendable rows after ingest cap and microcompaction
    state: dict[str, Any]
    system: list[Block]
    tools: list[dict[str, Any]]
    changed: set[tuple[int, int]] = field(default_factory=set)  # (message id, block index) cleared/truncated

    @property
    def horizons(self) -> dict[str, int]:
        return {k: int(v) for k, v in (self.state.get("horizons") or {}).items()}


class TurnFailed(Exception):
    def __init__(self, error: ChatError):
        super().__init__(error.message)
        self.error = error


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
        self.compactor = Compactor(self)
        self._loaded = False
        self._windows_asked: set[str] = set()
        self._media_limit: dict[int, int] = {}  # per session, after a media-count error
        self.clock: Callable[[], float] = time.time  # injectable: the replay benchmark runs on a fake clock
        self._last_request: dict[int, float] = {}
        self._latest: dict[int, ContextSnapshot] = {}
        # message id -> (request copy with huge blocks spilled, indices of those blocks)
        self._spilled: dict[int, tuple[list[Block], list[int]]] = {}  # newest draft-less measurement per session

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
        await self.compactor.close()
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
        return await self.send_content(session_id, content, title_hint=text)

    async def send_content(self, session_id: int, content: list[Block], title_hint: str = "",
                           meta: dict[str, Any] | None = None) -> StoredMessage | None:
        """Send any user content blocks (text, images, documents, tool results of a replayed session)."""
        if not content:
            raise ValueError("empty message")
        self._require_idle(session_id)
        user = await self.store.add_message(session_id, "user", content, meta=meta)
        self.emit(MessageAdded(session_id, user))
        await self._maybe_title(session_id, title_hint)
        return await self._start_turn(session_id)

    async def retry(self, session_id: int) -> StoredMessage | None:
        """Resend the stored history; the user's message is already there, failed partial replies are skipped."""
        self._require_idle(session_id)
        return await self._start_turn(session_id)

    async def compact_and_retry(self, session_id: int) -> StoredMessage | None:
        await self.compact(session_id, "manual")
        return await self.retry(session_id)

    async def command(self, session_id: int, text: str) -> bool:
        """Slash commands. Their feedback never enters the transcript. Returns False for plain text."""
        name, _, arg = text.strip().partition(" ")
        if name == "/context":
            snapshot = await self.publish_context(session_id)
            self.emit(CommandOutput(session_id, "Context", context_report(snapshot)))
            return True
        if name == "/compact":
            outcome = await self.compact(session_id, "manual", focus=arg.strip() or None)
            self.emit(Notice(session_id, outcome.message, "info" if outcome.ok else "warning"))
            return True
        return False

    def stop(self, session_id: int) -> bool:
        task = self._turns.get(session_id)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    # --- compaction entry points (window button, /compact, `precis compact`) --------------------------
    async def compact(self, session_id: int, trigger: str = "manual", focus: str | None = None) -> Outcome:
        if self.busy(session_id):
            return Outcome(False, "A reply is streaming: compact when it has finished.")
        await self._load()
        try:
            return await self.compactor.compact(session_id, trigger, focus=focus)
        finally:
            self.emit(StatusChanged(session_id, "", busy=False))

    async def undo_compaction(self, session_id: int) -> bool:
        """Remove the newest compaction: the next request is rebuilt from the originals."""
        record = await self.store.active_compaction(session_id)
        if record is None:
            return False
        self.compactor.cancel_background(session_id)
        await self.store.delete_compaction(record.id)
        self.emit(CompactionChanged(session_id, "undo"))
        await self.publish_context(session_id)
        return True

    def _require_idle(self, session_id: int) -> None:
        if self.busy(session_id):
            raise RuntimeError("a reply is still streaming in this session")

    async def delete_message(self, session_id: int, message_id: int) -> None:
        self._require_idle(session_id)
        self.compactor.cancel_background(session_id)
        await self.store.delete_message(message_id)
        self.emit(MessageRemoved(session_id, message_id))
        await self.publish_context(session_id)

    async def edit_and_resend(self, session_id: int, message_id: int, text: str) -> StoredMessage | None:
        """Replace a user message and everything after it; summaries that covered any of it go too."""
        self._require_idle(session_id)
        self.compactor.cancel_background(session_id)
        removed = [m.id for m in await self.store.messages(session_id, after_id=message_id - 1)]
        await self.store.truncate_from(session_id, message_id)
        for mid in removed:
            self.emit(MessageRemoved(session_id, mid))
        self.emit(CompactionChanged(session_id, "edit"))
        return await self.send(session_id, text)

    async def clear_history(self, session_id: int) -> None:
        self._require_idle(session_id)
        self.compactor.cancel_background(session_id)
        await self.store.clear_history(session_id)
        self.emit(CompactionChanged(session_id, "clear"))
        await self.publish_context(session_id)

    def session_changed(self, session_id: int | None) -> None:
        """The window switched sessions: background work for other sessions is cancelled."""
        self.compactor.cancel_others(session_id)

    # --- gathering, measuring, assembling -------------------------------------------------------------
    async def gather(self, session_id: int) -> Gathered:
        await self._load()
        session = await self.store.get_session(session_id)
        if session is None:
            raise LookupError(f"no session {session_id}")
        model = session.model or self.settings.model
        compaction = await self.store.active_compaction(session_id)
        after = compaction.covers_through_message_id if compaction else 0
        history = await self.store.messages(session_id, after_id=after)
        state = await self.store.get_state(session_id)
        g = Gathered(session, model, compaction, history, [], state, assemble.system_blocks(), [])
        g.sendable, g.changed = self._shape(session_id, g)
        return g

    def _shape(self, session_id: int, g: Gathered) -> tuple[list[StoredMessage], set[tuple[int, int]]]:
        """Request copies of the sendable rows: huge content capped, old results cleared, old texts cut."""
        spill = self.paths.spill_dir(session_id)
        rows = []
        spilled: set[tuple[int, int]] = set()
        for m in g.history:
            if m.status not in assemble.SENDABLE or not m.content:
                continue
            # Spilled content is remembered per message: the file is written (and checked) once, not on
            # every measurement. Stored rows never change once complete, and ids are never reused.
            cached = self._spilled.get(m.id)
            if cached is None:
                capped = cp.cap_content(m.content, key=f"m{m.id}", spill_dir=spill)
                changed = [i for i, (a, b) in enumerate(zip(capped, m.content, strict=True)) if a is not b]
                if changed:
                    self._spilled[m.id] = (capped, changed)
            else:
                capped, changed = cached
            spilled.update((m.id, i) for i in changed)
            rows.append(replace(m, content=capped) if changed else m)
        h = g.horizons
        rows, cleared = cp.apply_clear(rows, h.get("clear", 0))
        rows, cut = cp.apply_truncate(rows, h.get("old", 0), recent_horizon=h.get("recent", 0))
        return rows, spilled | cleared | cut

    def request_from(self, g: Gathered, media_limit: int | None = None) -> dict[str, Any]:
        messages = assemble.with_summary(assemble.history_to_api(g.sendable), g.compaction)
        messages = cp.repair(messages)
        limit = media_limit or self.catalog.info(g.model).media_limit
        messages, _report = cp.cap_media(messages, limit=limit, on_error="omit")
        system, tools, messages = cp.place_breakpoints(g.system, g.tools, messages,
                                                        summary_present=g.compaction is not None,
                                                        long_ttl=self.settings.long_cache_ttl)
        request: dict[str, Any] = {
            "model": g.model,
            "max_tokens": self.settings.max_output_tokens,
            "system": system,
            "messages": messages,
        }
        if tools:
            request["tools"] = tools
        return request

    async def build_request(self, session_id: int) -> dict[str, Any]:
        return self.request_from(await self.gather(session_id), self._media_limit.get(session_id))

    def _facts(self, session_id: int, g: Gathered) -> RequestFacts:
        prefix = [{"type": "text", "text": assemble.summary_text(g.compaction)}] if g.compaction else []
        estimate = self.meter.whole_estimate(session_id, g.model, g.system, g.tools, prefix, g.sendable)
        anchor = self.meter.anchor(g.model, g.sendable, g.compaction, g.horizons)
        return RequestFacts(
            boundary=g.compaction.id if g.compaction else 0,
            last_id=g.sendable[-1].id if g.sendable else 0,
            count=len(g.sendable),
            estimate=estimate,
            horizons=g.horizons,
            anchor=anchor[0].usage.prompt_tokens if anchor and anchor[0].usage else 0,
            added=anchor[1] if anchor else 0,
        )

    def _snapshot(self, session_id: int, g: Gathered, compactions: int, cost: float | None,
                  draft: str = "") -> ContextSnapshot:
        return self.meter.snapshot(
            session_id=session_id,
            model=g.model,
            system=g.system,
            tools=g.tools,
            compaction=g.compaction,
            compaction_count=compactions,
            history=g.sendable,
            max_output=self.settings.max_output_tokens,
            session_cost=cost,
            breaker_open=int(g.state.get("breaker_failures", 0)) >= 3,
            horizons=g.horizons,
            draft=draft,
            trimmed=tuple(sorted({mid for mid, _block in g.changed})),
        )

    async def measure(self, session_id: int, draft: str = "", g: Gathered | None = None) -> ContextSnapshot:
        g = g or await self.gather(session_id)
        await self._ask_window(g.model)
        count = len(await self.store.compactions(session_id))
        cost = await self.session_cost(session_id)
        # Estimating a long uncached session takes a while: keep it off the loop (the UI thread in the app).
        return await asyncio.to_thread(self._snapshot, session_id, g, count, cost, draft)

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
        self._publish(session_id, snapshot, draft)
        return snapshot

    def _publish(self, session_id: int, snapshot: ContextSnapshot, draft: str = "") -> None:
        if not draft:
            self._latest[session_id] = snapshot  # the base the typing path adds a draft to
        self.emit(ContextChanged(session_id, snapshot))

    async def publish_draft(self, session_id: int, draft: str) -> ContextSnapshot:
        """While the user types only the next-turn estimate changes: add the draft to the latest measurement
        instead of re-reading and re-estimating the whole session on every pause in typing."""
        base = self._latest.get(session_id)
        if base is None:
            return await self.publish_context(session_id, draft)
        family = self.catalog.info(base.model).family
        snapshot = dataclasses.replace(base, next_turn=base.next_turn + draft_cost(draft, family))
        self._publish(session_id, snapshot, draft)
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

    # --- the turn -----------------------------------------------------------------------------------
    async def _start_turn(self, session_id: int) -> StoredMessage | None:
        task = asyncio.ensure_future(self._turn(session_id))
        self._turns[session_id] = task
        try:
            return await task
        finally:
            if self._turns.get(session_id) is task:
                del self._turns[session_id]

    async def _turn(self, session_id: int) -> StoredMessage | None:
        """Prepare the context, stream; on overflow (or too much media) recover once, invisibly."""
        self.emit(StatusChanged(session_id, "Sending…"))
        try:
            g = await self._prepare_context(session_id)
            try:
                return await self._attempt(session_id, g)
            except TurnFailed as failed:
                if failed.error.kind not in ("overflow", "media"):
                    raise
                g = await self._recover(session_id, failed.error)
                return await self._attempt(session_id, g)
        except TurnFailed as failed:
            self._report(session_id, failed.error)
            return None
        except asyncio.CancelledError:
            self.emit(StatusChanged(session_id, "Stopped", busy=False))
            return None

    async def _prepare_context(self, session_id: int) -> Gathered:
        """Before a request: microcompaction, then at most one automatic summary, then snip if still too big."""
        g = await self.gather(session_id)
        snap = await self.measure(session_id, g=g)
        if await self.compactor.plan_micro(session_id, g, snap.used, self._idle(session_id, g)):
            g = await self.gather(session_id)
            snap = await self.measure(session_id, g=g)
        threshold = self.compactor.threshold(g.model)
        if threshold is None:
            return g
        used = snap.used
        if snap.source == "estimate" and abs(used - threshold) <= NEAR_THRESHOLD * threshold:
            exact = await self.provider.count_tokens(self.request_from(g))
            used = exact if exact else used
        last = next((m for m in reversed(g.history) if m.role == "assistant"), None)
        truncated = last is not None and detect_stop_reason(last.meta.get("stop_reason")) is not None
        if used >= threshold or truncated:
            budget = self.compactor.budget(g.model)
            await self.compactor.compact(session_id, "auto", target=budget)
            g = await self.gather(session_id)
        self.emit(StatusChanged(session_id, "Sending…"))
        return g

    def _idle(self, session_id: int, g: Gathered) -> float | None:
        """Seconds since this session's last request (None: unknown, e.g. after a restart)."""
        last = self._last_request.get(session_id)
        if last is None:
            reply = next((m for m in reversed(g.history) if m.role == "assistant" and m.usage), None)
            last = reply.created_at if reply else None
        return None if last is None else max(0.0, self.clock() - last)

    async def _recover(self, session_id: int, error: ChatError) -> Gathered:
        """The provider said the request is too long (or has too much media): compact hard and rebuild."""
        found = error.detail.get("overflow")
        g = await self.gather(session_id)
        if error.kind == "media":
            count = found.media_count if found and found.media_count else None
            limit = (found.media_limit if found and found.media_limit else self.catalog.info(g.model).media_limit)
            self._media_limit[session_id] = max(1, min(limit, count or limit) - 1) if count else max(1, limit // 2)
            self.emit(Notice(session_id, "Older images were left out to stay under the provider's media limit.",
                             "info"))
            return g
        if found is not None and found.limit:
            await self._learn_window(g.model, found.limit)
        self.emit(StatusChanged(session_id, "Compressing context…"))
        window = self.catalog.info(g.model).window or (found.limit if found and found.limit else None)
        target = int(window * RECOVERY_FRACTION) if window else None
        await self.compactor.compact(session_id, "reactive", target=target)
        self.emit(StatusChanged(session_id, "Sending…"))
        return await self.gather(session_id)

    async def _attempt(self, session_id: int, g: Gathered) -> StoredMessage | None:
        """One request and its streamed reply. Raises TurnFailed with the typed error."""
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

        request = self.request_from(g, self._media_limit.get(session_id))
        facts = self._facts(session_id, g)
        self._last_request[session_id] = self.clock()
        flusher: asyncio.Task[None] | None = None
        try:
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
            if reply is not None:
                await self._settle_failed(reply, flush, error)
            raise TurnFailed(error) from exc
        assert reply is not None
        reply = replace(reply, meta={**reply.meta, "stop_reason": stop_reason})
        await self.store.update_message(reply.id, meta=reply.meta)
        if usage.prompt_tokens:
            learned = self.calibration.observe(request["model"], facts.estimate, usage.prompt_tokens)
            if facts.anchor:  # the per-request bias, from the anchored prediction of this request
                learned |= self.calibration.observe_anchored(request["model"], facts.anchor, facts.added,
                                                             usage.prompt_tokens, learn_factor=False)
            if learned:
                await self.store.set_kv("calibration", self.calibration.to_dict())
        self.emit(StatusChanged(session_id, "", busy=False))
        self.emit(TurnDone(session_id, reply))
        if detect_stop_reason(stop_reason) is not None:
            self.emit(Notice(session_id, "The reply filled the context window and was cut short; the context "
                             "will be compacted before the next turn.", "warning"))
        after = await self.gather(session_id)
        snap = await self.measure(session_id, g=after)
        self._publish(session_id, snap)
        self.compactor.maybe_prepare(session_id, after, snap.used)
        return reply

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
        actions = ("compact_retry", "new_chat_from_summary") if error.kind == "overflow" else ("retry",)
        self.emit(TurnError(session_id, error.kind, error.message, error.retryable, actions, detail=error.detail))

    async def _maybe_title(self, session_id: int, text: str) -> None:
        session = await self.store.get_session(session_id)
        if session and session.title in ("", "New chat") and text.strip():
            title = " ".join(text.split())[:TITLE_CHARS]
            await self.store.update_session(session_id, title=title)

    async def new_chat_from_summary(self, session_id: int) -> int:
        """Start a fresh session that carries the summary and the pinned instructions of this one."""
        await self.compact(session_id, "manual")
        session = await self.store.get_session(session_id)
        record = await self.store.active_compaction(session_id)
        new = await self.store.create_session(f"{session.title} (continued)" if session else "Continued",
                                              session.model if session else None)
        if record is not None:
            text = ("Context carried over from an earlier chat:\n\n" + assemble.summary_text(record))
            await self.store.add_message(new.id, "user", [{"type": "text", "text": text}],
                                         meta={"carried_over": True, "synthetic": True})
        return new.id
