"""One open chat: the only writer of its rows during a turn, the owner of its cached view, of its route (the
provider profile its requests go to) and the emitter of its events.

A turn is a loop of model calls: stored history -> request -> stream -> persisted reply, again while the model
stops for tools (the tool runner answers them; their results are written and announced here). Every call passes
the same context stages: ingest cap and microcompaction (the session view), the threshold and an automatic
summary (the compaction policy), and a reactive recovery when the provider still says "too long". The engine
keeps the registry of conversations, the configuration and the event bus (``Hub``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from msgspec import structs

from desktop.engine import messages as M
from desktop.engine.compaction import user_pins
from desktop.engine.compaction.chat_state import ChatCompaction
from desktop.engine.compaction.idle_prepare import IdleTimers
from desktop.engine.config.settings import Settings
from desktop.engine.events import (
    CompactionChanged,
    ContextChanged,
    EngineEvent,
    MessageAdded,
    MessageRemoved,
    MessageUpdated,
    Notice,
    PathChanged,
    TextDelta,
    TurnAction,
    TurnDone,
    TurnError,
    UsageUpdate,
)
from desktop.engine.history.storage import Fork, Storage, StorageError
from desktop.engine.metering import cache_clock
from desktop.engine.metering.calibration import CALIBRATION_KEY, ProfileCalibrations
from desktop.engine.metering.context import ContextSnapshot
from desktop.engine.metering.measure import draft_cost
from desktop.engine.providers.errors import ChatError, classify
from desktop.engine.providers.overflow import detect_stop_reason
from desktop.engine.providers.provider import STREAM_ENDED, PartKind
from desktop.engine.providers.route import Route
from desktop.engine.turn.continuation import as_continuation, is_cut
from desktop.engine.turn.reply import DUPLICATE_IDS, ReplyRecorder
from desktop.engine.turn.session import CACHE_TTL, Gathered, SessionView
from desktop.engine.turn.tasks import Activity, TaskRegistry
from desktop.engine.turn.tooling import EndTurn, ToolRunner, cancelled_results
from desktop.engine.types import Block, CompactionRecord, MessagesRequest, StoredMessage

if TYPE_CHECKING:  # the compaction policy loads with a chat's first measurement (see Route.compactor)
    from desktop.engine.compaction.compactor import Outcome, Plan, Trigger

RECOVERY_ATTEMPTS = 3  # retries after "too long" in one model call, each smaller than the last
# Diminishing returns: a tool round whose reply is under SMALL_CONTINUATION output tokens and whose calls all
# repeat calls of this turn that gave the same results made no progress; SMALL_CONTINUATIONS of them in a row
# end the turn. (Small rounds alone are normal agentic work: a reply that only calls a tool is usually under
# 500 tokens, and re-running a command after an edit gives a new result.)
SMALL_CONTINUATION = 500
SMALL_CONTINUATIONS = 3
# The result a tool call gets when an earlier call of the same reply had its id (the reply stored it under a new
# id): the model reads why it was not run, and the request stays valid (one result per call).
DUPLICATE_CALL = (
    "Not run: this call came with the id {old}, which an earlier call in the same reply already has, so it was "
    "given the id {new} and not run. Call the tool again if it is still needed."
)

log = logging.getLogger(__name__)


class TurnFailed(Exception):
    def __init__(self, error: ChatError):
        super().__init__(error.message)
        self.error = error


def _fingerprint(request: MessagesRequest) -> str:
    """Identity of a request's content, to never resend one that failed."""
    body = json.dumps(
        [request.get("system"), request.get("tools"), request["messages"]], sort_keys=True, default=str
    )
    return hashlib.sha256(body.encode()).hexdigest()


def _output_tokens(reply: StoredMessage) -> int:
    return reply.usage.output_tokens if reply.usage else 0


def turn_error(session_id: int, error: ChatError) -> TurnError:
    if error.kind == "overflow":
        actions: tuple[TurnAction, ...] = ("compact_retry", "new_chat_from_summary")
    else:
        actions = ("retry",) if error.retryable else ()
    return TurnError(session_id, error.kind, error.message, error.retryable, actions, detail=error.detail)


class Hub(Protocol):
    """What a conversation uses of the engine: the bus, the jobs, the tools, the shared facts and settings."""

    tasks: TaskRegistry
    tools: ToolRunner | None
    background: bool
    idle_timers: IdleTimers
    clock: Callable[[], float]

    @property
    def store(self) -> Storage: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def calibrations(self) -> ProfileCalibrations: ...

    def emit(self, event: EngineEvent) -> None: ...

    @property
    def heard(self) -> bool: ...

    async def load(self) -> None: ...

    async def route_of(self, session_id: int) -> Route: ...

    async def ask_window(self, route: Route, model: str) -> bool: ...

    async def learn_window(self, route: Route, model: str, window: int) -> None: ...

    def drop_background(self, session_id: int) -> None: ...


class Conversation:
    """An open chat. Its route is resolved from the session's profile on first use, and again after the
    configuration changed or the chat moved to another profile."""

    def __init__(self, session_id: int, view: SessionView, hub: Hub):
        self.session_id = session_id
        self.view = view
        self.hub = hub
        self.route: Route | None = None
        self.compaction = ChatCompaction()  # this chat's own: its prepared summary, the schedule's last word
        self.unsaved: ReplyRecorder | None = None  # a finished reply whose final commit failed
        self.latest: ContextSnapshot | None = None  # the newest draft-less measurement
        # Measurements are numbered when they read the chat: one that finishes after a newer one was published
        # (waiting on the provider's window answer while a turn ran) is stale and is not published.
        self._readings = 0
        self._published = 0

    # --- the route ---------------------------------------------------------------------------------
    def bind(self, route: Route) -> Route:
        """Use ``route`` from now on; the view reads the route's facts (and reads the rows again under them)."""
        if self.route is not route:
            if self.view.shared is not route.shared:
                self.view.shared = route.shared
                self.view.invalidate()
            self.route = route
        return route

    async def ready(self) -> Route:
        return self.route if self.route is not None else self.bind(await self.hub.route_of(self.session_id))

    def _emit(self, event: EngineEvent) -> None:
        self.hub.emit(event)

    # --- what the tool runner reports (ToolEvents): published here, like every event of this chat -------
    @property
    def heard(self) -> bool:
        return self.hub.heard

    def report(self, event: EngineEvent) -> None:
        if event.session_id != self.session_id:
            log.warning("session %s: a tool event of session %s dropped", self.session_id, event.session_id)
            return
        self._emit(event)

    def _activity(self, activity: Activity) -> None:
        self.hub.tasks.set_activity(self.session_id, activity)

    # --- writes outside a model call ------------------------------------------------------------------
    async def add_user(self, content: list[Block], title: str, meta: dict[str, Any] | None) -> StoredMessage:
        user = await self.hub.store.add_user_message(self.session_id, content, title=title, meta=meta)
        self.view.remember(user)
        self._emit(MessageAdded(self.session_id, user))
        return user

    async def carry_over(self, text: str) -> StoredMessage:
        """The first message of a chat started from another one's summary (marked synthetic: the user did not
        type it)."""
        carried = await self.hub.store.add_message(
            self.session_id,
            "user",
            [{"type": "text", "text": text}],
            meta={"carried_over": True, "synthetic": True},
        )
        self.view.remember(carried)
        return carried

    async def save_unsaved(self) -> StoredMessage:
        """Commit a reply that arrived whole but could not be saved (the database was locked or full)."""
        recorder = self.unsaved
        assert recorder is not None
        reply = await recorder.flush(
            "complete", meta={**recorder.reply.meta, "stop_reason": recorder.stop_reason}
        )
        self.unsaved = None
        self.view.remember(reply)
        self._emit(TurnDone(self.session_id, reply))
        return reply

    async def undo_compaction(self) -> bool:
        """Remove the newest compaction: the next request is rebuilt from the originals."""
        g = await self.view.gather()
        if g.compaction is None:
            return False
        self.hub.drop_background(self.session_id)
        await self.hub.store.delete_compaction(g.compaction.id)
        after = await self.reload("undo")
        # Say what is in use now: the summary before an edit, an earlier summary, or the originals.
        said = (
            M.UNDONE_EDIT
            if g.compaction.stats.get("edited")
            else M.UNDONE_TO_PREVIOUS
            if after.compaction is not None
            else M.UNDONE
        )
        self._emit(Notice(self.session_id, M.say(said), "info"))
        return True

    async def delete_message(self, message_id: int) -> None:
        self.hub.drop_background(self.session_id)
        await self.hub.store.delete_message(message_id)
        self._emit(MessageRemoved(self.session_id, message_id))
        await self.reload("delete")
        self._emit(PathChanged(self.session_id))  # another version may be shown in its place

    async def branch(self, message_id: int) -> Fork:
        """Move the path to the parent of ``message_id`` (a new version is written on it next)."""
        fork = await self.hub.store.branch_at(self.session_id, message_id)
        for mid in fork.removed:
            self._emit(MessageRemoved(self.session_id, mid))
        self.view.invalidate()
        g = await self.view.gather()
        self._emit(CompactionChanged(self.session_id, "version", tuple(g.compactions)))
        return fork

    async def restore(self, fork: Fork, written: bool) -> None:
        """After a new version: when nothing was written the old path comes back, and the kept rows are read
        again (a failed reply's empty row was deleted meanwhile)."""
        restored = await self.hub.store.restore_branch(self.session_id, fork)
        if restored or not written:
            await self.reload("version")
        self._emit(PathChanged(self.session_id))

    async def switch_version(self, message_id: int, delta: int) -> bool:
        return await self.hub.store.switch_version(self.session_id, message_id, delta)

    async def switched(self) -> None:
        await self.reload("switch")
        self._emit(PathChanged(self.session_id))

    async def clear_history(self) -> None:
        self.hub.drop_background(self.session_id)
        await self.hub.store.clear_history(self.session_id)
        await self.reload("clear")

    async def edit_summary(self, text: str) -> CompactionRecord | None:
        """The user's text becomes the active summary: a new compaction row over the same messages (the old one
        stays; Undo brings it back). None when the chat has no summary."""
        from desktop.engine.compaction import steering

        g = await self.view.gather()
        if g.compaction is None:
            return None
        through = g.compaction.covers_through_message_id
        covered = [
            m for m in await self.hub.store.messages(self.session_id) if m.id <= through and m.sendable
        ]
        if problem := steering.edit_problem(text, covered):
            raise ValueError(problem)
        self.hub.drop_background(self.session_id)
        record = await self.hub.store.add_compaction(
            self.session_id,
            text,
            g.compaction.covers_through_message_id,
            "edit",
            steering.edited_stats(g.compaction, text),
            expected_active=g.boundary,
        )
        await self.reload("edit")
        self._emit(Notice(self.session_id, M.say(M.SUMMARY_EDITED), "info"))
        return record

    async def update_state(self, changes: dict[str, Any]) -> dict[str, Any]:
        """Change the session's state (e.g. its workspace: the tools its requests offer) and measure it again."""
        state = await self.hub.store.update_state(self.session_id, changes)
        self.view.state_changed(state)
        await self.ready()
        await self.publish_context()
        return state

    async def pin(self, message_id: int, text: str | None, now: float) -> user_pins.Pin:
        """Keep a message (or the part ``text`` of it) verbatim beside every later summary."""
        msg = await self.hub.store.get_message(message_id)
        if msg is not None and msg.session_id != self.session_id:
            msg = None
        pin = user_pins.make(msg, text, now)
        pins = user_pins.pins_of(await self.hub.store.get_state(self.session_id))
        user_pins.check_room(pins, pin, self.hub.settings.pin_budget_tokens)
        await self.update_state({user_pins.STATE_KEY: user_pins.with_pin(pins, pin)})
        return pin

    async def unpin(self, message_id: int) -> bool:
        """Take a pin away (False: that message was not pinned); the next request no longer carries it."""
        pins = user_pins.pins_of(await self.hub.store.get_state(self.session_id))
        if all(p.message_id != message_id for p in pins):
            return False
        await self.update_state({user_pins.STATE_KEY: user_pins.without_pin(pins, message_id)})
        return True

    async def set_model(self, model: str, profile: str | None) -> None:
        """The chat's own model (and profile) from now on: its route is found again for the next request."""
        await self.hub.store.update_session(self.session_id, model=model, profile=profile)
        self.hub.drop_background(self.session_id)
        self.route = None
        await self.reload("model")

    # --- compaction outside a turn --------------------------------------------------------------------
    async def compact_now(
        self, trigger: Trigger, focus: str | None, target: int | None, before_message: int | None = None
    ) -> Outcome:
        if trigger == "manual":  # the user asked for a fresh summary, maybe with a focus
            self.hub.drop_background(self.session_id)
        else:
            await self.hub.tasks.wait(self.session_id, "prepare")
        await self.hub.load()
        route = await self.ready()
        g = await self.view.gather()
        outcome = await route.compactor.compact(
            self.view,
            g,
            trigger,
            focus=focus,
            target=target,
            before_message=before_message,
            chat=self.compaction,
        )
        await self.settle(outcome, publish=True)
        return outcome

    async def plan(self, before_message: int | None) -> Plan:
        """What a manual compaction would do now (read-only: the preview before Compact now)."""
        await self.hub.load()
        route = await self.ready()
        g = await self.view.gather()
        before, _source = self.view.used(g)
        return route.compactor.plan(g, "manual", before_message=before_message, before=before, view=self.view)

    async def settle(self, outcome: Outcome, *, publish: bool) -> None:
        """Tell the views what a compaction did (from the state it returned: nothing is read again)."""
        sid = self.session_id
        for text, level in outcome.notices:
            self._emit(Notice(sid, text, level))
        if outcome.record is not None and outcome.g is not None:
            self._emit(CompactionChanged(sid, outcome.record.trigger, tuple(outcome.g.compactions)))
            if publish:
                await self.publish(outcome.g)

    async def reload(self, note: str) -> Gathered:
        """After a write that removed rows or a boundary: read the session again, tell the views, measure."""
        self.view.invalidate()
        g = await self.view.gather()
        self._emit(CompactionChanged(self.session_id, note, tuple(g.compactions)))
        await self.publish(g)
        return g

    async def prepare_idle(self) -> None:
        route = await self.ready()
        g = await self.view.gather()
        if route.compactor.idle_summary_pays(self.view, g, self.compaction):
            await route.compactor.prepare_idle(self.view, g, self.compaction)

    # --- measuring ------------------------------------------------------------------------------------
    async def measure(self, g: Gathered, draft: str = "", *, ask: bool = True) -> ContextSnapshot:
        """``ask``: the provider may be asked for the model's window now (once per model). Without it, it is
        asked only when the catalog has no figure: asking needs the SDK, which a chat being read has not
        loaded, and the figure stands (the catalog's, or what the provider reported in an earlier run)."""
        route = await self.ready()
        if ask or route.shared.catalog.info(g.model).window is None:
            await self.hub.ask_window(route, g.model)
        compactor, view = route.compactor, self.view
        long_ttl = route.settings.long_cache_ttl and view.long_ttl_pays(g)

        def snapshot() -> ContextSnapshot:
            # A reading at open holds the newest rows only: older ones are there to compact.
            older = g.ledger is not None and g.ledger.older > 0
            return view.snapshot(
                g, draft=draft, refusal=None if older else compactor.refusal(g), long_ttl=long_ttl
            )

        # Estimating a long uncached session takes a while: keep it off the loop (the UI thread in the app).
        measured = await asyncio.to_thread(snapshot)
        return cache_clock.annotate(
            measured,
            info=route.shared.catalog.info(g.model),
            compact_at=compactor.threshold_rule(g.model),
            last_request=view.last_request,
            long_ttl=long_ttl,
        )

    async def publish(self, g: Gathered, *, ask: bool = True, reading: int | None = None) -> ContextSnapshot:
        """``reading``: the number taken before ``g`` was read (``next_reading``); by default, now."""
        reading = self.next_reading() if reading is None else reading
        snapshot = await self.measure(g, ask=ask)
        if reading < self._published and self.latest is not None:
            return self.latest
        self._published = reading
        self.latest = snapshot  # the base the typing path adds a draft to
        self._emit(ContextChanged(self.session_id, snapshot))
        return snapshot

    def next_reading(self) -> int:
        self._readings += 1
        return self._readings

    async def publish_context(self, *, ask: bool = True) -> ContextSnapshot:
        """Measure and publish (``ask``: see measure). A session whose rows are not in memory (just opened) is
        read from the numbers stored per row, not decoded whole: its first request reads it."""
        await self.hub.load()
        await self.ready()
        view, reading = self.view, self.next_reading()
        return await self.publish(
            await (view.gather() if view.loaded else view.glance()), ask=ask, reading=reading
        )

    async def publish_draft(self, draft: str) -> ContextSnapshot:
        """While the user types only the next-turn estimate changes: add the draft to the latest measurement
        instead of re-reading and re-estimating the whole session on every pause in typing."""
        # Typing loads the SDK for the provider's answer (the window asks it then, see Bridge.warm_sdk): reading
        # the chat for a draft's figure asks the provider nothing, like opening it.
        base = self.latest if self.latest is not None else await self.publish_context(ask=False)
        family = (await self.ready()).shared.catalog.info(base.model).family
        snapshot = structs.replace(base, next_turn=base.next_turn + draft_cost(draft, family))
        self._emit(ContextChanged(self.session_id, snapshot))
        return snapshot

    # --- the turn -----------------------------------------------------------------------------------
    async def run_turn(self, continuing: bool = False) -> StoredMessage | None:
        hub, sid = self.hub, self.session_id
        hub.idle_timers.cancel(sid)
        reply, error = await hub.tasks.run(sid, "turn", self._turn(continuing), (None, None))
        if error is not None:  # reported once the turn is over, so a Retry at once finds the chat idle
            self._emit(error)
        if (
            hub.background
        ):  # the cache lapses TTL after this request: prepare a summary just before, if it pays
            hub.idle_timers.arm(sid, self.view.last_request, CACHE_TTL)
        return reply

    async def _turn(self, continuing: bool = False) -> tuple[StoredMessage | None, TurnError | None]:
        """Model calls until the model stops for something other than tools; the gauge is measured at the end.
        Returns the reply, or the error for the caller to report."""
        await self.hub.load()
        await self.ready()
        sid, view, calls = self.session_id, self.view, self.hub.settings.max_model_calls
        reply: StoredMessage | None = None
        error: TurnError | None = None
        g: Gathered | None = None
        small = 0  # tool rounds in a row that made no progress
        seen: set[str] = set()  # the calls of this turn with their results, as (name, input, result)
        try:
            for call in range(max(1, calls)):
                g = await self._prepare_call()
                reply = await self._call(g, continuing=continuing and call == 0)
                if reply.status != "complete" or not self._wants_tools(reply):
                    break
                results = {r.get("tool_use_id"): r.get("content") for r in await self._answer_tools(reply)}
                rounds = {
                    json.dumps(
                        [b.get("name"), b.get("input"), results.get(b.get("id"))], sort_keys=True, default=str
                    )
                    for b in reply.content
                    if b.get("type") == "tool_use"
                }
                stale = _output_tokens(reply) < SMALL_CONTINUATION and rounds <= seen
                small = small + 1 if stale else 0
                seen |= rounds
                if small >= SMALL_CONTINUATIONS:
                    self._emit(Notice(sid, M.say(M.STOPPED_REPEATING, rounds=small), "warning"))
                    break
            else:
                self._emit(Notice(sid, M.say(M.STOPPED_CALLS, calls=calls), "warning"))
        except EndTurn as end:
            error = TurnError(sid, "tool_permission", end.reason, False, ())
            reply = None
        except TurnFailed as failed:
            error = turn_error(sid, failed.error)
            reply = None
        except asyncio.CancelledError:
            pass  # stopped: what was committed stays; the gauge still shows the state as it is now
        after = view.shape() if g is not None else await view.gather()
        snapshot = await asyncio.shield(self.publish(after))
        if reply is not None and reply.status == "complete" and self.hub.background:
            self._maybe_prepare(after, snapshot.used)
        return reply, error

    async def _answer_tools(self, reply: StoredMessage) -> list[Block]:
        """Run the reply's tool calls and store their results. Whatever happens (a stop, a runner that ends the
        turn) every tool_use gets its tool_result: cancelled calls are answered as such before the stop ends
        the turn."""
        tools = self.hub.tools
        assert tools is not None
        sid = self.session_id
        calls = [b for b in reply.content if b.get("type") == "tool_use"]
        # A call that came with an earlier call's id (renamed when the reply was stored) is answered, not run.
        duplicates: dict[str, str] = reply.meta.get(DUPLICATE_IDS) or {}
        refused = [
            {
                "type": "tool_result",
                "tool_use_id": c["id"],
                "is_error": True,
                "content": DUPLICATE_CALL.format(old=duplicates[c["id"]], new=c["id"]),
            }
            for c in calls
            if c.get("id") in duplicates
        ]
        if refused:
            log.warning("session %s: %s tool calls reused an earlier call's id; not run", sid, len(refused))
        calls = [c for c in calls if c.get("id") not in duplicates]
        self._activity(Activity.TOOLS)
        end: EndTurn | None = None
        try:
            results = await tools.run(sid, calls, self) if calls else []
        except asyncio.CancelledError:
            await asyncio.shield(self._store_results(cancelled_results(calls) + refused))
            raise
        except EndTurn as stop:
            end, results = stop, stop.results
        except Exception as exc:  # noqa: BLE001 - a broken runner still answers every call
            log.exception("session %s: the tool runner failed", sid)
            results = [
                {**r, "content": f"[tool runner failed: {type(exc).__name__}: {exc}]"}
                for r in cancelled_results(calls)
            ]
        results = results + refused
        await self._store_results(results)
        if end is not None:
            raise end
        return results

    async def _store_results(self, results: list[Block]) -> None:
        answer = await self.hub.store.add_message(self.session_id, "user", results)
        self.view.remember(answer)
        self._emit(MessageAdded(self.session_id, answer))

    def _wants_tools(self, reply: StoredMessage) -> bool:
        return (
            self.hub.tools is not None
            and reply.meta.get("stop_reason") == "tool_use"
            and any(b.get("type") == "tool_use" for b in reply.content)
        )

    async def _prepare_call(self) -> Gathered:
        """Before a request: microcompaction, then at most one automatic summary, then snip if still too big."""
        from desktop.engine.compaction.compactor import Step

        view = self.view
        self._activity(Activity.SENDING)
        route = await self.ready()
        compactor = route.compactor
        g = await view.gather()
        used, source = view.used(g)
        idle = compactor.idle_for(view, g)
        cleared = False
        # The policy decides one step at a time (clear, count, then at most one compaction); this carries it out.
        while True:
            decision = compactor.before_call(g, used, source, idle, cleared=cleared, chat=self.compaction)
            if decision.step is Step.CLEAR and decision.horizons is not None:
                view.state_changed(
                    await self.hub.store.update_state(self.session_id, {"horizons": decision.horizons})
                )
                g, cleared = view.shape(), True
                used, source = view.used(g)
            elif decision.step is Step.COUNT:
                exact = await (await route.connected()).count_tokens(view.request(g))
                used, source = exact or used, "exact" if exact else "counted"
            else:
                break
        if decision.note is not None:  # a due summary waits (it does not pay yet): the views hear why, once
            self._emit(CompactionChanged(self.session_id, decision.note, tuple(g.compactions)))
        if decision.trigger is not None:
            g = await self._compact_in_turn(
                g, decision.trigger, decision.target, Activity.COMPACTING, trim=decision.step is Step.TRIM
            )
            self._activity(Activity.SENDING)
        return g

    async def _compact_in_turn(
        self,
        g: Gathered,
        trigger: Trigger,
        target: int | None,
        activity: Activity,
        level: int = 0,
        *,
        trim: bool = False,
    ) -> Gathered:
        self._activity(activity)
        route = await self.ready()
        if trim:  # summaries are failing: no summary is asked for, the oldest messages go
            outcome = await route.compactor.trim(self.view, g, target, self.view.used(g)[0])
            await self.settle(outcome, publish=False)
            return outcome.g or g
        # A summary being prepared in the background is the cheapest way through: let it finish.
        await self.hub.tasks.wait(self.session_id, "prepare")
        outcome = await route.compactor.compact(
            self.view, g, trigger, target=target, level=level, chat=self.compaction
        )
        await self.settle(outcome, publish=False)
        return outcome.g or g

    async def _call(self, g: Gathered, *, continuing: bool = False) -> StoredMessage:
        """One model call. On overflow (or too much media) recover invisibly: each retry shrinks harder than the
        last, a request that already failed is never sent again, and the attempts are bounded."""
        failed: set[str] = set()
        for attempt in range(RECOVERY_ATTEMPTS + 1):
            try:
                return await self._attempt(g, continuing=continuing)
            except TurnFailed as error:
                if error.error.kind not in ("overflow", "media") or attempt == RECOVERY_ATTEMPTS:
                    raise
                failed.add(_fingerprint(self.view.request(g)))
                g = await self._recover(g, error.error, attempt, failed)
        raise AssertionError("unreachable")

    async def _recover(self, g: Gathered, error: ChatError, attempt: int, failed: set[str]) -> Gathered:
        """The provider said the request is too long (or has too much media): shrink, and make sure the next
        request differs from every one that failed (else shrink harder, or give up with the error)."""
        from desktop.engine.compaction.compactor import DEEPEST_LEVEL

        sid, view = self.session_id, self.view
        route = await self.ready()
        catalog = route.shared.catalog
        found = error.detail.get("overflow")
        if error.kind == "media":
            count = found.media_count if found and found.media_count else None
            limit = view.media_limit or (
                found.media_limit if found and found.media_limit else catalog.info(g.model).media_limit
            )
            first = count is not None and attempt == 0
            view.media_limit = max(1, min(limit, count or limit) - 1) if first else max(1, limit // 2)
            log.info("session %s: media limit lowered to %s (attempt %s)", sid, view.media_limit, attempt + 1)
            self._emit(Notice(sid, M.say(M.MEDIA_LEFT_OUT), "info"))
            return g
        if found is not None and found.limit:
            await self.hub.learn_window(route, g.model, found.limit)
        window = catalog.info(g.model).window or (found.limit if found and found.limit else None)
        for level in range(attempt, DEEPEST_LEVEL + 1):
            # Harder each time: a smaller target and a deeper cut (inside a long turn when needed).
            target = route.compactor.recovery_target(window, level)
            g = await self._compact_in_turn(g, "reactive", target, Activity.RECOVERING, level=level)
            log.info(
                "session %s: reactive compaction, attempt %s, level %s, target %s",
                sid,
                attempt + 1,
                level,
                target,
            )
            if _fingerprint(view.request(g)) not in failed:
                break
        else:
            log.warning("session %s: the context cannot be made smaller; giving up", sid)
            raise TurnFailed(error)
        self._activity(Activity.SENDING)
        return g

    async def _attempt(self, g: Gathered, *, continuing: bool = False) -> StoredMessage:
        """One request and its streamed reply. Raises TurnFailed with the typed error; a stop keeps the partial
        reply, marked interrupted, and ends the turn. ``continuing``: the request ends with the cut reply,
        which the model resumes in a new row linked to it."""
        sid, view, store = self.session_id, self.view, self.hub.store
        provider = await (await self.ready()).connected()
        request = view.request(g)
        meta: dict[str, Any] = {}
        if continuing:
            cut = g.sendable[-1] if g.sendable else None
            if cut is None or not is_cut(cut):  # e.g. a summary now covers it
                raise TurnFailed(ChatError("bad_request", M.say(M.CUT_REPLY_GONE), False))
            request = as_continuation(request)
            meta["continues"] = cut.id
        facts = view.facts(g)
        if spent := view.take_unbilled():  # the compaction this turn paid, on its bill
            meta["compaction_spend"] = [[model, usage.to_json()] for model, usage in spent]
        view.last_request = self.hub.clock()
        row = await store.add_message(
            sid,
            "assistant",
            [],
            status="streaming",
            model=request["model"],
            meta={"request": facts.to_json(), "sent_at": view.last_request, **meta},
        )
        view.remember(row)
        self._emit(MessageAdded(sid, row))
        self._activity(Activity.WAITING)
        recorder = ReplyRecorder(store, row)
        recorder.start_clock()
        try:
            async for part in provider.stream(request):
                recorder.apply(part)
                if part.kind is PartKind.USAGE and part.usage is not None:
                    self._emit(UsageUpdate(sid, row.id, part.usage))
                elif part.kind is PartKind.TEXT:
                    self._activity(Activity.STREAMING)
                    self._emit(TextDelta(sid, row.id, part.text))
                elif part.kind is PartKind.BLOCK_STOP:
                    recorder.commit_soon()
            recorder.stop_clock()
            # Waits out another program's lock (bounded, see the store); a failure keeps the reply in memory.
            reply = await recorder.flush("complete", meta={**row.meta, "stop_reason": recorder.stop_reason})
        except asyncio.CancelledError:
            recorder.stop_clock()
            # Shielded so the commit survives the cancellation.
            reply = await asyncio.shield(recorder.flush("interrupted"))
            view.remember(reply)
            self._emit(TurnDone(sid, reply))
            return reply
        except StorageError as exc:
            recorder.stop_clock()
            self.unsaved = recorder
            raise TurnFailed(
                ChatError("storage", M.say(M.NOT_SAVED, error=str(exc)), True, detail={"storage": str(exc)})
            ) from exc
        except Exception as exc:  # noqa: BLE001 - every failure becomes a typed error for the user
            recorder.stop_clock()
            error = classify(exc)
            await self._settle_failed(recorder, error)
            raise TurnFailed(error) from exc
        view.remember(reply)
        usage = recorder.usage
        if usage.prompt_tokens:
            calibration = view.shared.calibration  # the chat's own profile's: its server counted this
            learned = calibration.observe(request["model"], facts.estimate, usage.prompt_tokens)
            if facts.anchor:  # the per-request bias, from the anchored prediction of this request
                learned |= calibration.observe_anchored(
                    request["model"], facts.anchor, facts.added, usage.prompt_tokens, learn_factor=False
                )
            if learned:
                await store.set_kv(CALIBRATION_KEY, self.hub.calibrations.to_dict())
        self._emit(TurnDone(sid, reply))
        if detect_stop_reason(recorder.stop_reason) is not None:
            self._emit(Notice(sid, M.say(M.REPLY_FILLED_WINDOW), "warning"))
        elif recorder.stop_reason == STREAM_ENDED:  # kept and marked cut, like a reply at the output limit
            self._emit(Notice(sid, M.say(M.STREAM_CUT), "warning"))
        return reply

    async def _settle_failed(self, recorder: ReplyRecorder, error: ChatError) -> None:
        """A failed attempt: drop an empty row; keep partial text visible, marked 'error' (never resent)."""
        sid = self.session_id
        reply = await recorder.flush("error")
        if not reply.content:
            await self.hub.store.delete_message(reply.id)
            self.view.forget(reply.id)
            self._emit(MessageRemoved(sid, reply.id))
            return
        reply = await recorder.flush("error", meta={**reply.meta, "error": error.message})
        self.view.remember(reply)
        self._emit(MessageUpdated(sid, reply))

    def _maybe_prepare(self, g: Gathered, used: int) -> None:
        """A background summary, when the policy says the context will need one soon."""
        view, tasks = self.view, self.hub.tasks
        growth = used - view.last_used if view.last_used is not None else None
        view.last_used = used
        if self.route is None:
            return
        compactor = self.route.compactor
        if (
            compactor.prepare_soon(g, used, growth, self.compaction)
            and tasks.running(self.session_id, "prepare") is None
        ):
            tasks.start(self.session_id, "prepare", compactor.prepare(g, view, self.compaction))
