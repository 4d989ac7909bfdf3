"""The bridge: what Qt needs between the widgets and the engine — signals, background tasks, worker threads.

Engine events pass through unchanged on one signal (``engine_event``): adding an event means defining it in the
engine and handling it in a view. Reads (session list, pages) come back on their own signals; the list of chats
is read again when the engine says it changed (``events.SessionsChanged``), never by hand, and the projects the
same way (``events.ProjectsChanged``). Widgets call the
engine itself through ``engine`` (typed by ``desktop.ui.api.Chats``) where nothing Qt-specific is needed, and
import engine names from ``desktop.ui.api`` alone; the bridge forwards nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Literal, Protocol

from msgspec import structs
from PySide6.QtCore import QObject, Signal

from desktop.engine import lazy_imports
from desktop.engine.config import secrets as _secrets
from desktop.engine.config.profiles import Profile, ProfileEdits, find
from desktop.engine.config.settings import Settings
from desktop.engine.history import attachments as _attachments
from desktop.engine.history.session_lock import SessionBusy
from desktop.engine.history.storage import StorageError
from desktop.engine.providers.probe import probe
from desktop.engine.turn import shutdown
from desktop.engine.turn.chat import ChatEngine, MessageTooLong
from desktop.engine.turn.continuation import NothingToContinue
from desktop.engine.types import DEFAULT_TITLE, Block, SessionInfo
from desktop.tools.mcp_config import McpServerConfig
from desktop.tools.mcp_host import ServerStatus
from desktop.tools.permissions import Answer, ChatApprovalStore, SavedApproval
from desktop.tools.toolbox import Toolbox
from desktop.ui.api import Chats, Checked, Pin, ProbeResult, Project, ProjectContext, display, events
from desktop.ui.look.wording import word_error

if TYPE_CHECKING:
    from desktop.engine.history.importer import ImportResult

log = logging.getLogger(__name__)

PAGE_SIZE = 200  # newest messages shown when a session opens; older ones load on scroll
WHOLE_PATH = 1_000_000  # a page that holds a chat's whole shown path (looking for the version of a message)
VERSION_TRIES = 40  # versions switched at most while looking for the one that holds a message


class ProviderChoice(Protocol):
    """What the settings form hands over."""

    @property
    def settings(self) -> Settings: ...
    @property
    def api_key(self) -> str: ...  # empty: keep whatever is stored
    @property
    def run_only(self) -> bool: ...  # keep the key in memory for this run instead of the keyring
    @property
    def profile(self) -> Profile | None: ...  # whose key it is (None: the settings' own profile)
    @property
    def in_file(
        self,
    ) -> bool: ...  # keep the key in the private key file (the user's choice without a keyring)
    @property
    def edits(self) -> ProfileEdits: ...  # renamed, duplicated with their key, deleted profiles
    @property
    def other_keys(
        self,
    ) -> tuple[tuple[Profile, str], ...]: ...  # keys typed for profiles other than the chosen


class Bridge(QObject):
    # Every engine event (desktop.engine.events, the tools' included), as emitted: Qt carries it as a PyObject.
    engine_event = Signal(events.EngineEvent)
    sessions_changed = Signal(object)  # list[SessionInfo]
    session_opened = Signal(object)  # Page: the newest page of a session
    older_loaded = Signal(int, object)  # session_id, Page of older messages
    notice = Signal(int, str, str)  # session_id, text, level: feedback on the bridge's own work (attachments)
    draft_taken = Signal(
        int
    )  # session_id: the composer's draft was committed (or ran as a command): clear it
    failed = Signal(str)  # an unexpected error in background work, in words for a toast
    models_listed = Signal(int, object)  # session_id, list[str]: the models the chat's picker offers
    connection_tested = Signal(object)  # ProbeResult of Test connection
    handoff_ready = Signal(int, str)  # new session id, the text its composer starts with
    pins_changed = Signal(int, object)  # session_id, list[Pin]: the chat's pinned messages now
    projects_changed = Signal(object)  # list[Project]: every project, read again on events.ProjectsChanged

    def __init__(self, engine: ChatEngine, toolbox: Toolbox | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self._engine = engine
        self.engine: Chats = engine  # what widgets ask of the engine directly
        self._toolbox = toolbox
        self._tasks: set[asyncio.Task[Any]] = set()
        self._listed: dict[str, list[str]] = {}  # profile name -> what its provider lists (asked once)
        self._models_owed: set[int] = set()  # chats whose picker waits for the SDK to ask their provider
        self._sdk_warm: asyncio.Task[None] | None = None
        self._window_owed: int | None = (
            None  # the chat opened before the SDK loaded: its window is still to ask
        )
        self._data_version: int | None = None
        self._draft_save: asyncio.Task[None] | None = None
        self.session_filter = ""  # the sidebar's filter, kept for refreshes the bridge starts itself
        self._profile_use: Counter[str] = Counter()  # profile name -> chats naming it (as last listed)
        self._closed = False
        self._listing: asyncio.Task[None] | None = None  # reading the list of chats again after a change
        self._list_owed = False
        self._sessions: list[SessionInfo] = []  # the list as last read
        engine.subscribe(self._on_event)
        if toolbox is not None:
            toolbox.watch_servers(self.engine_event.emit)  # MCP server changes reach the views the same way

    def _on_event(self, event: events.EngineEvent) -> None:
        self.engine_event.emit(event)
        if isinstance(event, events.MessageAdded) and display.is_typed(event.message):
            self.draft_taken.emit(event.session_id)  # the typed message is committed
        if isinstance(event, events.SessionsChanged):
            self._list_again()
        if isinstance(event, events.ProjectsChanged):
            self._projects_again()

    def _list_again(self) -> None:
        """The list of chats changed: read it again; changes in a burst share the reads."""
        self._list_owed = True
        if self._listing is None or self._listing.done():
            self._listing = self.spawn(self._list())

    async def _list(self) -> None:
        while self._list_owed:
            self._list_owed = False
            await self.refresh_sessions()

    def _projects_again(self) -> list[Project]:
        """The projects changed: the engine keeps them in memory, so they are read again at once."""
        projects = self._engine.projects.all()
        self.projects_changed.emit(projects)
        return projects

    async def list_projects(self) -> list[Project]:
        """The first read of the projects (once the engine has read them from the database). A database that
        cannot be read is told in a toast, and the chats are listed without their projects."""
        try:
            await self._engine.load()
        except (StorageError, SessionBusy) as exc:
            log.warning("%s", exc)
            self.failed.emit(word_error(exc))
        return self._projects_again()

    async def listed(self) -> list[SessionInfo]:
        """The list of chats the views show, once it includes every change made so far."""
        while self._listing is not None and not self._listing.done():
            await asyncio.shield(self._listing)
        return self._sessions

    # --- running work ---------------------------------------------------------------------------------
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any] | None:
        """Fire and forget, keeping a strong reference (asyncio only keeps weak ones). Nothing after close()."""
        if self._closed:
            coro.close()
            return None
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled() or task.exception() is None:
            return
        exc = task.exception()
        if isinstance(exc, StorageError | SessionBusy):  # already one sentence for the user
            log.warning("%s", exc)
            self.failed.emit(word_error(exc))
            return
        log.error("background task failed", exc_info=exc)
        self.failed.emit(
            self.tr("Something went wrong: {name}: {error}").format(name=type(exc).__name__, error=exc)
        )

    async def close(self) -> None:
        """Write the drafts, then stop the window's work; each step in bounded time, so closing never hangs."""
        if self._draft_save is not None:  # the drafts of a closing window are written before anything stops
            await shutdown.bounded(
                "writing the drafts", asyncio.gather(self._draft_save, return_exceptions=True)
            )
        self._closed = True
        if self._toolbox is not None:
            for request_id in self._toolbox.pending():
                self._toolbox.answer(request_id, None)
        for task in list(self._tasks):
            task.cancel()
        await shutdown.bounded("the window's tasks", asyncio.gather(*self._tasks, return_exceptions=True))

    # --- what widgets may read ------------------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        return self._engine.settings

    def prices(self) -> tuple[str, str, tuple[str, ...]]:
        """(the date the prices in use were checked, the prices.json that updates them, its problems)."""
        catalog = self._engine.catalog
        return (
            catalog.prices_date,
            str(self._engine.paths.config_dir / "prices.json"),
            catalog.prices.problems,
        )

    def credentials_present(self) -> bool:
        return _secrets.load_credentials(profile=self._engine.active_profile).present

    def credentials_at_hand(self) -> bool:
        """A key, or no need of one, known without looking in the keyring or the key file: the environment, this
        run's key, a keyless profile."""
        profile = self._engine.active_profile
        return _secrets.at_hand(profile=profile) is not None or (
            profile is not None and profile.auth == "none"
        )

    async def key_facts_later(self) -> tuple[str | None, str]:
        """Why the keyring cannot store a key (None: it can) and where the key in use comes from, asked in a worker
        thread (see ``credentials_present_later``)."""
        return await asyncio.to_thread(lambda: (self.keyring_status(), self.credentials_source()))

    async def credentials_present_later(self) -> bool:
        """``credentials_present`` in a worker thread: the keyring stack loads there, and a desktop's secret service
        may take its time (or ask the user to unlock it) without holding the window."""
        return await asyncio.to_thread(self.credentials_present)

    def credentials_source(self) -> str:
        return _secrets.load_credentials(profile=self._engine.active_profile).source

    @staticmethod
    def keyring_status() -> str | None:
        """Why the keyring cannot store a key (None: it can)."""
        return _secrets.keyring_status()

    # --- reads ----------------------------------------------------------------------------------------
    async def refresh_sessions(self, title_filter: str | None = None) -> list[SessionInfo]:
        if title_filter is not None:
            self.session_filter = title_filter
        sessions = await self._engine.library.sessions(self.session_filter)
        every = sessions if not self.session_filter else await self._engine.library.sessions()
        self._profile_use = Counter(s.profile for s in every if s.profile)
        self._sessions = sessions
        self.sessions_changed.emit(sessions)
        return sessions

    def chats_per_profile(self) -> dict[str, int]:
        """How many chats name each profile (as last listed): Settings says so before deleting one."""
        return dict(self._profile_use)

    async def open_session(self, session_id: int, originals: bool = False) -> None:
        """Show the newest page. Messages a summary replaced stay collapsed under its card unless ``originals``."""
        page = await self._engine.library.page(session_id, originals=originals, size=PAGE_SIZE)
        if page is None:
            return
        self.session_opened.emit(page)
        self._engine.session_changed(session_id)
        # Asking the provider for the chat's window needs the SDK: until something loads it (typing, a send, the
        # model picker), the gauge shows the window the catalog has and the question waits (_load_sdk asks it).
        # Importing the SDK here would take the interpreter from the opening chats for seconds.
        ask = lazy_imports.loaded(lazy_imports.SDK[0])
        self._window_owed = None if ask else session_id
        # Measuring a long session takes a moment: the window is usable meanwhile, the gauge fills in after.
        self.spawn(self._engine.publish_context(session_id, ask_window=ask))

    def save_drafts(self, drafts: dict[int, tuple[str, list[str]]]) -> None:
        """Keep every chat's unsent draft in the database (a restart or a crash does not lose typed text)."""
        value = dict(drafts)  # as they are now: the window goes on typing
        previous = self._draft_save

        async def save() -> None:
            if previous is not None:  # in order: the newest drafts win
                await asyncio.gather(previous, return_exceptions=True)
            await self._engine.library.save_drafts(value)

        if not self._closed:
            self._draft_save = asyncio.ensure_future(save())

    async def watch_database(self) -> bool:
        """Another process (the CLI) wrote to the database: the session list is read again. Cheap to poll: one
        PRAGMA on the store's thread."""
        version = await self._engine.library.data_version()
        changed = self._data_version is not None and version != self._data_version
        self._data_version = version
        if changed:
            await self._engine.projects.load()  # `precis project …` may have made, edited or deleted one
            self._projects_again()
            await self.refresh_sessions()
        return changed

    async def load_older(self, session_id: int, before_id: int, hidden_through: int = 0) -> None:
        page = await self._engine.library.page(
            session_id, before_id=before_id, hidden_through=hidden_through, size=PAGE_SIZE
        )
        if page is not None:
            self.older_loaded.emit(session_id, page)

    # --- sessions -------------------------------------------------------------------------------------
    async def new_session(self, reuse: int | None = None, project_id: int | None = None) -> int:
        """Open a new chat (in ``project_id``: with the project's profile, model and workspace); ``reuse``: the
        open chat, taken instead when it is still empty, untitled and in the same project (New chat never piles
        up empty chats)."""
        if reuse is not None:
            current = await self._engine.library.session(reuse)
            if (
                current is not None
                and current.message_count == 0
                and current.title == DEFAULT_TITLE
                and current.project_id == project_id
            ):
                await self.open_session(reuse)
                return reuse
        session_id = await self._engine.new_session(project_id=project_id)
        await self.listed()  # the sidebar has the new chat before it is selected
        await self.open_session(session_id)
        return session_id

    async def import_claude_code(self, path: str, title: str | None = None) -> ImportResult:
        """Import a Claude Code transcript as a new session and open it. Raises ImportFailed (one line)."""
        result = await self._engine.library.import_claude_code(path, title)
        await self.listed()
        await self.open_session(result.session_id)
        return result

    async def delete_session(self, session_id: int) -> list[SessionInfo]:
        """Delete a chat; returns the chats left."""
        await self._engine.delete_session(session_id)
        return await self.listed()

    # --- projects -----------------------------------------------------------------------------------------
    def project_context(
        self, project_id: int, profile: str | None, model: str | None
    ) -> tuple[str, ProjectContext | None]:
        """The model a new chat of the project takes with these defaults (``profile`` None: the active one;
        ``model`` None: the profile's) and what that model's requests carry of the project: which knowledge is
        inlined and which is searchable through recall (None: no such project)."""
        settings = self._engine.settings
        profile = profile or settings.profile or None
        chosen = find(settings.profiles, profile) if profile else None
        name = model or (chosen.model if chosen is not None else None) or settings.model
        info = self._engine.catalog.info(name)
        return name, self._engine.projects.context(project_id, info.window, info.family)

    def models_of_profile(self, profile: str | None) -> list[str]:
        """The models a project's new chats may take on ``profile`` (None: the active one): what its provider
        listed when the picker asked it, then the catalog."""
        listed = self._listed.get(profile or self._engine.settings.profile, [])
        return [*listed, *[m for m in self._engine.catalog.known_models() if m not in listed]]

    # --- versions of a message found elsewhere (a search hit) ---------------------------------------------
    async def show_message(
        self, session_id: int, message_id: int
    ) -> Literal["shown", "switched", "busy", "missing"]:
        """Make the chat show the version that holds ``message_id`` (a search hit in a version not shown now),
        switching versions as ‹ › does: "shown" when it was on the shown path already, "switched" when it is
        now, "busy" when it is not and the chat is busy (nothing switched), "missing" when no version holds it
        (the path stays as it was)."""
        page = await self._engine.library.page(
            session_id, size=1, originals=True, hidden_through=0, before_id=message_id + 1
        )
        if page is None:
            return "missing"
        if page.messages and page.messages[-1].id == message_id:
            return "shown"  # the newest shown row up to it is the message itself
        if self._engine.busy(session_id):
            return "busy"
        found = await self._reach(session_id, message_id, [VERSION_TRIES], 0, await self._path(session_id))
        return "switched" if found else "missing"

    async def _path(self, session_id: int) -> tuple[set[int], dict[int, tuple[int | None, int, int]]]:
        """The shown path's ids and its forks: shown message id -> (its parent, position from 1, count)."""
        page = await self._engine.library.page(session_id, size=WHOLE_PATH, originals=True, hidden_through=0)
        if page is None:
            return set(), {}
        parents = {m.id: m.parent_id for m in page.messages}
        return set(parents), {mid: (parents.get(mid), *where) for mid, where in page.versions.items()}

    async def _reach(
        self,
        session_id: int,
        target: int,
        budget: list[int],
        below: int,
        path: tuple[set[int], dict[int, tuple[int | None, int, int]]],
    ) -> bool:
        """Look for ``target`` in the versions under the shown row ``below`` (0: the whole chat), the deepest fork
        first; ``path`` is the path shown now. Ids only grow along a path, so only a fork whose parent is older
        than the target can lead to it, and at a fork only its versions older than the target. A fork tried in
        vain shows its own version again (the path under it comes back as it was)."""
        ids, forks = path
        if target in ids:
            return True
        candidates = sorted(
            ((mid, *fork) for mid, fork in forks.items() if mid > below and (fork[0] or 0) < target),
            reverse=True,
        )
        for shown, parent, position, count in candidates:
            at, current = position, shown
            for goal in range(1, count + 1):
                if goal == position or budget[0] <= 0:
                    continue
                budget[0] -= 1
                if not await self._engine.switch_version(session_id, current, goal - at):
                    break
                at = goal
                ids, forks = await self._path(session_id)
                current = next((m for m, f in forks.items() if f[0] == parent and f[2] == count), current)
                if target in ids:
                    return True
                if current > target:  # this version and the later ones are all newer than the message
                    break
                if await self._reach(session_id, target, budget, current, (ids, forks)):
                    return True
            if at != position:  # nothing under this fork: its own version again
                await self._engine.switch_version(session_id, current, position - at)
        return False

    # --- export -------------------------------------------------------------------------------------------
    async def export_chat_to(self, session_id: int, path: Any, fmt: str = "md") -> None:
        """Write the export to ``path`` readable by the owner only (it holds the history), like the CLI's -o."""
        from desktop.engine.config.files import write_private

        text = await self._engine.library.export(session_id, fmt)
        await asyncio.to_thread(write_private, path, text + "\n")

    # --- turns ----------------------------------------------------------------------------------------
    async def measure(self, session_id: int, draft: str) -> None:
        if draft.strip():  # typing: a request is coming (opening a chat sets an empty draft)
            self.warm_sdk()
        await self._engine.publish_draft(session_id, draft)

    async def send(self, session_id: int, text: str, files: list[str] | None = None) -> bool:
        """Run a command or send a message. False: refused before anything was stored (the draft stays)."""
        self.warm_sdk()
        if text.startswith("/") and not files and await self._engine.command(session_id, text):
            self.draft_taken.emit(session_id)
            return True
        reads = bool(files) and self.has_tools and bool(await self._engine.workspace(session_id))
        spill = self._engine.paths.spill_dir(session_id) if reads else None
        try:
            # Reading, checking and downscaling files is slow work: off the UI thread.
            blocks: list[Block] = await asyncio.to_thread(
                lambda: [_attachments.prepare(p, spill_dir=spill) for p in files or []]
            )
        except (OSError, ValueError) as exc:
            self.notice.emit(session_id, self.tr("Cannot attach: {error}").format(error=exc), "error")
            return False
        # Image blocks have no name field: the names the bubble shows are kept with the message.
        meta = {"files": [_attachments.display_name(p) for p in files]} if files else None
        try:
            await self._engine.send(session_id, text, blocks, meta=meta)
        except MessageTooLong as exc:
            self.notice.emit(session_id, word_error(exc), "error")
            return False
        return True

    def check_attachment(self, path: str, *, read_tool: bool) -> Checked:
        """What an added file would be sent as; AttachmentRefused (with the reason) when it cannot be sent.
        ``read_tool``: the chat has a workspace, so a long text file can reach the model in parts."""
        return _attachments.check(path, read_tool=read_tool and self.has_tools)

    async def check_attachment_later(self, path: str, *, read_tool: bool) -> Checked:
        """``check_attachment`` in a worker thread: reading and decoding a big image would freeze the window."""
        return await asyncio.to_thread(self.check_attachment, path, read_tool=read_tool)

    async def continue_reply(self, session_id: int) -> None:
        """Resume the newest reply the provider cut short; a whole one is left alone (said in a toast)."""
        try:
            await self._engine.continue_reply(session_id)
        except NothingToContinue as exc:
            self.notice.emit(session_id, word_error(exc), "info")

    # --- versions (regenerate, edit, ‹ › switch); the window reads the page again on events.PathChanged ----
    async def regenerate(self, message_id: int) -> None:
        """Answer again in place of a reply; the old reply stays as the other version."""
        if (sid := await self._engine.library.session_of_message(message_id)) is not None:
            await self._engine.regenerate(sid, message_id)

    async def edit_message(self, message_id: int, text: str) -> None:
        """Send an edited user message as a new version of it; the old one stays."""
        if (sid := await self._engine.library.session_of_message(message_id)) is None:
            return
        try:
            await self._engine.edit_message(sid, message_id, text)
        except MessageTooLong as exc:  # nothing was stored: the earlier version is shown again
            self.notice.emit(sid, str(exc), "error")

    async def switch_version(self, message_id: int, delta: int) -> bool:
        """Show the previous (-1) or next (+1) version of a message and the conversation under it."""
        if (sid := await self._engine.library.session_of_message(message_id)) is None:
            return False
        return await self._engine.switch_version(sid, message_id, delta)

    async def clear_history(self, session_id: int) -> None:
        await self._engine.clear_history(session_id)
        await self.open_session(session_id)

    # --- compaction -----------------------------------------------------------------------------------
    async def new_chat_from_summary(self, session_id: int) -> None:
        """A new chat whose composer holds the summary, pins and ledger (handoff_ready), editable before sending."""
        new_id, text = await self._engine.handoff(session_id)
        await self.listed()
        self.handoff_ready.emit(new_id, text)

    # --- pins and recall ------------------------------------------------------------------------------
    async def pins(self, session_id: int) -> list[Pin]:
        pins = await self._engine.pins(session_id)
        self.pins_changed.emit(session_id, pins)
        return pins

    async def pin_message(self, session_id: int, message_id: int, text: str | None = None) -> Pin | None:
        """Keep a message (or its selected part) verbatim beside every later summary; a refusal is told."""
        try:
            pin = await self._engine.pin_message(session_id, message_id, text)
        except ValueError as exc:
            self.notice.emit(session_id, str(exc), "error")
            return None
        await self.pins(session_id)
        return pin

    async def unpin_message(self, session_id: int, message_id: int) -> bool:
        removed = await self._engine.unpin_message(session_id, message_id)
        await self.pins(session_id)
        return removed

    # --- settings -------------------------------------------------------------------------------------
    async def apply_provider_choice(self, choice: ProviderChoice) -> str | None:
        """Save settings (file) and the key (keyring, or memory for this run). Returns an error for the user."""
        loop = asyncio.get_running_loop()
        profile = choice.profile or find(choice.settings.profiles, choice.settings.profile)
        # Keys follow renames first: a key typed for a renamed profile is then saved under its new name.
        if choice.edits:
            in_use = find(choice.settings.profiles, choice.settings.profile) or Profile(
                choice.settings.profile
            )
            try:
                await self._engine.library.apply_profile_edits(choice.edits, in_use)
            except (OSError, _secrets.KeyringUnavailable) as exc:
                return word_error(exc)
            finally:
                await self.listed()
        for owner, key in ((profile, choice.api_key), *choice.other_keys):
            if not key:
                continue
            account = owner.keyring_account if owner else _secrets.ACCOUNT
            if choice.in_file:
                try:
                    await loop.run_in_executor(None, _secrets.save_api_key_to_file, key, account)
                except OSError as exc:
                    return word_error(exc)
            elif choice.run_only:
                if owner is profile:  # one key kept in memory: the profile in use's
                    _secrets.use_for_this_run(key)
            else:
                try:
                    await loop.run_in_executor(None, _secrets.save_api_key, key, account)
                except _secrets.KeyringUnavailable as exc:
                    return word_error(exc)
        await loop.run_in_executor(None, choice.settings.save, self._engine.paths)
        await self._engine.reconfigure(choice.settings)
        self._listed.clear()
        return None

    # --- tools ----------------------------------------------------------------------------------------
    @property
    def has_tools(self) -> bool:
        return self._toolbox is not None

    def answer_permission(self, request_id: str, answer: Answer | None) -> bool:
        """The inline prompt's answer (None: closed, which denies)."""
        return self._toolbox.answer(request_id, answer) if self._toolbox is not None else False

    async def tool_outcomes(self, session_id: int) -> dict[str, tuple[str, float | None]]:
        """How the chat's finished tool calls ended, from the audit log (the tool cards' status after a restart)."""
        return await self._toolbox.outcomes(session_id) if self._toolbox is not None else {}

    def mcp_servers(self) -> list[ServerStatus]:
        if self._toolbox is None:
            return []
        return [s.status for _name, s in sorted(self._toolbox.servers.items())]

    def mcp_log(self, name: str) -> str:
        server = self._toolbox.servers.get(name) if self._toolbox is not None else None
        return server.log_tail() if server is not None else ""

    async def start_mcp_servers(self) -> None:
        if self._toolbox is not None:
            await self._toolbox.start_servers()

    async def restart_mcp_server(self, name: str) -> None:
        if self._toolbox is not None and (server := self._toolbox.servers.get(name)) is not None:
            await server.restart()

    async def set_mcp_enabled(self, name: str, enabled: bool) -> None:
        """The per-server switch: saved in mcp.json, the server started or stopped now."""
        box = self._toolbox
        if box is None or (server := box.servers.get(name)) is None:
            return
        server.config.enabled = enabled
        await asyncio.to_thread(box.save_config)
        if enabled:
            await server.restart()
        else:
            await server.stop()

    def mcp_config(self, name: str) -> McpServerConfig | None:
        """A copy of the server's configuration (its secrets included, for the edit form)."""
        server = self._toolbox.servers.get(name) if self._toolbox is not None else None
        return structs.replace(server.config) if server is not None else None

    async def save_mcp_server(self, previous: str | None, config: McpServerConfig) -> str:
        """The add/edit form's server, saved and (when enabled) started; what went wrong in words, or ''."""
        if self._toolbox is None:
            return ""
        problems = await self._toolbox.save_server(previous, config)
        if config.enabled:  # in the background: a slow server never holds the form
            self.spawn(self._toolbox.servers[config.name].start())
        return "; ".join(problems)

    async def remove_mcp_server(self, name: str) -> str:
        """The server stopped and forgotten (mcp.json and keyring); what went wrong in words, or ''."""
        return "; ".join(await self._toolbox.remove_server(name)) if self._toolbox is not None else ""

    async def import_claude_desktop(self, path: str = "") -> str:
        """Import Claude Desktop's MCP servers; the result in words for the page."""
        if self._toolbox is None:
            return ""
        from pathlib import Path

        names, problems = await self._toolbox.import_claude_desktop(Path(path) if path else None)
        if names:
            return self.tr("Imported {n} server(s): {names}").format(n=len(names), names=", ".join(names))
        return "; ".join(problems) or self.tr("Nothing new to import")

    async def approvals(self) -> list[SavedApproval]:
        """Saved "Always" approvals, then every chat's "Allow for this chat" ones (``session_id`` set)."""
        store = self._toolbox.policy.approvals if self._toolbox is not None else None
        if store is None:
            return []
        chats = await store.chat_approvals() if isinstance(store, ChatApprovalStore) else []
        return [*(await store.approvals()), *chats]

    async def chat_title(self, session_id: int) -> str:
        session = await self._engine.library.session(session_id)
        return session.title if session is not None else ""

    async def revoke_approval(self, approval_id: int, session_id: int | None = None) -> None:
        store = self._toolbox.policy.approvals if self._toolbox is not None else None
        if self._toolbox is None or store is None:
            return
        if session_id is not None and isinstance(store, ChatApprovalStore):
            await store.revoke_chat_approval(approval_id)
        elif session_id is None:
            await store.revoke_approval(approval_id)
        self._toolbox.policy.forget_saved()

    async def test_connection(self, profile: Profile, api_key: str = "") -> ProbeResult:
        """One tiny request with the profile (and the key typed, else its stored one); the result in words."""
        if api_key:
            bearer = profile.auth == "bearer"
            creds = _secrets.Credentials(None if bearer else api_key, api_key if bearer else None, "typed")
        else:
            creds = _secrets.load_credentials(profile=profile)
        result = await probe(self._engine.settings, profile, creds)
        if result.models:
            self._listed[profile.name] = result.models
        self.connection_tested.emit(result)
        return result

    # --- the chat's model -----------------------------------------------------------------------------
    async def list_models(self, session_id: int) -> list[str]:
        """The picker's models: what the chat's provider lists (asked once per profile), then the catalog."""
        session = await self._engine.library.session(session_id)
        if session is None:
            return []
        name = session.profile or self._engine.settings.profile
        if name not in self._listed and not lazy_imports.loaded("anthropic"):
            # Asking the provider needs the SDK (~80 MB, seconds on a cold start), which opening a chat does not:
            # the catalog now, the provider's list once something loads the SDK (``warm_sdk``).
            self._models_owed.add(session_id)
            models = self._engine.catalog.known_models()
            self.models_listed.emit(session_id, models)
            return models
        if name not in self._listed:
            self._listed[name] = [m["id"] for m in await self._engine.models_for(session_id)]
        listed = self._listed[name]
        models = [*listed, *[m for m in self._engine.catalog.known_models() if m not in listed]]
        self.models_listed.emit(session_id, models)
        return models

    def warm_sdk(self) -> None:
        """Load the SDK in a worker thread (once) when the user is about to need it: typing, a send, the model
        picker opened. Then the pickers that waited for it get their provider's models."""
        if self._sdk_warm is None and not self._closed:
            self._sdk_warm = self.spawn(self._load_sdk())

    async def _load_sdk(self) -> None:
        await lazy_imports.load(lazy_imports.SDK)
        asked, self._window_owed = self._window_owed, None
        if asked is not None and await self._engine.library.session(asked) is not None:
            await self._engine.publish_context(asked)  # the window question the opening left for now
        owed, self._models_owed = self._models_owed, set()
        for session_id in sorted(owed):
            await self.list_models(session_id)

    async def set_chat_model(self, session_id: int, model: str) -> None:
        """The chat's model from now on (stored with the chat, with the profile it belongs to: its own, else
        the active one)."""
        if model.strip():
            session = await self._engine.library.session(session_id)
            own = session.profile if session is not None else None
            await self._engine.set_chat_model(session_id, model, own or self._engine.settings.profile or None)

    def profile_names(self) -> list[str]:
        """The profiles a chat can be moved to: the saved ones, the active one first."""
        names = [p.name for p in self._engine.settings.profiles]
        active = self._engine.settings.profile
        return [active, *[n for n in names if n != active]] if active else names

    async def set_chat_profile(self, session_id: int, profile: str) -> None:
        """Move the chat to ``profile``: its next request, gauge and model list go through that profile. The
        chat takes the profile's own model when the profile names one (another provider's names differ)."""
        session = await self._engine.library.session(session_id)
        if session is None or not profile.strip():
            return
        chosen = find(self._engine.settings.profiles, profile)
        model = (
            (chosen.model if chosen is not None and chosen.model else "")
            or session.model
            or self._engine.settings.model
        )
        await self._engine.set_chat_model(session_id, model, profile)
        await self.list_models(session_id)
