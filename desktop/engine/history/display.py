"""What the transcript shows of a stored message: display-ready parts, built from the API's content blocks here.

This is the one place that reads a message's blocks for display (their ``type``, a tool call's input, a tool
result's content, an attachment's ``source``); the window's widgets only word and paint the parts
(``desktop.ui.transcript.chat_model``), so a new block type or field is handled here once. Pure data, no Qt: a part keeps
facts (a tool's name and its most telling argument, a result's first line and how many more there are), not
sentences, so the window words them in the user's language.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import ClassVar

from msgspec import Struct, structs

from desktop.engine.turn.continuation import is_cut
from desktop.engine.types import Block, StoredMessage


class RowKind(StrEnum):
    """How a message is laid out: a speaker's bubble, or a compact tool step nobody wrote as prose."""

    MESSAGE = "message"
    TOOL = "tool"


class PartKind(StrEnum):
    MARKDOWN = "markdown"
    COMMAND = "command"  # a Claude Code slash-command record of an imported session
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    THINKING = "thinking"
    ATTACHMENT = "attachment"
    OTHER = "other"  # a block type this module does not know


class ToolState(StrEnum):
    """A tool call's live state, from the tools' events."""

    ASKING = "asking"  # waiting for the user's permission
    RUNNING = "running"
    OK = "ok"
    ERROR = "error"
    DENIED = "denied"
    CANCELLED = "cancelled"


class AttachmentKind(StrEnum):
    IMAGE = "image"
    TEXT = "text"  # a text file sent as a plain-text document
    PDF = "pdf"
    DOCUMENT = "document"  # any other document


class ToolRun(Struct, frozen=True):
    """A call's state and the seconds it took (None while it runs or when unknown)."""

    state: ToolState
    seconds: float | None = None

    @property
    def finished(self) -> bool:
        return self.state not in (ToolState.ASKING, ToolState.RUNNING)


ToolRuns = Mapping[str, ToolRun]  # tool_use id -> its run


class Markdown(Struct, frozen=True):
    """Text shown as Markdown."""

    kind: ClassVar[PartKind] = PartKind.MARKDOWN
    text: str


class ClientCommand(Struct, frozen=True):
    """A slash-command record: the command with its arguments, or (``output``) what it printed ('' for nothing)."""

    kind: ClassVar[PartKind] = PartKind.COMMAND
    text: str
    output: bool = False


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call: the tool's name, its most telling argument (a path, a command; else the input as compact JSON),
    its run once the tools report one. ``expandable``: a card can show the whole input (client tools)."""

    kind: ClassVar[PartKind] = PartKind.TOOL_CALL
    id: str
    name: str
    argument: str
    run: ToolRun | None = None
    expandable: bool = False
    input: object = field(default=None, compare=False)

    def input_json(self) -> str:
        """The whole input, indented (built when a card is expanded, not for every row)."""
        return json.dumps(self.input, ensure_ascii=False, indent=2)


class ToolResult(Struct, frozen=True):
    """A result: its text, its first non-empty line and how many more there are, and how many non-text parts
    (images, documents) it carries."""

    kind: ClassVar[PartKind] = PartKind.TOOL_RESULT
    text: str
    first_line: str
    more_lines: int
    media: int
    is_error: bool = False
    expandable: bool = False


class Thinking(Struct, frozen=True):
    """The model's thinking as it wrote it (stripped); ``redacted``: the provider sent it encrypted."""

    kind: ClassVar[PartKind] = PartKind.THINKING
    text: str
    redacted: bool = False

    @property
    def first_line(self) -> str:
        return next((ln for ln in self.text.splitlines() if ln.strip()), "")


class Attachment(Struct, frozen=True):
    """An attached file: an image (``media``: its base64 data for a thumbnail) or a document. ``name`` is ''
    when none was kept; ``lines`` counts a text document's lines."""

    kind: ClassVar[PartKind] = PartKind.ATTACHMENT
    type: AttachmentKind
    name: str
    media: str = ""
    lines: int = 0


class OtherBlock(Struct, frozen=True):
    """A block of a type the window does not show, named by its type."""

    kind: ClassVar[PartKind] = PartKind.OTHER
    type: str


Part = Markdown | ClientCommand | ToolCall | ToolResult | Thinking | Attachment | OtherBlock


class DisplayMessage(Struct, frozen=True):
    """A stored message as the transcript shows it.

    ``text``: the typed text (the text blocks joined), what an edit puts back in the composer; ``has_text``: the
    message has a text block at all. ``cut_reason``: the stop reason of a reply the provider cut short ('' for
    any other). ``error``: why a failed reply failed."""

    id: int
    role: str
    status: str
    kind: RowKind
    parts: tuple[Part, ...]
    text: str = ""
    has_text: bool = False
    has_thinking: bool = False
    cut_reason: str = ""
    error: str = ""
    calls: frozenset[str] = frozenset()  # the ids of the tool calls it makes

    def with_runs(self, runs: ToolRuns) -> DisplayMessage:
        """The same message with its calls' states as ``runs`` has them now."""
        if not self.calls:
            return self
        return structs.replace(
            self,
            parts=tuple(replace(p, run=runs.get(p.id)) if isinstance(p, ToolCall) else p for p in self.parts),
        )


# Input fields that say what a tool call does, most telling first (Read -> file_path, Bash -> command, ...).
_TOOL_ARG_KEYS = ("file_path", "path", "command", "pattern", "url", "query", "description", "prompt", "name")
_CALL_TYPES = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_RESULT_TYPES = frozenset({"tool_result", "web_search_tool_result", "mcp_tool_result"})
_THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
_COMMAND_RE = re.compile(
    r"^\s*<command-name>(.*?)</command-name>(?:.*?<command-args>(.*?)</command-args>)?", re.DOTALL
)
_STDOUT_RE = re.compile(r"^\s*<local-command-(stdout|stderr)>(.*?)</local-command-\1>\s*$", re.DOTALL)


def _argument(args: object) -> str:
    if isinstance(args, dict):
        arg = next((str(args[k]) for k in _TOOL_ARG_KEYS if isinstance(args.get(k), str) and args[k]), "")
        if not arg and args:
            arg = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
        return arg
    return str(args) if args else ""


def _result_text(content: object) -> tuple[str, int]:
    """(text, number of non-text parts such as images) of a tool result's content."""
    if isinstance(content, str):
        return content, 0
    texts, other = [], 0
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "text":
            texts.append(str(part.get("text", "")))
        else:
            other += 1
    return "\n".join(texts), other


def _tool_result(block: Block) -> ToolResult:
    text, media = _result_text(block.get("content"))
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return ToolResult(
        text,
        lines[0] if lines else "",
        max(len(lines) - 1, 0),
        media,
        bool(block.get("is_error")),
        expandable=block.get("type") == "tool_result",
    )


def _client_command(text: str) -> ClientCommand | None:
    """Claude Code's slash-command records (in imported sessions), whole records only."""
    if m := _COMMAND_RE.match(text):
        return ClientCommand(f"{m.group(1).strip()} {(m.group(2) or '').strip()}".strip())
    if m := _STDOUT_RE.match(text):
        return ClientCommand(m.group(2).strip(), output=True)
    return None


def _attachment(block: Block, name: str) -> Attachment:
    source = block.get("source")
    source = source if isinstance(source, dict) else {}
    if block.get("type") == "image":
        data = str(source.get("data") or "") if source.get("type") == "base64" else ""
        return Attachment(AttachmentKind.IMAGE, name, media=data)
    title = str(block.get("title") or name or "")
    if source.get("type") == "text":
        text = str(source.get("data") or "")
        return Attachment(
            AttachmentKind.TEXT, title, lines=text.count("\n") + (0 if text.endswith("\n") else 1)
        )
    if source.get("media_type") == "application/pdf":
        return Attachment(AttachmentKind.PDF, title)
    return Attachment(AttachmentKind.DOCUMENT, title)


def parts_of(
    content: Iterable[Block], runs: ToolRuns | None = None, *, files: Sequence[str] = ()
) -> tuple[Part, ...]:
    """Content blocks -> parts, in block order. An empty text block shows nothing. ``files``: the attached
    files' names, in block order (kept with the message)."""
    out: list[Part] = []
    names = iter(files)
    for block in content:
        kind = str(block.get("type"))
        if kind == "text":
            if block.get("text"):
                text = str(block["text"])
                out.append(_client_command(text) or Markdown(text))
        elif kind in _CALL_TYPES:
            call_id = str(block.get("id") or "")
            out.append(
                ToolCall(
                    call_id,
                    str(block.get("name") or "tool"),
                    _argument(block.get("input")),
                    (runs or {}).get(call_id),
                    expandable=kind == "tool_use",
                    input=block.get("input"),
                )
            )
        elif kind in _RESULT_TYPES:
            out.append(_tool_result(block))
        elif kind == "thinking":
            out.append(Thinking(str(block.get("thinking", "")).strip()))
        elif kind == "redacted_thinking":
            out.append(Thinking("", redacted=True))
        elif kind in ("image", "document"):
            out.append(_attachment(block, next(names, "")))
        else:
            out.append(OtherBlock(kind))
    return tuple(out)


def row_kind(msg: StoredMessage) -> RowKind:
    """Rows nobody wrote as prose are compact tool rows (no bubble), so a tool-heavy session reads as a list of
    steps: a user-role row of tool results only, and an assistant turn that only calls tools (and thinks)."""
    types = {b.get("type") for b in msg.content}
    if msg.role == "user" and types and types <= {"tool_result"}:
        return RowKind.TOOL
    if msg.role == "assistant" and types & _CALL_TYPES and types <= _CALL_TYPES | _THINKING_TYPES:
        return RowKind.TOOL
    return RowKind.MESSAGE


def file_names(msg: StoredMessage) -> list[str]:
    """The attached files' names a user message keeps (meta ``files``), in block order."""
    files = msg.meta.get("files") if msg.role == "user" else None
    return [str(f) for f in files] if isinstance(files, list) else []


def show(msg: StoredMessage, runs: ToolRuns | None = None) -> DisplayMessage:
    """What the transcript shows of ``msg``, its calls' states taken from ``runs``."""
    texts = [str(b.get("text", "")) for b in msg.content if b.get("type") == "text"]
    return DisplayMessage(
        id=msg.id,
        role=msg.role,
        status=msg.status,
        kind=row_kind(msg),
        parts=parts_of(msg.content, runs, files=file_names(msg)),
        text="\n\n".join(texts),
        has_text=bool(texts),
        has_thinking=any(b.get("type") == "thinking" for b in msg.content),
        cut_reason=str(msg.meta.get("stop_reason")) if is_cut(msg) else "",
        error=str(msg.meta.get("error") or ""),
        calls=frozenset(str(b.get("id") or "") for b in msg.content if b.get("type") == "tool_use"),
    )


def own_copy(msg: StoredMessage) -> StoredMessage:
    """A copy whose blocks and meta can be edited (``append_text``) without touching the engine's objects."""
    return structs.replace(msg, content=[dict(b) for b in msg.content], meta=dict(msg.meta))


def append_text(msg: StoredMessage, delta: str) -> None:
    """Streaming: add ``delta`` to the message's last text block (a new one if the last block is not text), in
    place (on an ``own_copy``); a complete message becomes a streaming one."""
    if msg.content and msg.content[-1].get("type") == "text":
        last = msg.content[-1]
        last["text"] = str(last.get("text", "")) + delta
    else:
        msg.content.append({"type": "text", "text": delta})
    if msg.status == "complete":
        msg.status = "streaming"


def is_typed(msg: StoredMessage) -> bool:
    """A message the user wrote (a user message with more than tool results)."""
    return msg.role == "user" and any(b.get("type") != "tool_result" for b in msg.content)


__all__ = [
    "Attachment",
    "AttachmentKind",
    "ClientCommand",
    "DisplayMessage",
    "Markdown",
    "OtherBlock",
    "Part",
    "PartKind",
    "RowKind",
    "Thinking",
    "ToolCall",
    "ToolResult",
    "ToolRun",
    "ToolRuns",
    "ToolState",
    "append_text",
    "file_names",
    "is_typed",
    "own_copy",
    "parts_of",
    "row_kind",
    "show",
]
