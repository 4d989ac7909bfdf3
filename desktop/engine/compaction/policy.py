"""The compaction policy: the gathered state of a session in, a decision out; no I/O, no awaits.

Before every request the conversation asks ``before_call`` (a ``Decision``: nothing, clear old results, count
exactly first, summarise, trim, or use the summary prepared while the cache was warm; with the reason a due
summary waits); after a turn, ``prepare_soon`` (summarise in the background); when the cache is about to expire,
``idle_summary_pays``; after a "too long", ``recovery_target``. ``refusal`` is the one rule for whether Compact now
would compact. The numbers come from the cost model and the cuts from the planner; the executor carries the
decision out.

What a decision remembers it keeps with the state it was given: the schedule's verdict in ``g.memo`` (the row a
summary made now keeps it, see ``why``) and, per chat, the reasons already told (``ChatCompaction.told``).
"""

from __future__ import annotations

import enum
from typing import Any

from msgspec import Struct

from desktop.engine import compaction as cp
from desktop.engine.compaction import schedule
from desktop.engine.compaction import summary_route as route
from desktop.engine.compaction.chat_state import ChatCompaction
from desktop.engine.compaction.limits import DEFER_RATIO
from desktop.engine.compaction.planner import MIN_SAVING, NOTHING_YET, Planner, Trigger
from desktop.engine.compaction.summary_maker import SUMMARY_MAX_TOKENS
from desktop.engine.metering import cache_clock
from desktop.engine.providers import overflow
from desktop.engine.turn.session import CACHE_TTL, Gathered, SessionView

MICRO_RATIO = 0.5  # microcompaction starts at this share of the budget
NEAR_THRESHOLD = 0.03  # ask count_tokens when the estimate is this close to a threshold
FILLED_WINDOW_SHRINK = 0.8  # after the window filled up, the next request is at most this share of that one
EARLY_FLOOR = 0.25  # below this share of the budget a chat is kept whole, however much a summary would save
RECOVERY_FRACTION = (
    0.5  # reactive compaction rebuilds the request within this share of the window (first try)
)
# Without a summary (it failed, or the breaker is open) a trim goes down to this share of the threshold: the
# requests of the next turns then grow on one cached prefix, where trimming just under the threshold re-wrote
# the whole prompt at every turn.
LOW_WATER = 0.5
BREAKER_RETRY_TRIMS = 2  # trims while the breaker is open before one summary is tried again


class Step(enum.StrEnum):
    """What to do before a request."""

    NOTHING = "nothing"
    CLEAR = "clear"  # clear old tool results and truncate old long texts (new microcompaction horizons)
    COUNT = "count"  # the estimate is too close to the threshold to decide: ask the provider for the count
    SUMMARISE = "summarise"  # past the threshold: an automatic summary (or a trim when it cannot be made)
    TRIM = "trim"  # past the threshold with summaries failing (the breaker open): drop the oldest messages
    USE_PREPARED = "use_prepared"  # the cache went cold: commit the summary prepared while it was warm


class Decision(Struct, frozen=True):
    step: Step
    trigger: Trigger | None = None
    target: int | None = None  # tokens the compaction must bring the request under (None: no target)
    horizons: dict[str, int] | None = None  # CLEAR: the new microcompaction horizons
    note: str | None = (
        None  # why a due summary waits (it does not pay yet), said once per boundary and reason
    )
    # The schedule's reason (it pays, it waits, it is due), the first time this boundary has it: for the log.
    reason: str | None = None


class Policy:
    """The rules for one provider profile, on the planner's cuts and its cost model."""

    def __init__(self, planner: Planner):
        self.planner = planner
        self.costs = planner.costs
        self.limits = planner.limits
        self.shared = planner.shared

    # --- the targets ----------------------------------------------------------------------------------
    def summary_target(self, g: Gathered) -> int | None:
        """What an automatic summary must bring the request under: the input room, and after a reply the
        provider stopped because the window filled up, less than the request that filled it (that request
        plus the reply it got would otherwise be sent back larger)."""
        budget = self.limits.budget(g.model)
        last = next((m for m in reversed(g.history) if m.role == "assistant"), None)
        if (
            last is None
            or last.usage is None
            or not last.usage.prompt_tokens
            or overflow.detect_stop_reason(last.meta.get("stop_reason")) is None
        ):
            return budget
        cap = max(1, int(last.usage.prompt_tokens * FILLED_WINDOW_SHRINK))
        return min(budget, cap) if budget else cap

    def low_water(self, g: Gathered, target: int | None = None) -> int:
        """What a trim without a summary brings the request under: LOW_WATER of the threshold (and under
        ``target`` when that is lower)."""
        mark = int(LOW_WATER * (self.limits.threshold(g.model) or self._fit_target(g)))
        return min(mark, target) if target is not None else mark

    def _fit_target(self, g: Gathered) -> int:
        budget = self.limits.budget(g.model) or 200_000
        return int(budget * 0.9)

    @staticmethod
    def recovery_target(window: int | None, level: int) -> int | None:
        """The size a reactive compaction aims for: harder at each level (a smaller target, a deeper cut)."""
        return int(window * RECOVERY_FRACTION / (1 + level)) if window else None

    def refusal(self, g: Gathered) -> str | None:
        """Why Compact now would do nothing (None: it would compact). The button and compact() both ask this."""
        head, _tail = self.planner.split(g)
        return None if head else NOTHING_YET

    @staticmethod
    def trims_instead(g: Gathered) -> bool:
        """The breaker is open and no retry is due: an automatic compaction trims without asking for a summary.
        After BREAKER_RETRY_TRIMS trims one summary is tried again (a model that recovered closes the breaker)."""
        return g.breaker_open and int(g.state.get("breaker_trims", 0)) < BREAKER_RETRY_TRIMS

    # --- microcompaction ------------------------------------------------------------------------------
    def plan_micro(self, g: Gathered, used: int, idle: float | None) -> dict[str, int] | None:
        """New microcompaction horizons when the context is past MICRO_RATIO of the budget (None: keep them).

        Clearing edits blocks deep in the prompt, so the next request re-writes the cache from there (1.25x
        instead of 0.1x for everything after the edit). While the cache is warm that is worth it only for a
        batch that saves WARM_GAIN of the prompt: small batches near the threshold, one a turn, each re-wrote the
        whole prompt and cost more than the summary they put off. After a pause longer than the cache TTL the
        prefix must be re-written anyway, so any batch is taken.
        """
        budget = self.limits.budget(g.model)
        threshold = self.limits.threshold(g.model)
        # After a pause longer than the cache lifetime the prefix is re-written anyway: clearing old results
        # then costs nothing extra, whatever the share of the budget in use. A restart (idle unknown) is not
        # such a pause: nothing says the cache went cold.
        cold = idle is not None and idle > self.costs.cache_lifetime(g)
        if not budget or not threshold or (used < MICRO_RATIO * budget and not cold):
            return None
        window = self.shared.catalog.info(g.model).window
        cold = cold or idle is None
        factor = self.shared.calibration.factor(g.model) or 1.0
        floor = cp.min_clear_for(window)
        min_gain = floor if cold else max(floor, int(self.warm_batch(g, used) / factor))
        sendable = g.sendable
        h = g.horizons
        new = {
            "clear": cp.plan_clear(
                sendable,
                h.get("clear", 0),
                keep_recent=self.shared.settings.keep_tool_results,
                min_clear_tokens=min_gain,
            ),
            "old": cp.plan_truncate(
                sendable, h.get("old", 0), after=30, limit=1_000, min_gain_tokens=max(min_gain, 5_000)
            ),
            "recent": cp.plan_truncate(
                sendable, h.get("recent", 0), after=10, limit=5_000, min_gain_tokens=max(min_gain, 5_000)
            ),
        }
        return None if new == {k: h.get(k, 0) for k in new} else new

    def warm_batch(self, g: Gathered, used: int) -> int:
        """The smallest clearing batch that pays while the cache is warm, before a summary of today's head (see
        CostModel.warm_batch)."""
        head, _tail = self.planner.split(g)
        return self.costs.warm_batch(g, used, head)

    # --- the summary by the schedule (compaction.schedule) --------------------------------------------
    def needs_summary(self, g: Gathered, used: int, idle: float | None = None) -> bool:
        threshold = self.limits.threshold(g.model)
        if threshold is None:
            return False
        last = next((m for m in reversed(g.history) if m.role == "assistant"), None)
        if last is not None and overflow.detect_stop_reason(last.meta.get("stop_reason")) is not None:
            return True
        # Below the threshold a summary is made only when it already pays (a large window, where the reads of a
        # context kept growing up to the threshold cost more than summarising sooner); never at the user's own
        # threshold, nor as a trim.
        early = used < threshold
        if early and not self._may_pay_early(g, used):
            return False
        # A summary that frees little now (the context is mostly the verbatim tail) would be followed by another
        # one soon, or need a deeper cut through the newest tool results: while there is room, let the head grow.
        budget = self.limits.budget(g.model)
        if budget and used < DEFER_RATIO * budget:
            head, _tail = self.planner.split(g)
            if self.costs.saving(g, head) < MIN_SAVING * used:
                return False
        due, verdict = self._due(g, used, warm=idle is not None and idle < self.costs.cache_lifetime(g))
        if early:  # nothing is said while a summary below the threshold does not pay: none was due
            if due and verdict is not None:
                g.memo["schedule"] = verdict
            return due
        if verdict is not None:
            g.memo["schedule"] = verdict
        return due or not budget or used >= DEFER_RATIO * budget

    def _may_pay_early(self, g: Gathered, used: int) -> bool:
        """Whether a summary below the threshold could pay at all: not at the user's own threshold or as a trim,
        and only once the context is past the gap from which freeing all of it pays for the cheapest summary
        (its cached read and its reply), so a small context is never split to find out; and never below
        EARLY_FLOOR of the room: a chat that fills a small share of a large window is kept whole."""
        budget = self.limits.budget(g.model)
        if (
            self.limits.user_threshold(g.model)
            or self.trims_instead(g)
            or not budget
            or used < EARLY_FLOOR * budget
        ):
            return False
        rates = self.costs.rates(g.model)
        cheapest = rates.read * used + rates.output * self.costs.expected_summary(g)
        return used >= schedule.pays_gap(rates, cheapest, self.costs.growth(g))

    def _due(self, g: Gathered, used: int, *, warm: bool) -> tuple[bool, schedule.Verdict | None]:
        """Short of the hard limit, a summary is made when it pays (see compaction.schedule; below the threshold
        only once _may_pay_early); at the user's own threshold it is made there. The verdict, when one was made."""
        limits, costs = self.limits, self.costs
        hard = limits.hard_limit(g.model)
        if hard is None or limits.user_threshold(g.model):
            return hard is not None and used >= (limits.threshold(g.model) or hard), None
        if used >= hard:
            return True, schedule.Verdict(schedule.Why.DUE, used, used)
        if self.trims_instead(g):  # no summary request: the trim costs only the re-write of what it leaves
            after = self.low_water(g)
            verdict = schedule.summary_verdict(
                costs.rates(g.model),
                used=used,
                after=after,
                growth=costs.growth(g),
                cost=costs.rates(g.model).write * after if warm else 0.0,
                turns_left=costs.turns_so_far(g),
            )
            return verdict.pays, verdict
        head, _tail = self.planner.split(g)
        if not head:
            return False, None
        verdict = costs.verdict(g, used, head, warm=warm)
        return verdict.pays, verdict

    def fresh_pays(self, g: Gathered, covers_through: int, used: int, *, warm: bool) -> bool:
        """Whether a summary of today's head pays over the one prepared through ``covers_through`` (see
        CostModel.fresh_pays): then the prepared one is not committed."""
        head, _tail = self.planner.split(g)
        return self.costs.fresh_pays(g, head, covers_through, used, warm=warm)

    @staticmethod
    def why(g: Gathered) -> dict[str, Any]:
        """The schedule's reason for an automatic summary made now, for its row (the card shows it)."""
        verdict = g.memo.get("schedule")
        return {"schedule": verdict.stats()} if isinstance(verdict, schedule.Verdict) and verdict.pays else {}

    @staticmethod
    def _waited(g: Gathered, chat: ChatCompaction) -> schedule.Verdict | None:
        """The schedule's verdict the first time this boundary has its reason (noted in ``chat``); else None."""
        verdict = g.memo.get("schedule")
        if not isinstance(verdict, schedule.Verdict) or chat.told.get(g.boundary) == verdict.why:
            return None
        chat.told[g.boundary] = verdict.why
        return verdict

    def before_call(
        self,
        g: Gathered,
        used: int,
        source: str,
        idle: float | None,
        *,
        cleared: bool = False,
        chat: ChatCompaction | None = None,
    ) -> Decision:
        """The next step before a request whose context measures ``used`` (by ``source``; "estimate" near the
        threshold asks for the exact count first), ``idle`` seconds after the previous one. The conversation
        carries the step out and asks again; ``cleared``: old results were cleared for this request already.
        ``chat``: the chat's own compaction state (none: a chat with nothing prepared)."""
        chat = ChatCompaction() if chat is None else chat
        if not cleared and (horizons := self.plan_micro(g, used, idle)) is not None:
            return Decision(Step.CLEAR, horizons=horizons)
        threshold = self.limits.threshold(g.model)
        if threshold is None:
            return Decision(Step.NOTHING)
        if source == "estimate" and abs(used - threshold) <= NEAR_THRESHOLD * threshold:
            return Decision(Step.COUNT)
        known = g.memo.get("schedule")
        due = self.needs_summary(g, used, idle)
        told = self._waited(g, chat) if g.memo.get("schedule") is not known else None
        note = told.reason if told is not None and not told.pays else None
        reason = told.reason if told is not None else None
        if due:
            if self.trims_instead(g):
                return Decision(Step.TRIM, "auto", self.low_water(g), note=note, reason=reason)
            return Decision(Step.SUMMARISE, "auto", self.summary_target(g), note=note, reason=reason)
        if self.idle_ready(g, chat) and (idle or 0) > CACHE_TTL:
            # Prepared while the cache was warm; it is cold now, so the prompt is written again anyway. On the
            # hour cache too: only the stable prefix lives the hour, the tail the summary replaces does not.
            return Decision(Step.USE_PREPARED, "background", reason=reason)
        return Decision(Step.NOTHING, note=note, reason=reason)

    # --- background preparation -----------------------------------------------------------------------
    def prepare_soon(
        self, g: Gathered, used: int, growth: int | None, chat: ChatCompaction | None = None
    ) -> bool:
        """Past the prepare mark, summarise in the background so the next send does not wait; only when the
        context grows fast enough to need it at the next turn (an unused summary is a billed waste: made a turn
        earlier, it is a turn older at the commit, and at a small window that turn makes a fresh one pay). A
        summary that pays below the threshold (see _may_pay_early) is prepared the same way, below the mark."""
        threshold = self.limits.threshold(g.model)
        if threshold is None or growth is None:
            return False
        ahead = used + max(0, growth)
        early = ahead < threshold
        if early and not self._may_pay_early(g, ahead):
            return False
        # ... and only when the schedule would make it by then (a summary put off is not prepared early).
        return self.wants_prepare(g, used, early=early, chat=chat) and self._due(g, ahead, warm=True)[0]

    def wants_prepare(
        self, g: Gathered, used: int, *, early: bool = False, chat: ChatCompaction | None = None
    ) -> bool:
        """Past the prepare mark (or ``early``: before it, one that pays), a summary made in the background lets
        the next send go on without waiting."""
        mark = self.limits.prepare_mark(g.model)
        if g.breaker_failures or not (
            early or (mark and used >= mark)
        ):  # the last summary failed: none ahead
            return False
        if chat is not None and chat.prepared_on(g.boundary):
            return False
        head, _tail = self.planner.split(
            g
        )  # a summary that would wait (see needs_summary) is not made early either
        return self.costs.saving(g, head) >= MIN_SAVING * used

    def idle_summary_pays(self, view: SessionView, g: Gathered, chat: ChatCompaction) -> bool:
        """A long idle session whose cache is still warm: would a summary made now cost less than the prompt
        tokens it spares the next, cold, turn?"""
        used, _source = view.used(g)
        mark = self.limits.prepare_mark(g.model)
        if (
            not mark
            or used < mark
            or g.breaker_failures
            or not self.costs.warm(view)
            or chat.prepared_on(g.boundary)
        ):
            return False
        head, _tail = self.planner.split(g)
        if not head:
            return False
        info = self.shared.catalog.info(g.model)
        cost = route.cached_cost(info, used, SUMMARY_MAX_TOKENS // 4, warm=True)
        return cache_clock.summary_pays(info, saving_tokens=self.costs.saving(g, head), summary_cost=cost)

    @staticmethod
    def idle_ready(g: Gathered, chat: ChatCompaction) -> bool:
        ready = chat.prepared_on(g.boundary)
        return ready is not None and ready.idle
