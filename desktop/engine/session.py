"""One session as requests see it: gather -> shape (ingest cap, microcompaction) -> request -> measure.

The view keeps the decoded rows after the compaction boundary in memory between model calls and reads only
what is new (one round trip); the engine tells it about every write it makes. A compaction hands the view its
new record, so the state after it is derived here without reading the session again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, cast

from desktop.engine import assemble
from desktop.engine import compaction as cp
from desktop.engine.calibration import Calibration
from desktop.engine.catalog import ModelCatalog
from desktop.engine.context import ContextSnapshot
from desktop.engine.measure import ContextMeter, RequestFacts
from desktop.engine.settings import Paths, Settings
from desktop.engine.storage import Loaded, Storage
from desktop.engine.types import Block, CompactionRecord, SessionInfo, StoredMessage, Usage

BREAKER_LIMIT = 3  # consecutive summary failures that pause automatic summaries
INGEST_SHARE = 0.15  # one block never takes more than this share of a small window (about 3 characters a token)
CACHE_TTL = 300.0  # seconds the default prompt cache lives; after a longer pause it is cold
LONG_CACHE_TTL = 3600.0  # the 1-hour cache: its write costs 2x the input price instead of 1.25x


@dataclass(slots=True)
class Shared:
    """Engine-wide parts every session view and the compaction policy read. The engine owns and replaces them."""

    store: Storage
    paths: Paths
    settings: Settings
    catalog: ModelCatalog
    calibration: Calibration
    meter: ContextMeter
    counts: Counter[str] = field(default_factory=Counter)  # gathers and measures, for the engine benchmark

    def model_for(self, session: SessionInfo) -> str:
        return session.model or self.settings.model


@dataclass(slots=True)
class Gathered:
    """Everything one request (or one measurement) of a session is made from. Never mutated once made."""

    session: SessionInfo
    model: str
    compactions: list[CompactionRecord]
    history: list[StoredMessage]  # after the boundary, every status, as stored
    sendable: list[StoredMessage]  # what requests carry: sendable rows after ingest cap and microcompaction
    state: dict[str, Any]
    system: list[Block]
    tools: list[dict[str, Any]]
    cost: float | None = None  # the session's spend so far (None: a price is unknown)
    changed: set[tuple[int, int]] = field(default_factory=set)  # (message id, block index) cleared/truncated

    @property
    def compaction(self) -> CompactionRecord | None:
        return self.compactions[-1] if self.compactions else None

    @property
    def boundary(self) -> int:
        """Id of the active compaction (0: none)."""
        return self.compactions[-1].id if self.compactions else 0

    @property
    def horizons(self) -> dict[str, int]:
        return {k: int(v) for k, v in (self.state.get("horizons") or {}).items()}

    @property
    def breaker_failures(self) -> int:
        return int(self.state.get("breaker_failures", 0))

    @property
    def breaker_open(self) -> bool:
        return self.breaker_failures >= BREAKER_LIMIT


class SessionView:
    def __init__(self, session_id: int, shared: Shared):
        self.session_id = session_id
        self.shared = shared
        self._loaded: Loaded | None = None
        self._cost: float | None = 0.0
        self.media_limit: int | None = None  # lowered after a provider's media-count error
        self.last_request: float | None = None  # clock time of this session's last model call
        self.last_used: int | None = None  # the context size measured after the last turn
        # message id -> (request copy with huge blocks spilled, indices of those blocks)
        self._spilled: dict[int, tuple[list[Block], list[int]]] = {}
        self._spill_limit = 0

    # --- keeping the rows ------------------------------------------------------------------------------
    async def gather(self) -> Gathered:
        """The session now, in one round trip: new rows only, or the whole session after a boundary moved."""
        self.shared.counts["gathers"] += 1
        store = self.shared.store
        loaded = self._loaded
        if loaded is not None:
            last = loaded.history[-1].id if loaded.history else self._floor(loaded)
            since = await store.since(self.session_id, last)
            if since is None:
                raise LookupError(f"no session {self.session_id}")
            active = loaded.compactions[-1].id if loaded.compactions else 0
            if since.active_compaction_id == active:
                loaded.session, loaded.state = since.session, since.state
                for row in since.rows:
                    self.remember(row)
                return self.shape()
        fresh = await store.load(self.session_id)
        if fresh is None:
            raise LookupError(f"no session {self.session_id}")
        self._loaded = fresh
        # Priced per model from the store's running totals (cost is linear in usage): no reply is read here.
        self._cost = 0.0
        for model, usage in fresh.usage_totals.items():
            self._add_cost(model, usage)
        return self.shape()

    @staticmethod
    def _floor(loaded: Loaded) -> int:
        return loaded.compactions[-1].covers_through_message_id if loaded.compactions else 0

    def _add_cost(self, model: str | None, usage: Usage | None, sign: int = 1) -> None:
        """Add (sign=-1: take away) the price of ``usage``: a per-model total at a full load, one reply's
        usage (or its previous usage) when the engine tells the view about a row; None once a price is unknown."""
        if self._cost is None or usage is None:
            return
        cost = self.shared.catalog.cost(model or self.shared.settings.model, usage)
        self._cost = None if cost is None else self._cost + sign * cost

    def invalidate(self) -> None:
        """Rows were deleted or rewritten: the next gather reads the whole session again."""
        self._loaded = None

    def remember(self, msg: StoredMessage) -> None:
        """A row the engine wrote or changed (rows only ever change through the engine)."""
        loaded = self._loaded
        if loaded is None or msg.id <= self._floor(loaded):
            return
        history = loaded.history
        at = len(history)
        while at and history[at - 1].id > msg.id:
            at -= 1
        if at and history[at - 1].id == msg.id:
            old = history[at - 1]
            history[at - 1] = msg
            self._spilled.pop(msg.id, None)
            self._add_cost(old.model, old.usage, -1)
        else:
            history.insert(at, msg)
        self._add_cost(msg.model, msg.usage)

    def forget(self, message_id: int) -> None:
        """A row the engine deleted."""
        if self._loaded is not None:
            self._loaded.history = [m for m in self._loaded.history if m.id != message_id]

    def compacted(self, record: CompactionRecord, state_changes: dict[str, Any] | None = None) -> None:
        """A compaction row was committed: the rows it covers leave the request."""
        loaded = self._loaded
        if loaded is None:
            return
        loaded.compactions.append(record)
        loaded.history = [m for m in loaded.history if m.id > record.covers_through_message_id]
        if state_changes:
            loaded.state = {**loaded.state, **state_changes}

    def state_changed(self, state: dict[str, Any]) -> None:
        if self._loaded is not None:
            self._loaded.state = dict(state)

    # --- shaping ----------------------------------------------------------------------------------------
    def ingest_limit(self, model: str) -> int:
        """Characters one block may carry into requests: 50,000, less in small windows, where one round of
        parallel tool results could otherwise be larger than the whole window."""
        window = self.shared.catalog.info(model).window
        if not window:
            return cp.INGEST_LIMIT
        return max(8_000, min(cp.INGEST_LIMIT, int(window * INGEST_SHARE * 3)))

    def shape(self) -> Gathered:
        """A Gathered from the rows in memory: huge content capped, old results cleared, old texts cut."""
        loaded = self._loaded
        assert loaded is not None, "gather() first"
        spill = self.shared.paths.spill_dir(self.session_id)
        limit = self.ingest_limit(self.shared.model_for(loaded.session))
        if limit != self._spill_limit:
            self._spilled.clear()
            self._spill_limit = limit
        rows = []
        spilled: set[tuple[int, int]] = set()
        for m in loaded.history:
            if not m.sendable:
                continue
            # Spilled content is remembered per message: the file is written (and checked) once, not on
            # every measurement. Stored rows never change once complete, and ids are never reused.
            cached = self._spilled.get(m.id)
            if cached is None:
                # Tool output only: a person's own text is sent whole while it fits (checked before sending).
                capped = cp.cap_content(m.content, key=f"m{m.id}", spill_dir=spill, limit=limit,
                                        texts=False)
                changed = [i for i, (a, b) in enumerate(zip(capped, m.content, strict=True)) if a is not b]
                if changed and m.status == "complete":
                    self._spilled[m.id] = (capped, changed)
            else:
                capped, changed = cached
            spilled.update((m.id, i) for i in changed)
            rows.append(replace(m, content=capped) if changed else m)
        horizons = {k: int(v) for k, v in (loaded.state.get("horizons") or {}).items()}
        cleared_rows, cleared = cp.apply_clear(rows, horizons.get("clear", 0))
        shaped, cut = cp.apply_truncate(cleared_rows, horizons.get("old", 0),
                                        recent_horizon=horizons.get("recent", 0))
        return Gathered(
            session=loaded.session,
            model=self.shared.model_for(loaded.session),
            compactions=list(loaded.compactions),
            history=list(loaded.history),
            sendable=cast(list[StoredMessage], shaped),  # rows in, rows out
            state=dict(loaded.state),
            system=assemble.system_blocks(),
            tools=[],
            cost=self._cost,
            changed=spilled | cleared | cut,
        )

    # --- requests ---------------------------------------------------------------------------------------
    def request(self, g: Gathered) -> dict[str, Any]:
        shared = self.shared
        valid = cp.repair(assemble.with_summary(assemble.history_to_api(g.sendable), g.compaction))
        limit = self.media_limit or shared.catalog.info(g.model).media_limit
        capped, _report = cp.cap_media(valid, limit=limit, on_error="omit")
        system, tools, messages = cp.place_breakpoints(g.system, g.tools, cast(list[dict[str, Any]], capped),
                                                        summary_present=g.compaction is not None,
                                                        long_ttl=shared.settings.long_cache_ttl
                                                        and self.long_ttl_pays(g))
        request: dict[str, Any] = {
            "model": g.model,
            "max_tokens": shared.settings.max_output_tokens,
            "system": system,
            "messages": messages,
        }
        if tools:
            request["tools"] = tools
        return request

    @staticmethod
    def long_ttl_pays(g: Gathered) -> bool:
        """The session's own rhythm picks the cache lifetime: the 1-hour write costs more and pays back only
        when the user pauses longer than the 5-minute cache lives but not longer than the hour. Until such a
        pause has been seen, the cheaper 5-minute write is used."""
        sent = [float(m.meta.get("sent_at") or m.created_at) for m in g.history if m.role == "assistant"
                and m.usage]
        return any(CACHE_TTL < b - a <= LONG_CACHE_TTL for a, b in zip(sent, sent[1:], strict=False))

    def facts(self, g: Gathered) -> RequestFacts:
        """What is known about the request ``g`` makes, stored with its reply for the next anchored measure."""
        meter = self.shared.meter
        estimate = meter.whole_estimate(self.session_id, g.model, g.system, g.tools, g.compaction, g.sendable)
        anchor = meter.anchor(g.model, g.sendable, g.compaction, g.horizons)
        return RequestFacts(
            boundary=g.boundary,
            last_id=g.sendable[-1].id if g.sendable else 0,
            count=len(g.sendable),
            estimate=estimate,
            horizons=g.horizons,
            anchor=anchor[0].usage.prompt_tokens if anchor and anchor[0].usage else 0,
            added=anchor[1] if anchor else 0,
        )

    # --- measuring --------------------------------------------------------------------------------------
    def used(self, g: Gathered) -> tuple[int, str]:
        """The one number (tokens the next request carries) and where it comes from; no I/O."""
        return self.shared.meter.used(self.session_id, g.model, g.system, g.tools, g.compaction, g.sendable,
                                      g.horizons)

    def snapshot(self, g: Gathered, *, draft: str = "", refusal: str | None = None) -> ContextSnapshot:
        """The full measurement the gauge, the hover card and /context show (CPU only: run it off the loop)."""
        self.shared.counts["measures"] += 1
        return self.shared.meter.snapshot(
            session_id=self.session_id,
            model=g.model,
            system=g.system,
            tools=g.tools,
            compaction=g.compaction,
            compaction_count=len(g.compactions),
            history=g.sendable,
            max_output=self.shared.settings.max_output_tokens,
            session_cost=g.cost,
            breaker_open=g.breaker_open,
            horizons=g.horizons,
            draft=draft,
            trimmed=tuple(sorted({mid for mid, _block in g.changed})),
            refusal=refusal,
        )
