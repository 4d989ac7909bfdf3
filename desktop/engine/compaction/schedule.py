"""When a compaction pays, by cost: the one model the summary schedule, the verbatim tail and the clearing
batches read.

Costs are in input-token equivalents of the chat model (its input price = 1), from the model's own catalog
multipliers: a cache read costs ``read`` (0.1 on most models, 0.05 on Opus 5.5), a 5-minute write ``write``
(1.25), an output token ``output`` (5). A warm request re-reads its whole prefix at ``read``; an edit or a
summary makes the next request write everything after it at ``write`` instead.

A summary (or a clearing batch) costs once, now: the summary request and the re-write of the prompt it leaves
(nothing extra when the cache is cold: the prompt is written again anyway). It saves ``read`` per freed token on
every later turn, until the context has grown back and the next compaction is due. Over a cycle from a base
``after`` to a size ``used``, growing ``growth`` a turn, the cost per turn is read·(used + after)/2 +
cost·growth/(used - after); it is lowest when read·(used - after)²/(2·growth) = cost. So a compaction pays once
the reads it spares over half the turns the context takes to grow back, read·gap·gap/(2·growth), reach its
cost. A session that ends sooner never recovers it: the turns counted are at most the turns expected to be left,
taken as the turns the session has had (a session's remaining length is about its length so far).
"""

from __future__ import annotations

import enum
import math

from msgspec import Struct

from desktop.engine import messages as M
from desktop.engine.config.catalog import ModelInfo

MIN_GROWTH = 200  # tokens a turn adds at least (a quiet session still grows by a question and an answer)
MIN_TURNS_LEFT = 4  # turns a session is expected to go on for at least


class Rates(Struct, frozen=True):
    """The model's prices as multiples of its input price."""

    read: float
    write: float
    output: float

    @classmethod
    def of(cls, info: ModelInfo) -> Rates:
        priced = info.priced()
        base = priced.input_price or 1.0
        return cls(priced.read_multiplier, priced.write_multiplier, (priced.output_price or 5.0) / base)


class Why(enum.StrEnum):
    PAYS = "pays"  # the reads it spares outweigh its cost
    WAITS = "waits"  # they do not yet: the summary waits
    LARGER = "larger"  # it would not make the context smaller: never made
    DUE = "due"  # the context reached the hard limit: made whether it pays or not


class Verdict(Struct, frozen=True):
    """Whether a compaction is made now and why, with the figures (input-token equivalents)."""

    why: Why
    used: int  # the context now
    after: int  # ... and after the compaction, about
    turns: float = 0.0  # the turns the saving is counted over
    saving: float = 0.0
    cost: float = 0.0

    @property
    def pays(self) -> bool:
        return self.why in (Why.PAYS, Why.DUE)

    @property
    def payback_turns(self) -> float | None:
        """The turns after which the reads it spares have paid its cost (None: it spares none)."""
        per_turn = self.saving / self.turns if self.turns > 0 else 0.0
        return self.cost / per_turn if per_turn > 0 else None

    @property
    def reason(self) -> M.Message:
        """One sentence for the log and the notes."""
        figures = {
            "used": self.used,
            "after": self.after,
            "gap": max(0, self.used - self.after),
            "turns": round(self.turns),
            "saving": round(self.saving),
            "cost": round(self.cost),
        }
        return M.say(_REASONS[self.why], **figures)

    def stats(self) -> dict[str, int | str]:
        """What a compaction row keeps of it (the card words it)."""
        return {
            "why": self.why.value,
            "used": self.used,
            "after": self.after,
            "turns": round(self.turns),
            "saving": round(self.saving),
            "cost": round(self.cost),
        }


_REASONS = {
    Why.PAYS: M.SCHEDULE_PAYS,
    Why.WAITS: M.SCHEDULE_WAITS,
    Why.LARGER: M.SCHEDULE_LARGER,
    Why.DUE: M.SCHEDULE_DUE,
}


def summary_cost(
    rates: Rates, *, used: int, after: int, output: int, warm: bool, cached: bool = True
) -> float:
    """A summary's cost now: its request (the chat's cached prefix read plus the reply, or the replaced part
    written out as a transcript) and the re-write of the ``after`` tokens it leaves (0 when the cache is cold)."""
    request = (rates.read * used if cached and warm else used) + rates.output * output
    return request + (rates.write * after if warm else 0.0)


def growth_of(sizes: list[int], requests: int) -> int:
    """Tokens a turn adds, about: the newest messages' sizes over the requests they span (two messages each)."""
    recent = sizes[-20:]
    turns = max(1, min(requests, len(recent) // 2))
    return max(MIN_GROWTH, sum(recent) // turns)


def pays_gap(rates: Rates, cost: float, growth: int) -> int:
    """The gap (tokens freed) from which a compaction costing ``cost`` pays over a full cycle."""
    return int(math.sqrt(2 * max(cost, 0.0) * max(growth, 1) / max(rates.read, 1e-6)))


def summary_verdict(
    rates: Rates, *, used: int, after: int, growth: int, cost: float, turns_left: int
) -> Verdict:
    """Whether a compaction that takes the context from ``used`` to ``after`` pays for ``cost``."""
    gap = used - after
    if gap <= 0:
        return Verdict(Why.LARGER, used, after, cost=cost)
    turns = min(gap / (2 * max(growth, 1)), float(max(turns_left, MIN_TURNS_LEFT)))
    saving = rates.read * gap * turns
    return Verdict(Why.PAYS if saving >= cost else Why.WAITS, used, after, turns, saving, cost)


def min_clear(rates: Rates, *, rewritten: int, turns: float, compaction_cost: float, cycle: int) -> int:
    """The smallest clearing batch that pays while the cache is warm: clearing ``x`` tokens re-writes the
    ``rewritten`` tokens after the first edit (write instead of read) and spares ``x`` reads a turn for ``turns``
    turns; it also puts the next summary off by x/growth turns, an x/``cycle`` share of its ``compaction_cost``.
    So x pays from (write - read)·rewritten / (read·turns + compaction_cost/cycle)."""
    per_token = rates.read * max(0.0, turns) + (compaction_cost / cycle if cycle > 0 else 0.0)
    extra = (rates.write - rates.read) * max(0, rewritten)
    return int(extra / per_token) if per_token > 0 else max(0, rewritten)


def fresh_pays(
    rates: Rates, *, extra: int, request: float, turns: float, cycle: int, next_cost: float
) -> bool:
    """Whether a fresh summary pays over one prepared on an older state that leaves ``extra`` tokens more in
    the prompt: those are written once more now (``write``), read on each of ``turns`` turns, and bring the
    next summary (``next_cost``) sooner by an extra/``cycle`` share; the fresh one costs its ``request``."""
    if extra <= 0:
        return False
    gain = extra * (rates.write + rates.read * max(0.0, turns)) + (
        next_cost * extra / cycle if cycle > 0 else 0.0
    )
    return gain > request


def tail_cap(rates: Rates, *, hard: int, fixed: int, growth: int, cost: float, cap: int, floor: int) -> int:
    """The verbatim tail's cap: ``cap`` unless a tail that large leaves too little room between the compacted
    prompt and ``hard`` (where compaction must happen) for a summary to pay; then what leaves that room, down
    to ``floor``. ``fixed``: the compacted prompt without the tail (system, summary, pins)."""
    room = hard - fixed - pays_gap(rates, cost, growth)
    return max(floor, min(cap, room))
