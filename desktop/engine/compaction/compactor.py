"""Staged compaction as a policy: given a session view and its gathered state, decide and do; emit nothing.

Before every request the conversation asks ``plan_micro`` (clear old results) and ``before_call`` (a
``Decision``: nothing, count exactly first, summarise, or use the summary prepared while the cache was warm);
after a turn, ``prepare_soon`` (summarise in the background); after a "too long", ``recovery_target``. The rules
live here; the conversation carries the decision out and tells the views.

Cheap stages first and only when needed: huge content is capped at ingest (request copies only), old tool
results are cleared and old long texts truncated in horizon batches (microcompaction), an LLM summary of
everything before a verbatim tail comes next, and snipping the oldest groups is the last resort so the user can
always keep chatting. Originals are never deleted: a compaction is a row saying "the summary replaces, in
requests, every message with id <= covers_through_message_id". Every path (auto, manual, background,
reactive) goes through ``Compactor.compact``; the engine runs it, words its Outcome and emits the events.
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, cast

from msgspec import Struct, field

from desktop.engine import cache_clock, overflow, tokens
from desktop.engine import compaction as cp
from desktop.engine import messages as M
from desktop.engine.catalog import MILLION
from desktop.engine.compaction import schedule, user_pins
from desktop.engine.compaction import summary_route as route
from desktop.engine.compaction._shared import Message, is_plain_user
from desktop.engine.compaction.chat_state import ChatCompaction, Prepared
from desktop.engine.context import reserved_output
from desktop.engine.events import NoticeLevel
from desktop.engine.session import BREAKER_LIMIT, CACHE_TTL, LONG_CACHE_TTL, Gathered, SessionView, Shared
from desktop.engine.settings import Settings
from desktop.engine.storage import StorageError
from desktop.engine.summary_maker import (
    REJECTED_KEPT,
    SUMMARY_MAX_TOKENS,
    SUMMARY_MIN_TOKENS,
    Spent,
    Summariser,
    SummaryMaker,
    summary_cap,
)
from desktop.engine.threshold import PERCENT, Rule, override_for, rule
from desktop.engine.types import CompactionRecord, StoredMessage

if TYPE_CHECKING:
    from desktop.engine import steering
    from desktop.engine.compaction import ledger as ledgers
else:  # a summary's building blocks run with the first summary, not with a chat's first measurement (the gauge)
    from desktop.engine.lazy_imports import deferred

    steering, ledgers = map(deferred, ("desktop.engine.steering", "desktop.engine.compaction.ledger"))

log = logging.getLogger(__name__)

Trigger = Literal["auto", "manual", "reactive", "background"]

# The verbatim tail grows to this share of the window (at most 40K tokens); a cut at a typed user message may
# take it up to CLEAN_FRACTION, so whole exchanges stay together. Every token kept is read again by every later
# request: a smaller tail is the larger part of what a summary saves.
TAIL_FRACTION = 0.15
CLEAN_FRACTION = 0.3
PIN_FRACTION = 0.1  # pinned instructions take at most this share of the window (and at most the pin budget)
MICRO_RATIO = 0.5  # microcompaction starts at this share of the budget
WARM_GAIN = 0.25  # while the cache is warm, clear only in batches that save this share of the prompt
NEAR_THRESHOLD = 0.03  # ask count_tokens when the estimate is this close to a threshold
MIN_SAVING = 0.10  # an automatic summary must free at least this share of the context, or it is not committed
FILLED_WINDOW_SHRINK = 0.8  # after the window filled up, the next request is at most this share of that one
KEEP_ROUNDS = 10  # the newest tool calls a summary leaves verbatim (their rounds) while they fit CLEAN_FRACTION of the window
MIN_TAIL = 1_000  # the smallest verbatim tail the cost model asks for (the newest tool rounds are kept apart)
DEFER_RATIO = 0.8  # below this share of the budget an automatic summary that frees under MIN_SAVING waits
EARLY_FLOOR = 0.25  # below this share of the budget a chat is kept whole, however much a summary would save
DEEPEST_LEVEL = 3  # split levels tried for a deeper cut (each keeps at most half the previous tail)
RECOVERY_FRACTION = 0.5  # reactive compaction rebuilds the request within this share of the window (first try)
# Without a summary (it failed, or the breaker is open) a trim goes down to this share of the threshold: the
# requests of the next turns then grow on one cached prefix, where trimming just under the threshold re-wrote
# the whole prompt at every turn.
LOW_WATER = 0.5
BREAKER_RETRY_TRIMS = 2  # trims while the breaker is open before one summary is tried again
DEFAULT_COMPACT_RATIO = Settings().auto_compact_ratio  # a different ratio is the user's choice
NOTHING_YET = M.say(M.NOTHING_YET)
NOTHING_BEFORE = M.say(M.NOTHING_BEFORE)
NOT_SMALLER = M.say(M.NOT_SMALLER)
SPEND_KIND = "compaction"  # what the requests a summary makes are stored as (the session's cost counts them)


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
    note: str | None = None  # why a due summary waits (it does not pay yet), said once per boundary and reason


def _rows(messages: list[Message]) -> list[StoredMessage]:
    """The pure stages return the kind of message they were given: stored rows in, stored rows out."""
    return cast(list[StoredMessage], messages)


class Outcome(Struct):
    """What a compaction did, for the engine to word and publish."""

    ok: bool
    message: str
    record: CompactionRecord | None = None
    before: int = 0  # tokens the request carried before
    after: int = 0  # ... and after (the same measure)
    notices: list[tuple[str, NoticeLevel]] = field(default_factory=list)  # (text, level) to tell the user once
    g: Gathered | None = None  # the session after the compaction, derived without reading it again
    failure: Failure | None = None  # a summary asked for that failed or was refused: the card shows it

    @property
    def saved(self) -> int:
        return max(0, self.before - self.after)


class Failure(Struct, frozen=True):
    """Why a summary asked for failed and what the model wrote instead (bounded), for the card and Retry."""

    reason: str
    rejected: str = ""


class Plan(Struct, frozen=True):
    """What a compaction would do now: the preview shows it and ``compact`` carries it out (one rule for both)."""

    head: tuple[StoredMessage, ...] = ()  # summarised
    kept: tuple[int, ...] = ()  # ids that stay verbatim after it
    pinned: tuple[int, ...] = ()  # ids the user pinned that it covers: carried verbatim beside the summary
    level: int = 0  # the split level (a deeper cut for an automatic summary that would free little)
    refusal: str | None = None  # why it would do nothing
    before: int = 0  # tokens the request carries now (0: not measured)
    summarised: int = 0  # estimated tokens of the messages it summarises
    saving: int = 0  # tokens it takes off every later request, about (calibrated; see Compactor.freed)
    cost: float | None = None  # USD the summary request costs, about (None: unknown or not estimated)
    route: str = ""  # the way the summary would be asked for (empty: not estimated)
    verdict: schedule.Verdict | None = None  # whether it pays by cost, and when (None: not estimated)

    @property
    def covers_through(self) -> int:
        return self.head[-1].id if self.head else 0


class Compactor:
    def __init__(self, shared: Shared, summariser: Callable[[], Summariser]):
        self.shared = shared
        self.maker = SummaryMaker(shared, summariser)
        self.clock: Callable[[], float] = time.time  # the engine's clock (injectable)

    # --- policy numbers -------------------------------------------------------------------------------
    def budget(self, model: str) -> int | None:
        """Input room: the window (up to the model's first price cliff unless the user allows crossing it) less
        the output reserve."""
        window = self.shared.catalog.info(model).prompt_room(self.shared.settings.allow_price_tiers)
        if not window:
            return None
        return max(1, window - reserved_output(self.shared.settings.max_output_tokens, window))

    def summary_target(self, g: Gathered) -> int | None:
        """What an automatic summary must bring the request under: the input room, and after a reply the
        provider stopped because the window filled up, less than the request that filled it (that request
        plus the reply it got would otherwise be sent back larger)."""
        budget = self.budget(g.model)
        last = next((m for m in reversed(g.history) if m.role == "assistant"), None)
        if (last is None or last.usage is None or not last.usage.prompt_tokens
                or overflow.detect_stop_reason(last.meta.get("stop_reason")) is None):
            return budget
        cap = max(1, int(last.usage.prompt_tokens * FILLED_WINDOW_SHRINK))
        return min(budget, cap) if budget else cap

    def threshold(self, model: str) -> int | None:
        found = self.threshold_rule(model)
        return found.at if found is not None else None

    def threshold_rule(self, model: str) -> Rule | None:
        """Where automatic compaction starts and the rule that puts it there (None: the window is unknown)."""
        budget = self.budget(model)
        settings = self.shared.settings
        return rule(budget, settings.model_overrides, model, settings.auto_compact_ratio) if budget else None

    def prepare_mark(self, model: str) -> int | None:
        """Where a background summary starts: the prepare ratio, moved down with a lower threshold."""
        budget, threshold = self.budget(model), self.threshold(model)
        if not budget or not threshold:
            return None
        settings = self.shared.settings
        return min(int(settings.prepare_ratio * budget),
                   int(threshold * settings.prepare_ratio / max(settings.auto_compact_ratio, 0.05)))

    def split(self, g: Gathered, level: int = 0) -> tuple[list[StoredMessage], list[StoredMessage]]:
        """Head to summarise and verbatim tail, sized so the compacted request lands well under the threshold.

        The tail is at most 40K tokens and TAIL_FRACTION of the window; in small windows its floors (10K tokens,
        5 text messages) shrink with it, or every turn would need a new summary.
        """
        memo = g.memo.get(("split", level))
        if memo is not None:  # the same state splits the same way: the Compact now rule and compact() share it
            return memo
        window = self.shared.catalog.info(g.model).window
        budget = self.budget(g.model)
        if not window or not budget:
            head, tail = cp.split_tail(g.sendable, window, level=level, cuts=g.cuts, sizes=g.row_tokens)
            g.memo[("split", level)] = (_rows(head), _rows(tail))
            return _rows(head), _rows(tail)
        factor = self.shared.calibration.factor(g.model) or 1.0
        room = int(budget * 0.5) - int(window * PIN_FRACTION) - SUMMARY_MAX_TOKENS // 4
        cap = max(500, min(40_000, int(window * TAIL_FRACTION), room))
        # The tail by cost: every token of it is written again after the summary and read by every later turn,
        # for nothing a smaller tail loses (the newest tool rounds are kept apart, below). So a cut at a typed
        # message may not take it over the cap, and in a small window the cap shrinks (see tail_cap).
        cap = self.tail_cap(g, cap)
        cap = clean = int(cap / factor)  # the splitter counts in estimate units
        head, tail = cp.split_tail(g.sendable, window, min_tokens=min(10_000, cap // 2), max_tokens=cap,
                                   min_text_messages=5 if cap >= 20_000 else 2, max_fraction=CLEAN_FRACTION,
                                   clean_max_tokens=clean, level=level, cuts=g.cuts, sizes=g.row_tokens)
        if level == 0:
            head, tail = self._with_recent_rounds(g, head, tail, int(window * CLEAN_FRACTION / factor))
        g.memo[("split", level)] = (_rows(head), _rows(tail))
        return _rows(head), _rows(tail)

    def tail_cap(self, g: Gathered, cap: int) -> int:
        """The verbatim tail's cap by cost (see schedule.tail_cap): ``cap`` unless the tail would leave too little
        room below the hard limit for the next summary to pay; the newest tool rounds are kept apart from it."""
        hard, window = self.hard_limit(g.model), self.shared.catalog.info(g.model).window
        if hard is None or not window or self.user_threshold(g.model):
            return cap
        fixed = self.expected_summary(g) + self.pin_room(g.model) // 2
        cost = self.summary_cost(g, hard, fixed + cap, warm=True)
        return schedule.tail_cap(self.rates(g.model), hard=hard, fixed=fixed, growth=self.growth(g), cost=cost,
                                 cap=cap, floor=min(cap, MIN_TAIL))

    @staticmethod
    def _with_recent_rounds(g: Gathered, head: list[Message], tail: list[Message],
                            limit: int) -> tuple[list[Message], list[Message]]:
        """The split moved to the rounds that hold the newest KEEP_ROUNDS tool calls whole (with their results),
        when the tail then stays within ``limit`` (estimate units): what the model was just doing stays verbatim.
        Calls, not rounds: ten rounds of parallel calls can be three times as large, and the clearing keeps the
        same ten results (Settings.keep_tool_results). Moved later too, when the tail grown by tokens (or back to
        a typed message) holds older rounds: every token kept is written again after the summary and read by
        every later turn, and nothing needs those verbatim (the user's texts before them are pinned, their calls
        are in the summary and the ledger). A conversation without tool calls keeps its tail by tokens."""
        rows = g.sendable
        if not head:
            return head, tail
        # From the newest back, only as far as the round of the KEEP_ROUNDS-th newest call.
        oldest: int | None = None
        calls = 0
        for i in range(len(rows) - 1, -1, -1):
            results = sum(1 for b in rows[i].content if b.get("type") == "tool_result")
            if results:
                oldest, calls = i, calls + results
                if calls >= KEEP_ROUNDS:
                    break
        if oldest is None:
            return head, tail
        cuts = g.cuts if g.cuts is not None else cp.cut_points(rows)
        cut = max((c for c in cuts if c < oldest), default=None)  # before the calls that round answers
        if cut is None or cut == len(head):
            return head, tail  # the tail is those rounds already
        sizes = g.row_tokens or [tokens.estimate_message(m.content) for m in rows]
        if sum(sizes[cut:]) > limit:
            return head, tail
        return list(rows[:cut]), list(rows[cut:])

    def refusal(self, g: Gathered) -> str | None:
        """Why Compact now would do nothing (None: it would compact). The button and compact() both ask this."""
        head, _tail = self.split(g)
        return None if head else NOTHING_YET

    # --- microcompaction ------------------------------------------------------------------------------
    def plan_micro(self, g: Gathered, used: int, idle: float | None) -> dict[str, int] | None:
        """New microcompaction horizons when the context is past MICRO_RATIO of the budget (None: keep them).

        Clearing edits blocks deep in the prompt, so the next request re-writes the cache from there (1.25x
        instead of 0.1x for everything after the edit). While the cache is warm that is worth it only for a
        batch that saves WARM_GAIN of the prompt: small batches near the threshold, one a turn, each re-wrote the
        whole prompt and cost more than the summary they put off. After a pause longer than the cache TTL the
        prefix must be re-written anyway, so any batch is taken.
        """
        budget = self.budget(g.model)
        threshold = self.threshold(g.model)
        # After a pause longer than the cache lifetime the prefix is re-written anyway: clearing old results
        # then costs nothing extra, whatever the share of the budget in use. A restart (idle unknown) is not
        # such a pause: nothing says the cache went cold.
        cold = idle is not None and idle > self.cache_lifetime(g)
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
            "clear": cp.plan_clear(sendable, h.get("clear", 0), keep_recent=self.shared.settings.keep_tool_results,
                                   min_clear_tokens=min_gain),
            "old": cp.plan_truncate(sendable, h.get("old", 0), after=30, limit=1_000,
                                    min_gain_tokens=max(min_gain, 5_000)),
            "recent": cp.plan_truncate(sendable, h.get("recent", 0), after=10, limit=5_000,
                                       min_gain_tokens=max(min_gain, 5_000)),
        }
        return None if new == {k: h.get(k, 0) for k in new} else new

    def needs_summary(self, g: Gathered, used: int, idle: float | None = None) -> bool:
        threshold = self.threshold(g.model)
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
        budget = self.budget(g.model)
        if budget and used < DEFER_RATIO * budget:
            head, _tail = self.split(g)
            if self._saving(g, head) < MIN_SAVING * used:
                return False
        due, verdict = self._due(g, used, warm=idle is not None and idle < self.cache_lifetime(g))
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
        budget = self.budget(g.model)
        if self.user_threshold(g.model) or self.trims_instead(g) or not budget or used < EARLY_FLOOR * budget:
            return False
        rates = self.rates(g.model)
        cheapest = rates.read * used + rates.output * self.expected_summary(g)
        return used >= schedule.pays_gap(rates, cheapest, self.growth(g))

    def _due(self, g: Gathered, used: int, *, warm: bool) -> tuple[bool, schedule.Verdict | None]:
        """Short of the hard limit, a summary is made when it pays (see compaction.schedule; below the threshold
        only once _may_pay_early); at the user's own threshold it is made there. The verdict, when one was made."""
        hard = self.hard_limit(g.model)
        if hard is None or self.user_threshold(g.model):
            return hard is not None and used >= (self.threshold(g.model) or hard), None
        if used >= hard:
            return True, schedule.Verdict(schedule.Why.DUE, used, used)
        if self.trims_instead(g):  # no summary request: the trim costs only the re-write of what it leaves
            after = self.low_water(g)
            verdict = schedule.summary_verdict(self.rates(g.model), used=used, after=after, growth=self.growth(g),
                                               cost=self.rates(g.model).write * after if warm else 0.0,
                                               turns_left=self.turns_so_far(g))
            return verdict.pays, verdict
        head, _tail = self.split(g)
        if not head:
            return False, None
        verdict = self.verdict(g, used, head, warm=warm)
        return verdict.pays, verdict

    # --- the schedule by cost (compaction.schedule) ---------------------------------------------------
    def user_threshold(self, model: str) -> bool:
        """Whether the user chose where compaction starts (a ratio other than the default, or a per-model percent
        or cap): then it starts there, and the schedule does not put it off."""
        settings = self.shared.settings
        own = override_for(settings.model_overrides, model)
        return (settings.auto_compact_ratio != DEFAULT_COMPACT_RATIO or PERCENT in own
                or own.get("compact_at_tokens") is not None)

    def rates(self, model: str) -> schedule.Rates:
        return schedule.Rates.of(self.shared.catalog.info(model))

    def growth(self, g: Gathered) -> int:
        """Tokens a turn adds to this session, about (calibrated): its newest messages over their requests."""
        rows = g.sendable[-20:]
        sizes = list(g.row_tokens[-20:]) if g.row_tokens else [tokens.estimate_message(m.content) for m in rows]
        requests = sum(1 for m in rows if m.role == "assistant")
        return self.shared.calibration.apply(g.model, schedule.growth_of(sizes, requests))

    @staticmethod
    def turns_so_far(g: Gathered) -> int:
        """Requests the session has had, about (those after the boundary and half the messages summarised)."""
        summarised = sum(int(c.stats.get("messages", 0) or 0) for c in g.compactions)
        return sum(1 for m in g.history if m.role == "assistant") + summarised // 2

    def after_size(self, g: Gathered, used: int, head: list[StoredMessage]) -> int:
        """The request's size after a summary of ``head``, about."""
        return max(0, used - self.freed(g, head))

    def freed(self, g: Gathered, head: list[StoredMessage]) -> int:
        """Calibrated tokens a summary of ``head`` takes off every later request, about: what it could free at
        best less what stays verbatim beside it, the user's typed texts it covers (within the pin budget) and
        the messages the user pinned."""
        typed_ids = {m.id for m in head if m.role == "user" and is_plain_user(m)}
        typed = sum(tokens.estimate_message(m.content) for m in head if m.id in typed_ids)
        pinned = sum(tokens.estimate_text(p.text) for p in user_pins.covered(user_pins.pins_of(g.state),
                                                                             head[-1].id if head else 0)
                     if p.message_id not in typed_ids)
        kept = self.shared.calibration.apply(g.model, min(self.pin_room(g.model), typed) + pinned)
        return self._saving(g, head) - kept

    def summary_cost(self, g: Gathered, used: int, after: int, *, warm: bool) -> float:
        """What a summary costs now in input-token equivalents: its request and the re-write it leaves."""
        return schedule.summary_cost(self.rates(g.model), used=used, after=after, warm=warm,
                                     output=self.expected_summary(g))

    def summary_reply_cap(self, model: str, g: Gathered | None = None) -> int:
        """A summary's reply cap in a chat with ``model``: SUMMARY_SHARE of its window, at most
        SUMMARY_MAX_TOKENS; given the session ``g``, less when the cost model says so (see summary_room)."""
        cap = summary_cap(self.shared.catalog.info(model).window)
        return self.summary_room(g, cap) if g is not None else cap

    def summary_room(self, g: Gathered, cap: int) -> int:
        """The summary's cap by cost, by the rule the verbatim tail follows (schedule.tail_cap): ``cap`` unless
        a summary that large, beside the pins and the rounds of the newest tool calls, leaves too little room
        below the hard limit for the next summary to pay; then what leaves that room, down to
        SUMMARY_MIN_TOKENS. Every token of it is read by every turn until the next summary and, unlike the tail,
        was first paid for at the output price; in a small window the cycle is too short to recover that."""
        hard = self.hard_limit(g.model)
        if hard is None or self.user_threshold(g.model):
            return cap
        fixed = self.pin_room(g.model) // 2 + self._rounds_tokens(g)
        rates = self.rates(g.model)
        cost = schedule.summary_cost(rates, used=hard, after=fixed + cap, output=cap, warm=True)
        return schedule.tail_cap(rates, hard=hard, fixed=fixed, growth=self.growth(g), cost=cost, cap=cap,
                                 floor=min(cap, SUMMARY_MIN_TOKENS))

    def _rounds_tokens(self, g: Gathered) -> int:
        """Tokens (calibrated) of the rounds that hold the newest KEEP_ROUNDS tool calls: what a summary keeps
        beside it whatever the tail's cap (0 without tool calls). Asked several times a decision (every summary
        cost reads it), so the walk back through the rows is kept with the gathered state."""
        raw = g.memo.get("rounds_tokens")
        if not isinstance(raw, int):
            raw = 0
            rows = g.sendable
            sizes = g.row_tokens or [tokens.estimate_message(m.content) for m in rows]
            calls = total = 0
            for i in range(len(rows) - 1, -1, -1):
                total += sizes[i]
                calls += sum(1 for b in rows[i].content if b.get("type") == "tool_result")
                if calls >= KEEP_ROUNDS:
                    raw = total + (sizes[i - 1] if i else 0)
                    break
            g.memo["rounds_tokens"] = raw
        return self.shared.calibration.apply(g.model, raw) if raw else 0

    def expected_summary(self, g: Gathered) -> int:
        """The next summary's length, about: the previous one's, within the reply cap."""
        previous = tokens.estimate_text(g.compaction.summary) if g.compaction else 0
        return route.expected_output(previous, self.summary_reply_cap(g.model, g))

    def pin_room(self, model: str) -> int:
        """What the pinned user texts may take beside a summary: the pin budget, within PIN_FRACTION of the
        window."""
        budget, window = self.shared.settings.pin_budget_tokens, self.shared.catalog.info(model).window
        return min(budget, int(window * PIN_FRACTION)) if window else budget

    def verdict(self, g: Gathered, used: int, head: list[StoredMessage], *, warm: bool) -> schedule.Verdict:
        """Whether a summary of ``head`` pays now (see compaction.schedule)."""
        after = self.after_size(g, used, head)
        return schedule.summary_verdict(self.rates(g.model), used=used, after=after, growth=self.growth(g),
                                        cost=self.summary_cost(g, used, after, warm=warm),
                                        turns_left=self.turns_so_far(g))

    def hard_limit(self, model: str) -> int | None:
        """Where a summary is made whether it pays or not: near the end of the input room (at the user's
        threshold when they chose one)."""
        budget = self.budget(model)
        if not budget:
            return None
        if self.user_threshold(model):
            return self.threshold(model)
        return int(DEFER_RATIO * budget)

    def due_at(self, g: Gathered, after: int) -> int | None:
        """The context size at which the schedule expects the next summary: where one from ``after`` starts to
        pay, between the threshold and the hard limit."""
        hard, threshold = self.hard_limit(g.model), self.threshold(g.model)
        if hard is None or threshold is None:
            return None
        if self.user_threshold(g.model):
            return threshold
        cost = self.summary_cost(g, hard, after, warm=True)
        return max(threshold, min(hard, after + schedule.pays_gap(self.rates(g.model), cost, self.growth(g))))

    def warm_batch(self, g: Gathered, used: int) -> int:
        """The smallest clearing batch that pays while the cache is warm (see schedule.min_clear): the whole
        prompt after the horizon is re-written; the saving lasts until the next summary is due."""
        head, _tail = self.split(g)
        after = self.after_size(g, used, head) if head else used
        due = self.due_at(g, after)
        if due is None:
            return int(WARM_GAIN * used)
        growth = self.growth(g)
        turns = min(max(0, due - used) / growth, float(max(self.turns_so_far(g), schedule.MIN_TURNS_LEFT)))
        cost = self.summary_cost(g, max(due, used), after, warm=True)
        return schedule.min_clear(self.rates(g.model), rewritten=used, turns=turns, compaction_cost=cost,
                                  cycle=max(1, due - after))

    def fresh_pays(self, g: Gathered, covers_through: int, used: int, *, warm: bool) -> bool:
        """Whether a summary of today's head pays over one prepared when only the messages through
        ``covers_through`` were old enough (see schedule.fresh_pays): the turns since stay in the prompt it
        leaves, re-written now and read until the next summary, which they also bring sooner."""
        head, _tail = self.split(g)
        if not head or head[-1].id <= covers_through:
            return False
        older = [m for m in head if m.id <= covers_through]
        after = self.after_size(g, used, head)
        extra = (self.after_size(g, used, older) if older else used) - after
        return self._fresher(g, used, after, extra, warm=warm)

    def _fresher(self, g: Gathered, used: int, after: int, extra: int, *, warm: bool) -> bool:
        """Whether a summary that leaves ``extra`` tokens less than another pays for its own request."""
        rates = self.rates(g.model)
        due = self.due_at(g, after)
        cycle = max(1, (due if due is not None else used) - after)
        turns = min(cycle / self.growth(g), float(max(self.turns_so_far(g), schedule.MIN_TURNS_LEFT)))
        request = schedule.summary_cost(rates, used=used, after=0, output=self.expected_summary(g), warm=warm)
        return schedule.fresh_pays(rates, extra=extra, request=request, turns=turns, cycle=cycle,
                                   next_cost=self.summary_cost(g, max(used, due or used), after, warm=True))

    @staticmethod
    def _why(g: Gathered) -> dict[str, Any]:
        """The schedule's reason for an automatic summary made now, for its row (the card shows it)."""
        verdict = g.memo.get("schedule")
        return {"schedule": verdict.stats()} if isinstance(verdict, schedule.Verdict) and verdict.pays else {}

    @staticmethod
    def _waited(g: Gathered, chat: ChatCompaction) -> str | None:
        """Why a due summary waits, the first time this boundary waits for that reason (logged then); else None."""
        verdict = g.memo.get("schedule")
        if not isinstance(verdict, schedule.Verdict) or chat.told.get(g.boundary) == verdict.why:
            return None
        chat.told[g.boundary] = verdict.why
        log.info("session %s: %s", g.session.id, verdict.reason)
        return None if verdict.pays else verdict.reason

    def before_call(self, g: Gathered, used: int, source: str, idle: float | None, *,
                    cleared: bool = False, chat: ChatCompaction | None = None) -> Decision:
        """The next step before a request whose context measures ``used`` (by ``source``; "estimate" near the
        threshold asks for the exact count first), ``idle`` seconds after the previous one. The conversation
        carries the step out and asks again; ``cleared``: old results were cleared for this request already.
        ``chat``: the chat's own compaction state (none: a chat with nothing prepared)."""
        chat = ChatCompaction() if chat is None else chat
        if not cleared and (horizons := self.plan_micro(g, used, idle)) is not None:
            return Decision(Step.CLEAR, horizons=horizons)
        threshold = self.threshold(g.model)
        if threshold is None:
            return Decision(Step.NOTHING)
        if source == "estimate" and abs(used - threshold) <= NEAR_THRESHOLD * threshold:
            return Decision(Step.COUNT)
        known = g.memo.get("schedule")
        due = self.needs_summary(g, used, idle)
        note = self._waited(g, chat) if g.memo.get("schedule") is not known else None
        if due:
            if self.trims_instead(g):
                return Decision(Step.TRIM, "auto", self.low_water(g), note=note)
            return Decision(Step.SUMMARISE, "auto", self.summary_target(g), note=note)
        if self.idle_ready(g, chat) and (idle or 0) > CACHE_TTL:
            # Prepared while the cache was warm; it is cold now, so the prompt is written again anyway. On the
            # hour cache too: only the stable prefix lives the hour, the tail the summary replaces does not.
            return Decision(Step.USE_PREPARED, "background")
        return Decision(Step.NOTHING, note=note)

    def idle_for(self, view: SessionView, g: Gathered) -> float | None:
        """Seconds since this session's last request (None: unknown, e.g. after a restart)."""
        last = view.last_request
        if last is None:
            reply = next((m for m in reversed(g.history) if m.role == "assistant" and m.usage), None)
            last = reply.created_at if reply else None
        return None if last is None else max(0.0, self.clock() - last)

    def prepare_soon(self, g: Gathered, used: int, growth: int | None, chat: ChatCompaction | None = None) -> bool:
        """Past the prepare mark, summarise in the background so the next send does not wait; only when the
        context grows fast enough to need it at the next turn (an unused summary is a billed waste: made a turn
        earlier, it is a turn older at the commit, and at a small window that turn makes a fresh one pay). A
        summary that pays below the threshold (see _may_pay_early) is prepared the same way, below the mark."""
        threshold = self.threshold(g.model)
        if threshold is None or growth is None:
            return False
        ahead = used + max(0, growth)
        early = ahead < threshold
        if early and not self._may_pay_early(g, ahead):
            return False
        # ... and only when the schedule would make it by then (a summary put off is not prepared early).
        return self.wants_prepare(g, used, early=early, chat=chat) and self._due(g, ahead, warm=True)[0]

    def low_water(self, g: Gathered, target: int | None = None) -> int:
        """What a trim without a summary brings the request under: LOW_WATER of the threshold (and under
        ``target`` when that is lower)."""
        mark = int(LOW_WATER * (self.threshold(g.model) or self._fit_target(g)))
        return min(mark, target) if target is not None else mark

    @staticmethod
    def trims_instead(g: Gathered) -> bool:
        """The breaker is open and no retry is due: an automatic compaction trims without asking for a summary.
        After BREAKER_RETRY_TRIMS trims one summary is tried again (a model that recovered closes the breaker)."""
        return g.breaker_open and int(g.state.get("breaker_trims", 0)) < BREAKER_RETRY_TRIMS

    @staticmethod
    def recovery_target(window: int | None, level: int) -> int | None:
        """The size a reactive compaction aims for: harder at each level (a smaller target, a deeper cut)."""
        return int(window * RECOVERY_FRACTION / (1 + level)) if window else None

    # --- the one compaction function ------------------------------------------------------------------
    async def compact(self, view: SessionView, g: Gathered, trigger: Trigger, *, focus: str | None = None,
                      target: int | None = None, level: int = 0, before_message: int | None = None,
                      chat: ChatCompaction | None = None) -> Outcome:
        """Summarise (or, failing that for automatic paths, snip) and write the boundary. ``level`` asks for a
        deeper cut (a reactive retry that must not resend what already failed); ``before_message`` summarises
        only what comes before that message ("Summarise up to here")."""
        store = self.shared.store
        before, _source = view.used(g)
        chat = ChatCompaction() if chat is None else chat
        prepared, chat.prepared = chat.prepared, None
        breaker = g.breaker_failures
        if trigger == "manual" and breaker:
            breaker = 0
            state = await store.update_state(view.session_id, {"breaker_failures": 0})
            view.state_changed(state)
        if (prepared and prepared.boundary == g.boundary and trigger != "manual"
                and self.fresh_pays(g, prepared.covers_through, before, warm=self.warm(view, g))):
            # Prepared turns ago, it leaves those turns in the prompt: a summary of today's head costs less.
            log.info("session %s: the prepared summary is older than it pays to commit; summarising afresh",
                     view.session_id)
            prepared = None
        if prepared and prepared.boundary == g.boundary and trigger != "manual":
            # Made on an older state, it may cover little of the context now: then a fresh, deeper one pays.
            record = await self._commit(view, g, prepared.covers_through, prepared.summary, "background",
                                        {**prepared.stats, "prepared": True, **self._why(g)}, before,
                                        min_saving=int(MIN_SAVING * before))
            if record is not None:
                return await self._after(view, record, before, target)
        plan = self.plan(g, trigger, level=level, before_message=before_message, before=before)
        head, level = list(plan.head), plan.level
        if plan.refusal == NOTHING_BEFORE:
            return Outcome(False, NOTHING_BEFORE, before=before, after=before)
        if not head:
            if trigger in ("auto", "reactive") and target is not None:
                return await self._snip(view, g, target, before)
            return Outcome(False, NOTHING_YET, before=before, after=before)
        if trigger != "manual" and self.trims_instead(g):
            return await self.trim(view, g, target, before)
        summary, stats, error = await self._summarise(view, g, head, focus,
                                                      **self._route_facts(view, g, head, trigger, level, before))
        if summary is None:
            failures = breaker + 1
            # Said once per model: a run of the same warning at every turn tells the user nothing more.
            said = g.state.get("summaries_failing") == g.model
            state = await store.update_state(view.session_id, {"breaker_failures": failures, "breaker_trims": 0,
                                                               "summaries_failing": g.model})
            view.state_changed(state)
            note: str = M.say(M.SUMMARY_FAILED, error=error)
            log.warning("session %s: %s", view.session_id, note)
            if trigger != "manual":
                outcome = await self.trim(view, g, target, before, reason=error,
                                          rejected=str(stats.get("rejected_summary") or ""))
                if not said:
                    outcome.notices.insert(0, (M.join(note, M.say(M.SUMMARIES_FAILING, model=g.model)),
                                               "warning"))
                return outcome
            if failures >= BREAKER_LIMIT:
                note = M.join(note, M.say(M.BREAKER_OPEN))
            return Outcome(False, note, before=before, after=before,
                           failure=Failure(error, str(stats.get("rejected_summary") or "")))
        record = await self._commit(view, g, head[-1].id, summary, trigger, {**stats, **self._why(g)}, before)
        if record is None:  # a summary that does not shrink the context is a failed summary too
            state = await store.update_state(view.session_id, {"breaker_failures": breaker + 1})
            view.state_changed(state)
            log.warning("session %s: %s", view.session_id, NOT_SMALLER)
            return Outcome(False, NOT_SMALLER, before=before, after=before,
                           notices=[] if trigger == "manual" else [(NOT_SMALLER, "info")],
                           failure=Failure(NOT_SMALLER, summary[:REJECTED_KEPT]) if trigger == "manual" else None)
        return await self._after(view, record, before, target)

    def plan(self, g: Gathered, trigger: Trigger = "manual", *, level: int = 0, before_message: int | None = None,
             before: int = 0, view: SessionView | None = None) -> Plan:
        """What ``compact`` would summarise and keep, from ``g`` alone (no I/O). ``before``: the request's size
        now; ``view``: also estimate the summary's cost the way ``compact`` would choose its route."""
        if before_message is not None:
            head = steering.head_before(g.sendable, before_message, g.cuts)
            if not head:
                return Plan(refusal=NOTHING_BEFORE, before=before)
        else:
            head = self.split(g, level)[0]
        if not head:
            return Plan(refusal=NOTHING_YET, before=before)
        if trigger != "manual" and before_message is None:
            # A summary that frees little is followed a step later by another one: cut deeper instead.
            while (level < DEEPEST_LEVEL and self._saving(g, head) < MIN_SAVING * before
                   and len(deeper := self.split(g, level + 1)[0]) > len(head)):
                level, head = level + 1, deeper
        through = head[-1].id
        pins = user_pins.covered(user_pins.pins_of(g.state), through)
        cost: float | None = None
        chosen = ""
        verdict: schedule.Verdict | None = None
        if view is not None:
            facts = self._route_facts(view, g, head, trigger, level, before)
            choice = self._choice(g, head, **facts)
            chosen, cost = choice.route, choice.estimates.get(choice.route)
            if facts and before:
                verdict = self.verdict(g, before, head, warm=facts["warm"])
        return Plan(tuple(head), tuple(m.id for m in g.sendable if m.id > through),
                    tuple(p.message_id for p in pins), level, None, before,
                    sum(tokens.estimate_message(m.content) for m in head), max(0, self.freed(g, head)), cost,
                    chosen, verdict)

    def _choice(self, g: Gathered, head: list[StoredMessage], *, cached: dict[str, Any] | None = None,
                tail_start: str | None = None, used: int = 0, warm: bool = False) -> route.Choice:
        """The cheaper way to a summary of ``head`` by the estimate (what ``_summarise`` asks for)."""
        del tail_start  # part of the facts, not of the choice
        catalog, settings = self.shared.catalog, self.shared.settings
        previous = g.compaction.summary if g.compaction else None
        previous_tokens = tokens.estimate_text(previous) if previous else 0
        replaced = sum(tokens.estimate_message(m.content) for m in head) + previous_tokens
        chat_info, small_info = catalog.info(g.model), catalog.info(settings.summary_model)
        window = chat_info.window or 0
        out_cap = self.summary_reply_cap(g.model, g)
        fits = cached is not None and bool(window) and used + route.INSTRUCTION_TOKENS + out_cap <= window
        return route.choose(chat_info, small_info, prefix_tokens=used, transcript_tokens=replaced,
                            output_tokens=self.expected_summary(g), warm=warm,
                            cached_fits=fits)

    def warm(self, view: SessionView, g: Gathered | None = None) -> bool:
        """Whether the session's prompt cache is still warm (a request within the TTL, the session's own
        lifetime when ``g`` is given; unknown after a restart)."""
        last = view.last_request
        return last is not None and self.clock() - last < (self.cache_lifetime(g) if g is not None else CACHE_TTL)

    def cache_lifetime(self, g: Gathered) -> float:
        """How long the session's prompt cache lives: the hour when its requests ask for the 1-hour cache on the
        stable prefix (after a pause shorter than that, the prefix is read, and an edit in it or a summary costs
        its re-write as in a warm cache), else the 5-minute default."""
        long = self.shared.settings.long_cache_ttl and SessionView.long_ttl_pays(g)
        return LONG_CACHE_TTL if long else CACHE_TTL

    def _route_facts(self, view: SessionView, g: Gathered, head: list[StoredMessage], trigger: str, level: int,
                     used: int) -> dict[str, Any]:
        """What picks the summary route: the chat's own request (not after an overflow or for a deeper cut: that
        request is what failed), where the verbatim tail starts, its size and the cache state."""
        if trigger == "reactive" or level:
            return {}
        after = next((m for m in g.sendable if m.id > head[-1].id), None)
        start = next((str(b.get("text")) for b in after.content if b.get("type") == "text"), None) if after else None
        return {"cached": view.request(g), "tail_start": start, "used": used, "warm": self.warm(view, g)}

    def _saving(self, g: Gathered, head: list[StoredMessage]) -> int:
        """Calibrated tokens a summary of ``head`` could free at best (its messages, less a typical summary)."""
        covered = sum(tokens.estimate_message(m.content) for m in head)
        return self.shared.calibration.apply(g.model, max(0, covered - SUMMARY_MAX_TOKENS // 4))

    @staticmethod
    def _replaced(g: Gathered, covers_through: int) -> int:
        """Estimated tokens the messages a compaction covers cost in requests today."""
        return sum(tokens.estimate_message(m.content) for m in g.sendable if m.id <= covers_through)

    @staticmethod
    def _added(g: Gathered, summary: str, pins_text: str | None) -> int:
        """Estimated tokens the new summary (and pins) add, less those of the summary it replaces."""
        added = tokens.estimate_text(summary) + (tokens.estimate_text(pins_text) if pins_text else 0)
        if g.compaction is not None:
            added -= tokens.estimate_text(g.compaction.summary) + tokens.estimate_text(
                g.compaction.stats.get("pins_text") or "")
        return added

    def _fit_target(self, g: Gathered) -> int:
        budget = self.budget(g.model) or 200_000
        return int(budget * 0.9)

    async def _after(self, view: SessionView, record: CompactionRecord, before: int,
                     target: int | None) -> Outcome:
        """Budget recomputed after every compaction; snip further only if the target is still not met."""
        g = view.shape()
        after, _source = view.used(g)
        if target is not None and after > target:
            snipped = await self._snip(view, g, target, after)
            if snipped.ok and snipped.g is not None:
                g, after = snipped.g, snipped.after
        count, saved = int(record.stats.get("messages", 0)), int(record.stats.get("tokens_saved", max(0, before - after)))
        msg = M.say(M.COMPACTED_ONE, saved=saved) if count == 1 else M.say(M.COMPACTED, messages=count, saved=saved)
        return Outcome(True, msg, record, before, after, g=g)

    async def _summarise(self, view: SessionView | None, g: Gathered, head: list[StoredMessage],
                         focus: str | None, *, cached: dict[str, Any] | None = None, tail_start: str | None = None,
                         used: int = 0, warm: bool = False) -> tuple[str | None, dict[str, Any], str]:
        """One summary of ``head`` on top of the active one, the cheaper way by the estimate (see _choice). Every
        request it made is the chat's spend, stored whatever came of it (a refused summary was paid for too)."""
        spent: Spent = []
        try:
            return await self.maker.make(head, g.compaction.summary if g.compaction else None, focus,
                                         chat_model=g.model,
                                         choice=self._choice(g, head, cached=cached, used=used, warm=warm),
                                         out_cap=self.summary_reply_cap(g.model, g), cached=cached,
                                         tail_start=tail_start, spent=spent)
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

    async def _commit(self, view: SessionView, g: Gathered, covers_through: int, summary: str, trigger: str,
                      stats: dict[str, Any], before: int, min_saving: int = 0) -> CompactionRecord | None:
        """Write the row with the pinned user instructions of everything it covers, and reset the breaker.
        A compaction whose summary and pins are not smaller than what they replace, or that saves under
        ``min_saving`` tokens, is not written (None)."""
        shared = self.shared
        users = await shared.store.user_messages(view.session_id, through_id=covers_through)
        pins = cp.pinned_instructions(users, self.pin_room(g.model))
        pins_text = cp.render_pins(pins)
        # The artifact ledger of everything covered so far (the previous one folded in), sent with the pins.
        previous = g.compaction.stats.get("ledger") if g.compaction is not None else None
        ledger = ledgers.build([m for m in g.history if m.id <= covers_through], previous)
        # Pins and ledger share the pin room: the ledger keeps its newest entries within what the pins leave, and
        # at least a quarter of it (a file list the user's long texts crowd out is what a summary forgets).
        room = self.pin_room(g.model)
        # ... unless the cost model has the summary give way (see summary_room): then the ledger keeps its floor,
        # the room the pins leave is not free either (every token of it is read by every turn).
        short = self.summary_reply_cap(g.model, g) < self.summary_reply_cap(g.model)
        ledger_room = room // 4 if short else max(room // 4, room - tokens.estimate_text(pins_text))
        ledger_text = ledgers.render(ledger, ledger_room)
        # The files read or edited last, fresh from disk now (fixed in this record, so the cached prefix holds).
        snapshots = shared.file_snapshots
        files_text = snapshots(view.session_id, ledgers.recent_files(ledger)) if snapshots and ledgers.recent_files(ledger) else ""
        for extra in (ledger_text, files_text):
            if extra:
                pins_text = f"{pins_text}\n\n{extra}" if pins_text else extra
        # Saved = what the covered messages cost in requests, less the summary and pins that replace them.
        covered, added = self._replaced(g, covers_through), self._added(g, summary, pins_text)
        if covered <= added:
            return None
        saved = shared.calibration.apply(g.model, covered - added)
        if saved < min_saving:
            return None
        price = shared.catalog.info(g.model).cache_read_price
        if price is not None:  # every later warm request reads this many tokens less
            stats = {**stats, "saving_per_turn": round(saved * price / MILLION, 6)}
        full_stats = {**stats, "tokens_before": before, "tokens_saved": saved, "pins": len(pins),
                      "pins_text": pins_text, "ledger": ledger}
        changes = ({"breaker_failures": 0, "breaker_trims": 0, "summaries_failing": None}
                   if trigger != "snip" else None)
        record = await shared.store.add_compaction(view.session_id, summary, covers_through, trigger, full_stats,
                                                   expected_active=g.boundary, state_changes=changes)
        view.compacted(record, changes)
        return record

    async def trim(self, view: SessionView, g: Gathered, target: int | None, before: int, reason: str = "",
                   rejected: str = "") -> Outcome:
        """Drop the oldest messages down to the low-water mark (see LOW_WATER), counting the trims the breaker
        waits out before it retries a summary."""
        outcome = await self._snip(view, g, self.low_water(g, target), before, reason, rejected)
        if outcome.ok and g.breaker_open:
            trims = int(g.state.get("breaker_trims", 0)) + 1
            view.state_changed(await self.shared.store.update_state(view.session_id, {"breaker_trims": trims}))
            if outcome.g is not None:
                outcome.g = view.shape()
        return outcome

    async def _snip(self, view: SessionView, g: Gathered, target: int, before: int, reason: str = "",
                    rejected: str = "") -> Outcome:
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
        dropped = _rows(snipped)
        if not dropped:
            return Outcome(False, M.say(M.NOTHING_TO_DROP), before=before,
                           after=before)
        summary = cp.trimmed_summary(g.compaction.summary if g.compaction else "", len(dropped))
        record = await self._commit(view, g, dropped[-1].id, summary, "snip",
                                    {"messages": len(dropped), "snipped": True, "summary_error": reason,
                                     "rejected_summary": rejected}, before)
        if record is None:
            return Outcome(False, NOT_SMALLER, before=before, after=before)
        after_g = view.shape()
        after, _source = view.used(after_g)
        return Outcome(True, M.say(M.DROPPED_OLDEST_ONE) if len(dropped) == 1 else
                       M.say(M.DROPPED_OLDEST, count=len(dropped)),
                       record, before, after, g=after_g)

    # --- background preparation -----------------------------------------------------------------------
    def wants_prepare(self, g: Gathered, used: int, *, early: bool = False, chat: ChatCompaction | None = None) -> bool:
        """Past the prepare mark (or ``early``: before it, one that pays), a summary made in the background lets
        the next send go on without waiting."""
        mark = self.prepare_mark(g.model)
        if g.breaker_open or not (early or (mark and used >= mark)):
            return False
        if chat is not None and chat.prepared_on(g.boundary):
            return False
        head, _tail = self.split(g)  # a summary that would wait (see needs_summary) is not made early either
        return self._saving(g, head) >= MIN_SAVING * used

    async def prepare(self, g: Gathered, view: SessionView, chat: ChatCompaction) -> None:
        """Summarise in the background; the summary waits in ``chat`` for the request that needs it."""
        head, _tail = self.split(g)
        if not head:
            return
        facts = self._route_facts(view, g, head, "background", 0, view.used(g)[0])
        summary, stats, _error = await self._summarise(view, g, head, None, **facts)
        if summary is not None:
            chat.prepared = Prepared(g.boundary, head[-1].id, summary, stats)

    def idle_summary_pays(self, view: SessionView, g: Gathered, chat: ChatCompaction) -> bool:
        """A long idle session whose cache is still warm: would a summary made now cost less than the prompt
        tokens it spares the next, cold, turn?"""
        used, _source = view.used(g)
        mark = self.prepare_mark(g.model)
        if not mark or used < mark or g.breaker_open or not self.warm(view) or chat.prepared_on(g.boundary):
            return False
        head, _tail = self.split(g)
        if not head:
            return False
        info = self.shared.catalog.info(g.model)
        cost = route.cached_cost(info, used, SUMMARY_MAX_TOKENS // 4, warm=True)
        return cache_clock.summary_pays(info, saving_tokens=self._saving(g, head), summary_cost=cost)

    async def prepare_idle(self, view: SessionView, g: Gathered, chat: ChatCompaction) -> None:
        await self.prepare(g, view, chat)
        if chat.prepared is not None:
            chat.prepared.idle = True

    @staticmethod
    def idle_ready(g: Gathered, chat: ChatCompaction) -> bool:
        ready = chat.prepared_on(g.boundary)
        return ready is not None and ready.idle
