"""Staged compaction as one object the engine uses: given a session view and its gathered state, decide and do;
emit nothing.

Before every request the conversation asks ``plan_micro`` (clear old results) and ``before_call`` (a
``Decision``: nothing, count exactly first, summarise, or use the summary prepared while the cache was warm);
after a turn, ``prepare_soon`` (summarise in the background); after a "too long", ``recovery_target``. The
conversation carries the decision out through ``compact`` (or ``trim``) and tells the views.

Cheap stages first and only when needed: huge content is capped at ingest (request copies only), old tool
results are cleared and old long texts truncated in horizon batches (microcompaction), an LLM summary of
everything before a verbatim tail comes next, and snipping the oldest groups is the last resort so the user can
always keep chatting. Originals are never deleted: a compaction is a row saying "the summary replaces, in
requests, every message with id <= covers_through_message_id". Every path (auto, manual, background,
reactive) goes through ``Compactor.compact``; the engine runs it, words its Outcome and emits the events.

``Compactor`` is the composition of its parts, each with one concern, each importing only those before it:

- ``limits``: the marks (input room, threshold and its rule, the user's threshold, hard limit, prepare mark, pin
  room);
- ``cost_model``: what each route costs and saves, when the next summary is due, whether the cache is warm;
- ``planner``: what a compaction cuts, what the verbatim tail keeps, what is pinned (``Plan``);
- ``policy``: state in, decision out, no I/O (``Step``, ``Decision``);
- ``executor``: carries the decision out, the only writer of the store and the view (``Outcome``, ``Failure``).

The per-chat state (the prepared summary, the reasons already told) is the chat's: ``chat_state``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from desktop.engine.compaction.chat_state import ChatCompaction, Prepared
from desktop.engine.compaction.cost_model import KEEP_ROUNDS, WARM_GAIN, CostModel
from desktop.engine.compaction.executor import NOT_SMALLER, SPEND_KIND, Executor, Failure, Outcome
from desktop.engine.compaction.limits import DEFAULT_COMPACT_RATIO, DEFER_RATIO, PIN_FRACTION, Limits
from desktop.engine.compaction.planner import (
    CLEAN_FRACTION,
    DEEPEST_LEVEL,
    MIN_SAVING,
    MIN_TAIL,
    NOTHING_BEFORE,
    NOTHING_YET,
    TAIL_FRACTION,
    Plan,
    Planner,
    Trigger,
)
from desktop.engine.compaction.policy import (
    BREAKER_RETRY_TRIMS,
    EARLY_FLOOR,
    FILLED_WINDOW_SHRINK,
    LOW_WATER,
    MICRO_RATIO,
    NEAR_THRESHOLD,
    RECOVERY_FRACTION,
    Decision,
    Policy,
    Step,
)
from desktop.engine.compaction.summary_maker import Summariser, SummaryMaker
from desktop.engine.turn.session import Gathered, Shared

__all__ = [
    "BREAKER_RETRY_TRIMS",
    "CLEAN_FRACTION",
    "DEEPEST_LEVEL",
    "DEFAULT_COMPACT_RATIO",
    "DEFER_RATIO",
    "EARLY_FLOOR",
    "FILLED_WINDOW_SHRINK",
    "KEEP_ROUNDS",
    "LOW_WATER",
    "MICRO_RATIO",
    "MIN_SAVING",
    "MIN_TAIL",
    "NEAR_THRESHOLD",
    "NOTHING_BEFORE",
    "NOTHING_YET",
    "NOT_SMALLER",
    "PIN_FRACTION",
    "RECOVERY_FRACTION",
    "SPEND_KIND",
    "TAIL_FRACTION",
    "WARM_GAIN",
    "ChatCompaction",
    "Compactor",
    "CostModel",
    "Decision",
    "Executor",
    "Failure",
    "Limits",
    "Outcome",
    "Plan",
    "Planner",
    "Policy",
    "Prepared",
    "Step",
    "Trigger",
]

log = logging.getLogger(__name__)


class Compactor:
    """One provider profile's compaction: its parts, and each part's public methods as its own."""

    def __init__(self, shared: Shared, summariser: Callable[[], Summariser]):
        self.shared = shared
        self.limits = Limits(shared)
        self.costs = CostModel(self.limits)
        self.planner = Planner(self.costs)
        self.policy = Policy(self.planner)
        self.executor = Executor(self.policy, SummaryMaker(shared, summariser))
        self.maker = self.executor.maker
        # The marks.
        limits = self.limits
        self.budget = limits.budget
        self.threshold = limits.threshold
        self.threshold_rule = limits.threshold_rule
        self.user_threshold = limits.user_threshold
        self.hard_limit = limits.hard_limit
        self.prepare_mark = limits.prepare_mark
        self.pin_room = limits.pin_room
        # The cost model.
        costs = self.costs
        self.rates = costs.rates
        self.growth = costs.growth
        self.turns_so_far = costs.turns_so_far
        self.after_size = costs.after_size
        self.freed = costs.freed
        self._saving = costs.saving
        self.summary_cost = costs.summary_cost
        self.summary_reply_cap = costs.summary_reply_cap
        self.summary_room = costs.summary_room
        self.expected_summary = costs.expected_summary
        self.verdict = costs.verdict
        self.due_at = costs.due_at
        self.cache_lifetime = costs.cache_lifetime
        self.warm = costs.warm
        self.idle_for = costs.idle_for
        # The planner.
        planner = self.planner
        self.split = planner.split
        self.tail_cap = planner.tail_cap
        self.plan = planner.plan
        # The policy (before_call below).
        policy = self.policy
        self.summary_target = policy.summary_target
        self.low_water = policy.low_water
        self.recovery_target = policy.recovery_target
        self.refusal = policy.refusal
        self.trims_instead = policy.trims_instead
        self.plan_micro = policy.plan_micro
        self.warm_batch = policy.warm_batch
        self.needs_summary = policy.needs_summary
        self._due = policy._due
        self.fresh_pays = policy.fresh_pays
        self.prepare_soon = policy.prepare_soon
        self.wants_prepare = policy.wants_prepare
        self.idle_summary_pays = policy.idle_summary_pays
        self.idle_ready = policy.idle_ready
        # The executor.
        executor = self.executor
        self.compact = executor.compact
        self.trim = executor.trim
        self.prepare = executor.prepare
        self.prepare_idle = executor.prepare_idle

    @property
    def clock(self) -> Callable[[], float]:
        """The engine's clock (injectable): the cost model's, which tells a warm cache and the idle time."""
        return self.costs.clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        self.costs.clock = clock

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
        """The policy's next step before a request (see Policy.before_call); the schedule's reason, the first
        time a boundary has it, goes to the log."""
        decision = self.policy.before_call(g, used, source, idle, cleared=cleared, chat=chat)
        if decision.reason is not None:
            log.info("session %s: %s", g.session.id, decision.reason)
        return decision
