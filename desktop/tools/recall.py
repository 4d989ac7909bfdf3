"""The `recall` tool: the model searches and reads back its own chat's earlier messages, those a summary replaced
included, by their ids (a summary cites them as [#123]).

Offered once a chat has a compaction (the engine marks such a state with ``tooling.COMPACTED``). It reads only
the calling chat's own rows, through the store's session-filtered search, so it asks no permission.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

from desktop.engine.history.search import RecallHit
from desktop.engine.metering.tokens import estimate_text
from desktop.engine.projects.records import ProjectHit
from desktop.engine.types import Block, StoredMessage
from desktop.tools.types import BUILTIN, ToolOutcome, ToolSpec, definition_digest

NAME = "recall"
HITS = 8  # search results per call
BUDGET = 4_000  # tokens a read returns unless asked otherwise
MAX_BUDGET = 16_000
MAX_READ = 50  # messages one read may name

DEFINITION: dict[str, Any] = {
    "name": NAME,
    "description": (
        "Search or read back this chat's own earlier messages, including those replaced by the summary "
        "(a citation [#123] in the summary is message id 123). With `query`: the best matching messages, each "
        "with its id and the words around the match. With `ids`, or `from_id` and `to_id`: those messages "
        "verbatim, within `max_tokens`."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "words or a question about what to find"},
            "ids": {"type": "array", "items": {"type": "integer"}, "description": "message ids to read"},
            "from_id": {"type": "integer", "description": "first message id of a range to read"},
            "to_id": {"type": "integer", "description": "last message id of a range to read"},
            "max_tokens": {"type": "integer", "description": f"budget of a read (default {BUDGET})"},
        },
    },
}
SPEC = ToolSpec(NAME, BUILTIN, NAME, DEFINITION, read_only=True, digest=definition_digest(DEFINITION))

# In a project's chat: the same tool with a scope, so the model can also search the project's knowledge and its
# other chats (a chat outside a project keeps the definition above, byte for byte).
PROJECT_DEFINITION: dict[str, Any] = {
    **DEFINITION,
    "description": DEFINITION["description"]
    + ' With `scope` "project": search this project\'s knowledge files and its other chats instead; each hit '
    "names its file, or its chat and message.",
    "input_schema": {
        "type": "object",
        "properties": {
            **DEFINITION["input_schema"]["properties"],
            "scope": {
                "type": "string",
                "enum": ["chat", "project"],
                "description": "where to search (default chat)",
            },
        },
    },
}
PROJECT_SPEC = ToolSpec(
    NAME, BUILTIN, NAME, PROJECT_DEFINITION, read_only=True, digest=definition_digest(PROJECT_DEFINITION)
)


class RecallSource(Protocol):
    """The store's session-filtered reads (desktop/store/store.py)."""

    async def recall(self, session_id: int, query: str, limit: int = 10) -> list[RecallHit]: ...

    async def recall_read(self, session_id: int, ids: list[int]) -> list[StoredMessage]: ...

    async def recall_range(
        self, session_id: int, first: int, last: int, limit: int
    ) -> list[StoredMessage]: ...

    async def search_project(
        self, project_id: int, query: str, limit: int = 10, besides: int | None = None
    ) -> list[ProjectHit]: ...


def _result_text(block: Block) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(
        str(c.get("text", "")) if c.get("type") == "text" else f"[{c.get('type')}]"
        for c in content or []
        if isinstance(c, dict)
    )


def message_text(msg: StoredMessage) -> str:
    """A stored message as text, verbatim: its text, tool calls with their input, tool results and attached
    text documents (images and PDFs are named, thinking is left out)."""
    parts: list[str] = []
    for block in msg.content:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            given = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
            parts.append(f"[tool call {block.get('name')}: {given}]")
        elif kind == "tool_result":
            error = " (error)" if block.get("is_error") else ""
            parts.append(f"[tool result{error}]\n{_result_text(block)}")
        elif kind == "document":
            source = block.get("source") or {}
            title = block.get("title") or "document"
            body = source.get("data") if source.get("type") == "text" else None
            parts.append(f"[attached {title}]\n{body}" if isinstance(body, str) else f"[attached {title}]")
        elif kind == "image":
            parts.append("[image]")
    return "\n".join(p for p in parts if p)


def role_of(msg: StoredMessage) -> str:
    if msg.role == "user" and any(b.get("type") == "tool_result" for b in msg.content):
        return "tool"
    return msg.role


def render_hits(hits: list[RecallHit], query: str) -> str:
    if not hits:
        return f"No earlier message of this chat matches {query!r}."
    lines = [f"{len(hits)} messages match {query!r}, best first (read one whole with ids):"]
    lines += [f"[#{h.message_id}] {h.role}: " + " ".join(h.snippet.split()) for h in hits]
    return "\n".join(lines)


def render_project_hits(hits: list[ProjectHit], query: str) -> str:
    if not hits:
        return f"Nothing in this project's knowledge or its other chats matches {query!r}."
    lines = [f"{len(hits)} matches in this project for {query!r}, best first:"]
    for h in hits:
        where = (
            f"knowledge “{h.title}”"
            if h.source == "knowledge"
            else f"chat {h.session_id} “{h.title}”, message [#{h.message_id}]"
        )
        lines.append(f"{where}: " + " ".join(h.snippet.split()))
    return "\n".join(lines)


def render_read(messages: list[StoredMessage], budget: int, asked: list[int] | None = None) -> str:
    """The messages verbatim, each headed by its id, until ``budget`` tokens; the one that crosses it is cut and
    the rest named, so the model can ask for them."""
    if not messages:
        return "No message of this chat has " + (f"the ids {asked}." if asked else "ids in that range.")
    out: list[str] = []
    used = 0
    for n, msg in enumerate(messages):
        text = f"[#{msg.id}] {role_of(msg)}:\n{message_text(msg)}"
        cost = estimate_text(text)
        if used + cost <= budget:
            out.append(text)
            used += cost
            continue
        room = max(0, budget - used)
        keep = int(len(text) * room / cost) if cost else 0
        rest = [f"#{m.id}" for m in messages[n + 1 :]]
        note = (
            f"[… cut at the {budget:,}-token budget: #{msg.id} has {len(text) - keep:,} more characters"
            + (f"; not shown: {', '.join(rest)}" if rest else "")
            + ". Ask for fewer ids or a larger max_tokens "
            f"(up to {MAX_BUDGET:,}).]"
        )
        out.append(text[:keep] + "\n" + note if keep else note)
        break
    missing = sorted(set(asked or []) - {m.id for m in messages})
    if missing:
        out.append("Not in this chat: " + ", ".join(f"#{i}" for i in missing) + ".")
    return "\n\n".join(out)


def _ints(value: Any) -> list[int]:
    if isinstance(value, int | str):
        value = [value]
    out = []
    for item in value if isinstance(value, list) else []:
        try:
            out.append(int(str(item).lstrip("#")))
        except ValueError:
            continue
    return out


async def run(
    source: RecallSource, session_id: int, arguments: Mapping[str, Any], project: int | None = None
) -> ToolOutcome:
    """One call: a search (``query``) or a read (``ids``, or ``from_id``..``to_id``); a call with neither is an
    error that says what to give. ``project``: the chat's project, searched with ``scope`` "project"."""
    try:
        budget = int(arguments.get("max_tokens") or BUDGET)
    except (TypeError, ValueError):
        budget = BUDGET
    budget = max(200, min(budget, MAX_BUDGET))
    ids = _ints(arguments.get("ids"))
    first, last = _ints(arguments.get("from_id")), _ints(arguments.get("to_id"))
    if ids:
        return ToolOutcome(
            render_read(await source.recall_read(session_id, ids[:MAX_READ]), budget, ids[:MAX_READ])
        )
    if first or last:
        lo = first[0] if first else last[0]
        hi = last[0] if last else lo
        lo, hi = min(lo, hi), max(lo, hi)
        return ToolOutcome(render_read(await source.recall_range(session_id, lo, hi, MAX_READ), budget))
    query = str(arguments.get("query") or "").strip()
    if not query:
        return ToolOutcome(
            "recall needs a query to search, or ids (or from_id and to_id) to read.", is_error=True
        )
    if arguments.get("scope") == "project":
        if project is None:
            return ToolOutcome("This chat belongs to no project whose chats can be searched.", is_error=True)
        return ToolOutcome(
            render_project_hits(await source.search_project(project, query, HITS, session_id), query)
        )
    return ToolOutcome(render_hits(await source.recall(session_id, query, HITS), query))
