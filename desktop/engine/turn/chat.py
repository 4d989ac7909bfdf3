"""The chat engine: the registry of open chats (conversations), the configuration and the event bus.

Each chat is a ``Conversation`` (conversation.py): its turns, compactions and measurements run there, on the
chat's own provider profile (route.py). The engine's public methods take a session id and hand the work to that
chat; they keep the session's lock, the jobs and the configuration. Views subscribe to events and never call
back with data; `precis chat` and the window drive the same object. It never imports Qt.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from msgspec import structs

from desktop.engine import messages as M
from desktop.engine.compaction import user_pins
from desktop.engine.compaction.idle_prepare import IdleTimers
from desktop.engine.config import prices
from desktop.engine.config.catalog import ModelCatalog
from desktop.engine.config.profiles import Profile, find
from desktop.engine.config.secrets import Credentials, load_credentials
from desktop.engine.config.settings import Paths, Settings
from desktop.engine.events import (
    CommandOutput,
    EngineEvent,
    Notice,
    SessionsChanged,
    StatusChanged,
    SummaryFailed,
    TurnDone,
)
from desktop.engine.history.library import ChatLibrary
from desktop.engine.history.session_lock import SessionBusy, SessionLocks
from desktop.engine.history.storage import StaleBoundary, Storage, StorageError
from desktop.engine.metering.calibration import CALIBRATION_KEY, Calibration, ProfileCalibrations
from desktop.engine.metering.context import ContextSnapshot, context_report
from desktop.engine.metering.learned import LEARNED_KEY, LearnedWindows
from desktop.engine.metering.measure import ContextMeter, draft_cost
from desktop.engine.projects.library import Projects, UnknownProject
from desktop.engine.providers.provider import AnthropicProvider, Provider, ProviderFactory
from desktop.engine.providers.route import NO_PROFILE, Route
from desktop.engine.turn import shutdown
from desktop.engine.turn.assemble import summary_text
from desktop.engine.turn.continuation import NothingToContinue, is_cut
from desktop.engine.turn.conversation import Conversation, TurnFailed
from desktop.engine.turn.session import SessionView, Shared
from desktop.engine.turn.tasks import Activity, TaskRegistry
from desktop.engine.turn.thinking import thinking_enabled
from desktop.engine.turn.tooling import ToolRunner
from desktop.engine.types import DEFAULT_TITLE, Block, CompactionRecord, SessionInfo, StoredMessage, one_line

if TYPE_CHECKING:  # the compaction policy loads with a chat's first measurement (see Route.compactor)
    from desktop.engine.compaction.compactor import Compactor, Outcome, Plan, Trigger

TITLE_CHARS = 60

Listener = Callable[[EngineEvent], None]
log = logging.getLogger(__name__)


__all__ = ["ChatEngine", "NothingToRetry", "ToolRunner", "TurnFailed"]


class NothingToRetry(ValueError):
    """Retry was asked for, but the last reply is complete: resending would append a second answer."""


class MessageTooLong(ValueError):
    """The message alone cannot fit the model's context window: nothing was stored (the draft stays)."""


# Characters under which a message is not measured before sending: it fits any window worth chatting in.
LONG_MESSAGE_CHARS = 8_000


def title_from(text: str) -> str:
    return one_line(text)[:TITLE_CHARS]


class ChatEngine:
    def __init__(
        self,
        store: Storage,
        paths: Paths,
        settings: Settings,
        credentials: Credentials | None = None,
        *,
        tools: ToolRunner | None = None,
        background: bool = True,
        provider_factory: ProviderFactory = AnthropicProvider,
    ):
        catalog = ModelCatalog(settings.model_overrides, prices=prices.load(paths.config_dir))
        # What real usage taught the estimator, by profile name (a model's count belongs to the profile's server).
        self._calibrations = ProfileCalibrations()
        calibration = self._calibrations.of(settings.profile or NO_PROFILE)
        self.shared = Shared(store, paths, settings, catalog, calibration, ContextMeter(catalog, calibration))
        self.tasks = TaskRegistry(self._jobs_changed)
        self.locks = SessionLocks(store)
        self.tools = tools
        self.shared.tool_definitions = tools.definitions if tools is not None else None
        self.shared.file_snapshots = getattr(tools, "snapshot_files", None)
        self.projects = Projects(store, self.emit)
        self.shared.project_text = self.projects.text
        self.shared.project_recall = self.projects.recalls
        # A process about to exit (the CLI) prepares nothing in the background: it would be aborted unused.
        self.background = background
        self._credentials = credentials
        self.provider_factory = (
            provider_factory  # how a profile's provider is made (tests make in-process ones)
        )
        self._retired: list[Provider] = []
        self._listeners: list[Listener] = []
        self._conversations: dict[int, Conversation] = {}
        self._loading: asyncio.Task[None] | None = None  # the one read of the learned facts (see load)
        # What each profile's provider reported per model (models.retrieve), by profile name.
        self._provided: dict[str, dict[str, int]] = {}
        # What prompt-too-long errors taught per model, by profile name (a window belongs to the profile's server).
        self._learned = LearnedWindows()
        self.clock: Callable[[], float] = time.time  # injectable: the replay benchmark runs on a fake clock
        self._active = self._active_route()
        self._routes: dict[str, Route] = {}  # the chats' profiles other than the active one
        self.idle_timers = IdleTimers(lambda: self.clock(), self._idle_due)

    # --- what the engine shares with its views and policy ----------------------------------------------
    @property
    def store(self) -> Storage:
        return self.shared.store

    @property
    def library(self) -> ChatLibrary:
        """The window's reads (and whole-chat edits): it never reaches the store itself."""
        return ChatLibrary(self.shared.store, self.emit)

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
        """The active profile's calibration (each chat corrects with its own route's)."""
        return self.shared.calibration

    @property
    def calibrations(self) -> ProfileCalibrations:
        """Every profile's calibration, as stored under CALIBRATION_KEY."""
        return self._calibrations

    @property
    def compactor(self) -> Compactor:
        """The compaction policy of the active profile's chats (each chat uses its own route's)."""
        return self._active.compactor

    def _conversation(self, session_id: int) -> Conversation:
        conv = self._conversations.get(session_id)
        if conv is None:
            view = SessionView(session_id, self.shared)
            conv = self._conversations[session_id] = Conversation(session_id, view, self)
        return conv

    def view(self, session_id: int) -> SessionView:
        return self._conversation(session_id).view

    async def _open(self, session_id: int) -> Conversation:
        """The chat, on the route of the profile it was made on."""
        conv = self._conversation(session_id)
        await conv.ready()
        return conv

    async def route_of(self, session_id: int) -> Route:
        """The route of the profile the chat was made on (read from its session)."""
        session = await self.store.get_session(session_id)
        return self._route(session.profile if session is not None else None)

    def _route(self, name: str | None) -> Route:
        """The route of the profile called ``name`` (none, the active one or an unknown one: the active route)."""
        profile = find(self.settings.profiles, name) if name and name != self._active.key else None
        if profile is None:
            return self._active
        route = self._routes.get(profile.name)
        if route is None:
            settings = self.settings.with_profile(profile).with_env()
            catalog = self.catalog.for_profile(
                settings.model_overrides, self._provided.get(profile.name), *self._learned.of(profile.name)
            )
            calibration = self._calibrations.of(profile.name)
            shared = structs.replace(
                self.shared,
                settings=settings,
                catalog=catalog,
                calibration=calibration,
                meter=ContextMeter(catalog, calibration),
            )
            route = self._routes[profile.name] = Route(
                profile.name,
                shared,
                lambda: load_credentials(profile=profile),
                self._connect,
                lambda: self.clock(),
            )
        return route

    def _active_route(self) -> Route:
        return Route(
            self.settings.profile or NO_PROFILE,
            self.shared,
            lambda: self._credentials or load_credentials(profile=self.active_profile),
            self._connect,
            lambda: self.clock(),
        )

    def _connect(self, settings: Settings, credentials: Credentials) -> Provider:
        return self.provider_factory(settings, credentials)

    # --- wiring -------------------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def emit(self, event: EngineEvent) -> None:
        for listener in list(self._listeners):
            listener(event)
        if isinstance(event, TurnDone):  # a finished turn changes its chat's title and place in the list
            self.emit(SessionsChanged(event.session_id))

    @property
    def heard(self) -> bool:
        """Someone listens (a view, the CLI): a question asked by event can be answered."""
        return bool(self._listeners)

    def _jobs_changed(self, session_id: int) -> None:
        activity = self.tasks.activity(session_id)
        self.emit(StatusChanged(session_id, activity, stopped=self.tasks.take_stopped(session_id)))

    @property
    def provider(self) -> Provider:
        """The client of the active profile (new chats)."""
        return self._active.provider

    @property
    def active_profile(self) -> Profile | None:
        return find(self.settings.profiles, self.settings.profile)

    def provider_for(self, session: SessionInfo) -> Provider:
        """The client of the chat's own profile (the active one unless the chat remembers another)."""
        return self._route(session.profile).provider

    def _routes_all(self) -> list[Route]:
        return [self._active, *self._routes.values()]

    async def load(self) -> None:
        """Learned facts (calibration, windows from overflow errors) persist across runs. Read once; a caller
        that comes while they are read waits for them (a failure is the first caller's to report)."""
        if self._loading is None:
            self._loading = asyncio.ensure_future(self._read_learned())
            await asyncio.shield(self._loading)
        elif not self._loading.done():
            await asyncio.wait([self._loading])

    async def _read_learned(self) -> None:
        await self.projects.load()
        self._calibrations = ProfileCalibrations.read(
            await self.store.get_kv(CALIBRATION_KEY), self._active.key
        )
        provided = await self.store.get_kv("provider_windows")
        self._provided = (
            {str(k): dict(v) for k, v in provided.items() if isinstance(v, dict)}
            if isinstance(provided, dict)
            else {}
        )
        self._learned = LearnedWindows.read(
            await self.store.get_kv(LEARNED_KEY),
            self._active.key,
            await self.store.get_kv("learned_windows"),
            await self.store.get_kv("reported_windows"),
        )
        catalog = ModelCatalog(
            self.settings.model_overrides,
            *self._learned.of(self._active.key),
            self._provided.get(self._active.key),
            prices.load(self.shared.paths.config_dir),
        )
        self.replace_models(catalog)

    def replace_models(self, catalog: ModelCatalog, calibration: Calibration | None = None) -> None:
        """New model facts (windows, prices) for every session from now on (each profile's chats keep their
        own overrides, provider reports, learned windows and calibration). ``calibration``: the active
        profile's from now on (by default, the one it has)."""
        if calibration is not None:
            self._calibrations.put(self._active.key, calibration)
        shared = self.shared
        shared.catalog, shared.calibration = catalog, self._calibrations.of(self._active.key)
        shared.meter = ContextMeter(catalog, shared.calibration)
        for route in self._routes.values():
            other = route.shared
            # A route made before the learned facts were read (a chat opened first) gets the stored reports
            # too; what its provider reported in this run wins.
            provided = {**self._provided.get(route.key, {}), **other.catalog.provided()}
            other.catalog = catalog.for_profile(
                other.settings.model_overrides, provided, *self._learned.of(route.key)
            )
            other.calibration = self._calibrations.of(route.key)
            other.meter = ContextMeter(other.catalog, other.calibration)

    async def reconfigure(self, settings: Settings, credentials: Credentials | None = None) -> None:
        """New settings or key: the next request uses a fresh client."""
        for (
            route
        ) in self._routes_all():  # what each profile learned (also a test's direct teaching) stays its own
            self._learned.keep(route.key, route.shared.catalog)
        self.shared.settings = settings
        self._credentials = credentials
        # A reply streaming meanwhile keeps the client it started with; the old clients close with the engine.
        self._retired += [p for r in self._routes_all() if (p := r.made) is not None]
        self._active, self._routes = self._active_route(), {}
        self.replace_models(
            ModelCatalog(
                settings.model_overrides,
                *self._learned.of(self._active.key),
                self._provided.get(self._active.key),
                prices.load(self.shared.paths.config_dir),
            )
        )  # prices.json re-read
        # Every chat finds its route again: a chat on another profile than the new active one keeps its own.
        for conv in self._conversations.values():
            conv.route = None

    async def close(self) -> None:
        """Stop every session's work, give the locks back, close the connections: each in bounded time."""
        self.idle_timers.cancel_all()
        await shutdown.bounded("the sessions' work", self.tasks.close())
        await shutdown.bounded("giving the session locks back", self.locks.settle())
        for provider in (*(r.made for r in self._routes_all()), *self._retired):
            if provider is not None:
                await shutdown.bounded("closing a provider's connections", provider.close())

    def busy(self, session_id: int) -> bool:
        return self.tasks.busy(session_id)

    def set_up_before(self) -> bool:
        """The first-run form (or Settings) was saved once: a key was kept then, or the chats are read without."""
        return self.paths.settings_file.exists()

    def activity(self, session_id: int) -> Activity:
        """What the chat is doing now (a turn, a compaction, nothing)."""
        return self.tasks.activity(session_id)

    def _require_idle(self, session_id: int) -> None:
        if self.busy(session_id):
            raise RuntimeError("a reply is still streaming in this session")

    # --- public entry points ------------------------------------------------------------------------
    async def send(
        self,
        session_id: int,
        text: str,
        attachments: list[Block] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> StoredMessage | None:
        """Commit the user's message first, then run the turn. Returns the assistant message (or None).
        ``meta`` is stored with the message (e.g. the attached files' names, which image blocks cannot carry)."""
        content: list[Block] = list(attachments or [])
        if text.strip():
            content.append({"type": "text", "text": text})
        return await self.send_content(session_id, content, title_hint=text, meta=meta)

    async def send_content(
        self, session_id: int, content: list[Block], title_hint: str = "", meta: dict[str, Any] | None = None
    ) -> StoredMessage | None:
        """Send any user content blocks (text, images, documents, tool results of a replayed session)."""
        if not content:
            raise ValueError("empty message")
        self._require_idle(session_id)
        await self._check_fits(session_id, content)
        # The session's lock first: a message stored while another process runs a turn here would go out in
        # that process's next request. Refused (SessionBusy): nothing was stored.
        async with self.locks.hold(session_id):
            conv = await self._open(session_id)
            await conv.add_user(content, title_from(title_hint), meta)
            return await conv.run_turn()

    async def _check_fits(self, session_id: int, content: list[Block]) -> None:
        """A long text is sent whole, never cut: one that cannot fit the window even alone is refused before
        anything is stored, in words the user can act on."""
        texts = [str(b.get("text", "")) for b in content if b.get("type") == "text"]
        texts += [
            str(b["source"].get("data") or "")
            for b in content  # attached text files are sent whole too
            if b.get("type") == "document"
            and isinstance(b.get("source"), dict)
            and b["source"].get("type") == "text"
        ]
        if sum(len(t) for t in texts) < LONG_MESSAGE_CHARS:
            return
        await self.load()
        route = await (await self._open(session_id)).ready()
        session = await self.store.get_session(session_id)
        model = route.shared.model_for(session) if session is not None else route.settings.model
        room = route.compactor.budget(model)
        if room is None:  # capacity unknown: the provider will say
            return
        need = sum(draft_cost(t, route.shared.catalog.info(model).family) for t in texts)
        if need > room:
            raise MessageTooLong(M.say(M.TOO_LONG, need=need, room=room, model=model))

    async def retry(self, session_id: int) -> StoredMessage | None:
        """Resend the stored history; the user's message is already there, failed partial replies are skipped.
        Raises NothingToRetry when the newest reply is complete."""
        self._require_idle(session_id)
        async with self.locks.hold(session_id):
            conv = await self._open(session_id)
            if conv.unsaved is not None:
                return await conv.save_unsaved()
            g = await conv.view.gather()
            last = g.sendable[-1] if g.sendable else None
            if is_cut(last):  # a continuation that failed: retrying it resumes the cut reply again
                return await conv.run_turn(continuing=True)
            if last is None or (
                last.role == "assistant"
                and last.status == "complete"
                and last.meta.get("stop_reason") != "tool_use"
            ):
                raise NothingToRetry("nothing to retry: the last reply is complete")
            return await conv.run_turn()

    async def continue_reply(self, session_id: int) -> StoredMessage | None:
        """Resume the newest reply the provider cut short (output limit, full window): the model continues
        the same assistant turn, in a linked row. Raises NothingToContinue when the newest reply is whole."""
        self._require_idle(session_id)
        async with self.locks.hold(session_id):
            conv = await self._open(session_id)
            g = await conv.view.gather()
            if not is_cut(g.sendable[-1] if g.sendable else None):
                raise NothingToContinue(M.say(M.NOTHING_TO_CONTINUE))
            return await conv.run_turn(continuing=True)

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

    def _discard_prepared(self, session_id: int) -> None:
        conv = self._conversations.get(session_id)
        if conv is not None:
            conv.compaction.prepared = None

    def stop(self, session_id: int) -> bool:
        """Cancel whatever runs for the session (a turn, a compaction of any kind); the old state stays whole."""
        self._discard_prepared(session_id)
        return self.tasks.stop(session_id)

    # --- compaction entry points (window button, /compact, `precis compact`) --------------------------
    async def compact(
        self,
        session_id: int,
        trigger: Trigger = "manual",
        focus: str | None = None,
        *,
        target: int | None = None,
        before_message: int | None = None,
        exclude: Sequence[int] = (),
    ) -> Outcome:
        """``exclude``: messages the user keeps verbatim (the preview's choice): pinned before the summary."""
        from desktop.engine.compaction.compactor import Outcome

        if self.busy(session_id):
            return Outcome(False, M.say(M.COMPACT_WHILE_BUSY))
        stopped = Outcome(False, M.say(M.COMPACTION_STOPPED))
        job = self._compact_locked(session_id, trigger, focus, target, before_message, tuple(exclude))
        outcome = await self.tasks.run(session_id, "compact", job, stopped)
        if outcome.failure is not None:
            self.emit(SummaryFailed(session_id, outcome.failure.reason, outcome.failure.rejected))
        else:
            self.emit(Notice(session_id, outcome.message, "info" if outcome.ok else "warning"))
        return outcome

    async def _compact_locked(
        self,
        session_id: int,
        trigger: Trigger,
        focus: str | None,
        target: int | None,
        before_message: int | None = None,
        exclude: tuple[int, ...] = (),
    ) -> Outcome:
        """A compaction outside a turn holds the session's lock like a turn, and checks that the boundary it
        read is still the active one when it commits."""
        from desktop.engine.compaction.compactor import Outcome

        try:
            async with self.locks.hold(session_id):
                conv = await self._open(session_id)
                for message_id in exclude:
                    try:
                        await conv.pin(message_id, None, time.time())
                    except ValueError as exc:
                        return Outcome(False, str(exc))
                return await conv.compact_now(trigger, focus, target, before_message)
        except SessionBusy as busy:
            return Outcome(False, str(busy).replace("nothing was sent or saved", "nothing was compacted"))
        except StaleBoundary:
            self.view(session_id).invalidate()
            return Outcome(False, M.say(M.COMPACTED_ELSEWHERE))

    async def plan_compaction(self, session_id: int, before_message: int | None = None) -> Plan:
        """What Compact now (or "Summarise up to here" at ``before_message``) would do: the preview's numbers,
        from the compactor's own rule."""
        return await (await self._open(session_id)).plan(before_message)

    async def undo_compaction(self, session_id: int) -> bool:
        """Remove the newest compaction: the next request is rebuilt from the originals."""
        self._require_idle(session_id)
        return await (await self._open(session_id)).undo_compaction()

    async def _run_turn(self, session_id: int) -> StoredMessage | None:
        return await (await self._open(session_id)).run_turn()

    def drop_background(self, session_id: int) -> None:
        self.tasks.stop(session_id, ("prepare",))
        self._discard_prepared(session_id)

    async def delete_message(self, session_id: int, message_id: int) -> None:
        self._require_idle(session_id)
        await (await self._open(session_id)).delete_message(message_id)

    async def edit_and_resend(self, session_id: int, message_id: int, text: str) -> StoredMessage | None:
        """Send an edited copy of a user message as a new version of it (see ``edit_message``)."""
        return await self.edit_message(session_id, message_id, text)

    async def edit_message(self, session_id: int, message_id: int, text: str) -> StoredMessage | None:
        """A new version of a user message, sent: the old one and what followed it stay stored as the other
        version (‹ 1/2 ›). Attachments of the old message go with the new text. A summary that covered the old
        version leaves the requests of this path. The message must be one of this session's typed messages."""
        target = await self.store.get_message(message_id)
        if (
            target is None
            or target.session_id != session_id
            or target.role != "user"
            or any(b.get("type") == "tool_result" for b in target.content)
        ):
            raise ValueError(f"message {message_id} is not a user message of session {session_id}")
        content: list[Block] = [b for b in target.content if b.get("type") != "text"]
        if text.strip():
            content.append({"type": "text", "text": text})
        return await self._new_version(
            session_id, message_id, lambda: self.send_content(session_id, content, title_hint=text)
        )

    async def regenerate(self, session_id: int, message_id: int) -> StoredMessage | None:
        """A new reply in place of an assistant message; the old reply (and what followed it) stays stored as
        the other version."""
        target = await self.store.get_message(message_id)
        if target is None or target.session_id != session_id or target.role != "assistant":
            raise ValueError(f"message {message_id} is not a reply of session {session_id}")
        while (
            target.meta.get("continues") and target.parent_id is not None
        ):  # the reply a continuation resumed
            parent = await self.store.get_message(target.parent_id)
            if parent is None or parent.role != "assistant":
                break
            target = parent
        return await self._new_version(session_id, target.id, lambda: self._run_turn(session_id))

    async def _new_version(
        self, session_id: int, message_id: int, write: Callable[[], Awaitable[StoredMessage | None]]
    ) -> StoredMessage | None:
        """Move the path to the parent of ``message_id``, then ``write`` the new version on it. When nothing
        was written (refused, or the reply failed before a row was kept) the old path comes back."""
        self._require_idle(session_id)
        self.drop_background(session_id)
        async with self.locks.hold(session_id):
            conv = await self._open(session_id)
            fork = await conv.branch(message_id)
            written: StoredMessage | None = None
            try:
                written = await write()
                return written
            finally:
                # Nothing written (refused, failed, stopped early): the old path comes back.
                await asyncio.shield(conv.restore(fork, written is not None))

    async def switch_version(self, session_id: int, message_id: int, delta: int) -> bool:
        """Show the version ``delta`` steps away from a message (-1: the previous, +1: the next) and the path
        under it; the choice is stored. False when there is no version that way."""
        self._require_idle(session_id)
        self.drop_background(session_id)
        conv = await self._open(session_id)
        async with self.locks.hold(session_id):
            if not await conv.switch_version(message_id, delta):
                return False
        await conv.switched()
        return True

    async def clear_history(self, session_id: int) -> None:
        self._require_idle(session_id)
        await (await self._open(session_id)).clear_history()

    def session_changed(self, session_id: int | None) -> None:
        """The window switched sessions: background work for other sessions is cancelled."""
        self.idle_timers.keep_only(session_id)
        for other in self.tasks.sessions():
            if other != session_id:
                self.drop_background(other)

    async def delete_session(self, session_id: int) -> None:
        self.stop(session_id)
        await self.tasks.wait(session_id, "turn")
        self.idle_timers.cancel(session_id)
        await self.library.delete(session_id)
        self._conversations.pop(
            session_id, None
        )  # with its cached view: nothing reads the deleted rows from it

    async def delete_project(self, project_id: int, chats: Literal["keep", "delete"]) -> list[int]:
        """Delete a project; its chats stay (out of any project) or, as the user chose, are deleted too, each as
        a chat is deleted (its reply stopped, its cached view dropped). The ids of the chats deleted."""
        doomed = (
            [s.id for s in await self.library.sessions() if s.project_id == project_id]
            if chats == "delete"
            else []
        )
        for session_id in doomed:
            await self.delete_session(session_id)
        await self.projects.delete(project_id, "keep")
        return doomed

    async def new_chat_from_summary(self, session_id: int) -> int:
        """Start a fresh session that carries the summary and the pinned instructions of this one."""
        from desktop.engine.compaction import steering

        await self.compact(session_id, "manual")
        g = await self.view(session_id).gather()
        new = await self.library.create(
            steering.continued_title(g.session.title),
            g.session.model,
            g.session.profile,
            g.session.project_id,
        )
        if g.compaction is not None:
            text = "Context carried over from an earlier chat:\n\n" + summary_text(g.compaction)
            await self._conversation(new.id).carry_over(text)
        return new.id

    async def handoff(self, session_id: int) -> tuple[int, str]:
        """A new chat, and the text its composer starts with (the summary, pins and ledger), editable before it
        is sent: nothing is stored in the new chat until the user sends it."""
        from desktop.engine.compaction import steering

        g = await self.view(session_id).gather()
        if g.compaction is None:
            await self.compact(session_id, "manual")
            g = await self.view(session_id).gather()
        new = await self.library.create(
            steering.continued_title(g.session.title),
            g.session.model,
            g.session.profile,
            g.session.project_id,
        )
        text = steering.handoff_text(g.compaction, g.session.title) if g.compaction is not None else ""
        return new.id, text

    async def edit_summary(self, session_id: int, text: str) -> CompactionRecord | None:
        """The user's text becomes the active summary: a new compaction row over the same messages (the old one
        stays; Undo brings it back). None when the chat has no summary."""
        self._require_idle(session_id)
        if not text.strip():
            raise ValueError("an empty summary")
        return await (await self._open(session_id)).edit_summary(text.strip())

    async def session_state(self, session_id: int) -> dict[str, Any]:
        """The stored state alone (workspace, instructions, thinking): a gather would decode the history."""
        return await self.store.get_state(session_id)

    async def workspace(self, session_id: int) -> str:
        """The chat's workspace folder ('' for none)."""
        return str((await self.session_state(session_id)).get("workspace") or "")

    async def set_workspace(self, session_id: int, folder: str) -> None:
        """The chat's workspace folder ('' for none): its built-in tools work there, from the next request on."""
        await self.update_state(session_id, {"workspace": folder or None})

    async def instructions(self, session_id: int) -> str:
        """The chat's own instructions (sent after the default ones)."""
        value = (await self.session_state(session_id)).get("instructions")
        return value if isinstance(value, str) else ""

    async def set_instructions(self, session_id: int, text: str) -> None:
        """The chat's own instructions from the next request on (blank: none)."""
        await self.update_state(session_id, {"instructions": text.strip() or None})

    async def thinking(self, session_id: int) -> bool:
        return thinking_enabled(await self.session_state(session_id))

    async def set_thinking(self, session_id: int, on: bool) -> None:
        """Extended thinking for this chat's requests from the next one on (budget: the settings')."""
        await self.update_state(session_id, {"thinking": bool(on)})

    async def update_state(self, session_id: int, changes: dict[str, Any]) -> dict[str, Any]:
        """Change a session's state (e.g. its workspace: the tools its requests offer) and measure it again."""
        # Written before the chat's route is looked up: a read asked for after this call sees the change.
        return await self._conversation(session_id).update_state(changes)

    # --- pins: messages kept verbatim beside every summary -------------------------------------------
    async def pin_message(self, session_id: int, message_id: int, text: str | None = None) -> user_pins.Pin:
        """Pin a message (or the part ``text`` of it): once a summary covers it, requests carry it verbatim
        beside the summary. ValueError (one sentence) when it cannot be pinned."""
        return await self._conversation(session_id).pin(message_id, text, time.time())

    async def unpin_message(self, session_id: int, message_id: int) -> bool:
        return await self._conversation(session_id).unpin(message_id)

    async def pins(self, session_id: int) -> list[user_pins.Pin]:
        return user_pins.pins_of(await self.store.get_state(session_id))

    async def new_session(self, model: str | None = None, project_id: int | None = None) -> int:
        """A new chat; in a project, with the project's profile, model and workspace where it names them."""
        await self.load()
        project = self.projects.get(project_id) if project_id is not None else None
        if project_id is not None and project is None:
            raise UnknownProject(f"No project with id {project_id}.")
        profile = (project.profile if project else None) or self.settings.profile or None
        chosen = find(self.settings.profiles, profile) if profile else None
        model = model or (project.model if project else None) or (chosen.model if chosen else None)
        session = await self.library.create(DEFAULT_TITLE, model or self.settings.model, profile, project_id)
        if project is not None and project.workspace:
            await self.update_state(session.id, {"workspace": project.workspace})
        return session.id

    async def set_chat_model(self, session_id: int, model: str, profile: str | None = None) -> None:
        """The chat's own model (and profile) from now on; the next request and the gauge use it."""
        self._require_idle(session_id)
        await (await self._open(session_id)).set_model(model.strip(), profile)
        self.emit(SessionsChanged(session_id))

    async def models_for(self, session_id: int) -> list[dict[str, Any]]:
        """The models the chat's provider lists (GET /v1/models); [] when it does not answer."""
        session = await self.store.get_session(session_id)
        if session is None:
            return []
        try:
            return await (await self._route(session.profile).connected()).models()
        except Exception:  # noqa: BLE001 - a provider without the endpoint: the catalog still fills the picker
            log.info("session %s: the provider lists no models", session_id)
            return []

    # --- measuring ------------------------------------------------------------------------------------
    async def measure(self, session_id: int, draft: str = "") -> ContextSnapshot:
        await self.load()
        conv = await self._open(session_id)
        return await conv.measure(await conv.view.gather(), draft)

    async def publish_context(self, session_id: int, *, ask_window: bool = True) -> ContextSnapshot:
        """Measure and publish (see Conversation.publish_context; ``ask_window=False``: the provider is not
        asked for a window the catalog has, see Conversation.measure)."""
        return await (await self._open(session_id)).publish_context(ask=ask_window)

    async def publish_draft(self, session_id: int, draft: str) -> ContextSnapshot:
        """Add the draft to the chat's latest measurement (see Conversation.publish_draft)."""
        return await (await self._open(session_id)).publish_draft(draft)

    async def ask_window(self, route: Route, model: str) -> bool:
        """Ask the chat's provider once per model (models.retrieve): what it reports beats the catalog. The
        user's own override needs no question. Returns whether the window changed."""
        if model in route.windows_asked or route.shared.catalog.info(model).window_source in (
            "override",
            "env",
        ):
            return False
        route.windows_asked.add(model)
        credentials = await asyncio.to_thread(route.credentials)  # the keyring, off the loop
        if not credentials.present:
            return False
        window, _max_out = await (await route.connected(credentials)).model_window(model)
        if not window or not route.shared.catalog.provide_window(model, int(window)):
            return False
        self._provided[route.key] = route.shared.catalog.provided()
        try:
            await self.store.set_kv("provider_windows", self._provided)
        except StorageError as exc:  # a read-only command (or disk): known for this run, asked again later
            log.info("reported window not stored: %s", exc)
        return True

    async def learn_window(self, route: Route, model: str, window: int) -> None:
        """A prompt-too-long error told the model's real window."""
        catalog = route.shared.catalog
        if catalog.learn_window(model, window):
            self._learned.keep(route.key, catalog)
            try:
                await self.store.set_kv(LEARNED_KEY, self._learned.to_json())
            except (
                StorageError
            ) as exc:  # a read-only command (or disk): known for this run, learned again later
                log.info("learned window not stored: %s", exc)

    # --- idle preparation ----------------------------------------------------------------------------
    def _idle_due(self, session_id: int) -> None:
        if not self.busy(session_id) and self.tasks.running(session_id, "prepare") is None:
            self.tasks.start(session_id, "prepare", self._conversation(session_id).prepare_idle())
