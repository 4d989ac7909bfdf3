"""The chat engine: the only emitter of events, and the owner of what runs.

A turn is a loop of model calls: stored history -> request -> stream -> persisted reply, again while the model
stops for tools (a tool runner answers them). Every call passes the same context stages: ingest cap and
microcompaction (the session view), the threshold and an automatic summary (the compaction policy), and a
reactive recovery when the provider still says "too long". Views subscribe to events and never call back with
data; `precis chat` and the window drive the same object. It never imports Qt.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from desktop.engine import cache_clock, shutdown, steering
from desktop.engine import messages as M
from desktop.engine.assemble import summary_text
from desktop.engine.calibration import Calibration
from desktop.engine.catalog import ModelCatalog
from desktop.engine.compactor import DEEPEST_LEVEL, NEAR_THRESHOLD, Compactor, Outcome, Trigger
from desktop.engine.context import ContextSnapshot, context_report
from desktop.engine.continuation import NothingToContinue, as_continuation, is_cut
from desktop.engine.errors import ChatError, classify
from desktop.engine.events import (
    CommandOutput,
    CompactionChanged,
    ContextChanged,
    EngineEvent,
    MessageAdded,
    MessageRemoved,
    MessageUpdated,
    Notice,
    PathChanged,
    StatusChanged,
    TextDelta,
    TurnDone,
    TurnError,
    UsageUpdate,
)
from desktop.engine.idle_prepare import IdleTimers
from desktop.engine.measure import ContextMeter, draft_cost
from desktop.engine.overflow import detect_stop_reason
from desktop.engine.profiles import Profile, find
from desktop.engine.provider import Provider
from desktop.engine.reply import ReplyRecorder
from desktop.engine.secrets import Credentials, load_credentials
from desktop.engine.session import CACHE_TTL, Gathered, SessionView, Shared
from desktop.engine.session_lock import SessionBusy, SessionLocks
from desktop.engine.settings import Paths, Settings
from desktop.engine.storage import StaleBoundary, Storage, StorageError
from desktop.engine.tasks import Activity, TaskRegistry
from desktop.engine.tooling import EndTurn, ToolRunner, cancelled_results
from desktop.engine.types import DEFAULT_TITLE, Block, CompactionRecord, SessionInfo, StoredMessage

TITLE_CHARS = 60
RECOVERY_FRACTION = 0.5  # reactive compaction rebuilds the request within this share of the window (first try)
RECOVERY_ATTEMPTS = 3  # retries after "too long" in one model call, each smaller than the last
# Diminishing returns: a tool round whose reply is under SMALL_CONTINUATION output tokens and whose calls all
# repeat calls of this turn that gave the same results made no progress; SMALL_CONTINUATIONS of them in a row
# end the turn. (Small rounds alone are normal agentic work: a reply that only calls a tool is usually under
# 500 tokens, and re-running a command after an edit gives a new result.)
SMALL_CONTINUATION = 500
SMALL_CONTINUATIONS = 3

Listener = Callable[[EngineEvent], None]
log = logging.getLogger(__name__)


__all__ = ["ChatEngine", "NothingToRetry", "ToolRunner", "TurnFailed"]


class NothingToRetry(ValueError):
    """Retry was asked for, but the last reply is complete: resending would append a second answer."""


class MessageTooLong(ValueError):
    """The message alone cannot fit the model's context window: nothing was stored (the draft stays)."""


# Characters under which a message is not measured before sending: it fits any window worth chatting in.
LONG_MESSAGE_CHARS = 8_000


class TurnFailed(Exception):
    def __init__(self, error: ChatError):
        super().__init__(error.message)
        self.error = error


def _fingerprint(request: dict[str, Any]) -> str:
    """Identity of a request's content, to never resend one that failed."""
    body = json.dumps([request.get("system"), request.get("tools"), request["messages"]], sort_keys=True,
                      default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def _output_tokens(reply: StoredMessage) -> int:
    return reply.usage.output_tokens if reply.usage else 0


def title_from(text: str) -> str:
    return " ".join(text.split())[:TITLE_CHARS]


class ChatEngine:
    def __init__(self, store: Storage, paths: Paths, settings: Settings, credentials: Credentials | None = None,
                 *, tools: ToolRunner | None = None, background: bool = True):
        catalog = ModelCatalog(settings.model_overrides)
        calibration = Calibration()
        self.shared = Shared(store, paths, settings, catalog, calibration, ContextMeter(catalog, calibration))
        self.compactor = Compactor(self.shared, lambda: self.provider)
        self.compactor.clock = lambda: self.clock()  # the engine's clock, replaced by tests and the replay bench
        self.tasks = TaskRegistry(self._jobs_changed)
        self.locks = SessionLocks(store)
        self._unsaved: dict[int, ReplyRecorder] = {}  # a finished reply whose final commit failed  # another process's turn in the same session waits or is refused
        self.tools = tools
        self.shared.tool_definitions = tools.definitions if tools is not None else None
        self.shared.file_snapshots = getattr(tools, "snapshot_files", None)
        # A process about to exit (the CLI) prepares nothing in the background: it would be aborted unused.
        self.background = background
        self._credentials = credentials
        self._provider: Provider | None = None
        self._providers: dict[str, Provider] = {}  # chats on another profile than the active one
        self._retired: list[Provider] = []
        self._listeners: list[Listener] = []
        self._views: dict[int, SessionView] = {}
        self._latest: dict[int, ContextSnapshot] = {}  # newest draft-less measurement per session
        self._loaded = False
        self._windows_asked: set[str] = set()
        self.clock: Callable[[], float] = time.time  # injectable: the replay benchmark runs on a fake clock
        self.idle_timers = IdleTimers(lambda: self.clock(), self._idle_due)

    # --- what the engine shares with its views and policy ----------------------------------------------
    @property
    def store(self) -> Storage:
        return self.shared.store

    @property
    def paths(self) -> Paths:
        return self.shared.paths

    @property
    def settings(self) -> Settings:
        return self.shared.settings

    @property
    def catalog(self) -> ModelCatalog:
        return self.shared.catalog

    @property
    def calibration(self) -> Calibration:
        return self.shared.calibration

    def view(self, session_id: int) -> SessionView:
        view = self._views.get(session_id)
        if view is None:
            view = self._views[session_id] = SessionView(session_id, self.shared)
        return view

    # --- wiring -------------------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def emit(self, event: EngineEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    def _jobs_changed(self, session_id: int) -> None:
        activity = self.tasks.activity(session_id)
        self.emit(StatusChanged(session_id, activity, stopped=self.tasks.take_stopped(session_id)))

    def _activity(self, session_id: int, activity: Activity) -> None:
        self.tasks.set_activity(session_id, activity)

    @property
    def provider(self) -> Provider:
        if self._provider is None:
            creds = self._credentials or load_credentials(profile=self.active_profile)
            self._provider = Provider(self.settings, creds)
        return self._provider

    @property
    def active_profile(self) -> Profile | None:
        return find(self.settings.profiles, self.settings.profile)

    def provider_for(self, session: SessionInfo) -> Provider:
        """The client of the chat's own profile (the active one unless the chat remembers another)."""
        name = session.profile
        profile = find(self.settings.profiles, name) if name and name != self.settings.profile else None
        if profile is None or self._credentials is not None:  # given credentials (tests, CLI) go everywhere
            return self.provider
        provider = self._providers.get(profile.name)
        if provider is None:
            settings = self.settings.with_profile(profile).with_env()
            provider = self._providers[profile.name] = Provider(settings, load_credentials(profile=profile))
        return provider

    async def _load(self) -> None:
        """Learned facts (calibration, windows from overflow errors) persist across runs."""
        if self._loaded:
            return
        self._loaded = True
        calibration = Calibration.from_dict(await self.store.get_kv("calibration"))
        catalog = ModelCatalog(self.settings.model_overrides, await self.store.get_kv("learned_windows"),
                               await self.store.get_kv("reported_windows"))
        self.replace_models(catalog, calibration)

    def replace_models(self, catalog: ModelCatalog, calibration: Calibration) -> None:
        """New model facts (windows, prices, calibration) for every session from now on."""
        shared = self.shared
        shared.catalog, shared.calibration = catalog, calibration
        shared.meter = ContextMeter(catalog, calibration)

    async def reconfigure(self, settings: Settings, credentials: Credentials | None = None) -> None:
        """New settings or key: the next request uses a fresh client."""
        self.shared.settings = settings
        self._credentials = credentials
        self.replace_models(ModelCatalog(settings.model_overrides, self.catalog.learned(), self.catalog.reported()),
                            self.calibration)
        # A reply streaming meanwhile keeps the client it started with; the old clients close with the engine.
        self._retired += [p for p in (self._provider, *self._providers.values()) if p is not None]
        self._provider, self._providers = None, {}

    async def close(self) -> None:
        """Stop every session's work, give the locks back, close the connections: each in bounded time."""
        self.idle_timers.cancel_all()
        await shutdown.bounded("the sessions' work", self.tasks.close())
        await shutdown.bounded("giving the session locks back", self.locks.settle())
        for provider in (self._provider, *self._providers.values(), *self._retired):
            if provider is not None:
                await shutdown.bounded("closing a provider's connections", provider.close())

    def busy(self, session_id: int) -> bool:
        return self.tasks.busy(session_id)

    def _require_idle(self, session_id: int) -> None:
        if self.busy(session_id):
            raise RuntimeError("a reply is still streaming in this session")

    # --- public entry points ------------------------------------------------------------------------
    async def send(self, session_id: int, text: str, attachments: list[Block] | None = None,
                   meta: dict[str, Any] | None = None) -> StoredMessage | None:
        """Commit the user's message first, then run the turn. Returns the assistant message (or None).
        ``meta`` is stored with the message (e.g. the attached files' names, which image blocks cannot carry)."""
        content: list[Block] = list(attachments or [])
        if text.strip():
            content.append({"type": "text", "text": text})
        return await self.send_content(session_id, content, title_hint=text, meta=meta)

    async def send_content(self, session_id: int, content: list[Block], title_hint: str = "",
                           meta: dict[str, Any] | None = None) -> StoredMessage | None:
        """Send any user content blocks (text, images, documents, tool results of a replayed session)."""
        if not content:
            raise ValueError("empty message")
        self._require_idle(session_id)
        await self._check_fits(session_id, content)
        # The session's lock first: a message stored while another process runs a turn here would go out in
        # that process's next request. Refused (SessionBusy): nothing was stored.
        async with self.locks.hold(session_id):
            user = await self.store.add_user_message(session_id, content, title=title_from(title_hint), meta=meta)
            self.view(session_id).remember(user)
            self.emit(MessageAdded(session_id, user))
            return await self._run_turn(session_id)

    async def _check_fits(self, session_id: int, content: list[Block]) -> None:
        """A long text is sent whole, never cut: one that cannot fit the window even alone is refused before
        anything is stored, in words the user can act on."""
        texts = [str(b.get("text", "")) for b in content if b.get("type") == "text"]
        texts += [str(b["source"].get("data") or "") for b in content  # attached text files are sent whole too
                  if b.get("type") == "document" and isinstance(b.get("source"), dict)
                  and b["source"].get("type") == "text"]
        if sum(len(t) for t in texts) < LONG_MESSAGE_CHARS:
            return
        await self._load()
        session = await self.store.get_session(session_id)
        model = self.shared.model_for(session) if session is not None else self.settings.model
        room = self.compactor.budget(model)
        if room is None:  # capacity unknown: the provider will say
            return
        need = sum(draft_cost(t, self.catalog.info(model).family) for t in texts)
        if need > room:
            raise MessageTooLong(M.say(M.TOO_LONG, need=need, room=room, model=model))

    async def retry(self, session_id: int) -> StoredMessage | None:
        """Resend the stored history; the user's message is already there, failed partial replies are skipped.
        Raises NothingToRetry when the newest reply is complete."""
        self._require_idle(session_id)
        async with self.locks.hold(session_id):
            if (unsaved := self._unsaved.get(session_id)) is not None:
                return await self._save_unsaved(session_id, unsaved)
            g = await self.view(session_id).gather()
            last = g.sendable[-1] if g.sendable else None
            if is_cut(last):  # a continuation that failed: retrying it resumes the cut reply again
                return await self._run_turn(session_id, continuing=True)
            if last is None or (last.role == "assistant" and last.status == "complete"
                                and last.meta.get("stop_reason") != "tool_use"):
                raise NothingToRetry("nothing to retry: the last reply is complete")
            return await self._run_turn(session_id)

    async def _save_unsaved(self, session_id: int, recorder: ReplyRecorder) -> StoredMessage:
        """Commit a reply that arrived whole but could not be saved (the database was locked or full)."""
        reply = await recorder.flush("complete", meta={**recorder.reply.meta, "stop_reason": recorder.stop_reason})
        del self._unsaved[session_id]
        self.view(session_id).remember(reply)
        self.emit(TurnDone(session_id, reply))
        return reply

    async def continue_reply(self, session_id: int) -> StoredMessage | None:
        """Resume the newest reply the provider cut short (output limit, full window): the model continues
        the same assistant turn, in a linked row. Raises NothingToContinue when the newest reply is whole."""
        self._require_idle(session_id)
        async with self.locks.hold(session_id):
            g = await self.view(session_id).gather()
            if not is_cut(g.sendable[-1] if g.sendable else None):
                raise NothingToContinue(M.say(M.NOTHING_TO_CONTINUE))
            return await self._run_turn(session_id, continuing=True)

    async def compact_and_retry(self, session_id: int) -> StoredMessage | None:
        await self.compact(session_id, "manual")
        return await self.retry(session_id)

    async def command(self, session_id: int, text: str) -> bool:
        """Slash commands. Their feedback never enters the transcript. Returns False for plain text."""
        name, _, arg = text.strip().partition(" ")
        if name == "/context":
            snapshot = await self.publish_context(session_id)
            self.emit(CommandOutput(session_id, M.say(M.CONTEXT_TITLE), context_report(snapshot)))
            return True
        if name == "/compact":
            await self.compact(session_id, "manual", focus=arg.strip() or None)
            return True
        return False

    def stop(self, session_id: int) -> bool:
        """Cancel whatever runs for the session (a turn, a compaction of any kind); the old state stays whole."""
        self.compactor.discard_prepared(session_id)
        return self.tasks.stop(session_id)

    # --- compaction entry points (window button, /compact, `precis compact`) --------------------------
    async def compact(self, session_id: int, trigger: Trigger = "manual", focus: str | None = None, *,
                      target: int | None = None, before_message: int | None = None) -> Outcome:
        if self.busy(session_id):
            return Outcome(False, M.say(M.COMPACT_WHILE_BUSY))
        stopped = Outcome(False, M.say(M.COMPACTION_STOPPED))
        job = self._compact_locked(session_id, trigger, focus, target, before_message)
        outcome = await self.tasks.run(session_id, "compact", job, stopped)
        self.emit(Notice(session_id, outcome.message, "info" if outcome.ok else "warning"))
        return outcome

    async def _compact_locked(self, session_id: int, trigger: Trigger, focus: str | None,
                              target: int | None, before_message: int | None = None) -> Outcome:
        """A compaction outside a turn holds the session's lock like a turn, and checks that the boundary it
        read is still the active one when it commits."""
        try:
            async with self.locks.hold(session_id):
                return await self._compact_now(session_id, trigger, focus, target, before_message)
        except SessionBusy as busy:
            return Outcome(False, str(busy).replace("nothing was sent or saved", "nothing was compacted"))
        except StaleBoundary:
            self.view(session_id).invalidate()
            return Outcome(False, M.say(M.COMPACTED_ELSEWHERE))

    async def _compact_now(self, session_id: int, trigger: Trigger, focus: str | None,
                           target: int | None, before_message: int | None = None) -> Outcome:
        if trigger == "manual":  # the user asked for a fresh summary, maybe with a focus
            self._drop_background(session_id)
        else:
            await self.tasks.wait(session_id, "prepare")
        await self._load()
        view = self.view(session_id)
        g = await view.gather()
        outcome = await self.compactor.compact(view, g, trigger, focus=focus, target=target,
                                               before_message=before_message)
        await self._settle(view, outcome, publish=True)
        return outcome

    async def _settle(self, view: SessionView, outcome: Outcome, *, publish: bool) -> None:
        """Tell the views what a compaction did (from the state it returned: nothing is read again)."""
        sid = view.session_id
        for text, level in outcome.notices:
            self.emit(Notice(sid, text, level))
        if outcome.record is not None and outcome.g is not None:
            self.emit(CompactionChanged(sid, outcome.record.trigger, tuple(outcome.g.compactions)))
            if publish:
                await self._publish(view, outcome.g)

    async def undo_compaction(self, session_id: int) -> bool:
        """Remove the newest compaction: the next request is rebuilt from the originals."""
        self._require_idle(session_id)
        view = self.view(session_id)
        g = await view.gather()
        if g.compaction is None:
            return False
        self._drop_background(session_id)
        await self.store.delete_compaction(g.compaction.id)
        await self._reload(view, "undo")
        self.emit(Notice(session_id, M.say(M.UNDONE), "info"))
        return True

    async def _reload(self, view: SessionView, note: str) -> Gathered:
        """After a write that removed rows or a boundary: read the session again, tell the views, measure."""
        view.invalidate()
        g = await view.gather()
        self.emit(CompactionChanged(view.session_id, note, tuple(g.compactions)))
        await self._publish(view, g)
        return g

    def _drop_background(self, session_id: int) -> None:
        self.tasks.stop(session_id, ("prepare",))
        self.compactor.discard_prepared(session_id)

    async def delete_message(self, session_id: int, message_id: int) -> None:
        self._require_idle(session_id)
        self._drop_background(session_id)
        await self.store.delete_message(message_id)
        self.emit(MessageRemoved(session_id, message_id))
        await self._reload(self.view(session_id), "delete")
        self.emit(PathChanged(session_id))  # another version may be shown in its place

    async def edit_and_resend(self, session_id: int, message_id: int, text: str) -> StoredMessage | None:
        """Send an edited copy of a user message as a new version of it (see ``edit_message``)."""
        return await self.edit_message(session_id, message_id, text)

    async def edit_message(self, session_id: int, message_id: int, text: str) -> StoredMessage | None:
        """A new version of a user message, sent: the old one and what followed it stay stored as the other
        version (‹ 1/2 ›). Attachments of the old message go with the new text. A summary that covered the old
        version leaves the requests of this path. The message must be one of this session's typed messages."""
        target = await self.store.get_message(message_id)
        if (target is None or target.session_id != session_id or target.role != "user"
                or any(b.get("type") == "tool_result" for b in target.content)):
            raise ValueError(f"message {message_id} is not a user message of session {session_id}")
        content: list[Block] = [b for b in target.content if b.get("type") != "text"]
        if text.strip():
            content.append({"type": "text", "text": text})
        return await self._new_version(session_id, message_id,
                                       lambda: self.send_content(session_id, content, title_hint=text))

    async def regenerate(self, session_id: int, message_id: int) -> StoredMessage | None:
        """A new reply in place of an assistant message; the old reply (and what followed it) stays stored as
        the other version."""
        target = await self.store.get_message(message_id)
        if target is None or target.session_id != session_id or target.role != "assistant":
            raise ValueError(f"message {message_id} is not a reply of session {session_id}")
        while target.meta.get("continues") and target.parent_id is not None:  # the reply a continuation resumed
            parent = await self.store.get_message(target.parent_id)
            if parent is None or parent.role != "assistant":
                break
            target = parent
        return await self._new_version(session_id, target.id, lambda: self._run_turn(session_id))

    async def _new_version(self, session_id: int, message_id: int,
                           write: Callable[[], Awaitable[StoredMessage | None]]) -> StoredMessage | None:
        """Move the path to the parent of ``message_id``, then ``write`` the new version on it. When nothing
        was written (refused, or the reply failed before a row was kept) the old path comes back."""
        self._require_idle(session_id)
        self._drop_background(session_id)
        async with self.locks.hold(session_id):
            fork = await self.store.branch_at(session_id, message_id)
            for mid in fork.removed:
                self.emit(MessageRemoved(session_id, mid))
            view = self.view(session_id)
            view.invalidate()
            g = await view.gather()
            self.emit(CompactionChanged(session_id, "version", tuple(g.compactions)))
            written: StoredMessage | None = None
            try:
                written = await write()
                return written
            finally:
                # Nothing written (refused, failed, stopped early): the old path comes back, and the kept rows
                # are read again (a failed reply's empty row was deleted meanwhile).
                restored = await asyncio.shield(self.store.restore_branch(session_id, fork))
                if restored or written is None:
                    await asyncio.shield(self._reload(view, "version"))
                self.emit(PathChanged(session_id))

    async def switch_version(self, session_id: int, message_id: int, delta: int) -> bool:
        """Show the version ``delta`` steps away from a message (-1: the previous, +1: the next) and the path
        under it; the choice is stored. False when there is no version that way."""
        self._require_idle(session_id)
        self._drop_background(session_id)
        async with self.locks.hold(session_id):
            if not await self.store.switch_version(session_id, message_id, delta):
                return False
        await self._reload(self.view(session_id), "switch")
        self.emit(PathChanged(session_id))
        return True

    async def clear_history(self, session_id: int) -> None:
        self._require_idle(session_id)
        self._drop_background(session_id)
        await self.store.clear_history(session_id)
        await self._reload(self.view(session_id), "clear")

    def session_changed(self, session_id: int | None) -> None:
        """The window switched sessions: background work for other sessions is cancelled."""
        self.idle_timers.keep_only(session_id)
        for other in self.tasks.sessions():
            if other != session_id:
                self._drop_background(other)

    async def delete_session(self, session_id: int) -> None:
        self.stop(session_id)
        await self.tasks.wait(session_id, "turn")
        await self.store.delete_session(session_id)
        self._views.pop(session_id, None)
        self._latest.pop(session_id, None)

    async def new_chat_from_summary(self, session_id: int) -> int:
        """Start a fresh session that carries the summary and the pinned instructions of this one."""
        await self.compact(session_id, "manual")
        g = await self.view(session_id).gather()
        title = g.session.title
        new = await self.store.create_session(f"{title} (continued)", g.session.model)
        if g.compaction is not None:
            text = "Context carried over from an earlier chat:\n\n" + summary_text(g.compaction)
            await self.store.add_message(new.id, "user", [{"type": "text", "text": text}],
                                         meta={"carried_over": True, "synthetic": True})
        return new.id

    async def handoff(self, session_id: int) -> tuple[int, str]:
        """A new chat, and the text its composer starts with (the summary, pins and ledger), editable before it
        is sent: nothing is stored in the new chat until the user sends it."""
        g = await self.view(session_id).gather()
        if g.compaction is None:
            await self.compact(session_id, "manual")
            g = await self.view(session_id).gather()
        new = await self.store.create_session(f"{g.session.title} (continued)", g.session.model, g.session.profile)
        text = steering.handoff_text(g.compaction, g.session.title) if g.compaction is not None else ""
        return new.id, text

    async def edit_summary(self, session_id: int, text: str) -> CompactionRecord | None:
        """The user's text becomes the active summary: a new compaction row over the same messages (the old one
        stays; Undo brings it back). None when the chat has no summary."""
        self._require_idle(session_id)
        if not text.strip():
            raise ValueError("an empty summary")
        view = self.view(session_id)
        g = await view.gather()
        if g.compaction is None:
            return None
        self._drop_background(session_id)
        record = await self.store.add_compaction(session_id, text.strip(), g.compaction.covers_through_message_id,
                                                 "edit", steering.edited_stats(g.compaction, text.strip()),
                                                 expected_active=g.boundary)
        await self._reload(view, "edit")
        self.emit(Notice(session_id, M.say(M.SUMMARY_EDITED), "info"))
        return record

    async def session_state(self, session_id: int) -> dict[str, Any]:
        """The stored state alone (workspace, instructions, thinking): a gather would decode the history."""
        return await self.store.get_state(session_id)

    async def update_state(self, session_id: int, changes: dict[str, Any]) -> dict[str, Any]:
        """Change a session's state (e.g. its workspace: the tools its requests offer) and measure it again."""
        state = await self.store.update_state(session_id, changes)
        self.view(session_id).state_changed(state)
        await self.publish_context(session_id)
        return state

    async def new_session(self, model: str | None = None) -> int:
        session = await self.store.create_session(DEFAULT_TITLE, model or self.settings.model,
                                                  self.settings.profile or None)
        return session.id

    async def set_chat_model(self, session_id: int, model: str, profile: str | None = None) -> None:
        """The chat's own model (and profile) from now on; the next request and the gauge use it."""
        self._require_idle(session_id)
        await self.store.update_session(session_id, model=model.strip(), profile=profile)
        await self._reload(self.view(session_id), "model")

    async def models_for(self, session_id: int) -> list[dict[str, Any]]:
        """The models the chat's provider lists (GET /v1/models); [] when it does not answer."""
        session = await self.store.get_session(session_id)
        if session is None:
            return []
        try:
            return await self.provider_for(session).models()
        except Exception:  # noqa: BLE001 - a provider without the endpoint: the catalog still fills the picker
            log.info("session %s: the provider lists no models", session_id)
            return []

    # --- measuring ------------------------------------------------------------------------------------
    async def measure(self, session_id: int, draft: str = "") -> ContextSnapshot:
        await self._load()
        view = self.view(session_id)
        g = await view.gather()
        return await self._measure(view, g, draft)

    async def _measure(self, view: SessionView, g: Gathered, draft: str = "") -> ContextSnapshot:
        await self._ask_window(g.model)

        def snapshot() -> ContextSnapshot:
            # A reading at open holds the newest rows only: older ones are there to compact.
            older = g.ledger is not None and g.ledger.older > 0
            return view.snapshot(g, draft=draft, refusal=None if older else self.compactor.refusal(g))

        # Estimating a long uncached session takes a while: keep it off the loop (the UI thread in the app).
        measured = await asyncio.to_thread(snapshot)
        return cache_clock.annotate(measured, info=self.catalog.info(g.model),
                                    compact_at=self.compactor.threshold(g.model), last_request=view.last_request,
                                    long_ttl=self.settings.long_cache_ttl and view.long_ttl_pays(g))

    async def _publish(self, view: SessionView, g: Gathered) -> ContextSnapshot:
        snapshot = await self._measure(view, g)
        self._latest[view.session_id] = snapshot  # the base the typing path adds a draft to
        self.emit(ContextChanged(view.session_id, snapshot))
        return snapshot

    async def publish_context(self, session_id: int) -> ContextSnapshot:
        """Measure and publish. A session whose rows are not in memory (just opened) is read from the numbers
        stored per row, not decoded whole: its first request reads it."""
        await self._load()
        view = self.view(session_id)
        return await self._publish(view, await (view.gather() if view.loaded else view.glance()))

    async def publish_draft(self, session_id: int, draft: str) -> ContextSnapshot:
        """While the user types only the next-turn estimate changes: add the draft to the latest measurement
        instead of re-reading and re-estimating the whole session on every pause in typing."""
        base = self._latest.get(session_id)
        if base is None:
            base = await self.publish_context(session_id)
        family = self.catalog.info(base.model).family
        snapshot = dataclasses.replace(base, next_turn=base.next_turn + draft_cost(draft, family))
        self.emit(ContextChanged(session_id, snapshot))
        return snapshot

    async def _ask_window(self, model: str) -> None:
        """Unknown model: ask the provider once (models.retrieve) before calling it capacity unknown."""
        if model in self._windows_asked or self.catalog.info(model).window_source != "unknown":
            return
        self._windows_asked.add(model)
        if self._credentials is None and not load_credentials().present:
            return
        window, _max_out = await self.provider.model_window(model)
        if window:
            await self._learn_window(model, int(window), reported=True)

    async def _learn_window(self, model: str, window: int, *, reported: bool = False) -> None:
        if self.catalog.learn_window(model, window, reported=reported):
            try:
                await self.store.set_kv("learned_windows", self.catalog.learned())
                await self.store.set_kv("reported_windows", self.catalog.reported())
            except StorageError as exc:  # a read-only command (or disk): known for this run, learned again later
                log.info("learned window not stored: %s", exc)

    # --- the turn -----------------------------------------------------------------------------------
    async def _run_turn(self, session_id: int, continuing: bool = False) -> StoredMessage | None:
        self.idle_timers.cancel(session_id)
        reply, error = await self.tasks.run(session_id, "turn", self._turn(session_id, continuing), (None, None))
        if error is not None:  # reported once the turn is over, so a Retry at once finds the chat idle
            self.emit(error)
        if self.background:  # the cache lapses TTL after this request: prepare a summary just before, if it pays
            view = self.view(session_id)
            self.idle_timers.arm(session_id, view.last_request, CACHE_TTL)
        return reply

    def _idle_due(self, session_id: int) -> None:
        if not self.busy(session_id) and self.tasks.running(session_id, "prepare") is None:
            self.tasks.start(session_id, "prepare", self._prepare_idle(session_id))

    async def _prepare_idle(self, session_id: int) -> None:
        view = self.view(session_id)
        g = await view.gather()
        if self.compactor.idle_summary_pays(view, g):
            await self.compactor.prepare_idle(view, g)

    async def _turn(self, session_id: int, continuing: bool = False) -> tuple[StoredMessage | None, TurnError | None]:
        """Model calls until the model stops for something other than tools; the gauge is measured at the end.
        Returns the reply, or the error for the caller to report."""
        await self._load()
        view = self.view(session_id)
        reply: StoredMessage | None = None
        error: TurnError | None = None
        g: Gathered | None = None
        small = 0  # tool rounds in a row that made no progress
        seen: set[str] = set()  # the calls of this turn with their results, as (name, input, result)
        try:
            for call in range(max(1, self.settings.max_model_calls)):
                g = await self._prepare_call(view)
                reply = await self._call(view, g, continuing=continuing and call == 0)
                if reply.status != "complete" or not self._wants_tools(reply):
                    break
                results = {r.get("tool_use_id"): r.get("content") for r in await self._answer_tools(view, reply)}
                rounds = {json.dumps([b.get("name"), b.get("input"), results.get(b.get("id"))], sort_keys=True,
                                     default=str) for b in reply.content if b.get("type") == "tool_use"}
                stale = _output_tokens(reply) < SMALL_CONTINUATION and rounds <= seen
                small = small + 1 if stale else 0
                seen |= rounds
                if small >= SMALL_CONTINUATIONS:
                    self.emit(Notice(session_id, M.say(M.STOPPED_REPEATING, rounds=small), "warning"))
                    break
            else:
                self.emit(Notice(session_id, M.say(M.STOPPED_CALLS, calls=self.settings.max_model_calls), "warning"))
        except EndTurn as end:
            error = TurnError(session_id, "tool_permission", end.reason, False, ())
            reply = None
        except TurnFailed as failed:
            error = self._turn_error(session_id, failed.error)
            reply = None
        except asyncio.CancelledError:
            pass  # stopped: what was committed stays; the gauge still shows the state as it is now
        after = view.shape() if g is not None else await view.gather()
        snapshot = await asyncio.shield(self._publish(view, after))
        if reply is not None and reply.status == "complete" and self.background:
            self._maybe_prepare(view, after, snapshot.used)
        return reply, error

    async def _answer_tools(self, view: SessionView, reply: StoredMessage) -> list[Block]:
        """Run the reply's tool calls and store their results. Whatever happens (a stop, a runner that ends the
        turn) every tool_use gets its tool_result: cancelled calls are answered as such before the stop ends
        the turn."""
        assert self.tools is not None
        sid = view.session_id
        calls = [b for b in reply.content if b.get("type") == "tool_use"]
        self._activity(sid, Activity.TOOLS)
        end: EndTurn | None = None
        try:
            results = await self.tools.run(sid, calls)
        except asyncio.CancelledError:
            await asyncio.shield(self._store_results(view, cancelled_results(calls)))
            raise
        except EndTurn as stop:
            end, results = stop, stop.results
        except Exception as exc:  # noqa: BLE001 - a broken runner still answers every call
            log.exception("session %s: the tool runner failed", sid)
            results = [{**r, "content": f"[tool runner failed: {type(exc).__name__}: {exc}]"}
                       for r in cancelled_results(calls)]
        await self._store_results(view, results)
        if end is not None:
            raise end
        return results

    async def _store_results(self, view: SessionView, results: list[Block]) -> None:
        answer = await self.store.add_message(view.session_id, "user", results)
        view.remember(answer)
        self.emit(MessageAdded(view.session_id, answer))

    def _wants_tools(self, reply: StoredMessage) -> bool:
        return (self.tools is not None and reply.meta.get("stop_reason") == "tool_use"
                and any(b.get("type") == "tool_use" for b in reply.content))

    async def _prepare_call(self, view: SessionView) -> Gathered:
        """Before a request: microcompaction, then at most one automatic summary, then snip if still too big."""
        sid = view.session_id
        self._activity(sid, Activity.SENDING)
        g = await view.gather()
        used, source = view.used(g)
        horizons = self.compactor.plan_micro(g, used, self._idle(view, g))
        if horizons is not None:
            view.state_changed(await self.store.update_state(sid, {"horizons": horizons}))
            g = view.shape()
            used, source = view.used(g)
        threshold = self.compactor.threshold(g.model)
        if threshold is None:
            return g
        if source == "estimate" and abs(used - threshold) <= NEAR_THRESHOLD * threshold:
            exact = await self.provider_for(g.session).count_tokens(view.request(g))
            used = exact if exact else used
        if self.compactor.needs_summary(g, used):
            g = await self._compact_in_turn(view, g, "auto", self.compactor.summary_target(g), Activity.COMPACTING)
            self._activity(sid, Activity.SENDING)
        elif self.compactor.idle_ready(g) and (self._idle(view, g) or 0) > CACHE_TTL:
            # Prepared while the cache was warm; it is cold now, so the whole prompt is written again anyway.
            g = await self._compact_in_turn(view, g, "background", None, Activity.COMPACTING)
            self._activity(sid, Activity.SENDING)
        return g

    async def _compact_in_turn(self, view: SessionView, g: Gathered, trigger: Trigger, target: int | None,
                               activity: Activity, level: int = 0) -> Gathered:
        self._activity(view.session_id, activity)
        # A summary being prepared in the background is the cheapest way through: let it finish.
        await self.tasks.wait(view.session_id, "prepare")
        outcome = await self.compactor.compact(view, g, trigger, target=target, level=level)
        await self._settle(view, outcome, publish=False)
        return outcome.g or g

    def _idle(self, view: SessionView, g: Gathered) -> float | None:
        """Seconds since this session's last request (None: unknown, e.g. after a restart)."""
        last = view.last_request
        if last is None:
            reply = next((m for m in reversed(g.history) if m.role == "assistant" and m.usage), None)
            last = reply.created_at if reply else None
        return None if last is None else max(0.0, self.clock() - last)

    async def _call(self, view: SessionView, g: Gathered, *, continuing: bool = False) -> StoredMessage:
        """One model call. On overflow (or too much media) recover invisibly: each retry shrinks harder than the
        last, a request that already failed is never sent again, and the attempts are bounded."""
        failed: set[str] = set()
        for attempt in range(RECOVERY_ATTEMPTS + 1):
            try:
                return await self._attempt(view, g, continuing=continuing)
            except TurnFailed as error:
                if error.error.kind not in ("overflow", "media") or attempt == RECOVERY_ATTEMPTS:
                    raise
                failed.add(_fingerprint(view.request(g)))
                g = await self._recover(view, g, error.error, attempt, failed)
        raise AssertionError("unreachable")

    async def _recover(self, view: SessionView, g: Gathered, error: ChatError, attempt: int,
                       failed: set[str]) -> Gathered:
        """The provider said the request is too long (or has too much media): shrink, and make sure the next
        request differs from every one that failed (else shrink harder, or give up with the error)."""
        sid = view.session_id
        found = error.detail.get("overflow")
        if error.kind == "media":
            count = found.media_count if found and found.media_count else None
            limit = view.media_limit or (found.media_limit if found and found.media_limit
                                         else self.catalog.info(g.model).media_limit)
            first = count is not None and attempt == 0
            view.media_limit = max(1, min(limit, count or limit) - 1) if first else max(1, limit // 2)
            log.info("session %s: media limit lowered to %s (attempt %s)", sid, view.media_limit, attempt + 1)
            self.emit(Notice(sid, M.say(M.MEDIA_LEFT_OUT), "info"))
            return g
        if found is not None and found.limit:
            await self._learn_window(g.model, found.limit)
        window = self.catalog.info(g.model).window or (found.limit if found and found.limit else None)
        for level in range(attempt, DEEPEST_LEVEL + 1):
            # Harder each time: a smaller target and a deeper cut (inside a long turn when needed).
            target = int(window * RECOVERY_FRACTION / (1 + level)) if window else None
            g = await self._compact_in_turn(view, g, "reactive", target, Activity.RECOVERING, level=level)
            log.info("session %s: reactive compaction, attempt %s, level %s, target %s", sid, attempt + 1, level,
                     target)
            if _fingerprint(view.request(g)) not in failed:
                break
        else:
            log.warning("session %s: the context cannot be made smaller; giving up", sid)
            raise TurnFailed(error)
        self._activity(sid, Activity.SENDING)
        return g

    async def _attempt(self, view: SessionView, g: Gathered, *, continuing: bool = False) -> StoredMessage:
        """One request and its streamed reply. Raises TurnFailed with the typed error; a stop keeps the partial
        reply, marked interrupted, and ends the turn. ``continuing``: the request ends with the cut reply,
        which the model resumes in a new row linked to it."""
        sid = view.session_id
        request = view.request(g)
        meta: dict[str, Any] = {}
        if continuing:
            cut = g.sendable[-1] if g.sendable else None
            if cut is None or not is_cut(cut):  # e.g. a summary now covers it
                raise TurnFailed(ChatError("bad_request", M.say(M.CUT_REPLY_GONE), False))
            request = as_continuation(request)
            meta["continues"] = cut.id
        facts = view.facts(g)
        view.last_request = self.clock()
        row = await self.store.add_message(sid, "assistant", [], status="streaming", model=request["model"],
                                           meta={"request": facts.to_json(), "sent_at": view.last_request,
                                                 **meta})
        view.remember(row)
        self.emit(MessageAdded(sid, row))
        self._activity(sid, Activity.WAITING)
        recorder = ReplyRecorder(self.store, row)
        recorder.start_clock()
        try:
            async for part in self.provider_for(g.session).stream(request):
                recorder.apply(part)
                if part.kind == "usage" and part.usage is not None:
                    self.emit(UsageUpdate(sid, row.id, part.usage))
                elif part.kind == "text":
                    self._activity(sid, Activity.STREAMING)
                    self.emit(TextDelta(sid, row.id, part.text))
                elif part.kind == "block_stop":
                    recorder.commit_soon()
            recorder.stop_clock()
            # Waits out another program's lock (bounded, see the store); a failure keeps the reply in memory.
            reply = await recorder.flush("complete", meta={**row.meta, "stop_reason": recorder.stop_reason})
        except asyncio.CancelledError:
            recorder.stop_clock()
            # Shielded so the commit survives the cancellation.
            reply = await asyncio.shield(recorder.flush("interrupted"))
            view.remember(reply)
            self.emit(TurnDone(sid, reply))
            return reply
        except StorageError as exc:
            recorder.stop_clock()
            self._unsaved[sid] = recorder
            raise TurnFailed(ChatError("storage", M.say(M.NOT_SAVED, error=str(exc)), True,
                                       detail={"storage": str(exc)})) from exc
        except Exception as exc:  # noqa: BLE001 - every failure becomes a typed error for the user
            recorder.stop_clock()
            error = classify(exc)
            await self._settle_failed(view, recorder, error)
            raise TurnFailed(error) from exc
        view.remember(reply)
        usage = recorder.usage
        if usage.prompt_tokens:
            learned = self.calibration.observe(request["model"], facts.estimate, usage.prompt_tokens)
            if facts.anchor:  # the per-request bias, from the anchored prediction of this request
                learned |= self.calibration.observe_anchored(request["model"], facts.anchor, facts.added,
                                                             usage.prompt_tokens, learn_factor=False)
            if learned:
                await self.store.set_kv("calibration", self.calibration.to_dict())
        self.emit(TurnDone(sid, reply))
        if detect_stop_reason(recorder.stop_reason) is not None:
            self.emit(Notice(sid, M.say(M.REPLY_FILLED_WINDOW), "warning"))
        return reply

    async def _settle_failed(self, view: SessionView, recorder: ReplyRecorder, error: ChatError) -> None:
        """A failed attempt: drop an empty row; keep partial text visible, marked 'error' (never resent)."""
        sid = view.session_id
        reply = await recorder.flush("error")
        if not reply.content:
            await self.store.delete_message(reply.id)
            view.forget(reply.id)
            self.emit(MessageRemoved(sid, reply.id))
            return
        reply = await recorder.flush("error", meta={**reply.meta, "error": error.message})
        view.remember(reply)
        self.emit(MessageUpdated(sid, reply))

    @staticmethod
    def _turn_error(session_id: int, error: ChatError) -> TurnError:
        if error.kind == "overflow":
            actions: tuple[str, ...] = ("compact_retry", "new_chat_from_summary")
        else:
            actions = ("retry",) if error.retryable else ()
        return TurnError(session_id, error.kind, error.message, error.retryable, actions, detail=error.detail)

    def _maybe_prepare(self, view: SessionView, g: Gathered, used: int) -> None:
        """Past the prepare mark, summarise in the background so the next send does not wait; only when the
        context grows fast enough to need it within two more turns (an unused summary is a billed waste)."""
        growth = used - view.last_used if view.last_used is not None else None
        view.last_used = used
        threshold = self.compactor.threshold(g.model)
        soon = threshold is not None and growth is not None and used + 2 * max(0, growth) >= threshold
        if soon and self.compactor.wants_prepare(g, used) and self.tasks.running(view.session_id, "prepare") is None:
            self.tasks.start(view.session_id, "prepare", self.compactor.prepare(g, view))
