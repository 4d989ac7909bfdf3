"""Making one summary: the request (the chat's own cached request with a summarise instruction, or the
transcript for the summary model, in parts when it is longer than that model's window), its retries when the
request itself is too long, and the salvage of a refused reply section by section. The compactor decides when
and of what; this asks for it and says what came back."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, cast

from msgspec import Struct, field

from desktop.engine import compaction as cp
from desktop.engine.compaction import sections
from desktop.engine.compaction import summary_route as route
from desktop.engine.compaction._shared import Message, group_starts
from desktop.engine.compaction.citations import message_index
from desktop.engine.metering import tokens
from desktop.engine.providers import overflow
from desktop.engine.providers.errors import classify
from desktop.engine.turn.session import Shared
from desktop.engine.types import MessagesRequest, StoredMessage, Usage

if TYPE_CHECKING:
    from desktop.engine.compaction import salvage
else:  # a summary's building blocks run with the first summary, not with a chat's first measurement (the gauge)
    from desktop.engine.lazy_imports import deferred

    salvage = deferred("desktop.engine.compaction.salvage")

log = logging.getLogger(__name__)

SUMMARY_MAX_TOKENS = 4096
# A summary takes at most this share of the window: each of its tokens is paid at the output price, written again
# after it and read by every later request, and in a small window it sits beside the newest ten tool rounds, so
# the cycle to the next summary is short. A 50K window is therefore not asked for the summary a 200K one affords
# (2,083 tokens there, 1,333 at 32K; windows from about 98K get SUMMARY_MAX_TOKENS). A sixteenth left 50K chats at
# 1.12x the Claude-Code-like bill at Opus 5.5's prices with the summaries' replies billed (docs/benchmarks.md).
# A summary is given at least SUMMARY_MIN_TOKENS, within an eighth of the window (the room the chunking leaves).
SUMMARY_SHARE = 1 / 24
SUMMARY_MIN_TOKENS = 1_024
SUMMARY_RETRIES = 3  # a summarisation request that is itself too long: drop oldest groups and retry
REJECTED_KEPT = 4_000  # characters of a refused summary kept on the trimmed row
CHUNK_SHARE = 0.8  # a summary request's transcript takes at most this share of what is left of the window
SUMMARY_PROMPT_TOKENS = 1_000  # the summary system prompt and instructions around the transcript


def summary_cap(window: int | None) -> int:
    """A summary's reply cap at ``window``: SUMMARY_SHARE of it (at least SUMMARY_MIN_TOKENS, at most an eighth
    of it), at most SUMMARY_MAX_TOKENS."""
    if not window:
        return SUMMARY_MAX_TOKENS
    return min(SUMMARY_MAX_TOKENS, window // 8, max(SUMMARY_MIN_TOKENS, int(window * SUMMARY_SHARE)))


class Summariser(Protocol):
    async def complete(self, request: MessagesRequest) -> tuple[str, Usage, str | None]: ...


class Part(Struct, frozen=True):
    """What one summary request gave: the summary, or why not and what the model wrote instead."""

    summary: str | None = None
    usage: Usage = field(default_factory=Usage)
    dropped: int = 0  # messages left out for length
    error: str = ""
    rejected: str = ""
    salvaged: dict[str, Any] = field(default_factory=dict)  # stats of a summary salvaged section by section


def _rejected(text: str) -> dict[str, Any]:
    """A failed summary's stats: the model's words, kept (bounded) so the card can show what was refused."""
    return {"rejected_summary": text.strip()[:REJECTED_KEPT]} if text.strip() else {}


Spent = list[
    tuple[str, Usage]
]  # every request a compaction made, (model, usage) in order: what the chat pays


class SummaryMaker:
    # A refused sectioned summary is salvaged section by section before the chat trims (see compaction.salvage);
    # the small-model benchmark turns it off to measure without it.
    salvage_sections = True

    def __init__(self, shared: Shared, summariser: Callable[[], Summariser]):
        self.shared = shared
        self._summariser = summariser

    async def _ask(self, request: MessagesRequest, spent: Spent) -> tuple[str, Usage, str | None]:
        """One request to the summariser, its usage added to what the compaction spent."""
        text, usage, stop = await self._summariser().complete(request)
        spent.append((str(request.get("model") or self.shared.settings.summary_model), usage))
        return text, usage, stop

    def _chunks(self, head: list[StoredMessage], model: str) -> list[list[StoredMessage]]:
        """``head`` in consecutive parts, oldest first, each small enough that its summary request (with the
        summary so far folded in) fits the summary model's window: one part when it all fits."""
        window = self.shared.catalog.info(model).prompt_room(self.shared.settings.allow_price_tiers)
        if not window:
            return [head]
        factor = self.shared.calibration.factor(model) or 1.0
        # Room for the transcript: the window less the reply, the rolling summary and the prompt around them
        # (each at most an eighth or a sixteenth of a small window).
        reply, prompt = summary_cap(window), min(SUMMARY_PROMPT_TOKENS, window // 16)
        room = max(500, int((window - 2 * reply) * CHUNK_SHARE / factor) - prompt)
        chunks: list[list[StoredMessage]] = [[]]
        size = 0
        for message in head:
            cost = tokens.estimate_message(message.content)
            if chunks[-1] and size + cost > room:
                chunks.append([])
                size = 0
            chunks[-1].append(message)
            size += cost
        return chunks

    async def make(
        self,
        head: list[StoredMessage],
        previous: str | None,
        focus: str | None,
        *,
        chat_model: str,
        choice: route.Choice,
        out_cap: int,
        cached: MessagesRequest | None = None,
        tail_start: str | None = None,
        spent: Spent | None = None,
    ) -> tuple[str | None, dict[str, Any], str]:
        """One summary of ``head`` on top of ``previous`` (the active one), the way ``choice`` picked: the chat's
        cached request with a summarise instruction (``cached``: that request), or the transcript for the summary
        model. A head larger than the summary model's window is summarised in parts, oldest first, each folding in
        the summary so far. ``out_cap``: the reply cap the chat's cost model allows. The summary and its stats,
        or None, the stats of what was refused and why. ``spent``: every request made is added to it, whatever
        the outcome."""
        spent = [] if spent is None else spent
        catalog, settings = self.shared.catalog, self.shared.settings
        model = settings.summary_model
        replaced = sum(tokens.estimate_message(m.content) for m in head)
        replaced += tokens.estimate_text(previous) if previous else 0
        started = time.monotonic()
        total: dict[str, int] = {}
        chunks: list[list[StoredMessage]] = [head]
        dropped = 0
        salvaged: dict[str, Any] = {}
        asks_left = [salvage.MAX_ASKS]  # section requests left to this compaction, every part together
        if choice.route == "cached" and cached is not None:
            req = route.cached_request(
                cached,
                tail_start=tail_start,
                previous=previous is not None,
                focus=focus,
                max_tokens=out_cap,
                index=message_index(head),
            )
            try:
                text, usage, stop = await self._ask(req, spent)
            except Exception as exc:  # noqa: BLE001 - any failure counts toward the breaker
                return None, {}, classify(exc).message[:300]
            seen = cp.flatten(
                cast(list[dict[str, Any]], cached["messages"])
            )  # what the model saw: the next step may be the tail's
            answer, problem = sections.accept(
                cp.extract_summary(text), previous, lines=sections.transcript_lines(seen)
            )
            problem = problem or cp.validate_summary(answer, replaced)
            total = usage.to_json()
            if problem:
                cap = self._section_cap(chat_model)
                asked = await self._salvage(
                    text,
                    previous,
                    replaced,
                    total,
                    lambda key: salvage.cached_request(cached, key, tail_start=tail_start, max_tokens=cap),
                    asks_left,
                    spent,
                    seen,
                    cut=stop == "max_tokens",
                    room=out_cap,
                )
                if asked is None:
                    return None, _rejected(text), problem
                answer, salvaged = asked
            previous = answer
        else:
            chunks = self._chunks(head, model)
            for chunk in chunks:
                part = await self._summarise_part(
                    chunk,
                    previous,
                    focus,
                    model,
                    asks_left,
                    cap=min(self._reply_cap(model), out_cap),
                    spent=spent,
                )
                if part.summary is None:
                    return None, _rejected(part.rejected), part.error
                previous, dropped = part.summary, dropped + part.dropped
                if part.salvaged:  # the last salvaged part's sources, every part's section requests
                    asks = int(salvaged.get("section_requests", 0)) + int(part.salvaged["section_requests"])
                    salvaged = {**part.salvaged, "section_requests": asks}
                for key, value in part.usage.to_json().items():
                    total[key] = total.get(key, 0) + value
        assert previous is not None
        problem = cp.validate_summary(previous, replaced)
        if problem:
            return None, {}, problem
        return (
            previous,
            {
                "messages": len(head),
                "summarised_tokens": replaced,
                "summary_tokens": tokens.estimate_text(previous),
                "summary_model": choice.model,
                "summary_route": choice.route,
                "route_estimates": choice.estimates,
                "route_most": choice.most,  # with every section request it may add
                "summary_usage": total,  # summed over the parts
                "summary_cost": route.cost_of(catalog.info(choice.model), Usage(**total)),
                "chunks": len(chunks),
                "dropped_for_length": dropped,
                "seconds": round(time.monotonic() - started, 3),
                "focus": focus or "",
                **salvaged,
            },
            "",
        )

    async def _summarise_part(
        self,
        head: list[StoredMessage],
        previous: str | None,
        focus: str | None,
        model: str,
        asks_left: list[int] | None = None,
        cap: int | None = None,
        spent: Spent | None = None,
    ) -> Part:
        """One summary request (retried shorter when the request itself is too long); a refused answer salvaged
        with at most ``asks_left[0]`` section requests (the compaction's budget, shared by its parts). ``cap``:
        the reply cap (default: the summary model's, ``_reply_cap``)."""
        cap = cap if cap is not None else self._reply_cap(model)
        spent = [] if spent is None else spent
        messages: list[Message] = list(head)
        error = "no summary"
        for _attempt in range(SUMMARY_RETRIES + 1):
            req = cp.build_summary_request(
                messages, previous_summary=previous, focus=focus, max_tokens=cap, model=model
            )
            try:
                text, usage, stop = await self._ask(req, spent)
            except Exception as exc:  # noqa: BLE001 - any failure counts toward the breaker
                found = overflow.from_exception(exc)
                if found is not None and found.kind == "context":
                    # The summarisation request itself is too long: drop the oldest quarter of its groups.
                    messages = cp.drop_oldest_groups(messages, max(1, len(group_starts(messages)) // 4))
                    if messages:
                        continue
                return Part(error=classify(exc).message[:300])  # worded as the chat path words it
            replaced = sum(tokens.estimate_message(m.content) for m in head) + (
                tokens.estimate_text(previous) if previous else 0
            )
            seen = cp.flatten(messages)
            summary, problem = sections.accept(
                cp.extract_summary(text), previous, lines=sections.transcript_lines(seen)
            )
            problem = problem or cp.validate_summary(summary, replaced)
            if problem:
                total = usage.to_json()
                asked = await self._salvage(
                    text,
                    previous,
                    replaced,
                    total,
                    functools.partial(self._section_request, list(messages), previous, model),
                    asks_left if asks_left is not None else [salvage.MAX_ASKS],
                    spent,
                    seen,
                    cut=stop == "max_tokens",
                    room=cap,
                )
                if asked is None:
                    return Part(error=problem, rejected=text)
                return Part(asked[0], Usage(**total), len(head) - len(messages), salvaged=asked[1])
            return Part(summary, usage, len(head) - len(messages))
        return Part(error=error)

    def _section_request(
        self, messages: list[Message], previous: str | None, model: str, key: str
    ) -> MessagesRequest:
        """The request for section ``key`` alone of a transcript summary."""
        return salvage.transcript_request(
            messages, key, previous_summary=previous, max_tokens=self._section_cap(model), model=model
        )

    def _reply_cap(self, model: str) -> int:
        """A whole summary's reply cap with ``model``: the room ``_chunks`` left for it (SUMMARY_SHARE of a small
        window), so a model that loops stops there rather than at the end of its context."""
        return summary_cap(
            self.shared.catalog.info(model).prompt_room(self.shared.settings.allow_price_tiers)
        )

    def _section_cap(self, model: str) -> int:
        """One section's reply cap: its share of the reply a whole summary may take with ``model`` (a salvaged
        summary must not outgrow what the chunking and the tail sizing counted on)."""
        return max(64, min(salvage.SECTION_MAX_TOKENS, self._reply_cap(model) // len(sections.SECTIONS)))

    async def _salvage(
        self,
        text: str,
        previous: str | None,
        replaced: int,
        total: dict[str, int],
        request: Callable[[str], MessagesRequest],
        asks_left: list[int],
        spent: Spent,
        transcript: str,
        *,
        cut: bool = False,
        room: int | None = None,
    ) -> tuple[str, dict[str, Any]] | None:
        """The refused reply ``text`` salvaged: its passing sections kept, each other one asked for alone (at
        most salvage.MAX_ASKS short requests, built by ``request``), the rest carried from ``previous``. The
        summary and its stats (where each section came from), or None when it still cannot be accepted.
        ``total``: the usage so far; the section requests' usage is added to it. ``asks_left``: the section
        requests the compaction has left, lowered by those made here. ``transcript``: what is summarised (with
        ``previous``, what a section may be about). ``cut``: the reply stopped at its length cap: its whole
        sections are kept and the rest carried from ``previous`` before any section is asked for."""
        if not self.salvage_sections:
            return None
        found = salvage.start(
            text,
            previous,
            asks_left[0],
            cut=cut,
            room=room,
            source=salvage.source_words(transcript + "\n" + (previous or "")),
            lines=salvage.source_lines(transcript),
        )
        while found.wants_more():
            key = found.next_key()
            try:
                answer, usage, _stop = await self._ask(request(key), spent)
            except Exception as exc:  # noqa: BLE001 - a section that cannot be asked for stays missing
                found.refused(key, classify(exc).message[:200])
                continue
            for name, value in usage.to_json().items():
                total[name] = total.get(name, 0) + value
            salvage.take_answer(found, key, answer)
        asks_left[0] -= found.asks
        salvage.carry(found, previous)
        summary, problem = salvage.assemble(found, previous)
        problem = problem or cp.validate_summary(summary, replaced)
        if problem:
            log.info("summary not salvaged: %s", problem)
            return None
        return summary, found.stats()
