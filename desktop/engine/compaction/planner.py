"""The planner: what a compaction cuts, what its verbatim tail keeps and what is pinned beside it (no I/O).

``split`` is the one cut (head to summarise, verbatim tail) that the Compact now rule, the schedule and every
compaction share; ``plan`` is what a compaction would do now, from the gathered state alone, for the preview and
for ``Executor.compact`` (one rule for both); ``choice`` and ``route_facts`` are the way its summary would be
asked for. The tail is sized by the cost model (see ``tail_cap``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, cast

from msgspec import Struct

from desktop.engine import compaction as cp
from desktop.engine import messages as M
from desktop.engine.compaction import schedule, user_pins
from desktop.engine.compaction import summary_route as route
from desktop.engine.compaction._shared import Message
from desktop.engine.compaction.cost_model import KEEP_ROUNDS, CostModel
from desktop.engine.compaction.limits import PIN_FRACTION
from desktop.engine.compaction.summary_maker import SUMMARY_MAX_TOKENS
from desktop.engine.metering import tokens
from desktop.engine.turn.session import Gathered, SessionView
from desktop.engine.types import MessagesRequest, StoredMessage

if TYPE_CHECKING:
    from desktop.engine.compaction import steering
else:  # "Summarise up to here" runs with a summary, not with a chat's first measurement (the gauge)
    from desktop.engine.lazy_imports import deferred

    steering = deferred("desktop.engine.compaction.steering")

Trigger = Literal["auto", "manual", "reactive", "background"]

# The verbatim tail grows to this share of the window (at most 40K tokens); a cut at a typed user message may
# take it up to CLEAN_FRACTION, so whole exchanges stay together. Every token kept is read again by every later
# request: a smaller tail is the larger part of what a summary saves.
TAIL_FRACTION = 0.15
CLEAN_FRACTION = 0.3
MIN_SAVING = 0.10  # an automatic summary must free at least this share of the context, or it is not committed
MIN_TAIL = 1_000  # the smallest verbatim tail the cost model asks for (the newest tool rounds are kept apart)
DEEPEST_LEVEL = 3  # split levels tried for a deeper cut (each keeps at most half the previous tail)
NOTHING_YET = M.say(M.NOTHING_YET)
NOTHING_BEFORE = M.say(M.NOTHING_BEFORE)


def _rows(messages: list[Message]) -> list[StoredMessage]:
    """The pure stages return the kind of message they were given: stored rows in, stored rows out."""
    return cast(list[StoredMessage], messages)


class Plan(Struct, frozen=True):
    """What a compaction would do now: the preview shows it and ``compact`` carries it out (one rule for both)."""

    head: tuple[StoredMessage, ...] = ()  # summarised
    kept: tuple[int, ...] = ()  # ids that stay verbatim after it
    pinned: tuple[int, ...] = ()  # ids the user pinned that it covers: carried verbatim beside the summary
    level: int = 0  # the split level (a deeper cut for an automatic summary that would free little)
    refusal: str | None = None  # why it would do nothing
    before: int = 0  # tokens the request carries now (0: not measured)
    summarised: int = 0  # estimated tokens of the messages it summarises
    saving: int = 0  # tokens it takes off every later request, about (calibrated; see CostModel.freed)
    cost: float | None = None  # USD the summary request costs, about (None: unknown or not estimated)
    route: str = ""  # the way the summary would be asked for (empty: not estimated)
    verdict: schedule.Verdict | None = None  # whether it pays by cost, and when (None: not estimated)

    @property
    def covers_through(self) -> int:
        return self.head[-1].id if self.head else 0


class Planner:
    """The cuts for one provider profile, sized by ``costs``."""

    def __init__(self, costs: CostModel):
        self.costs = costs
        self.limits = costs.limits
        self.shared = costs.shared

    def split(self, g: Gathered, level: int = 0) -> tuple[list[StoredMessage], list[StoredMessage]]:
        """Head to summarise and verbatim tail, sized so the compacted request lands well under the threshold.

        The tail is at most 40K tokens and TAIL_FRACTION of the window; in small windows its floors (10K tokens,
        5 text messages) shrink with it, or every turn would need a new summary.
        """
        memo: tuple[list[StoredMessage], list[StoredMessage]] | None = g.memo.get(("split", level))
        if (
            memo is not None
        ):  # the same state splits the same way: the Compact now rule and compact() share it
            return memo
        window = self.shared.catalog.info(g.model).window
        budget = self.limits.budget(g.model)
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
        head, tail = cp.split_tail(
            g.sendable,
            window,
            min_tokens=min(10_000, cap // 2),
            max_tokens=cap,
            min_text_messages=5 if cap >= 20_000 else 2,
            max_fraction=CLEAN_FRACTION,
            clean_max_tokens=clean,
            level=level,
            cuts=g.cuts,
            sizes=g.row_tokens,
        )
        if level == 0:
            head, tail = self._with_recent_rounds(g, head, tail, int(window * CLEAN_FRACTION / factor))
        g.memo[("split", level)] = (_rows(head), _rows(tail))
        return _rows(head), _rows(tail)

    def tail_cap(self, g: Gathered, cap: int) -> int:
        """The verbatim tail's cap by cost (see schedule.tail_cap): ``cap`` unless the tail would leave too little
        room below the hard limit for the next summary to pay; the newest tool rounds are kept apart from it."""
        limits, costs = self.limits, self.costs
        hard, window = limits.hard_limit(g.model), self.shared.catalog.info(g.model).window
        if hard is None or not window or limits.user_threshold(g.model):
            return cap
        fixed = costs.expected_summary(g) + limits.pin_room(g.model) // 2
        cost = costs.summary_cost(g, hard, fixed + cap, warm=True)
        return schedule.tail_cap(
            costs.rates(g.model),
            hard=hard,
            fixed=fixed,
            growth=costs.growth(g),
            cost=cost,
            cap=cap,
            floor=min(cap, MIN_TAIL),
        )

    @staticmethod
    def _with_recent_rounds(
        g: Gathered, head: list[Message], tail: list[Message], limit: int
    ) -> tuple[list[Message], list[Message]]:
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

    def plan(
        self,
        g: Gathered,
        trigger: Trigger = "manual",
        *,
        level: int = 0,
        before_message: int | None = None,
        before: int = 0,
        view: SessionView | None = None,
    ) -> Plan:
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
        costs = self.costs
        if trigger != "manual" and before_message is None:
            # A summary that frees little is followed a step later by another one: cut deeper instead.
            while (
                level < DEEPEST_LEVEL
                and costs.saving(g, head) < MIN_SAVING * before
                and len(deeper := self.split(g, level + 1)[0]) > len(head)
            ):
                level, head = level + 1, deeper
        through = head[-1].id
        pins = user_pins.covered(user_pins.pins_of(g.state), through)
        cost: float | None = None
        chosen = ""
        verdict: schedule.Verdict | None = None
        if view is not None:
            facts = self.route_facts(view, g, head, trigger, level, before)
            choice = self.choice(g, head, **facts)
            chosen, cost = choice.route, choice.estimates.get(choice.route)
            if facts and before:
                verdict = costs.verdict(g, before, head, warm=facts["warm"])
        return Plan(
            tuple(head),
            tuple(m.id for m in g.sendable if m.id > through),
            tuple(p.message_id for p in pins),
            level,
            None,
            before,
            sum(tokens.estimate_message(m.content) for m in head),
            max(0, costs.freed(g, head)),
            cost,
            chosen,
            verdict,
        )

    def choice(
        self,
        g: Gathered,
        head: list[StoredMessage],
        *,
        cached: MessagesRequest | None = None,
        tail_start: str | None = None,
        used: int = 0,
        warm: bool = False,
    ) -> route.Choice:
        """The cheaper way to a summary of ``head`` by the estimate (what ``Executor._summarise`` asks for)."""
        del tail_start  # part of the facts, not of the choice
        catalog, settings = self.shared.catalog, self.shared.settings
        previous = g.compaction.summary if g.compaction else None
        previous_tokens = tokens.estimate_text(previous) if previous else 0
        replaced = sum(tokens.estimate_message(m.content) for m in head) + previous_tokens
        chat_info, small_info = catalog.info(g.model), catalog.info(settings.summary_model)
        window = chat_info.window or 0
        out_cap = self.costs.summary_reply_cap(g.model, g)
        fits = cached is not None and bool(window) and used + route.INSTRUCTION_TOKENS + out_cap <= window
        return route.choose(
            chat_info,
            small_info,
            prefix_tokens=used,
            transcript_tokens=replaced,
            output_tokens=self.costs.expected_summary(g),
            warm=warm,
            cached_fits=fits,
        )

    def route_facts(
        self, view: SessionView, g: Gathered, head: list[StoredMessage], trigger: str, level: int, used: int
    ) -> dict[str, Any]:
        """What picks the summary route: the chat's own request (not after an overflow or for a deeper cut: that
        request is what failed), where the verbatim tail starts, its size and the cache state."""
        if trigger == "reactive" or level:
            return {}
        after = next((m for m in g.sendable if m.id > head[-1].id), None)
        start = (
            next((str(b.get("text")) for b in after.content if b.get("type") == "text"), None)
            if after
            else None
        )
        return {
            "cached": view.request(g),
            "tail_start": start,
            "used": used,
            "warm": self.costs.warm(view, g),
        }
