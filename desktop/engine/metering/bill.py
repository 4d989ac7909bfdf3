"""A bill you can read: each request's cost split by kind (cache reads, cache writes, uncached input, output), why
a cold request re-wrote the cache, and a session's total by kind.

Prices are the model's own (``ModelInfo``), with the same rule as ``ModelInfo.cost``: the kinds of one request
add up to its cost, a price cliff multiplies every kind. A request is *cold* when it wrote more of its prompt to
the cache than it read from it; its reason is read from what is stored with the replies (the model, the
compaction in force, the send times), first match wins:

1. the first request of the chat;
2. a model switch (the cache belongs to one model);
3. a compaction since the previous request (a new summary, or old tool results cleared);
4. the cache expired: longer than its lifetime since the previous request (the minutes are given);
5. otherwise the conversation was changed before its end (an edit of a message or of the summary).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from msgspec import Struct

from desktop.engine.config.catalog import CacheTTL, ModelCatalog, ModelInfo
from desktop.engine.messages import QT_TRANSLATE_NOOP
from desktop.engine.types import StoredMessage, Usage


class Kind(StrEnum):
    CACHE_READ = "cache_read"
    CACHE_WRITE = "cache_write"
    INPUT = "input"
    OUTPUT = "output"


class Cold(StrEnum):
    FIRST = "first_turn"
    MODEL_SWITCH = "model_switch"
    COMPACTION = "compaction"
    EXPIRED = "cache_expired"
    EDIT = "edit"


REASONS = {  # the engine's words (the CLI's report); the window words the same reasons itself
    Cold.FIRST: QT_TRANSLATE_NOOP("Engine", "the first turn of the chat"),
    Cold.MODEL_SWITCH: QT_TRANSLATE_NOOP("Engine", "a model switch"),
    Cold.COMPACTION: QT_TRANSLATE_NOOP("Engine", "a re-write after a compaction"),
    Cold.EXPIRED: QT_TRANSLATE_NOOP("Engine", "the cache expired after {minutes} min"),
    Cold.EDIT: QT_TRANSLATE_NOOP("Engine", "an edit"),
}


class Bill(Struct, frozen=True):
    """USD by kind."""

    cache_read: float = 0.0
    cache_write: float = 0.0
    input: float = 0.0
    output: float = 0.0

    @property
    def total(self) -> float:
        return self.cache_read + self.cache_write + self.input + self.output

    def __add__(self, other: Bill) -> Bill:
        return Bill(
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.input + other.input,
            self.output + other.output,
        )

    def scaled(self, sign: int) -> Bill:
        return Bill(sign * self.cache_read, sign * self.cache_write, sign * self.input, sign * self.output)

    def to_json(self) -> dict[str, float]:
        return {
            Kind.CACHE_READ: round(self.cache_read, 6),
            Kind.CACHE_WRITE: round(self.cache_write, 6),
            Kind.INPUT: round(self.input, 6),
            Kind.OUTPUT: round(self.output, 6),
            "total": round(self.total, 6),
        }


def split(
    info: ModelInfo, usage: Usage, ttl: CacheTTL = "5m", prompt_tokens: int | None = None
) -> Bill | None:
    """``usage`` priced by kind at ``info``'s prices (None when they are unknown); the kinds add up to
    ``info.cost(usage, ttl, prompt_tokens)`` (``prompt_tokens``: see ``ModelInfo.costs_by_kind``)."""
    kinds = info.costs_by_kind(usage, ttl, prompt_tokens)
    return None if kinds is None else Bill(*kinds)


def is_cold(usage: Usage) -> bool:
    """The request wrote more of its prompt to the cache than it read from it."""
    return usage.cache_creation_input_tokens > usage.cache_read_input_tokens


class TurnBill(Struct, frozen=True):
    """One request (one stored reply): its tokens, its cost by kind (None: price unknown), and why it was cold."""

    message_id: int
    model: str
    usage: Usage
    bill: Bill | None
    cold: Cold | None = None
    idle_minutes: int | None = None  # for Cold.EXPIRED: the minutes since the previous request
    compaction: Bill | None = (
        None  # what the compaction made before this request cost (None: none, or unpriced)
    )

    def to_json(self) -> dict[str, object]:
        return {
            "message_id": self.message_id,
            "model": self.model,
            "tokens": self.usage.to_json(),
            "cost": self.bill.to_json() if self.bill else None,
            "cold": self.cold.value if self.cold else None,
            "idle_minutes": self.idle_minutes,
            "compaction_cost": self.compaction.to_json() if self.compaction else None,
        }


def _sent(reply: StoredMessage) -> float:
    value = reply.meta.get("sent_at")
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else reply.created_at
    )


def _request(reply: StoredMessage) -> dict[str, object]:
    facts = reply.meta.get("request")
    return facts if isinstance(facts, dict) else {}


def compaction_spend(reply: StoredMessage) -> list[tuple[str, Usage]]:
    """The requests a compaction made before ``reply``'s request, as its turn recorded them."""
    out: list[tuple[str, Usage]] = []
    for item in reply.meta.get("compaction_spend") or ():
        if (
            isinstance(item, list)
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], dict)
        ):
            usage = Usage.from_json(item[1])
            if usage is not None:
                out.append((item[0], usage))
    return out


def cold_reason(
    reply: StoredMessage, previous: StoredMessage | None, *, compacted: bool, lifetime: float
) -> tuple[Cold, int | None]:
    """Why ``reply``'s request re-wrote the cache. ``previous``: the reply before it on the chat's path (None:
    none since the chat began or since its summary); ``compacted``: a summary is in force; ``lifetime``: the
    seconds the prompt cache lives."""
    if previous is None:
        return (Cold.COMPACTION, None) if compacted else (Cold.FIRST, None)
    if (previous.model or "") != (reply.model or ""):
        return Cold.MODEL_SWITCH, None
    before, now = _request(previous), _request(reply)
    if before.get("boundary", 0) != now.get("boundary", 0) or (
        (before.get("horizons") or {}) != (now.get("horizons") or {})
    ):
        return Cold.COMPACTION, None
    idle = _sent(reply) - _sent(previous)
    if idle > lifetime:
        return Cold.EXPIRED, int(idle // 60)
    return Cold.EDIT, None


LAST_TURNS = 20  # the requests a snapshot itemises: a glance at a long chat reads its newest page only


def turn_bills(
    rows: Sequence[StoredMessage],
    catalog: ModelCatalog,
    default_model: str,
    *,
    compacted: bool,
    lifetime: float,
) -> list[TurnBill]:
    """A bill for each of the last LAST_TURNS replies with usage in ``rows`` (the chat's path after its summary,
    oldest first); the session's total by kind covers every request. Reads the rows from the newest back, only
    as far as the reply before the oldest one itemised (its cold reason needs it): the same at any length."""
    replies: list[StoredMessage] = []  # newest first, at most LAST_TURNS + 1
    for i in range(len(rows) - 1, -1, -1):
        row = rows[i]
        if row.role == "assistant" and row.usage is not None and row.usage.prompt_tokens:
            replies.append(row)
            if len(replies) > LAST_TURNS:
                break
    replies.reverse()
    previous = replies.pop(0) if len(replies) > LAST_TURNS else None
    infos: dict[str, ModelInfo] = {}
    out: list[TurnBill] = []
    for row in replies:
        usage = row.usage
        assert usage is not None
        model = row.model or default_model
        info = infos.get(model) or infos.setdefault(model, catalog.info(model))
        cold, minutes = (
            cold_reason(row, previous, compacted=compacted, lifetime=lifetime)
            if is_cold(usage)
            else (None, None)
        )
        spend = compaction_spend(row)
        paid = (
            total(split(catalog.info(m), u, prompt_tokens=u.prompt_tokens) for m, u in spend)
            if spend
            else None
        )
        out.append(TurnBill(row.id, model, usage, split(info, usage), cold, minutes, paid))
        previous = row
    return out


def total(bills: Iterable[Bill | None]) -> Bill | None:
    """The sum by kind; None when any price is unknown."""
    out = Bill()
    for bill in bills:
        if bill is None:
            return None
        out = out + bill
    return out
