"""What the engine needs from persistence, as a Protocol: the engine never imports the store package.

``desktop.store.Store`` implements it (the type checker verifies that where the two are wired together). Every
method is one round trip to the database thread; the engine is written to need few of them per turn.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from msgspec import Struct, field

from desktop.engine.history.search import RecallHit, SearchHit
from desktop.engine.projects.records import Knowledge, KnowledgeKind, Project, ProjectHit
from desktop.engine.types import DEFAULT_TITLE, Block, CompactionRecord, SessionInfo, StoredMessage, Usage


class StorageError(Exception):
    """The database could not do what was asked. ``str()`` is one sentence for the user: what happened, where,
    and what to do. Raised by the store for every database or file-system failure it meets."""


class StorageLocked(StorageError):
    """Another program held the database's write lock for longer than a write waits."""


class StorageReadOnly(StorageError):
    """The database (or its folder) cannot be written: read-only media, permissions."""


class StorageFull(StorageError):
    """The disk (or the file size allowed) is full."""


class StorageUnusable(StorageError):
    """The database cannot be opened at all: damaged, truncated, foreign, from a newer version, or not reachable
    (its folder is a file). It was left untouched."""


class StaleBoundary(ValueError):
    """A compaction was computed on a boundary that is no longer the active one (another writer moved it)."""


class SavedApproval(Struct, frozen=True):
    """A saved answer to a tool's permission prompt. The store writes it and the tools' policy reads it; it
    lives here because the store never imports the tools."""

    id: int
    server: str
    tool: str
    origin: str
    created_at: float
    session_id: int | None = None  # set: "Allow for this chat" in that chat; None: "Always for this tool"


class LockHolder(Struct, frozen=True):
    """Who runs a turn in a session right now (a row of ``session_locks``)."""

    session_id: int
    pid: int
    host: str
    heartbeat: float  # wall clock of its last sign of life


class Loaded(Struct):
    """A session as requests see it, read in one round trip."""

    session: SessionInfo
    compactions: list[CompactionRecord]  # oldest first; the last one is active
    history: list[StoredMessage]  # every row after the active boundary, every status
    state: dict[str, Any]
    # Per model (None: replies stored without one), the summed usage of every stored reply of the session, the
    # boundary's covered rows too: what its cost is priced from (prices are linear in usage). One entry per
    # model, however long the history; the store keeps the sums as it writes and deletes rows.
    usage_totals: dict[str | None, Usage] = field(default_factory=dict)
    estimate_keys: dict[int, str] = field(default_factory=dict)  # message id -> the est_key stored with it
    # The same sums per model and prompt size (the most prompt tokens of the band's requests): what the cost is
    # priced from, so a price tier applies to each request, never to the sum.
    usage_by_band: dict[tuple[str | None, int], Usage] = field(default_factory=dict)
    # The same for the requests made for the chat that are no reply of its own (summaries and their section
    # requests, retries): the session's cost is both; this part is what compaction spent.
    spend_by_band: dict[tuple[str | None, int], Usage] = field(default_factory=dict)


class StoredEstimate(Struct, frozen=True):
    """The engine's numbers for one row (see ``measure.RowEstimate``), valid for the shape ``key`` names."""

    message_id: int
    key: str
    tokens: int
    results: int
    media: int
    trimmed: bool


class Segment(Struct, frozen=True):
    """An id range (``lo`` < id <= ``hi``) whose rows are all shaped the same way: stored numbers count when
    their key is one of ``keys``."""

    lo: int
    hi: int
    keys: tuple[str, ...]


class Overview(Struct):
    """A session as its gauge sees it, read without decoding the rows whose numbers are stored."""

    session: SessionInfo
    compactions: list[CompactionRecord]
    state: dict[str, Any]
    usage_totals: dict[str | None, Usage]
    count: int  # sendable rows after the boundary whose stored numbers count
    tokens: int
    results: int
    media: int
    trimmed: list[int]  # ... of which requests carry these shortened
    newest: list[StoredMessage]  # the newest rows after the boundary (every status), decoded
    unknown: list[StoredMessage]  # sendable rows whose numbers are missing or for another shape, decoded
    estimate_keys: dict[int, str] = field(default_factory=dict)  # for the decoded rows
    usage_by_band: dict[tuple[str | None, int], Usage] = field(default_factory=dict)  # as in ``Loaded``
    spend_by_band: dict[tuple[str | None, int], Usage] = field(default_factory=dict)  # as in ``Loaded``


class Since(Struct):
    """What changed after a known row: the cheap read before each model call."""

    session: SessionInfo
    active_compaction_id: int  # 0: none
    state: dict[str, Any]
    rows: list[StoredMessage]  # rows with an id above the one asked for
    estimate_keys: dict[int, str] = field(default_factory=dict)  # message id -> the est_key stored with it


class Fork(Struct, frozen=True):
    """What making room for a new version did: the rows that left the active path, the leaf shown before, and
    the parent the new version hangs from (None: the session's first row)."""

    removed: list[int]
    previous_leaf: int | None
    parent_id: int | None


class Page(Struct):
    """What the window shows when a session opens (or scrolls up)."""

    session: SessionInfo
    messages: list[StoredMessage]
    has_older: bool
    hidden_through: int  # messages up to this id are collapsed under the active summary card
    compactions: list[CompactionRecord]
    # message id -> (position from 1, count) for the shown messages that have other versions (‹ 2/3 ›)
    versions: dict[int, tuple[int, int]] = field(default_factory=dict)


class ImportPlan(Struct):
    """A transcript to write as one new session, in one transaction (complete or absent, never partial)."""

    title: str
    model: str | None
    rows: list[dict[str, Any]]
    summary_index: int | None = None  # the compaction covers rows[: summary_index + 1]
    summary: str = ""
    compaction_stats: dict[str, Any] = field(default_factory=dict)


class Storage(Protocol):
    # sessions
    async def create_session(
        self,
        title: str = DEFAULT_TITLE,
        model: str | None = None,
        profile: str | None = None,
        project_id: int | None = None,
    ) -> SessionInfo: ...
    async def get_session(self, session_id: int) -> SessionInfo | None: ...
    async def data_version(self) -> int: ...  # changes when another process commits
    async def list_sessions(self, title_filter: str = "") -> list[SessionInfo]: ...
    async def update_session(
        self,
        session_id: int,
        *,
        title: str | None = None,
        model: str | None = None,
        profile: str | None = None,
    ) -> None: ...
    async def delete_session(self, session_id: int) -> None: ...
    # the chats of profile ``old`` now use ``new`` (and ``model``, when given); their order stays
    async def move_profile(self, old: str, new: str, model: str | None = None) -> int: ...
    async def set_pinned(self, session_id: int, pinned: bool) -> None: ...
    async def search(self, query: str, limit: int = 50) -> list[SearchHit]: ...  # full text, every chat
    async def recall(self, session_id: int, query: str, limit: int = 10) -> list[RecallHit]: ...  # one chat
    async def update_state(self, session_id: int, changes: dict[str, Any]) -> dict[str, Any]: ...
    async def get_state(self, session_id: int) -> dict[str, Any]: ...  # the stored state alone, no gather

    # projects: chats grouped under shared instructions and knowledge (ProjectExists for a taken name)
    async def create_project(
        self,
        name: str,
        instructions: str = "",
        profile: str | None = None,
        model: str | None = None,
        workspace: str | None = None,
    ) -> Project: ...
    async def get_project(self, project_id: int) -> Project | None: ...
    async def find_project(self, name: str) -> Project | None: ...
    async def projects(self) -> list[Project]: ...
    async def update_project(self, project_id: int, changes: dict[str, str | bool | None]) -> None: ...
    # its chats stay (out of any project) or go with it, as the user chose; the ids of the chats deleted
    async def delete_project(self, project_id: int, chats: Literal["keep", "delete"]) -> list[int]: ...
    async def add_knowledge(
        self, project_id: int, name: str, kind: KnowledgeKind, text: str, source: str = ""
    ) -> Knowledge: ...
    async def remove_knowledge(self, knowledge_id: int) -> bool: ...
    async def knowledge(self, project_id: int) -> list[Knowledge]: ...  # in the order added
    async def set_session_project(self, session_id: int, project_id: int | None) -> None: ...
    # the project's knowledge and its chats' messages but ``besides``'s, best first
    async def search_project(
        self, project_id: int, query: str, limit: int = 10, besides: int | None = None
    ) -> list[ProjectHit]: ...

    # messages
    async def add_user_message(
        self, session_id: int, content: list[Block], *, title: str = "", meta: dict[str, Any] | None = None
    ) -> StoredMessage: ...
    async def add_message(
        self,
        session_id: int,
        role: str,
        content: list[Block],
        *,
        status: str = "complete",
        model: str | None = None,
        meta: dict[str, Any] | None = None,
        usage: Usage | None = None,
    ) -> StoredMessage: ...
    async def update_message(
        self,
        message_id: int,
        *,
        content: list[Block] | None = None,
        status: str | None = None,
        usage: Usage | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None: ...
    async def get_message(self, message_id: int) -> StoredMessage | None: ...
    async def messages(self, session_id: int, after_id: int = 0) -> list[StoredMessage]: ...
    async def user_messages(self, session_id: int, through_id: int) -> list[StoredMessage]: ...
    async def delete_message(self, message_id: int) -> None: ...
    async def truncate_from(self, session_id: int, from_id: int) -> list[int]: ...
    async def clear_history(self, session_id: int) -> None: ...

    # versions (regenerate, edit, switch): rows are never deleted, the active path moves
    async def branch_at(self, session_id: int, message_id: int) -> Fork: ...
    async def restore_branch(self, session_id: int, fork: Fork) -> list[int]: ...
    async def switch_version(self, session_id: int, message_id: int, delta: int) -> bool: ...

    # one-trip reads
    async def load(self, session_id: int) -> Loaded | None: ...
    async def since(
        self, session_id: int, after_id: int, estimates: list[StoredEstimate] | None = None
    ) -> Since | None: ...
    async def overview(self, session_id: int, segments: list[Segment], newest: int) -> Overview | None: ...
    async def set_estimates(self, estimates: list[StoredEstimate]) -> None: ...
    async def page(
        self,
        session_id: int,
        *,
        originals: bool = False,
        before_id: int | None = None,
        hidden_through: int | None = None,
        size: int = 200,
    ) -> Page | None: ...

    # compactions
    async def add_compaction(
        self,
        session_id: int,
        summary: str,
        covers_through_message_id: int,
        trigger: str,
        stats: dict[str, Any],
        *,
        expected_active: int | None = None,
        state_changes: dict[str, Any] | None = None,
    ) -> CompactionRecord: ...
    async def compactions(self, session_id: int) -> list[CompactionRecord]: ...
    async def add_spend(self, session_id: int, kind: str, requests: list[tuple[str, Usage]]) -> None: ...
    async def delete_compaction(self, compaction_id: int) -> None: ...

    # imports and learned facts
    async def import_session(self, plan: ImportPlan) -> tuple[SessionInfo, CompactionRecord | None]: ...
    async def get_kv(self, key: str, default: Any = None) -> Any: ...
    async def set_kv(self, key: str, value: Any) -> None: ...

    # the per-session lock of a running turn (other processes on the same database respect it)
    async def claim_session(
        self, session_id: int, pid: int, host: str, stale_after: float
    ) -> LockHolder | None:
        """Take the session's lock for this process; returns None when taken, else the live holder."""
        ...

    async def beat_session(self, session_id: int, pid: int) -> None: ...
    async def release_session(self, session_id: int, pid: int) -> None: ...
