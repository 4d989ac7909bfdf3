"""One number for the gauge, the hover card, /context, `precis context` and every compaction decision.

used = the previous request's real prompt size (input + cache_read + cache_creation) + an estimate of
what was added since (its reply, the new user message, tool results). With no usable anchor (no reply
yet, or a compaction / edit since), the whole request is estimated and corrected by the per-model
calibration. The breakdown by category is estimated per message (cached) and scaled to ``used``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from desktop.engine import assemble, tokens
from desktop.engine.calibration import Calibration
from desktop.engine.catalog import ModelCatalog
from desktop.engine.context import ContextSnapshot, reserved_output
from desktop.engine.types import Block, CompactionRecord, StoredMessage, Usage, is_sendable_status

MEDIA = ("image", "document")


@dataclass(slots=True)
class RequestFacts:
    """What the engine knew about a request when it sent it (stored in the reply's meta)."""

    boundary: int  # active compaction id (0: none)
    last_id: int  # newest message id included
    count: int  # sendable messages included
    estimate: int  # uncalibrated whole-request estimate, for calibration
    horizons: dict[str, int] = field(default_factory=dict)  # microcompaction horizons in force
    anchor: int = 0  # real prompt size of the previous comparable request (0: none)
    added: int = 0  # uncalibrated estimate of what was added since it

    def to_json(self) -> dict[str, Any]:
        return {"boundary": self.boundary, "last_id": self.last_id, "count": self.count,
                "estimate": self.estimate, "horizons": self.horizons, "anchor": self.anchor, "added": self.added}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> RequestFacts | None:
        if not data:
            return None
        try:
            return cls(int(data["boundary"]), int(data["last_id"]), int(data["count"]), int(data["estimate"]),
                       {k: int(v) for k, v in (data.get("horizons") or {}).items()},
                       int(data.get("anchor", 0)), int(data.get("added", 0)))
        except (KeyError, TypeError, ValueError):
            return None


def anchored_used(anchor: int, delta: int, *, factor: float = 1.0, bias: int = 0) -> int:
    """The one formula for an anchored measure: the previous request's real prompt size, plus the calibrated
    estimate of what changed since (``delta``: added less removed, uncalibrated), plus the learned per-request
    bias (content a provider adds that no estimate sees). The anchor itself is never scaled."""
    return max(0, anchor + round(delta * factor) + bias)


def _human(msg: StoredMessage) -> bool:
    """A user message the person typed (not only tool results): a new turn starts there."""
    return msg.role == "user" and any(b.get("type") != "tool_result" for b in msg.content)


def _thinking_tokens(msg: StoredMessage, family: str) -> int:
    return sum(tokens.estimate_block(b, family=family) for b in msg.content
               if b.get("type") in ("thinking", "redacted_thinking"))


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


@dataclass(slots=True)
class _SessionCache:
    estimates: tokens.MessageEstimateCache
    categories: dict[int, dict[str, int]] = field(default_factory=dict)


class ContextMeter:
    def __init__(self, catalog: ModelCatalog, calibration: Calibration):
        self.catalog = catalog
        self.calibration = calibration
        self._sessions: dict[int, _SessionCache] = {}

    def _cache(self, session_id: int, family: str) -> _SessionCache:
        cache = self._sessions.get(session_id)
        if cache is None:
            cache = self._sessions[session_id] = _SessionCache(tokens.MessageEstimateCache(family))
        cache.estimates.set_family(family)
        return cache

    def whole_estimate(self, session_id: int, model: str, system: list[Block], tools: list[dict[str, Any]],
                       compaction: CompactionRecord | None, history: list[StoredMessage]) -> int:
        """Uncalibrated estimate of a whole request (cached per message)."""
        family = self.catalog.info(model).family
        cache = self._cache(session_id, family)
        total = tokens.estimate_message(system, family=family) + tokens.estimate_tools(tools, family=family)
        if compaction is not None:  # the summary and pins, as requests carry them
            total += tokens.estimate_message([{"type": "text", "text": assemble.summary_text(compaction)}],
                                             family=family)
        return total + cache.estimates.total(history)

    def categories(self, session_id: int, model: str, history: Iterable[StoredMessage]) -> dict[str, int]:
        family = self.catalog.info(model).family
        cache = self._cache(session_id, family)
        out = {"messages": 0, "tool_results": 0, "media": 0}
        for msg in history:
            split = cache.categories.get(msg.id) if msg.status == "complete" else None
            if split is None:
                split = {"messages": tokens.MESSAGE_OVERHEAD, "tool_results": 0, "media": 0}
                for block in msg.content:
                    split[_block_category(block)] += tokens.estimate_block(block, family=family)
                if msg.status == "complete":
                    cache.categories[msg.id] = split
            for k, v in split.items():
                out[k] += v
        return out

    def anchor(self, model: str, history: list[StoredMessage], compaction: CompactionRecord | None,
               horizons: dict[str, int] | None) -> tuple[StoredMessage, int] | None:
        """The newest reply whose request is comparable to the next one, and the uncalibrated estimate of what
        changed since it (its own content and everything after, less thinking the API drops at a new turn).
        None: estimate the whole request."""
        sendable = [m for m in history if is_sendable_status(m.status)]
        reply = next((m for m in reversed(history) if m.role == "assistant" and m.usage and m.usage.prompt_tokens),
                     None)
        facts = RequestFacts.from_json(reply.meta.get("request")) if reply else None
        if reply is None or facts is None:
            return None
        same_horizons = ({k: v for k, v in facts.horizons.items() if v}
                         == {k: v for k, v in (horizons or {}).items() if v})
        if (facts.boundary != (compaction.id if compaction else 0) or not same_horizons
                or sum(1 for m in sendable if m.id <= facts.last_id) != facts.count):
            return None
        info = self.catalog.info(model)
        family = info.family
        since = [m for m in sendable if m.id >= reply.id]
        delta = sum(tokens.estimate_message(m.content, family=family) for m in since)
        new_turn = next((i for i in range(len(since) - 1, 0, -1) if _human(since[i])), None)
        if not info.keeps_thinking and new_turn is not None:
            # A new human turn: the API drops earlier turns' thinking. The anchor carried the thinking of its
            # own turn so far, and the replies added before the new turn bring theirs only to this prompt.
            turn_start = max((m.id for m in sendable if m.id < reply.id and _human(m)), default=0)
            delta -= sum(_thinking_tokens(m, family) for m in sendable if turn_start < m.id < reply.id)
            delta -= sum(_thinking_tokens(m, family) for m in since[:new_turn])
        return reply, delta

    def used(self, session_id: int, model: str, system: list[Block], tools: list[dict[str, Any]],
             compaction: CompactionRecord | None, sendable: list[StoredMessage],
             horizons: dict[str, int] | None) -> tuple[int, str]:
        """Tokens the next request carries, and whether the figure is anchored on the API ("api"), estimated
        ("estimate") or there is nothing yet ("none"). The one formula every reader of the number uses."""
        anchor = self.anchor(model, sendable, compaction, horizons)
        if anchor is not None:
            anchor_msg, delta = anchor
            assert anchor_msg.usage is not None
            return anchored_used(anchor_msg.usage.prompt_tokens, delta, factor=self.calibration.factor(model),
                                 bias=self.calibration.bias(model)), "api"
        if sendable or compaction is not None:
            whole = self.whole_estimate(session_id, model, system, tools, compaction, sendable)
            return self.calibration.apply(model, whole), "estimate"
        return 0, "none"

    def snapshot(
        self,
        *,
        session_id: int,
        model: str,
        system: list[Block],
        tools: list[dict[str, Any]],
        compaction: CompactionRecord | None,
        compaction_count: int,
        history: list[StoredMessage],
        max_output: int,
        session_cost: float | None,
        breaker_open: bool = False,
        horizons: dict[str, int] | None = None,
        draft: str = "",
        trimmed: tuple[int, ...] = (),
        refusal: str | None = None,  # why Compact now would refuse (None: it would compact)
    ) -> ContextSnapshot:
        info = self.catalog.info(model)
        family = info.family
        sendable = [m for m in history if is_sendable_status(m.status)]  # history is already shaped
        summary_tokens = pinned_tokens = 0
        if compaction is not None:
            summary_tokens = tokens.estimate_text(compaction.summary, family=family) + tokens.BLOCK_OVERHEAD
            pins = compaction.stats.get("pins_text") or ""
            pinned_tokens = tokens.estimate_text(pins, family=family) if pins else 0
        used, source = self.used(session_id, model, system, tools, compaction, sendable, horizons)

        last_reply = next((m for m in reversed(history) if m.role == "assistant" and m.usage), None)
        last_usage: Usage | None = last_reply.usage if last_reply else None
        expected_output = min(last_usage.output_tokens if last_usage else 0, max_output)
        next_turn = used + expected_output + draft_cost(draft, family)

        breakdown = self._breakdown(session_id, model, system, tools, summary_tokens, pinned_tokens, sendable,
                                    used, info.window, max_output)
        reply_cost = self.catalog.cost(model, last_usage) if last_usage else None
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
            summary_active=compaction is not None,
            compactions=compaction_count,
            breaker_open=breaker_open,
            breakdown=breakdown,
            can_compact=refusal is None,
            compact_reason=refusal or "",
            trimmed=trimmed,
        )

    def _breakdown(self, session_id: int, model: str, system: list[Block], tools: list[dict[str, Any]],
                   summary_tokens: int, pinned_tokens: int, sendable: list[StoredMessage], used: int,
                   window: int | None, max_output: int) -> dict[str, int]:
        family = self.catalog.info(model).family
        parts = {
            "system": tokens.estimate_message(system, family=family),
            "tools": tokens.estimate_tools(tools, family=family),
            "summary": summary_tokens,
            "pinned": pinned_tokens,
            **self.categories(session_id, model, sendable),
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
