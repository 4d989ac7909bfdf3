"""One number for the gauge, the hover card, /context, `precis context` and every compaction decision.

used = the previous request's real prompt size (input + cache_read + cache_creation) + an estimate of
what was added since (its reply, the new user message, tool results). With no usable anchor (no reply
yet, or a compaction / edit since), the whole request is estimated and corrected by the per-model
calibration. The breakdown by category is estimated per message (cached) and scaled to ``used``.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import Any

from msgspec import Struct, field

from desktop.engine.compaction._shared import text_of, tool_result_text
from desktop.engine.config.catalog import ModelCatalog
from desktop.engine.history.storage import Segment, StoredEstimate
from desktop.engine.metering import tokens
from desktop.engine.metering.bill import Bill, turn_bills
from desktop.engine.metering.calibration import Calibration
from desktop.engine.metering.context import ContextSnapshot, reserved_output
from desktop.engine.turn import assemble
from desktop.engine.types import Block, CompactionRecord, StoredMessage, Usage

MEDIA = ("image", "document")


class RequestFacts(Struct):
    """What the engine knew about a request when it sent it (stored in the reply's meta)."""

    boundary: int  # active compaction id (0: none)
    last_id: int  # newest message id included
    count: int  # sendable messages included
    estimate: int  # uncalibrated whole-request estimate, for calibration
    horizons: dict[str, int] = field(default_factory=dict)  # microcompaction horizons in force
    anchor: int = 0  # real prompt size of the previous comparable request (0: none)
    added: int = 0  # uncalibrated estimate of what was added since it

    def to_json(self) -> dict[str, Any]:
        return {
            "boundary": self.boundary,
            "last_id": self.last_id,
            "count": self.count,
            "estimate": self.estimate,
            "horizons": self.horizons,
            "anchor": self.anchor,
            "added": self.added,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> RequestFacts | None:
        if not data:
            return None
        try:
            return cls(
                int(data["boundary"]),
                int(data["last_id"]),
                int(data["count"]),
                int(data["estimate"]),
                {k: int(v) for k, v in (data.get("horizons") or {}).items()},
                int(data.get("anchor", 0)),
                int(data.get("added", 0)),
            )
        except (KeyError, TypeError, ValueError):
            return None


def anchored_used(anchor: int, delta: int, *, factor: float = 1.0, bias: int = 0) -> int:
    """The one formula for an anchored measure: the previous request's real prompt size, plus the calibrated
    estimate of what changed since (``delta``: added less removed, uncalibrated), plus the learned per-request
    bias (content a provider adds that no estimate sees). The anchor itself is never scaled."""
    return max(0, anchor + round(delta * factor) + bias)


class RowEstimate(Struct, frozen=True):
    """One row's share of the context estimate (uncalibrated tokens, framing included), by category. The one
    formula for it is ``row_estimate``; the store keeps these numbers per message, so a session's figure can be
    summed without decoding its rows."""

    tokens: int  # the whole message: estimate_message of its content as requests carry it
    results: int  # of which tool_result blocks
    media: int  # of which images and documents
    thinking: int  # of which thinking blocks (the API drops them from earlier turns)

    @property
    def messages(self) -> int:
        return self.tokens - self.results - self.media


def row_estimate(content: list[Block], family: str) -> RowEstimate:
    """The estimate of one message's content, split as the breakdown shows it."""
    results = media = thinking = 0
    total = tokens.MESSAGE_OVERHEAD
    for block in content:
        size = tokens.estimate_block(block, family=family)
        total += size
        kind = _block_category(block)
        if kind == "tool_results":
            results += size
        elif kind == "media":
            media += size
        if block.get("type") in ("thinking", "redacted_thinking"):
            thinking += size
    return RowEstimate(total, results, media, thinking)


class Ledger(Struct):
    """What the meter reads about the rows a request carries (sendable, as shaped), kept by the session view as
    rows arrive, or built from the store's per-row numbers when a session opens without decoding its rows.

    ``rows`` are the newest ``len(rows)`` of ``count`` rows (all of them once the session is loaded; at open, at
    least the rows of the last reply's turn); the sums cover all ``count``.
    """

    rows: Sequence[StoredMessage]
    ids: Sequence[int]  # ids of ``rows`` (ascending)
    count: int = 0
    tokens: int = 0
    results: int = 0
    media: int = 0
    reply: StoredMessage | None = None  # the newest reply with a real prompt size (the anchor candidate)

    @property
    def older(self) -> int:
        """Rows counted but not decoded (all older than ``rows[0]``)."""
        return self.count - len(self.rows)

    def through(self, message_id: int) -> int:
        """Rows with an id up to ``message_id``."""
        return self.older + bisect.bisect_right(self.ids, message_id)

    @classmethod
    def of(cls, rows: Sequence[StoredMessage], family: str) -> Ledger:
        """From scratch (tests, one-off measures): every row estimated now."""
        ests = [row_estimate(m.content, family) for m in rows]
        reply = next(
            (m for m in reversed(rows) if m.role == "assistant" and m.usage and m.usage.prompt_tokens), None
        )
        return cls(
            list(rows),
            [m.id for m in rows],
            len(rows),
            sum(e.tokens for e in ests),
            sum(e.results for e in ests),
            sum(e.media for e in ests),
            reply,
        )


SMALLEST_INGEST = 8_000  # the ingest limit never goes below this: smaller rows are shaped alike at any limit


def _largest_block(content: list[Block]) -> int:
    """Characters of the largest block the ingest cap measures (a text, or a tool result's text)."""
    sizes = [0]
    for block in content:
        if block.get("type") == "text":
            sizes.append(len(text_of(block)))
        elif block.get("type") == "tool_result":
            sizes.append(len(tool_result_text(block)))
    return max(sizes)


def estimate_key(family: str, limit: int, horizons: dict[str, int], m: StoredMessage) -> str:
    """Names the shape a row's stored numbers are for: the tokenizer family, the ingest limit (``*`` when no
    block is over the smallest one: the same at any limit), cleared (``c``) and cut old (``o``) or recent
    (``r``) behind the horizons."""
    cap = str(limit) if _largest_block(m.content) > SMALLEST_INGEST else "*"
    return f"{family}|{cap}|{_shape_code(m.id, horizons)}"


def _shape_code(message_id: int, horizons: dict[str, int]) -> str:
    cleared = "c" if message_id <= horizons.get("clear", 0) else ""
    tier = (
        "o"
        if message_id <= horizons.get("old", 0)
        else "r"
        if message_id <= horizons.get("recent", 0)
        else ""
    )
    return cleared + tier


def segments(family: str, limit: int, horizons: dict[str, int]) -> list[Segment]:
    """The id ranges within which every row has the same shape code, with the keys stored numbers may have."""
    points = sorted({0, *(v for v in horizons.values() if v > 0)})
    bounds = [*points, 2**62]
    out = []
    for lo, hi in itertools.pairwise(bounds):
        code = _shape_code(hi, horizons)
        out.append(Segment(lo, hi, (f"{family}|{limit}|{code}", f"{family}|*|{code}")))
    return out


def new_row_estimate(content: list[Block], model: str | None, message_id: int = 0) -> StoredEstimate | None:
    """The numbers of a row written with no horizon over it (an import), when its shape cannot depend on the
    session's ingest limit (no block over the smallest one); None: estimated when first read."""
    if not content or _largest_block(content) > SMALLEST_INGEST:
        return None
    family = tokens.family_for_model(model)
    est = row_estimate(content, family)
    return StoredEstimate(message_id, f"{family}|*|", est.tokens, est.results, est.media, False)


def _human(msg: StoredMessage) -> bool:
    """A user message the person typed (not only tool results): a new turn starts there."""
    return msg.role == "user" and any(b.get("type") != "tool_result" for b in msg.content)


def _thinking_tokens(msg: StoredMessage, family: str) -> int:
    return sum(
        tokens.estimate_block(b, family=family)
        for b in msg.content
        if b.get("type") in ("thinking", "redacted_thinking")
    )


def draft_cost(draft: str, family: str) -> int:
    """Tokens the message being typed will add to the next request."""
    if not draft.strip():
        return 0
    return tokens.estimate_text(draft, family=family) + tokens.MESSAGE_OVERHEAD


def _block_category(block: Block) -> str:
    kind = block.get("type")
    if kind in MEDIA:
        return "media"
    if kind == "tool_result":
        return "tool_results"
    return "messages"


class ContextMeter:
    def __init__(self, catalog: ModelCatalog, calibration: Calibration):
        self.catalog = catalog
        self.calibration = calibration

    def fixed(
        self,
        model: str,
        system: list[Block],
        tools: list[dict[str, Any]],
        compaction: CompactionRecord | None,
    ) -> int:
        """Uncalibrated estimate of what every request carries besides the rows: system, tools, the summary and
        pins (as requests carry them)."""
        family = self.catalog.info(model).family
        total = tokens.estimate_message(system, family=family) + tokens.estimate_tools(tools, family=family)
        if compaction is not None:
            total += tokens.estimate_message(
                [{"type": "text", "text": assemble.summary_text(compaction)}], family=family
            )
        return total

    def whole_estimate(
        self,
        model: str,
        system: list[Block],
        tools: list[dict[str, Any]],
        compaction: CompactionRecord | None,
        ledger: Ledger,
    ) -> int:
        """Uncalibrated estimate of a whole request (the rows' part summed as they arrived)."""
        return self.fixed(model, system, tools, compaction) + ledger.tokens

    @staticmethod
    def categories(ledger: Ledger) -> dict[str, int]:
        return {
            "messages": ledger.tokens - ledger.results - ledger.media,
            "tool_results": ledger.results,
            "media": ledger.media,
        }

    def anchor(
        self, model: str, ledger: Ledger, compaction: CompactionRecord | None, horizons: dict[str, int] | None
    ) -> tuple[StoredMessage, int] | None:
        """The newest reply whose request is comparable to the next one, and the uncalibrated estimate of what
        changed since it (its own content and everything after, less thinking the API drops at a new turn).
        None: estimate the whole request. Reads only the rows from the reply's turn on."""
        reply = ledger.reply
        facts = RequestFacts.from_json(reply.meta.get("request")) if reply else None
        if reply is None or facts is None:
            return None
        same_horizons = {k: v for k, v in facts.horizons.items() if v} == {
            k: v for k, v in (horizons or {}).items() if v
        }
        if (
            facts.boundary != (compaction.id if compaction else 0)
            or not same_horizons
            or ledger.through(facts.last_id) != facts.count
        ):
            return None
        info = self.catalog.info(model)
        family = info.family
        rows = ledger.rows
        at = bisect.bisect_left(ledger.ids, reply.id)
        since = rows[at:]
        delta = sum(tokens.estimate_message(m.content, family=family) for m in since)
        new_turn = next((i for i in range(len(since) - 1, 0, -1) if _human(since[i])), None)
        if not info.keeps_thinking and new_turn is not None:
            # A new human turn: the API drops earlier turns' thinking. The anchor carried the thinking of its
            # own turn so far, and the replies added before the new turn bring theirs only to this prompt.
            start = next((i for i in range(at - 1, -1, -1) if _human(rows[i])), -1)
            delta -= sum(_thinking_tokens(m, family) for m in rows[start + 1 : at])
            delta -= sum(_thinking_tokens(m, family) for m in since[:new_turn])
        return reply, delta

    def used(
        self,
        model: str,
        system: list[Block],
        tools: list[dict[str, Any]],
        compaction: CompactionRecord | None,
        ledger: Ledger,
        horizons: dict[str, int] | None,
    ) -> tuple[int, str]:
        """Tokens the next request carries, and whether the figure is anchored on the API ("api"), estimated
        ("estimate") or there is nothing yet ("none"). The one formula every reader of the number uses."""
        anchor = self.anchor(model, ledger, compaction, horizons)
        if anchor is not None:
            anchor_msg, delta = anchor
            assert anchor_msg.usage is not None
            return anchored_used(
                anchor_msg.usage.prompt_tokens,
                delta,
                factor=self.calibration.factor(model),
                bias=self.calibration.bias(model),
            ), "api"
        if ledger.count or compaction is not None:
            whole = self.whole_estimate(model, system, tools, compaction, ledger)
            return self.calibration.apply(model, whole), "estimate"
        return 0, "none"

    def snapshot(
        self,
        *,
        model: str,
        system: list[Block],
        tools: list[dict[str, Any]],
        compaction: CompactionRecord | None,
        compaction_count: int,
        ledger: Ledger,
        max_output: int,
        session_cost: float | None,
        compaction_cost: float | None = None,  # the part of session_cost the summaries took
        breaker_open: bool = False,
        horizons: dict[str, int] | None = None,
        draft: str = "",
        trimmed: tuple[int, ...] = (),
        refusal: str | None = None,  # why Compact now would refuse (None: it would compact)
        session_bill: Bill | None = None,  # the session's total by kind
        cache_lifetime: float | None = None,  # seconds the prompt cache lives (None: no bill per turn)
    ) -> ContextSnapshot:
        info = self.catalog.info(model)
        family = info.family
        summary_tokens = pinned_tokens = 0
        if compaction is not None:
            summary_tokens = tokens.estimate_text(compaction.summary, family=family) + tokens.BLOCK_OVERHEAD
            pins = assemble.pinned_text(compaction)
            pinned_tokens = tokens.estimate_text(pins, family=family) if pins else 0
        used, source = self.used(model, system, tools, compaction, ledger, horizons)

        last_reply = next((m for m in reversed(ledger.rows) if m.role == "assistant" and m.usage), None)
        last_usage: Usage | None = last_reply.usage if last_reply else None
        expected_output = min(last_usage.output_tokens if last_usage else 0, max_output)
        next_turn = used + expected_output + draft_cost(draft, family)

        breakdown = self._breakdown(
            model, system, tools, summary_tokens, pinned_tokens, ledger, used, info.window, max_output
        )
        reply_cost = self.catalog.cost(model, last_usage) if last_usage else None
        turns = (
            ()
            if cache_lifetime is None
            else tuple(
                turn_bills(
                    ledger.rows,
                    self.catalog,
                    model,
                    compacted=compaction is not None,
                    lifetime=cache_lifetime,
                )
            )
        )
        return ContextSnapshot(
            model=model,
            window=info.window,
            max_output=max_output,
            used=used,
            next_turn=next_turn,
            source=source,  # type: ignore[arg-type]
            last_usage=last_usage,
            cost_last_turn=reply_cost,
            cost_session=session_cost,
            cost_compaction=compaction_cost,
            summary_active=compaction is not None,
            compactions=compaction_count,
            breaker_open=breaker_open,
            breakdown=breakdown,
            can_compact=refusal is None,
            compact_reason=refusal or "",
            trimmed=trimmed,
            window_source=info.window_source,
            turns=turns,
            session_bill=session_bill,
        )

    def _breakdown(
        self,
        model: str,
        system: list[Block],
        tools: list[dict[str, Any]],
        summary_tokens: int,
        pinned_tokens: int,
        ledger: Ledger,
        used: int,
        window: int | None,
        max_output: int,
    ) -> dict[str, int]:
        family = self.catalog.info(model).family
        # The user's instructions travel inside the system prompt: shown as their own part of it.
        instructions = assemble.instructions_in(system)
        told = (
            tokens.estimate_message([{"type": "text", "text": instructions}], family=family)
            if instructions
            else 0
        )
        # A project's instructions and knowledge too: its share of the window is what it costs every chat of it.
        project = assemble.project_in(system)
        shared = tokens.estimate_message([{"type": "text", "text": project}], family=family) if project else 0
        whole_system = tokens.estimate_message(system, family=family)
        parts = {
            "system": max(0, whole_system - told - shared),
            "instructions": min(told, whole_system),
            "project": min(shared, max(0, whole_system - told)),
            "tools": tokens.estimate_tools(tools, family=family),
            "summary": summary_tokens,
            "pinned": pinned_tokens,
            **self.categories(ledger),
        }
        estimated = sum(parts.values())
        if estimated and used:
            # Scale the estimated split to the one real number, largest-remainder so it sums exactly.
            scaled = {k: v * used / estimated for k, v in parts.items()}
            floors = {k: int(v) for k, v in scaled.items()}
            short = used - sum(floors.values())
            for k in sorted(scaled, key=lambda k: scaled[k] - floors[k], reverse=True)[:short]:
                floors[k] += 1
            parts = floors
        elif not used:
            parts = {k: 0 for k in parts}
        reserved = reserved_output(max_output, window)
        parts["reserved_output"] = reserved
        parts["free"] = max(0, window - used - reserved) if window else 0
        return parts
