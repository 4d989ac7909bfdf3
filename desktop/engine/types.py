"""Plain data shared by the engine, the store and the views.

Messages are kept as Anthropic content blocks (lists of JSON dicts), never flattened text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal, Required, TypedDict

from msgspec import Struct, field

Role = Literal["user", "assistant"]
# "cut": whole as far as the provider goes, but stopped by the output limit or a full window (CUT_STOP_REASONS).
Status = Literal["complete", "cut", "streaming", "interrupted", "error"]
Block = dict[str, Any]
# A tool's definition as requests carry it (name, description, input_schema; cache_control on the last one).
ToolDefinition = dict[str, Any]


class WireMessage(TypedDict, total=False):
    """One message of a request as the Messages API takes it. ``model`` (the model that wrote a reply) rides along
    only until ``request_shape.repair`` drops another model's thinking; no request leaves with it."""

    role: Required[Role]
    content: Required[list[Block] | str]
    model: str


class MessagesRequest(TypedDict, total=False):
    """A Messages API request body as the engine builds it: the fields of the SDK's ``MessageCreateParams`` that
    Précis sends (the SDK checks the wire types; these are what the engine may read or set)."""

    model: Required[str]
    max_tokens: Required[int]
    messages: Required[list[WireMessage]]
    system: list[Block] | str
    tools: list[ToolDefinition]
    tool_choice: dict[str, Any]
    thinking: dict[str, Any]
    temperature: float
    metadata: dict[str, str]
    stop_sequences: list[str]


# Statuses whose content the model has seen or should see again. 'error' rows are partial replies of failed
# attempts: resending them would duplicate text on retry. 'streaming' rows belong to a live turn.
SENDABLE: frozenset[str] = frozenset({"complete", "cut", "interrupted"})


def is_sendable_status(status: str) -> bool:
    return status in SENDABLE


# Stop reasons of a reply the provider cut short: it is marked, and Continue resumes it.
# "stream_ended": the stream stopped without its message_stop (what arrived is kept; Continue goes on from it).
CUT_STOP_REASONS: frozenset[str] = frozenset({"max_tokens", "model_context_window_exceeded", "stream_ended"})

DEFAULT_TITLE = "New chat"  # a session still titled this takes its title from the first message

_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]+")


def one_line(text: str) -> str:
    """A title or a status as one line of plain text: control characters (line breaks, a terminal's escape
    sequences that a model or an imported file may carry) become single spaces."""
    return " ".join(_CONTROLS.sub(" ", text).split())


class Usage(Struct):
    """Token usage of one API response (the request's prompt side plus its output)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """Total size of the request that produced this response."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def to_json(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Usage | None:
        if not data:
            return None
        return cls(
            input_tokens=_count(data.get("input_tokens")),
            output_tokens=_count(data.get("output_tokens")),
            cache_creation_input_tokens=_count(data.get("cache_creation_input_tokens")),
            cache_read_input_tokens=_count(data.get("cache_read_input_tokens")),
        )


def _count(value: Any) -> int:
    """A token count as a usage object may hold it; anything that is not a finite number (an imported or
    damaged value) counts as 0."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or value != value
        or abs(value) == float("inf")
    ):
        return 0
    return max(0, int(value))


class StoredMessage(Struct):
    """One row of the transcript. ``id`` is AUTOINCREMENT: ids only grow and are never reused."""

    id: int
    session_id: int
    role: Role
    content: list[Block]
    status: Status = "complete"
    usage: Usage | None = None
    model: str | None = None
    created_at: float = 0.0
    # Extra facts kept with a message (e.g. {"stop_reason": ..., "error": ..., "imported": true}).
    meta: dict[str, Any] = field(default_factory=dict)
    parent_id: int | None = None  # the row this one follows (its versions share it); None: the first row

    @property
    def sendable(self) -> bool:
        """Requests carry this row (see SENDABLE)."""
        return is_sendable_status(self.status) and bool(self.content)


class SessionInfo(Struct):
    """A chat as the session list shows it: title, model, times, message count and last usage."""

    id: int
    title: str
    model: str | None
    created_at: float
    updated_at: float
    message_count: int = 0
    last_usage: Usage | None = None
    profile: str | None = None  # provider profile name (None: the active profile)
    pinned: bool = False  # shown in the sidebar's Pinned group, on top
    project_id: int | None = None  # the project the chat belongs to (None: none)


class CompactionRecord(Struct):
    """A summary that replaces, in requests only, every message with id <= covers_through_message_id."""

    id: int
    session_id: int
    summary: str
    covers_through_message_id: int
    trigger: Literal["auto", "manual", "reactive", "background", "snip"]
    stats: dict[str, Any]
    created_at: float


def covered_through(compactions: Sequence[CompactionRecord]) -> int:
    """The boundary: id of the last message the active (newest) compaction covers, 0 without one. Requests
    carry the messages after it."""
    return compactions[-1].covers_through_message_id if compactions else 0
