"""The executor: the one part of compaction that carries a decision out, and the only one that writes.

It asks the summary maker for a summary (the route the planner chose), stores what the summary's requests cost
(``add_spend``), writes the compaction row with the pins and the ledger of everything it covers
(``add_compaction``), counts the breaker's failures and trims (``update_state``) and hands the session view each
change (``compacted``, ``state_changed``, ``spent``), so the state after it is derived without reading the
session again. Every path (auto, manual, background, reactive) goes through ``compact`` and returns an
``Outcome``; the engine words it and emits the events. Originals are never deleted: a compaction is a row saying
"the summary replaces, in requests, every message with id <= covers_through_message_id".
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, cast

from msgspec import Struct, field

from desktop.engine import compaction as cp
from desktop.engine import messages as M
from desktop.engine.compaction import hooks
from desktop.engine.compaction.chat_state import ChatCompaction, Prepared
from desktop.engine.compaction.planner import MIN_SAVING, NOTHING_BEFORE, NOTHING_YET, Trigger
from desktop.engine.compaction.policy import Policy
from desktop.engine.compaction.summary_maker import REJECTED_KEPT, Spent, SummaryMaker
from desktop.engine.config.catalog import MILLION
from desktop.engine.events import NoticeLevel
from desktop.engine.history.storage import StorageError
from desktop.engine.metering import tokens
from desktop.engine.turn.session import BREAKER_LIMIT, Gathered, SessionView
from desktop.engine.types import CompactionRecord, MessagesRequest, StoredMessage

if TYPE_CHECKING:
    from desktop.engine.compaction import ledger as ledgers
else:  # a summary's building blocks run with the first summary, not with a chat's first measurement (the gauge)
    from desktop.engine.lazy_imports import deferred

    ledgers = deferred("desktop.engine.compaction.ledger")

log = logging.getLogger(__name__)

NOT_SMALLER = M.say(M.NOT_SMALLER)
SPEND_KIND = "compaction"  # what the requests a summary makes are stored as (the session's cost counts them)


class Outcome(Struct):
    """What a compaction did, for the engine to word and publish."""

    ok: bool
    message: str
    record: CompactionRecord | None = None
    before: int = 0  # tokens the request carried before
    after: int = 0  # ... and after (the same measure)
    notices: list[tuple[str, NoticeLevel]] = field(
        default_factory=list
    )  # (text, level) to tell the user once
    g: Gathered | None = None  # the session after the compaction, derived without reading it again
    failure: Failure | None = None  # a summary asked for that failed or was refused: the card shows it

    @property
    def saved(self) -> int:
        return max(0, self.before - self.after)


class Failure(Struct, frozen=True):
    """Why a summary asked for failed and what the model wrote instead (bounded), for the card and Retry."""

    reason: str
    rejected: str = ""


class Executor:
    """Carries out what ``policy`` decides and its planner cuts, summarising with ``maker``."""

    def __init__(self, policy: Policy, maker: SummaryMaker):
        self.policy = policy
        self.planner = policy.planner
        self.costs = policy.costs
        self.limits = policy.limits
        self.shared = policy.shared
        self.maker = maker
        self._telling: set[asyncio.Future[str | None]] = (
            set()
        )  # post hooks still running (kept from collection)

    # --- the one compaction function ------------------------------------------------------------------
    async def compact(
        self,
        view: SessionView,
        g: Gathered,
        trigger: Trigger,
        *,
        focus: str | None = None,
        target: int | None = None,
        level: int = 0,
        before_message: int | None = None,
        chat: ChatCompaction | None = None,
    ) -> Outcome:
        """Summarise (or, failing that for automatic paths, snip) and write the boundary. ``level`` asks for a
        deeper cut (a reactive retry that must not resend what already failed); ``before_message`` summarises
        only what comes before that message ("Summarise up to here")."""
        before, _source = view.used(g)
        chat = ChatCompaction() if chat is None else chat
        prepared, chat.prepared = chat.prepared, None
        breaker = g.breaker_failures
        if trigger == "manual" and breaker:  # the user asks for a summary: the breaker starts again
            breaker = 0
            view.state_changed(await self.shared.store.update_state(view.session_id, {"breaker_failures": 0}))
        if prepared is not None and trigger != "manual":
            done = await self._use_prepared(view, g, prepared, before, target)
            if done is not None:
                return done
        plan = self.planner.plan(g, trigger, level=level, before_message=before_message, before=before)
        head, level = list(plan.head), plan.level
        if plan.refusal == NOTHING_BEFORE:
            return Outcome(False, NOTHING_BEFORE, before=before, after=before)
        if not head:
            if trigger in ("auto", "reactive") and target is not None:
                return await self._snip(view, g, target, before)
            return Outcome(False, NOTHING_YET, before=before, after=before)
        if trigger != "manual" and self.policy.trims_instead(g):
            return await self.trim(view, g, target, before)
        verdict = await self._ask_hook(view, g, trigger, head, focus, before)
        if verdict.blocked:
            return Outcome(False, verdict.note or "", before=before, after=before)
        heard: list[tuple[str, NoticeLevel]] = [(verdict.note, "warning")] if verdict.note else []
        summary, stats, error = await self._summarise(
            view,
            g,
            head,
            verdict.focus_with(focus),
            **self.planner.route_facts(view, g, head, trigger, level, before),
        )
        if summary is None:
            outcome = await self._failed(view, g, trigger, error, stats, breaker + 1, before, target)
        else:
            outcome = await self._commit_summary(
                view, g, trigger, head, summary, stats, breaker, before, target
            )
        outcome.notices[:0] = heard
        return outcome

    async def _use_prepared(
        self, view: SessionView, g: Gathered, prepared: Prepared, before: int, target: int | None
    ) -> Outcome | None:
        """Commit the summary made in the background, when it was made on this boundary and still pays; None:
        summarise afresh."""
        if prepared.boundary != g.boundary:
            return None
        if self.policy.fresh_pays(g, prepared.covers_through, before, warm=self.costs.warm(view, g)):
            # Prepared turns ago, it leaves those turns in the prompt: a summary of today's head costs less.
            log.info(
                "session %s: the prepared summary is older than it pays to commit; summarising afresh",
                view.session_id,
            )
            return None
        # Made on an older state, it may cover little of the context now: then a fresh, deeper one pays.
        record = await self._commit(
            view,
            g,
            prepared.covers_through,
            prepared.summary,
            "background",
            {**prepared.stats, "prepared": True, **self.policy.why(g)},
            before,
            min_saving=int(MIN_SAVING * before),
        )
        return None if record is None else await self._after(view, record, before, target)

    async def _failed(
        self,
        view: SessionView,
        g: Gathered,
        trigger: Trigger,
        error: str,
        stats: dict[str, Any],
        failures: int,
        before: int,
        target: int | None,
    ) -> Outcome:
        """A summary that could not be had: the breaker counts it; an automatic compaction trims instead."""
        # Said once per model: a run of the same warning at every turn tells the user nothing more.
        said = g.state.get("summaries_failing") == g.model
        view.state_changed(
            await self.shared.store.update_state(
                view.session_id,
                {"breaker_failures": failures, "breaker_trims": 0, "summaries_failing": g.model},
            )
        )
        note: str = M.say(M.SUMMARY_FAILED, error=error)
        log.warning("session %s: %s", view.session_id, note)
        rejected = str(stats.get("rejected_summary") or "")
        if trigger != "manual":
            outcome = await self.trim(view, g, target, before, reason=error, rejected=rejected)
            if not said:
                outcome.notices.insert(
                    0, (M.join(note, M.say(M.SUMMARIES_FAILING, model=g.model)), "warning")
                )
            return outcome
        if failures >= BREAKER_LIMIT:
            note = M.join(note, M.say(M.BREAKER_OPEN))
        return Outcome(False, note, before=before, after=before, failure=Failure(error, rejected))

    async def _commit_summary(
        self,
        view: SessionView,
        g: Gathered,
        trigger: Trigger,
        head: list[StoredMessage],
        summary: str,
        stats: dict[str, Any],
        breaker: int,
        before: int,
        target: int | None,
    ) -> Outcome:
        """Write the summary's boundary (a summary that does not shrink the context is a failed one too) and
        tell the post hook."""
        record = await self._commit(
            view, g, head[-1].id, summary, trigger, {**stats, **self.policy.why(g)}, before
        )
        if record is None:
            view.state_changed(
                await self.shared.store.update_state(view.session_id, {"breaker_failures": breaker + 1})
            )
            log.warning("session %s: %s", view.session_id, NOT_SMALLER)
            manual = trigger == "manual"
            return Outcome(
                False,
                NOT_SMALLER,
                before=before,
                after=before,
                notices=[] if manual else [(NOT_SMALLER, "info")],
                failure=Failure(NOT_SMALLER, summary[:REJECTED_KEPT]) if manual else None,
            )
        outcome = await self._after(view, record, before, target)
        self._tell_hook(view, g, trigger, head, record, outcome)
        return outcome

    # --- the user's hooks (compaction/hooks.py): asked before a summary, told after it ------------------------
    async def _ask_hook(
        self,
        view: SessionView,
        g: Gathered,
        trigger: Trigger,
        head: list[StoredMessage],
        focus: str | None,
        before: int,
    ) -> hooks.PreVerdict:
        return await hooks.pre_compact(
            self.shared.compaction_hooks,
            hooks.PreCompact(
                session_id=view.session_id,
                trigger=trigger,
                model=g.model,
                tokens_before=before,
                messages=len(head),
                focus=focus,
                workspace=g.state.get("workspace") or None,
            ),
        )

    def _tell_hook(
        self,
        view: SessionView,
        g: Gathered,
        trigger: Trigger,
        head: list[StoredMessage],
        record: CompactionRecord,
        outcome: Outcome,
    ) -> None:
        """The post hook hears of the summary in the background: however slow it is, the chat goes on."""
        event = hooks.PostCompact(
            session_id=view.session_id,
            trigger=trigger,
            model=g.model,
            summary=record.summary,
            covers_through_message_id=record.covers_through_message_id,
            messages_summarised=len(head),
            tokens_before=outcome.before,
            tokens_after=outcome.after,
            cut=hooks.cut_of(head),
            workspace=g.state.get("workspace") or None,
        )
        task = asyncio.ensure_future(hooks.post_compact(self.shared.compaction_hooks, event))
        self._telling.add(task)
        task.add_done_callback(self._telling.discard)

    async def _after(
        self, view: SessionView, record: CompactionRecord, before: int, target: int | None
    ) -> Outcome:
        """Budget recomputed after every compaction; snip further only if the target is still not met."""
        g = view.shape()
        after, _source = view.used(g)
        if target is not None and after > target:
            snipped = await self._snip(view, g, target, after)
            if snipped.ok and snipped.g is not None:
                g, after = snipped.g, snipped.after
        count, saved = (
            int(record.stats.get("messages", 0)),
            int(record.stats.get("tokens_saved", max(0, before - after))),
        )
        msg = (
            M.say(M.COMPACTED_ONE, saved=saved)
            if count == 1
            else M.say(M.COMPACTED, messages=count, saved=saved)
        )
        return Outcome(True, msg, record, before, after, g=g)

    # --- the summary ----------------------------------------------------------------------------------
    async def _summarise(
        self,
        view: SessionView | None,
        g: Gathered,
        head: list[StoredMessage],
        focus: str | None,
        *,
        cached: MessagesRequest | None = None,
        tail_start: str | None = None,
        used: int = 0,
        warm: bool = False,
    ) -> tuple[str | None, dict[str, Any], str]:
        """One summary of ``head`` on top of the active one, the cheaper way by the estimate (see
        Planner.choice). Every request it made is the chat's spend, stored whatever came of it (a refused summary
        was paid for too)."""
        spent: Spent = []
        try:
            return await self.maker.make(
                head,
                g.compaction.summary if g.compaction else None,
                focus,
                chat_model=g.model,
                choice=self.planner.choice(g, head, cached=cached, used=used, warm=warm),
                out_cap=self.costs.summary_reply_cap(g.model, g),
                cached=cached,
                tail_start=tail_start,
                spent=spent,
            )
        finally:
            if spent:
                await self._spend(view, g.session.id, spent)

    async def _spend(self, view: SessionView | None, session_id: int, spent: Spent) -> None:
        try:
            await self.shared.store.add_spend(session_id, SPEND_KIND, spent)
        except StorageError as exc:  # a read-only command or a full disk: the summary itself goes on
            log.warning("session %s: what its summary cost was not stored: %s", session_id, exc)
            return
        if view is not None:
            view.spent(spent)

    # --- writing the boundary -------------------------------------------------------------------------
    async def _commit(
        self,
        view: SessionView,
        g: Gathered,
        covers_through: int,
        summary: str,
        trigger: str,
        stats: dict[str, Any],
        before: int,
        min_saving: int = 0,
    ) -> CompactionRecord | None:
        """Write the row with the pinned user instructions of everything it covers, and reset the breaker.
        A compaction whose summary and pins are not smaller than what they replace, or that saves under
        ``min_saving`` tokens, is not written (None)."""
        shared, costs = self.shared, self.costs
        users = await shared.store.user_messages(view.session_id, through_id=covers_through)
        pins = cp.pinned_instructions(users, self.limits.pin_room(g.model))
        pins_text = cp.render_pins(pins)
        # The artifact ledger of everything covered so far (the previous one folded in), sent with the pins.
        previous = g.compaction.stats.get("ledger") if g.compaction is not None else None
        ledger = ledgers.build([m for m in g.history if m.id <= covers_through], previous)
        # Pins and ledger share the pin room: the ledger keeps its newest entries within what the pins leave, and
        # at least a quarter of it (a file list the user's long texts crowd out is what a summary forgets).
        room = self.limits.pin_room(g.model)
        # ... unless the cost model has the summary give way (see summary_room): then the ledger keeps its floor,
        # the room the pins leave is not free either (every token of it is read by every turn).
        short = costs.summary_reply_cap(g.model, g) < costs.summary_reply_cap(g.model)
        ledger_room = room // 4 if short else max(room // 4, room - tokens.estimate_text(pins_text))
        ledger_text = ledgers.render(ledger, ledger_room)
        # The files read or edited last, fresh from disk now (fixed in this record, so the cached prefix holds).
        snapshots = shared.file_snapshots
        files_text = (
            snapshots(view.session_id, ledgers.recent_files(ledger))
            if snapshots and ledgers.recent_files(ledger)
            else ""
        )
        for extra in (ledger_text, files_text):
            if extra:
                pins_text = f"{pins_text}\n\n{extra}" if pins_text else extra
        # Saved = what the covered messages cost in requests, less the summary and pins that replace them.
        covered, added = costs.replaced(g, covers_through), costs.added(g, summary, pins_text)
        if covered <= added:
            return None
        saved = shared.calibration.apply(g.model, covered - added)
        if saved < min_saving:
            return None
        price = shared.catalog.info(g.model).cache_read_price
        if price is not None:  # every later warm request reads this many tokens less
            stats = {**stats, "saving_per_turn": round(saved * price / MILLION, 6)}
        full_stats = {
            **stats,
            "tokens_before": before,
            "tokens_saved": saved,
            "pins": len(pins),
            "pins_text": pins_text,
            "ledger": ledger,
        }
        changes = (
            {"breaker_failures": 0, "breaker_trims": 0, "summaries_failing": None}
            if trigger != "snip"
            else None
        )
        record = await shared.store.add_compaction(
            view.session_id,
            summary,
            covers_through,
            trigger,
            full_stats,
            expected_active=g.boundary,
            state_changes=changes,
        )
        view.compacted(record, changes)
        return record

    # --- without a summary ----------------------------------------------------------------------------
    async def trim(
        self,
        view: SessionView,
        g: Gathered,
        target: int | None,
        before: int,
        reason: str = "",
        rejected: str = "",
    ) -> Outcome:
        """Drop the oldest messages down to the low-water mark (see policy.LOW_WATER), counting the trims the
        breaker waits out before it retries a summary."""
        outcome = await self._snip(view, g, self.policy.low_water(g, target), before, reason, rejected)
        if outcome.ok and g.breaker_open:
            trims = int(g.state.get("breaker_trims", 0)) + 1
            view.state_changed(
                await self.shared.store.update_state(view.session_id, {"breaker_trims": trims})
            )
            if outcome.g is not None:
                outcome.g = view.shape()
        return outcome

    async def _snip(
        self, view: SessionView, g: Gathered, target: int, before: int, reason: str = "", rejected: str = ""
    ) -> Outcome:
        """Drop the oldest groups after the boundary until the request fits; the previous summary stays.
        ``reason`` and ``rejected``: why a summary failed and what the model wrote, kept for the card."""
        shared = self.shared
        # Real tokens = what is not messages (system, summary, pins: fixed) + the calibrated message estimate.
        factor = shared.calibration.factor(g.model) or 1.0
        cache = tokens.MessageEstimateCache(shared.catalog.info(g.model).family)
        fixed = max(0, before - int(factor * cache.total(g.sendable)))

        def estimate(msgs: list[Any]) -> int:
            return fixed + int(factor * cache.total(msgs))

        _kept, snipped = cp.snip_to_fit(g.sendable, target, estimate)
        dropped = cast(list[StoredMessage], snipped)  # stored rows in, stored rows out
        if not dropped:
            return Outcome(False, M.say(M.NOTHING_TO_DROP), before=before, after=before)
        summary = cp.trimmed_summary(g.compaction.summary if g.compaction else "", len(dropped))
        record = await self._commit(
            view,
            g,
            dropped[-1].id,
            summary,
            "snip",
            {
                "messages": len(dropped),
                "snipped": True,
                "summary_error": reason,
                "rejected_summary": rejected,
            },
            before,
        )
        if record is None:
            return Outcome(False, NOT_SMALLER, before=before, after=before)
        after_g = view.shape()
        after, _source = view.used(after_g)
        return Outcome(
            True,
            M.say(M.DROPPED_OLDEST_ONE) if len(dropped) == 1 else M.say(M.DROPPED_OLDEST, count=len(dropped)),
            record,
            before,
            after,
            g=after_g,
        )

    # --- background preparation -----------------------------------------------------------------------
    async def prepare(self, g: Gathered, view: SessionView, chat: ChatCompaction) -> None:
        """Summarise in the background; the summary waits in ``chat`` for the request that needs it."""
        head, _tail = self.planner.split(g)
        if not head:
            return
        used = view.used(g)[0]
        verdict = await self._ask_hook(view, g, "background", head, None, used)
        if verdict.blocked:
            return
        facts = self.planner.route_facts(view, g, head, "background", 0, used)
        summary, stats, error = await self._summarise(view, g, head, verdict.focus_with(None), **facts)
        if summary is not None:
            chat.prepared = Prepared(g.boundary, head[-1].id, summary, stats)
            return
        # A failed summary is a failed summary, made ahead or not: the breaker counts it, and no other is made
        # in the background until one succeeds (a failing summariser was asked again after every turn).
        log.warning("session %s: the summary prepared in the background failed: %s", view.session_id, error)
        view.state_changed(
            await self.shared.store.update_state(
                view.session_id, {"breaker_failures": g.breaker_failures + 1}
            )
        )  # the views hear it with the next

    async def prepare_idle(self, view: SessionView, g: Gathered, chat: ChatCompaction) -> None:
        await self.prepare(g, view, chat)
        if chat.prepared is not None:
            chat.prepared.idle = True
