"""The cost model, the schedule's side of compaction: what each route costs and what it saves (no I/O).

Given the session's gathered state and, where it matters, the head a summary would cover (the planner's cut),
it says in input-token equivalents what a summary costs (its request, the re-write it leaves), what it frees
from every later request, how fast the context grows back, when the next one is due and whether one pays now
(see ``compaction.schedule``), and whether the session's prompt cache is still warm (the engine's clock).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from desktop.engine.compaction import schedule, user_pins
from desktop.engine.compaction import summary_route as route
from desktop.engine.compaction._shared import is_plain_user
from desktop.engine.compaction.limits import Limits
from desktop.engine.compaction.summary_maker import SUMMARY_MAX_TOKENS, SUMMARY_MIN_TOKENS, summary_cap
from desktop.engine.metering import tokens
from desktop.engine.turn.session import CACHE_TTL, LONG_CACHE_TTL, Gathered, SessionView
from desktop.engine.types import StoredMessage

WARM_GAIN = 0.25  # while the cache is warm, clear only in batches that save this share of the prompt
KEEP_ROUNDS = 10  # the newest tool calls a summary leaves verbatim (their rounds) while they fit CLEAN_FRACTION of the window


class CostModel:
    """What compaction costs and saves for one provider profile, on the marks of ``limits``."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.shared = limits.shared
        self.clock: Callable[[], float] = time.time  # the engine's clock (injectable)

    # --- rates and growth -----------------------------------------------------------------------------
    def rates(self, model: str) -> schedule.Rates:
        return schedule.Rates.of(self.shared.catalog.info(model))

    def growth(self, g: Gathered) -> int:
        """Tokens a turn adds to this session, about (calibrated): its newest messages over their requests."""
        rows = g.sendable[-20:]
        sizes = (
            list(g.row_tokens[-20:]) if g.row_tokens else [tokens.estimate_message(m.content) for m in rows]
        )
        requests = sum(1 for m in rows if m.role == "assistant")
        return self.shared.calibration.apply(g.model, schedule.growth_of(sizes, requests))

    @staticmethod
    def turns_so_far(g: Gathered) -> int:
        """Requests the session has had, about (those after the boundary and half the messages summarised)."""
        summarised = sum(int(c.stats.get("messages", 0) or 0) for c in g.compactions)
        return sum(1 for m in g.history if m.role == "assistant") + summarised // 2

    # --- what a summary saves -------------------------------------------------------------------------
    def saving(self, g: Gathered, head: list[StoredMessage]) -> int:
        """Calibrated tokens a summary of ``head`` could free at best (its messages, less a typical summary)."""
        covered = sum(tokens.estimate_message(m.content) for m in head)
        return self.shared.calibration.apply(g.model, max(0, covered - SUMMARY_MAX_TOKENS // 4))

    def freed(self, g: Gathered, head: list[StoredMessage]) -> int:
        """Calibrated tokens a summary of ``head`` takes off every later request, about: what it could free at
        best less what stays verbatim beside it, the user's typed texts it covers (within the pin budget) and
        the messages the user pinned."""
        typed_ids = {m.id for m in head if m.role == "user" and is_plain_user(m)}
        typed = sum(tokens.estimate_message(m.content) for m in head if m.id in typed_ids)
        pinned = sum(
            tokens.estimate_text(p.text)
            for p in user_pins.covered(user_pins.pins_of(g.state), head[-1].id if head else 0)
            if p.message_id not in typed_ids
        )
        kept = self.shared.calibration.apply(g.model, min(self.limits.pin_room(g.model), typed) + pinned)
        return self.saving(g, head) - kept

    def after_size(self, g: Gathered, used: int, head: list[StoredMessage]) -> int:
        """The request's size after a summary of ``head``, about."""
        return max(0, used - self.freed(g, head))

    @staticmethod
    def replaced(g: Gathered, covers_through: int) -> int:
        """Estimated tokens the messages a compaction covers cost in requests today."""
        return sum(tokens.estimate_message(m.content) for m in g.sendable if m.id <= covers_through)

    @staticmethod
    def added(g: Gathered, summary: str, pins_text: str | None) -> int:
        """Estimated tokens the new summary (and pins) add, less those of the summary it replaces."""
        added = tokens.estimate_text(summary) + (tokens.estimate_text(pins_text) if pins_text else 0)
        if g.compaction is not None:
            added -= tokens.estimate_text(g.compaction.summary) + tokens.estimate_text(
                g.compaction.stats.get("pins_text") or ""
            )
        return added

    # --- what a summary costs -------------------------------------------------------------------------
    def summary_cost(self, g: Gathered, used: int, after: int, *, warm: bool) -> float:
        """What a summary costs now in input-token equivalents: its request and the re-write it leaves."""
        return schedule.summary_cost(
            self.rates(g.model), used=used, after=after, warm=warm, output=self.expected_summary(g)
        )

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
        hard = self.limits.hard_limit(g.model)
        if hard is None or self.limits.user_threshold(g.model):
            return cap
        fixed = self.limits.pin_room(g.model) // 2 + self._rounds_tokens(g)
        rates = self.rates(g.model)
        cost = schedule.summary_cost(rates, used=hard, after=fixed + cap, output=cap, warm=True)
        return schedule.tail_cap(
            rates,
            hard=hard,
            fixed=fixed,
            growth=self.growth(g),
            cost=cost,
            cap=cap,
            floor=min(cap, SUMMARY_MIN_TOKENS),
        )

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

    # --- the schedule (compaction.schedule) -----------------------------------------------------------
    def verdict(self, g: Gathered, used: int, head: list[StoredMessage], *, warm: bool) -> schedule.Verdict:
        """Whether a summary of ``head`` pays now (see compaction.schedule)."""
        after = self.after_size(g, used, head)
        return schedule.summary_verdict(
            self.rates(g.model),
            used=used,
            after=after,
            growth=self.growth(g),
            cost=self.summary_cost(g, used, after, warm=warm),
            turns_left=self.turns_so_far(g),
        )

    def due_at(self, g: Gathered, after: int) -> int | None:
        """The context size at which the schedule expects the next summary: where one from ``after`` starts to
        pay, between the threshold and the hard limit."""
        hard, threshold = self.limits.hard_limit(g.model), self.limits.threshold(g.model)
        if hard is None or threshold is None:
            return None
        if self.limits.user_threshold(g.model):
            return threshold
        cost = self.summary_cost(g, hard, after, warm=True)
        return max(threshold, min(hard, after + schedule.pays_gap(self.rates(g.model), cost, self.growth(g))))

    def warm_batch(self, g: Gathered, used: int, head: list[StoredMessage]) -> int:
        """The smallest clearing batch that pays while the cache is warm (see schedule.min_clear): the whole
        prompt after the horizon is re-written; the saving lasts until the next summary (of ``head``) is due."""
        after = self.after_size(g, used, head) if head else used
        due = self.due_at(g, after)
        if due is None:
            return int(WARM_GAIN * used)
        growth = self.growth(g)
        turns = min(max(0, due - used) / growth, float(max(self.turns_so_far(g), schedule.MIN_TURNS_LEFT)))
        cost = self.summary_cost(g, max(due, used), after, warm=True)
        return schedule.min_clear(
            self.rates(g.model), rewritten=used, turns=turns, compaction_cost=cost, cycle=max(1, due - after)
        )

    def fresh_pays(
        self, g: Gathered, head: list[StoredMessage], covers_through: int, used: int, *, warm: bool
    ) -> bool:
        """Whether a summary of ``head`` (today's) pays over one prepared when only the messages through
        ``covers_through`` were old enough (see schedule.fresh_pays): the turns since stay in the prompt it
        leaves, re-written now and read until the next summary, which they also bring sooner."""
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
        return schedule.fresh_pays(
            rates,
            extra=extra,
            request=request,
            turns=turns,
            cycle=cycle,
            next_cost=self.summary_cost(g, max(used, due or used), after, warm=True),
        )

    # --- the cache clock ------------------------------------------------------------------------------
    def cache_lifetime(self, g: Gathered) -> float:
        """How long the session's prompt cache lives: the hour when its requests ask for the 1-hour cache on the
        stable prefix (after a pause shorter than that, the prefix is read, and an edit in it or a summary costs
        its re-write as in a warm cache), else the 5-minute default."""
        long = self.shared.settings.long_cache_ttl and SessionView.long_ttl_pays(g)
        return LONG_CACHE_TTL if long else CACHE_TTL

    def warm(self, view: SessionView, g: Gathered | None = None) -> bool:
        """Whether the session's prompt cache is still warm (a request within the TTL, the session's own
        lifetime when ``g`` is given; unknown after a restart)."""
        last = view.last_request
        return last is not None and self.clock() - last < (
            self.cache_lifetime(g) if g is not None else CACHE_TTL
        )

    def idle_for(self, view: SessionView, g: Gathered) -> float | None:
        """Seconds since this session's last request (None: unknown, e.g. after a restart)."""
        last = view.last_request
        if last is None:
            reply = next((m for m in reversed(g.history) if m.role == "assistant" and m.usage), None)
            last = reply.created_at if reply else None
        return None if last is None else max(0.0, self.clock() - last)
