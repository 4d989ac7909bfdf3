"""Staged compaction: the one function every path (auto, manual, background, reactive) goes through.

Cheap stages first and only when needed: huge content is capped at ingest (request copies only), old tool
results are cleared and old long texts truncated in horizon batches (microcompaction), an LLM summary of
everything before a verbatim tail comes next, and snipping the oldest groups is the last resort so the user can
always keep chatting. Originals are never deleted: a compaction is a row saying "the summary replaces, in
requests, every message with id <= covers_through_message_id".
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from desktop.engine import compaction as cp
from desktop.engine import overflow, tokens
from desktop.engine.compaction._shared import group_starts
from desktop.engine.context import reserved_output
from desktop.engine.events import CompactionChanged, Notice, StatusChanged
from desktop.engine.types import CompactionRecord, StoredMessage

if TYPE_CHECKING:
    from desktop.engine.chat import ChatEngine, Gathered

TAIL_FRACTION = 0.3  # the verbatim tail takes at most this share of the window (and at most 40K tokens)
PIN_FRACTION = 0.1  # pinned instructions take at most this share of the window (and at most the pin budget)
BREAKER_LIMIT = 3  # consecutive summary failures that pause automatic summaries
MICRO_RATIO = 0.5  # microcompaction starts at this share of the budget
CACHE_TTL = 300.0  # seconds: after this pause the prompt cache is cold and clearing costs nothing extra
WARM_GAIN = 0.25  # while the cache is warm, clear only when it saves this share of the prompt
SUMMARY_MAX_TOKENS = 4096
SUMMARY_RETRIES = 3  # a summarisation request that is itself too long: drop oldest groups and retry
NEAR_THRESHOLD = 0.03  # ask count_tokens when the estimate is this close to a threshold


@dataclass(slots=True)
class Outcome:
    ok: bool
    message: str
    record: CompactionRecord | None = None
    stats: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Prepared:
    """A summary made in the background, not yet committed."""

    boundary: int  # compaction id it was made on top of
    covers_through: int
    summary: str
    stats: dict[str, Any]


class Compactor:
    def __init__(self, engine: ChatEngine):
        self.engine = engine
        self._prepared: dict[int, Prepared] = {}
        self._background: dict[int, asyncio.Task[None]] = {}

    # --- policy numbers -------------------------------------------------------------------------------
    def budget(self, model: str) -> int | None:
        """Input room: the window less the output reserve."""
        window = self.engine.catalog.info(model).window
        if not window:
            return None
        return max(1, window - reserved_output(self.engine.settings.max_output_tokens, window))

    def threshold(self, model: str) -> int | None:
        budget = self.budget(model)
        return int(budget * self.engine.settings.auto_compact_ratio) if budget else None

    def split(self, g: Gathered) -> tuple[list[StoredMessage], list[StoredMessage]]:
        """Head to summarise and verbatim tail, sized so the compacted request lands well under the threshold.

        The tail is at most 40K tokens and TAIL_FRACTION of the window; in small windows its floors (10K tokens,
        5 text messages) shrink with it, or every turn would need a new summary.
        """
        window = self.engine.catalog.info(g.model).window
        budget = self.budget(g.model)
        if not window or not budget:
            return cp.split_tail(g.sendable, window)
        factor = self.engine.calibration.factor(g.model) or 1.0
        room = int(budget * 0.5) - int(window * PIN_FRACTION) - SUMMARY_MAX_TOKENS // 4
        cap = max(500, min(40_000, int(window * TAIL_FRACTION), room))
        cap = int(cap / factor)  # the splitter counts in estimate units
        return cp.split_tail(g.sendable, window, min_tokens=min(10_000, cap // 2), max_tokens=cap,
                             min_text_messages=5 if cap >= 20_000 else 2, max_fraction=TAIL_FRACTION)

    # --- microcompaction ------------------------------------------------------------------------------
    async def plan_micro(self, session_id: int, g: Gathered, used: int, idle: float | None) -> bool:
        """Move the microcompaction horizons when the context is past MICRO_RATIO of the budget.

        Clearing edits blocks deep in the prompt, so the next request re-writes the cache from there. While the
        cache is warm that is worth it only for a large gain (or close to the summary threshold); after a pause
        longer than the cache TTL the prefix must be re-written anyway, so any batch is taken.
        """
        budget = self.budget(g.model)
        threshold = self.threshold(g.model)
        if not budget or not threshold or used < MICRO_RATIO * budget:
            return False
        window = self.engine.catalog.info(g.model).window
        cold = idle is None or idle > CACHE_TTL
        near = used >= 0.9 * threshold
        factor = self.engine.calibration.factor(g.model) or 1.0
        floor = cp.min_clear_for(window)
        min_gain = floor if cold or near else max(floor, int(WARM_GAIN * used / factor))
        sendable = g.sendable
        h = dict(g.horizons)
        new = {
            "clear": cp.plan_clear(sendable, h.get("clear", 0), keep_recent=self.engine.settings.keep_tool_results,
                                   min_clear_tokens=min_gain),
            "old": cp.plan_truncate(sendable, h.get("old", 0), after=30, limit=1_000,
                                    min_gain_tokens=max(min_gain, 5_000)),
            "recent": cp.plan_truncate(sendable, h.get("recent", 0), after=10, limit=5_000,
                                       min_gain_tokens=max(min_gain, 5_000)),
        }
        if new == {k: h.get(k, 0) for k in new}:
            return False
        await self.engine.store.update_state(session_id, {"horizons": new})
        return True

    # --- the one compaction function ------------------------------------------------------------------
    async def compact(self, session_id: int, trigger: str, *, focus: str | None = None,
                      target: int | None = None) -> Outcome:
        """Summarise (or, failing that for automatic paths, snip) and write the boundary. Every path calls this."""
        engine = self.engine
        if trigger != "manual":
            await self.wait_background(session_id)
        else:
            self.cancel_background(session_id)
        g = await engine.gather(session_id)
        used_before = (await engine.measure(session_id)).used
        prepared = self._prepared.pop(session_id, None)
        breaker = int(g.state.get("breaker_failures", 0))
        if trigger == "manual" and breaker:
            breaker = 0
            await engine.store.update_state(session_id, {"breaker_failures": 0})
        if prepared and prepared.boundary == (g.compaction.id if g.compaction else 0) and trigger != "manual":
            record = await self._commit(session_id, g, prepared.covers_through, prepared.summary,
                                        "background", {**prepared.stats, "prepared": True}, used_before)
            return await self._after(session_id, record, used_before, target)
        head, _tail = self.split(g)
        if not head:
            if trigger in ("auto", "reactive") and target is not None:
                return await self._snip(session_id, g, target, used_before)
            return Outcome(False, "Nothing to compact yet: everything is in the recent verbatim tail.")
        if trigger != "manual" and breaker >= BREAKER_LIMIT:
            return await self._snip(session_id, g, target or self._fit_target(g), used_before)
        engine.emit(StatusChanged(session_id, "Compressing context…"))
        summary, stats, error = await self._summarise(g, head, focus)
        if summary is None:
            failures = breaker + 1
            await engine.store.update_state(session_id, {"breaker_failures": failures})
            note = f"Summary failed: {error}."
            if failures >= BREAKER_LIMIT:
                note += " Automatic summaries are paused after 3 failures; Compact now retries."
            engine.emit(Notice(session_id, note, "warning"))
            if trigger in ("auto", "reactive", "background"):
                return await self._snip(session_id, g, target or self._fit_target(g), used_before)
            return Outcome(False, note)
        record = await self._commit(session_id, g, head[-1].id, summary, trigger, stats, used_before)
        return await self._after(session_id, record, used_before, target)

    def _fit_target(self, g: Gathered) -> int:
        budget = self.budget(g.model) or 200_000
        return int(budget * 0.9)

    async def _after(self, session_id: int, record: CompactionRecord, used_before: int,
                     target: int | None) -> Outcome:
        """Budget recomputed after every compaction; snip further only if the target is still not met."""
        snap = await self.engine.measure(session_id)
        self.engine.emit(CompactionChanged(session_id, record.trigger))
        if target is not None and snap.used > target:
            g = await self.engine.gather(session_id)
            await self._snip(session_id, g, target, snap.used)
            snap = await self.engine.measure(session_id)
        await self.engine.publish_context(session_id)
        saved = max(0, used_before - snap.used)  # measured; the card shows the estimate stored with the row
        msg = (f"Context compacted · {record.stats.get('messages', 0)} messages summarized · "
               f"~{int(record.stats.get('tokens_saved', saved)):,} tokens saved")
        return Outcome(True, msg, record, {"saved": saved, "used_after": snap.used})

    async def _summarise(self, g: Gathered, head: list[StoredMessage],
                         focus: str | None) -> tuple[str | None, dict[str, Any], str]:
        engine = self.engine
        model = engine.settings.summary_model
        previous = g.compaction.summary if g.compaction else None
        replaced = sum(tokens.estimate_message(m.content) for m in head)
        if previous:
            replaced += tokens.estimate_text(previous)
        messages = list(head)
        error = "no summary"
        started = time.monotonic()
        for _attempt in range(SUMMARY_RETRIES + 1):
            req = cp.build_summary_request(messages, previous_summary=previous, focus=focus,
                                           max_tokens=SUMMARY_MAX_TOKENS)
            req["model"] = model
            try:
                text, usage, _stop = await engine.provider.complete(req)
            except Exception as exc:  # noqa: BLE001 - any failure counts toward the breaker
                found = overflow.from_exception(exc)
                if found is not None and found.kind == "context":
                    # The summarisation request itself is too long: drop the oldest quarter of its groups.
                    messages = cp.drop_oldest_groups(messages, max(1, len(group_starts(messages)) // 4))
                    if messages:
                        continue
                error = f"{type(exc).__name__}: {exc}"[:300]
                return None, {}, error
            summary = cp.extract_summary(text)
            problem = cp.validate_summary(summary, replaced)
            if problem:
                return None, {}, problem
            return summary, {
                "messages": len(head),
                "summarised_tokens": replaced,
                "summary_tokens": tokens.estimate_text(summary),
                "summary_model": model,
                "summary_usage": usage.to_json(),
                "dropped_for_length": len(head) - len(messages),
                "seconds": round(time.monotonic() - started, 3),
                "focus": focus or "",
            }, ""
        return None, {}, error

    async def _commit(self, session_id: int, g: Gathered, covers_through: int, summary: str, trigger: str,
                      stats: dict[str, Any], used_before: int) -> CompactionRecord:
        """Write the row with the pinned user instructions of everything it covers, and reset the breaker."""
        users = await self.engine.store.user_messages(session_id, through_id=covers_through)
        budget = self.engine.settings.pin_budget_tokens
        window = self.engine.catalog.info(g.model).window
        if window:
            budget = min(budget, int(window * PIN_FRACTION))
        pins = cp.pinned_instructions(users, budget)
        pins_text = cp.render_pins(pins)
        # Saved = what the covered messages cost in requests, less the summary and pins that replace them.
        covered = sum(tokens.estimate_message(m.content) for m in g.sendable if m.id <= covers_through)
        added = tokens.estimate_text(summary) + (tokens.estimate_text(pins_text) if pins_text else 0)
        if g.compaction is not None:
            added -= tokens.estimate_text(g.compaction.summary) + tokens.estimate_text(
                g.compaction.stats.get("pins_text") or "")
        saved = self.engine.calibration.apply(g.model, max(0, covered - added))
        full_stats = {**stats, "tokens_before": used_before, "tokens_saved": saved, "pins": len(pins),
                      "pins_text": pins_text}
        return await self.engine.store.add_compaction(
            session_id, summary, covers_through, trigger, full_stats,
            state_changes={"breaker_failures": 0} if trigger != "snip" else None,
        )

    async def _snip(self, session_id: int, g: Gathered, target: int, used_before: int) -> Outcome:
        """Drop the oldest groups after the boundary until the request fits; the previous summary stays."""
        engine = self.engine
        # Real tokens = what is not messages (system, summary, pins: fixed) + the calibrated message estimate.
        factor = engine.calibration.factor(g.model) or 1.0
        cache = tokens.MessageEstimateCache(engine.catalog.info(g.model).family)
        fixed = max(0, used_before - int(factor * cache.total(g.sendable)))

        def estimate(msgs: list[Any]) -> int:
            return fixed + int(factor * cache.total(msgs))

        kept, dropped = cp.snip_to_fit(g.sendable, target, estimate)
        if not dropped:
            return Outcome(False, "Nothing could be dropped: only the latest exchange is left.")
        previous = g.compaction.summary.strip() if g.compaction else ""
        note = (f"[{len(dropped)} earlier messages were removed from the context without a summary, "
                "to keep the conversation going. They are still in the transcript.]")
        summary = f"{previous}\n\n{note}" if previous else note
        record = await self._commit(session_id, g, dropped[-1].id, summary, "snip",
                                    {"messages": len(dropped), "snipped": True}, used_before)
        engine.emit(CompactionChanged(session_id, "snip"))
        await engine.publish_context(session_id)
        return Outcome(True, f"Dropped {len(dropped)} oldest messages from the context (no summary available).",
                       record)

    # --- background preparation -----------------------------------------------------------------------
    def maybe_prepare(self, session_id: int, g: Gathered, used: int) -> None:
        """Past the prepare mark, summarise in the background so the next send does not wait."""
        budget = self.budget(g.model)
        if not budget or used < self.engine.settings.prepare_ratio * budget:
            return
        if int(g.state.get("breaker_failures", 0)) >= BREAKER_LIMIT or session_id in self._background:
            return
        boundary = g.compaction.id if g.compaction else 0
        ready = self._prepared.get(session_id)
        if ready and ready.boundary == boundary:
            return
        task = asyncio.ensure_future(self._prepare(session_id, g, boundary))
        self._background[session_id] = task
        task.add_done_callback(lambda _t: self._background.pop(session_id, None))

    async def _prepare(self, session_id: int, g: Gathered, boundary: int) -> None:
        head, _tail = self.split(g)
        if not head:
            return
        summary, stats, _error = await self._summarise(g, head, None)
        if summary is not None:
            self._prepared[session_id] = Prepared(boundary, head[-1].id, summary, stats)

    async def wait_background(self, session_id: int) -> None:
        task = self._background.get(session_id)
        if task is not None:
            self.engine.emit(StatusChanged(session_id, "Finishing the summary…"))
            await asyncio.gather(task, return_exceptions=True)

    def has_prepared(self, session_id: int) -> bool:
        return session_id in self._prepared

    def cancel_background(self, session_id: int, keep_prepared: bool = False) -> None:
        task = self._background.pop(session_id, None)
        if task is not None and not keep_prepared:
            task.cancel()
        if not keep_prepared:
            self._prepared.pop(session_id, None)

    def cancel_others(self, session_id: int | None) -> None:
        for sid in list(self._background):
            if sid != session_id:
                self.cancel_background(sid)

    async def close(self) -> None:
        tasks = list(self._background.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
