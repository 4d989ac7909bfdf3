"""One session as requests see it: gather -> shape (ingest cap, microcompaction) -> request -> measure.

The view keeps the decoded rows after the compaction boundary in memory between model calls and reads only
what is new (one round trip); the engine tells it about every write it makes. A compaction hands the view its
new record, so the state after it is derived here without reading the session again.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, cast

from msgspec import Struct, field
from msgspec.structs import replace

from desktop.engine import compaction as cp
from desktop.engine.compaction import user_pins
from desktop.engine.compaction.hooks import CompactionHooks, NoHooks
from desktop.engine.config.catalog import ModelCatalog, ModelInfo
from desktop.engine.config.settings import Paths, Settings
from desktop.engine.history.storage import Loaded, Storage, StoredEstimate
from desktop.engine.metering import tokens
from desktop.engine.metering.bill import Bill, split, total
from desktop.engine.metering.calibration import Calibration
from desktop.engine.metering.context import ContextSnapshot
from desktop.engine.metering.measure import (
    SMALLEST_INGEST,
    ContextMeter,
    Ledger,
    RequestFacts,
    RowEstimate,
    estimate_key,
    row_estimate,
    segments,
)
from desktop.engine.providers.model_rules import fit_request
from desktop.engine.turn import assemble
from desktop.engine.turn.thinking import thinking_param
from desktop.engine.turn.tooling import COMPACTED, PROJECT
from desktop.engine.types import (
    Block,
    CompactionRecord,
    MessagesRequest,
    SessionInfo,
    StoredMessage,
    Usage,
    WireMessage,
    covered_through,
)

BREAKER_LIMIT = 3  # consecutive summary failures that pause automatic summaries
INGEST_SHARE = (
    0.15  # one block never takes more than this share of a small window (about 3 characters a token)
)
CACHE_TTL = 300.0  # seconds the default prompt cache lives; after a longer pause it is cold
LONG_CACHE_TTL = 3600.0  # the 1-hour cache: its write costs 2x the input price instead of 1.25x
GLANCE_ROWS = 200  # newest rows a gauge reading decodes when a session opens (the anchor's turn, the tail)
SAVE_BATCH = 5_000  # stored estimates written with one read


class Shared(Struct):
    """Engine-wide parts every session view and the compaction policy read. The engine owns and replaces them."""

    store: Storage
    paths: Paths
    settings: Settings
    catalog: ModelCatalog
    calibration: Calibration
    meter: ContextMeter
    counts: Counter[str] = field(default_factory=Counter)  # gathers and measures, for the engine benchmark
    # The tool runner's definitions for a session (from its state: the workspace); None: no tools.
    tool_definitions: Callable[[int, Mapping[str, Any], int | None], list[dict[str, Any]]] | None = None
    # Reads workspace files back after a summary (session id, workspace-relative paths -> text); None: none.
    file_snapshots: Callable[[int, list[str]], str] | None = None
    # The user's commands before and after a compaction (the runtime wires the tools layer's runner).
    compaction_hooks: CompactionHooks = field(default_factory=NoHooks)
    # A project's text for a model's window and tokenizer (the engine keeps the projects; '' for none).
    project_text: Callable[[int, int | None, str], str] = lambda _project, _window, _family: ""
    project_recall: Callable[[int], bool] = lambda _project: False  # recall reaches across the project

    def model_for(self, session: SessionInfo) -> str:
        return session.model or self.settings.model

    def system_for(
        self,
        model: str,
        state: Mapping[str, Any],
        project_id: int | None = None,
        info: ModelInfo | None = None,
    ) -> list[Block]:
        """The system prompt of a session: worded for its model, with the default and the chat's instructions,
        and its project's (the same bytes in each of the project's chats on this model). ``info``: the model's
        catalog entry, when the caller has it."""
        chat = state.get("instructions")
        info = info or self.catalog.info(model)
        project = self.project_text(project_id, info.window, info.family) if project_id is not None else ""
        return assemble.system_blocks(
            model=model,
            instructions=self.settings.instructions,
            project=project,
            chat_instructions=chat if isinstance(chat, str) else "",
        )


class Gathered(Struct):
    """Everything one request (or one measurement) of a session is made from. Never mutated once made."""

    session: SessionInfo
    model: str
    compactions: list[CompactionRecord]
    history: list[StoredMessage]  # after the boundary, every status, as stored
    sendable: list[StoredMessage]  # what requests carry: sendable rows after ingest cap and microcompaction
    state: dict[str, Any]
    system: list[Block]
    tools: list[dict[str, Any]]
    cost: float | None = (
        None  # the session's spend so far, every request made for it (None: a price is unknown)
    )
    bill: Bill | None = None  # the same by kind
    compaction_cost: float | None = 0.0  # the part of ``cost`` its summaries' requests took
    changed: set[tuple[int, int]] = field(default_factory=set)  # (message id, block index) cleared/truncated
    ledger: Ledger | None = None  # the meter's view of ``sendable`` (sums kept as rows arrived)
    cuts: list[int] | None = None  # cut_points(sendable), kept as rows arrived (None: compute when needed)
    row_tokens: list[int] | None = (
        None  # estimate_message of each sendable row, default family (None: unknown)
    )
    pause_seen: bool | None = None  # long_ttl_pays, kept as rows arrived
    memo: dict[Any, Any] = field(
        default_factory=dict
    )  # results derived from this state (splits), computed once

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


class _Kept(Struct):
    """The rows after the boundary as requests carry them, kept between calls and grown as rows arrive: every row
    up to the first live (streaming) one, shaped, with what the meter, the splitter and the cache rule read.
    Valid for one epoch of the view and one (ingest limit, horizons, family); anything else starts it again."""

    epoch: int
    limit: int
    horizons: dict[str, int]
    family: str
    upto: int = 0  # history rows consumed
    rows: list[StoredMessage] = field(default_factory=list)  # shaped sendable rows
    ids: list[int] = field(default_factory=list)
    tok: list[int] = field(
        default_factory=list
    )  # estimate_message of each row, default family (the splitter's)
    changed: set[tuple[int, int]] = field(default_factory=set)
    calls: dict[str, Block] = field(default_factory=dict)  # tool_use by id (first wins), for cleared labels
    missed: set[str] = field(default_factory=set)  # ids a cleared result looked up in vain
    tokens: int = 0
    results: int = 0
    media: int = 0
    reply: StoredMessage | None = None
    cuts: list[int] = field(default_factory=list)  # cut_points(rows), kept as rows arrive
    last_use: dict[Any, int] = field(default_factory=dict)  # tool_use id -> row index, for the cuts
    last_sent: float | None = None  # the rhythm of replies (long_ttl_pays)
    pause: bool = False


class SessionView:
    def __init__(self, session_id: int, shared: Shared):
        self.session_id = session_id
        self.shared = shared
        self._loaded: Loaded | None = None
        self._cost: float | None = 0.0
        self._bill: Bill | None = Bill()
        self._compaction_cost: float | None = 0.0
        # What compaction spent since the last reply was sent: that reply's turn paid it (see take_unbilled).
        self._unbilled: list[tuple[str, Usage]] = []
        self.media_limit: int | None = None  # lowered after a provider's media-count error
        self.last_request: float | None = None  # clock time of this session's last model call
        self.last_used: int | None = None  # the context size measured after the last turn
        # Per-row caches, keyed by message id and checked by identity (a changed row is a new object): the
        # request copy with huge blocks spilled (the file is written once), the shaped copy, its estimate.
        self._capped: dict[int, tuple[StoredMessage, int, StoredMessage, list[int]]] = {}
        self._shaped: dict[
            int, tuple[StoredMessage, tuple[Any, ...], StoredMessage, list[tuple[int, int]]]
        ] = {}
        self._estimates: dict[int, tuple[StoredMessage, str, RowEstimate, int]] = {}
        self._epoch = 0  # bumped by every change other than rows added at the end
        self._kept: _Kept | None = None
        self._repairer = cp.Repairer(finish=cp.canonical_copy)
        self._summary_rows: dict[int, dict[str, Any]] = {}
        # The active record with the user's pins rendered on it, kept while neither changes (the request cache
        # checks the record by identity).
        self._pinned: tuple[CompactionRecord, tuple[user_pins.Pin, ...], CompactionRecord] | None = None
        # The est_key the store holds per row, and numbers to write with the next read (no extra round trip).
        self._stored_keys: dict[int, str] = {}
        self._unsaved: dict[int, StoredEstimate] = {}

    @property
    def loaded(self) -> bool:
        """The rows after the boundary are in memory (a gather happened since the last invalidation)."""
        return self._loaded is not None

    # --- keeping the rows ------------------------------------------------------------------------------
    async def gather(self) -> Gathered:
        """The session now, in one round trip: new rows only, or the whole session after a boundary moved."""
        self.shared.counts["gathers"] += 1
        store = self.shared.store
        loaded = self._loaded
        if loaded is not None:
            last = loaded.history[-1].id if loaded.history else self._floor(loaded)
            since = await store.since(self.session_id, last, self._take_unsaved())
            if since is None:
                raise LookupError(f"no session {self.session_id}")
            self._stored_keys.update(since.estimate_keys)
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
        self._stored_keys = dict(fresh.estimate_keys)
        self._changed()
        self._capped.clear()
        self._shaped.clear()
        self._estimates.clear()
        # Priced per model and prompt band from the store's running totals (cost is linear in usage within a
        # price tier, and every request of a band is on the same side of each cliff): no reply is read here.
        self._cost, self._bill, self._compaction_cost = 0.0, Bill(), 0.0
        infos: dict[str | None, ModelInfo] = {}  # one catalog read per model, not per band
        for (model, prompt), usage in fresh.usage_by_band.items():
            self._add_cost(model, usage, prompt_tokens=prompt, infos=infos)
        for (model, prompt), usage in fresh.spend_by_band.items():
            self._add_cost(model, usage, prompt_tokens=prompt, spend=True, infos=infos)
        return self.shape()

    def _take_unsaved(self) -> list[StoredEstimate]:
        """Numbers to store with the next read, at most SAVE_BATCH (a whole session estimated at once is
        stored over the next reads, so no turn waits for all of it)."""
        if len(self._unsaved) <= SAVE_BATCH:
            out, self._unsaved = list(self._unsaved.values()), {}
            return out
        keys = list(itertools.islice(self._unsaved, SAVE_BATCH))
        return [self._unsaved.pop(k) for k in keys]

    @staticmethod
    def _floor(loaded: Loaded) -> int:
        return covered_through(loaded.compactions)

    def _add_cost(
        self,
        model: str | None,
        usage: Usage | None,
        sign: int = 1,
        prompt_tokens: int | None = None,
        *,
        spend: bool = False,
        infos: dict[str | None, ModelInfo] | None = None,
    ) -> None:
        """Add (sign=-1: take away) the price of ``usage``: a per-model and band total at a full load (its
        requests' prompts at most ``prompt_tokens``), one reply's usage (or its previous usage) when the engine
        tells the view about a row; None once a price is unknown. ``spend``: requests made for the chat's
        compaction, counted in its part too. ``infos``: catalog entries already read, by model."""
        if usage is None:
            return
        info = infos.get(model) if infos is not None else None
        if info is None:
            info = self.shared.catalog.info(model or self.shared.settings.model)
            if infos is not None:
                infos[model] = info
        cost = info.cost(usage, prompt_tokens=prompt_tokens)
        if self._cost is not None:
            self._cost = None if cost is None else self._cost + sign * cost
        if spend and self._compaction_cost is not None:
            self._compaction_cost = None if cost is None else self._compaction_cost + sign * cost
        if self._bill is not None:
            kinds = split(info, usage, prompt_tokens=prompt_tokens)
            self._bill = None if kinds is None else self._bill + kinds.scaled(sign)

    def _changed(self, at: int | None = None) -> None:
        """A change that is not rows added at the end (at ``at``, a history index; None: anywhere): what was kept
        from that row on no longer holds."""
        kept = self._kept
        if at is None or (kept is not None and at < kept.upto):
            self._epoch += 1

    def invalidate(self) -> None:
        """Rows were deleted or rewritten: the next gather reads the whole session again."""
        self._loaded = None
        self._changed()

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
            self._changed(at - 1)
            self._stored_keys.pop(msg.id, None)  # a rewritten row's stored numbers were cleared with it
            self._add_cost(old.model, old.usage, -1)
        else:
            history.insert(at, msg)
            if at < len(history) - 1:
                self._changed(at)
        self._add_cost(msg.model, msg.usage)

    def spent(self, requests: list[tuple[str, Usage]]) -> None:
        """Requests made for the chat that are no reply of its own (its summaries): stored as its spend."""
        self._unbilled.extend(requests)
        if self._loaded is not None:
            for model, usage in requests:
                self._add_cost(model, usage, spend=True)

    def take_unbilled(self) -> list[tuple[str, Usage]]:
        """What compaction spent since the previous request, for the next reply's bill (and then no more)."""
        out, self._unbilled = self._unbilled, []
        return out

    def forget(self, message_id: int) -> None:
        """A row the engine deleted."""
        loaded = self._loaded
        if loaded is not None:
            at = next(
                (i for i in range(len(loaded.history) - 1, -1, -1) if loaded.history[i].id == message_id),
                None,
            )
            if at is not None:
                del loaded.history[at]
                self._changed(at)

    def compacted(self, record: CompactionRecord, state_changes: dict[str, Any] | None = None) -> None:
        """A compaction row was committed: the rows it covers leave the request."""
        loaded = self._loaded
        if loaded is None:
            return
        loaded.compactions.append(record)
        loaded.history = [m for m in loaded.history if m.id > record.covers_through_message_id]
        if state_changes:
            loaded.state = {**loaded.state, **state_changes}
        self._changed()
        through = record.covers_through_message_id
        for cache in (self._capped, self._shaped, self._estimates):
            for mid in [k for k in cache if k <= through]:
                del cache[mid]

    def state_changed(self, state: dict[str, Any]) -> None:
        if self._loaded is not None:
            self._loaded.state = dict(state)

    async def glance(self) -> Gathered:
        """The session as its gauge sees it, without reading it whole: the sums of the numbers stored per row
        (for the shape each row has now), the newest rows, and only the rows whose numbers are missing or stale
        decoded and estimated (their numbers are stored for the next time). For measuring only: requests and
        compactions need ``gather``. The ``ledger`` holds the newest rows; ``ledger.older`` counts the rest."""
        shared, store = self.shared, self.shared.store
        head = await store.since(self.session_id, 2**62)
        if head is None:
            raise LookupError(f"no session {self.session_id}")
        model = shared.model_for(head.session)
        limit = self.ingest_limit(model)
        family = shared.catalog.info(model).family
        horizons = {k: int(v) for k, v in (head.state.get("horizons") or {}).items()}
        ov = await store.overview(self.session_id, segments(family, limit, horizons), GLANCE_ROWS)
        if ov is None:
            raise LookupError(f"no session {self.session_id}")
        unknown = [m for m in ov.unknown if m.sendable]
        newest = [m for m in ov.newest if m.sendable]
        calls = cp.tool_names([*unknown, *newest])
        count, tokens_, results, media = ov.count, ov.tokens, ov.results, ov.media
        changed = {(mid, -1) for mid in ov.trimmed}
        save: list[StoredEstimate] = []
        for m in unknown:
            missed: set[str] = set()
            shaped, marks = self._shape_row(m, limit, horizons, calls, missed)
            est, _v3 = self._estimate(shaped, family)
            count, tokens_, results, media = (
                count + 1,
                tokens_ + est.tokens,
                results + est.results,
                media + est.media,
            )
            changed.update(marks)
            if not missed:  # a cleared result whose call was not read could be labelled otherwise
                save.append(
                    StoredEstimate(
                        m.id,
                        estimate_key(family, limit, horizons, m),
                        est.tokens,
                        est.results,
                        est.media,
                        bool(marks),
                    )
                )
        rows = []
        for m in newest:
            shaped, marks = self._shape_row(m, limit, horizons, calls)
            rows.append(shaped)
            changed.update(marks)
        if save:
            await store.set_estimates(save)
        reply = next(
            (m for m in reversed(rows) if m.role == "assistant" and m.usage and m.usage.prompt_tokens), None
        )

        # Per model and prompt band, so a price tier applies per request (see ``_add_cost``).
        infos: dict[str, ModelInfo] = {}  # one catalog read per model, not per band

        def info_of(name: str | None) -> ModelInfo:
            key = name or shared.settings.model
            found = infos.get(key)
            if found is None:
                found = infos[key] = shared.catalog.info(key)
            return found

        def priced(bands: dict[tuple[str | None, int], Usage]) -> Bill | None:
            return total(
                split(info_of(name), usage, prompt_tokens=prompt) for (name, prompt), usage in bands.items()
            )

        spend = priced(ov.spend_by_band)
        replies = priced(ov.usage_by_band)
        bill = None if replies is None or spend is None else replies + spend
        cost = None if bill is None else bill.total
        return Gathered(
            session=ov.session,
            model=model,
            compactions=self._with_pins(ov.compactions, ov.state),
            history=ov.newest,
            sendable=rows,
            state=ov.state,
            system=shared.system_for(model, ov.state, ov.session.project_id),
            tools=self._tools(model, ov.state, bool(ov.compactions), ov.session.project_id),
            cost=cost,
            bill=bill,
            compaction_cost=None if spend is None else spend.total,
            changed=changed,
            ledger=Ledger(rows, [m.id for m in rows], count, tokens_, results, media, reply),
        )

    def _tools(
        self,
        model: str,
        state: Mapping[str, Any],
        compacted: bool,
        project: int | None,
        info: ModelInfo | None = None,
    ) -> list[dict[str, Any]]:
        """The tool definitions every request of this chat carries. The reading at open counts them too: without
        them a chat no reply measured yet read ~1K tokens less after a restart than before it."""
        defs = self.shared.tool_definitions
        if defs is None:
            return []
        offered = {
            **state,
            **({COMPACTED: True} if compacted else {}),
            **({PROJECT: project} if project is not None and self.shared.project_recall(project) else {}),
        }
        return defs(self.session_id, offered, (info or self.shared.catalog.info(model)).window)

    # --- shaping ----------------------------------------------------------------------------------------
    def ingest_limit(self, model: str, info: ModelInfo | None = None) -> int:
        """Characters one block may carry into requests: 50,000, less in small windows, where one round of
        parallel tool results could otherwise be larger than the whole window."""
        window = (info or self.shared.catalog.info(model)).window
        if not window:
            return cp.INGEST_LIMIT
        return max(SMALLEST_INGEST, min(cp.INGEST_LIMIT, int(window * INGEST_SHARE * 3)))

    def shape(self) -> Gathered:
        """A Gathered from the rows in memory: huge content capped, old results cleared, old texts cut.

        Rows are shaped and estimated once each and kept (``_Kept``); a call after new rows arrived shapes only
        those. A change elsewhere (an edit, a compaction, a horizon or the ingest limit moving) starts the kept
        rows again, from the per-row caches."""
        loaded = self._loaded
        assert loaded is not None, "gather() first"
        model = self.shared.model_for(loaded.session)
        info = self.shared.catalog.info(model)  # once: every part below reads the same entry
        limit = self.ingest_limit(model, info)
        horizons = {k: int(v) for k, v in (loaded.state.get("horizons") or {}).items()}
        family = info.family
        history = loaded.history
        end = next(
            (
                i
                for i in range(self._kept.upto if self._kept else 0, len(history))
                if history[i].status == "streaming"
            ),
            len(history),
        )
        kept = self._kept
        if kept is None or (kept.epoch, kept.limit, kept.horizons, kept.family) != (
            self._epoch,
            limit,
            horizons,
            family,
        ):
            kept = self._kept = _Kept(self._epoch, limit, horizons, family)
            end = next((i for i, m in enumerate(history) if m.status == "streaming"), len(history))
        batch = history[kept.upto : end]
        new_calls = cp.tool_names([m for m in batch if m.sendable])
        if kept.missed & new_calls.keys():  # a cleared result's call arrived after it: its label changes
            kept = self._kept = _Kept(self._epoch, limit, horizons, family)
            batch = history[:end]
            new_calls = cp.tool_names([m for m in batch if m.sendable])
        for key, call in new_calls.items():
            kept.calls.setdefault(key, call)
        for m in batch:
            self._keep(kept, m)
        kept.upto = end

        sendable, ids, tok = kept.rows, kept.ids, kept.tok
        tokens_, results, media, reply, changed = (
            kept.tokens,
            kept.results,
            kept.media,
            kept.reply,
            kept.changed,
        )
        live = [m for m in history[end:] if m.sendable]  # after a streaming row: shaped now, not kept
        pause, last_sent = kept.pause, kept.last_sent
        for m in history[end:]:
            pause, last_sent = _rhythm(m, pause, last_sent)
        if live:
            calls = {**cp.tool_names(live), **kept.calls}
            sendable, ids, tok, changed = list(sendable), list(ids), list(tok), set(changed)
            for m in live:
                shaped, marks = self._shape_row(m, limit, horizons, calls)
                est, v3 = self._estimate(shaped, family)
                sendable.append(shaped)
                ids.append(m.id)
                tok.append(v3)
                changed.update(marks)
                tokens_, results, media = tokens_ + est.tokens, results + est.results, media + est.media
                if shaped.role == "assistant" and shaped.usage and shaped.usage.prompt_tokens:
                    reply = shaped
        rows = list(sendable)
        ledger = Ledger(rows, list(ids), len(rows), tokens_, results, media, reply)
        return Gathered(
            session=loaded.session,
            model=model,
            compactions=self._with_pins(list(loaded.compactions), loaded.state),
            history=list(history),
            sendable=rows,
            state=dict(loaded.state),
            system=self.shared.system_for(model, loaded.state, loaded.session.project_id, info),
            tools=self._tools(model, loaded.state, bool(loaded.compactions), loaded.session.project_id, info),
            cost=self._cost,
            bill=self._bill,
            compaction_cost=self._compaction_cost,
            changed=set(changed),
            ledger=ledger,
            cuts=None if live else list(kept.cuts),
            row_tokens=list(tok),
            pause_seen=pause,
        )

    def _with_pins(
        self, compactions: list[CompactionRecord], state: dict[str, Any]
    ) -> list[CompactionRecord]:
        """The compactions with the active one as requests see it: the messages the user pinned that it covers
        rendered beside its summary (``user_pins``)."""
        if not compactions:
            return compactions
        last = compactions[-1]
        pins = user_pins.covered(user_pins.pins_of(state), last.covers_through_message_id)
        if not pins and user_pins.STATS_KEY not in last.stats:
            return compactions
        memo = self._pinned
        if memo is None or memo[0] is not last or memo[1] != pins:
            memo = self._pinned = (last, pins, user_pins.decorate(last, pins))
        return [*compactions[:-1], memo[2]]

    def _keep(self, kept: _Kept, m: StoredMessage) -> None:
        kept.pause, kept.last_sent = _rhythm(m, kept.pause, kept.last_sent)
        if not m.sendable:
            return
        shaped, marks = self._shape_row(m, kept.limit, kept.horizons, kept.calls, kept.missed)
        est, v3 = self._estimate(shaped, kept.family)
        j = len(kept.rows)
        kept.rows.append(shaped)
        kept.ids.append(m.id)
        kept.tok.append(v3)
        kept.changed.update(marks)
        kept.tokens += est.tokens
        kept.results += est.results
        kept.media += est.media
        if shaped.role == "assistant" and shaped.usage and shaped.usage.prompt_tokens:
            kept.reply = shaped
        cp.extend_cuts(kept.cuts, kept.last_use, kept.rows, j)
        key = estimate_key(kept.family, kept.limit, kept.horizons, m)
        if self._stored_keys.get(m.id) != key:
            self._unsaved[m.id] = StoredEstimate(m.id, key, est.tokens, est.results, est.media, bool(marks))
            self._stored_keys[m.id] = key

    def _shape_row(
        self,
        m: StoredMessage,
        limit: int,
        horizons: dict[str, int],
        calls: dict[str, Block],
        missed: set[str] | None = None,
    ) -> tuple[StoredMessage, list[tuple[int, int]]]:
        """One row as requests carry it (ingest cap, then clearing and truncation behind the horizons), and the
        (message id, block index) pairs that changed. Cached per row for as long as its inputs are the same."""
        hit = self._capped.get(m.id)
        if hit is not None and hit[0] is m and hit[1] == limit:
            capped, spilled = hit[2], hit[3]
        else:
            spill = self.shared.paths.spill_dir(self.session_id)
            # Tool output only: a person's own text is sent whole while it fits (checked before sending).
            content = cp.cap_content(m.content, key=f"m{m.id}", spill_dir=spill, limit=limit, texts=False)
            spilled = [i for i, (a, b) in enumerate(zip(content, m.content, strict=True)) if a is not b]
            capped = replace(m, content=content) if spilled else m
            self._capped[m.id] = (m, limit, capped, spilled)
        cleared = m.id <= horizons.get("clear", 0)
        cut = (
            cp.OLD_LIMIT
            if m.id <= horizons.get("old", 0)
            else cp.RECENT_LIMIT
            if m.id <= horizons.get("recent", 0)
            else None
        )
        labels: tuple[Any, ...] = ()
        if cleared:  # a cleared result is labelled from its call: the same call, the same label
            wanted = [str(b.get("tool_use_id", "")) for b in capped.content if b.get("type") == "tool_result"]
            if missed is not None:
                missed.update(w for w in wanted if w not in calls)
            labels = tuple(id(calls.get(w)) for w in wanted)
        key = (cleared, cut, labels)
        hit2 = self._shaped.get(m.id)
        if hit2 is not None and hit2[0] is capped and hit2[1] == key:
            return hit2[2], hit2[3]
        row: Any = capped  # the pure stages return the kind of message they are given: a row
        indices = list(spilled)
        if cleared:
            row, more = cp.clear_message(row, calls)
            indices += more
        row, more = cp.truncate_message(row, cut)
        indices += more
        shaped: StoredMessage = row
        marks = [(m.id, i) for i in sorted(set(indices))]
        self._shaped[m.id] = (capped, key, shaped, marks)
        return shaped, marks

    def _estimate(self, row: StoredMessage, family: str) -> tuple[RowEstimate, int]:
        """The row's estimate for the meter (the model's family) and for the splitter (the default family)."""
        hit = self._estimates.get(row.id)
        if hit is not None and hit[0] is row and hit[1] == family:
            return hit[2], hit[3]
        est = row_estimate(row.content, family)
        v3 = est.tokens if family == tokens.DEFAULT_FAMILY else tokens.estimate_message(row.content)
        self._estimates[row.id] = (row, family, est, v3)
        return est, v3

    # --- requests ---------------------------------------------------------------------------------------
    def _summary_row(self, compaction: CompactionRecord) -> dict[str, Any]:
        """The summary (and pins) as the first user content, one object per compaction (so the request cache
        sees the same first row every call)."""
        row = self._summary_rows.get(compaction.id)
        if row is None or row["compaction"] is not compaction:
            row = {
                "role": "user",
                "content": [{"type": "text", "text": assemble.summary_text(compaction)}],
                "compaction": compaction,
            }
            self._summary_rows = {compaction.id: row}
        return row

    def request(self, g: Gathered) -> MessagesRequest:
        """The request ``g`` makes. Built from the rows kept since the previous call: only new rows are repaired
        and copied (each message's canonical copy is kept), then the breakpoints are marked on copies of the few
        blocks they touch. Equal to building it from scratch (``build_request``)."""
        shared = self.shared
        rows: list[Any] = [self._summary_row(g.compaction)] if g.compaction is not None else []
        rows.extend(g.sendable)
        valid = self._repairer.update(rows, g.model)
        counts: list[int] | None = self._repairer.block_counts
        messages = valid
        if self._repairer.media:  # only a session with images or documents pays for the media pass
            limit = self.media_limit or shared.catalog.info(g.model).media_limit
            capped, _report = cp.cap_media(valid, limit=limit, on_error="omit")
            messages = [
                m if m is v else cp.canonical_copy(m)
                for m, v in zip(cast(list[dict[str, Any]], capped), valid, strict=True)
            ]
            counts = None
        system, tools, messages = cp.mark_breakpoints(
            cp.canonical_copy(g.system),
            cp.canonical_copy(g.tools),
            messages,
            summary_present=g.compaction is not None,
            long_ttl=shared.settings.long_cache_ttl and self.long_ttl_pays(g),
            block_counts=counts,
        )
        return self._body(g, system, tools, messages)

    def _body(
        self, g: Gathered, system: list[Block], tools: list[dict[str, Any]], messages: list[dict[str, Any]]
    ) -> MessagesRequest:
        """The body around the marked parts (the breakpoints' copies are plain dicts: typed as messages here)."""
        settings = self.shared.settings
        request: MessagesRequest = {
            "model": g.model,
            "max_tokens": settings.max_output_tokens,
            "system": system,
            "messages": cast(list[WireMessage], messages),
        }
        if tools:
            request["tools"] = tools
        thinking = thinking_param(
            g.state, g.model, settings.thinking_budget_tokens, settings.max_output_tokens
        )
        if thinking is not None:
            request["thinking"] = thinking
        return fit_request(request, self.shared.catalog.info(g.model))

    def build_request(self, g: Gathered) -> MessagesRequest:
        """The request ``g`` makes, built from scratch (what ``request`` must equal; tests compare the two)."""
        shared = self.shared
        valid = cp.repair(assemble.with_summary(assemble.history_to_api(g.sendable), g.compaction), g.model)
        limit = self.media_limit or shared.catalog.info(g.model).media_limit
        capped, _report = cp.cap_media(valid, limit=limit, on_error="omit")
        system, tools, messages = cp.place_breakpoints(
            g.system,
            g.tools,
            cast(list[dict[str, Any]], capped),
            summary_present=g.compaction is not None,
            long_ttl=shared.settings.long_cache_ttl and self.long_ttl_pays(g),
        )
        return self._body(g, system, tools, messages)

    @staticmethod
    def long_ttl_pays(g: Gathered) -> bool:
        """The session's own rhythm picks the cache lifetime: the 1-hour write costs more and pays back only
        when the user pauses longer than the 5-minute cache lives but not longer than the hour. Until such a
        pause has been seen, the cheaper 5-minute write is used."""
        if g.pause_seen is not None:
            return g.pause_seen
        pause, last = False, None
        for m in g.history:
            pause, last = _rhythm(m, pause, last)
        return pause

    def ledger(self, g: Gathered) -> Ledger:
        if g.ledger is not None:
            return g.ledger
        family = self.shared.catalog.info(g.model).family
        return Ledger.of(g.sendable, family)

    def facts(self, g: Gathered) -> RequestFacts:
        """What is known about the request ``g`` makes, stored with its reply for the next anchored measure."""
        meter = self.shared.meter
        ledger = self.ledger(g)
        estimate = meter.whole_estimate(g.model, g.system, g.tools, g.compaction, ledger)
        anchor = meter.anchor(g.model, ledger, g.compaction, g.horizons)
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
        return self.shared.meter.used(g.model, g.system, g.tools, g.compaction, self.ledger(g), g.horizons)

    def snapshot(
        self, g: Gathered, *, draft: str = "", refusal: str | None = None, long_ttl: bool = False
    ) -> ContextSnapshot:
        """The full measurement the gauge, the hover card and /context show (CPU only: run it off the loop).
        ``long_ttl``: the session's requests ask for the 1-hour cache (a pause within the hour is not cold)."""
        self.shared.counts["measures"] += 1
        return self.shared.meter.snapshot(
            model=g.model,
            system=g.system,
            tools=g.tools,
            compaction=g.compaction,
            compaction_count=len(g.compactions),
            ledger=self.ledger(g),
            max_output=self.shared.settings.max_output_tokens,
            session_cost=g.cost,
            compaction_cost=g.compaction_cost,
            breaker_open=g.breaker_open,
            horizons=g.horizons,
            draft=draft,
            trimmed=tuple(sorted({mid for mid, _block in g.changed})),
            refusal=refusal,
            session_bill=g.bill,
            cache_lifetime=LONG_CACHE_TTL if long_ttl else CACHE_TTL,
        )


def _rhythm(m: StoredMessage, pause: bool, last: float | None) -> tuple[bool, float | None]:
    """One row's step of ``long_ttl_pays``: replies' send times, and whether a pause between two was longer than
    the 5-minute cache and within the hour."""
    if m.role != "assistant" or not m.usage:
        return pause, last
    sent = float(m.meta.get("sent_at") or m.created_at)
    if last is not None and CACHE_TTL < sent - last <= LONG_CACHE_TTL:
        pause = True
    return pause, sent
