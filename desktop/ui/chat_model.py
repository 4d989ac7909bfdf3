"""The transcript as a Qt list model: a window of the newest messages plus non-message cards.

The model never holds a whole 10,000-message session: the window loads the newest page with ``set_messages`` and
older pages with ``prepend_older`` when the view asks (``ChatView.older_requested``). Rows stay sorted by a key
(message id, then cards anchored after a message id), so a compaction card lands after the last message it
covers even when those messages are paged in later.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import Any, Literal

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QAbstractListModel,
    QByteArray,
    QCoreApplication,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
)

from desktop.ui.bridge import CUT_STOP_REASONS, Block, StoredMessage
from desktop.ui.format import fmt_count
from desktop.ui.markdown_render import extract_code_blocks

RowKind = Literal["message", "tool", "compaction", "notice"]
SegmentKind = Literal["markdown", "tool", "result", "thinking", "image", "note"]
RowKey = int | str  # message id, or "card:N"

# Input fields that say what a tool call does, most telling first (Read -> file_path, Bash -> command, ...).
_TOOL_ARG_KEYS = ("file_path", "path", "command", "pattern", "url", "query", "description", "prompt", "name")
PREVIEW_CHARS = 100
STREAM_EMIT_MS = 40
# ~4.5 ms per 1,000 characters of Markdown with code and tables (render + setHtml + layout, 2-core box):
# this keeps the first paint near 200 ms whatever the messages look like.
FIRST_PAGE_CHAR_BUDGET = 40_000
MIN_FIRST_ROWS = 20
# Glyphs every desktop font has (DejaVu, Segoe, SF); colour emoji are missing on many Linux installs.
TOOL_ICON = "⚙"
THINKING_ICON = "✻"


class Roles(IntEnum):
    Role = Qt.ItemDataRole.UserRole + 1  # "user" | "assistant" | "" for cards
    Text = Qt.ItemDataRole.UserRole + 2  # plain text for copying
    Status = Qt.ItemDataRole.UserRole + 3
    Kind = Qt.ItemDataRole.UserRole + 4  # RowKind
    Id = Qt.ItemDataRole.UserRole + 5  # RowKey
    Segments = Qt.ItemDataRole.UserRole + 6  # tuple[Segment, ...]
    CodeBlocks = Qt.ItemDataRole.UserRole + 7  # tuple[str, ...]
    ContentHash = Qt.ItemDataRole.UserRole + 8  # int, changes whenever what is painted changes
    Title = Qt.ItemDataRole.UserRole + 9  # card heading
    StatusDetail = Qt.ItemDataRole.UserRole + 10  # error text for status "error"


@dataclass(frozen=True, slots=True)
class Segment:
    kind: SegmentKind
    text: str
    media: str = ""  # an image segment: the block's base64 data, for the bubble's thumbnail


@dataclass(slots=True)
class ChatRow:
    key: RowKey
    sort_key: tuple[int, int, int]
    kind: RowKind
    segments: tuple[Segment, ...]
    message: StoredMessage | None = None
    title: str = ""
    detail: dict[str, Any] = field(default_factory=dict)
    content_hash: int = 0
    plain_text: str = ""
    versions: tuple[int, int] | None = None  # (position from 1, count) when the message has other versions
    _code_blocks: tuple[str, ...] | None = None

    @property
    def code_blocks(self) -> tuple[str, ...]:
        # Lazy: parsing the whole text on every streamed delta would cost ~tens of ms on long replies.
        if self._code_blocks is None:
            blocks: list[str] = []
            for seg in self.segments:
                if seg.kind == "markdown":
                    blocks.extend(extract_code_blocks(seg.text))
            self._code_blocks = tuple(blocks)
        return self._code_blocks

    @property
    def status(self) -> str:
        return self.message.status if self.message else "complete"

    @property
    def cut_reason(self) -> str:
        """The stop reason of a finished reply the provider cut short ('' otherwise)."""
        msg = self.message
        if msg is None or msg.role != "assistant" or msg.status not in ("complete", "cut"):
            return ""
        reason = str(msg.meta.get("stop_reason") or "")
        return reason if reason in CUT_STOP_REASONS else ""

    @property
    def is_user_bubble(self) -> bool:
        return self.kind == "message" and self.message is not None and self.message.role == "user"

    def refresh(self) -> None:
        """Recompute what the view reads; called after every change to the row."""
        status = self.message.status if self.message else ""
        expanded = bool(self.detail.get("expanded"))
        self.content_hash = hash((self.kind, self.title, status, self.segments, expanded,
                                  bool(self.detail.get("originals_shown")), bool(self.detail.get("trimmed")),
                                  self.cut_reason, bool(self.detail.get("continuable")),
                                  bool(self.detail.get("undoable")), self.versions))
        self._code_blocks = None
        lines = [self.title] if self.title else []
        lines.extend(seg.text for seg in self.segments)
        self.plain_text = "\n\n".join(line for line in lines if line)


# Marked for lupdate (context "ChatModel"), translated where they are read.
SPEAKERS: dict[str, object] = {"user": QT_TRANSLATE_NOOP("ChatModel", "You"), "assistant": "Claude"}
CARD_SPEAKERS: dict[str, object] = {"compaction": QT_TRANSLATE_NOOP("ChatModel", "Summary card"),
                                    "notice": QT_TRANSLATE_NOOP("ChatModel", "Notice"),
                                    "tool": QT_TRANSLATE_NOOP("ChatModel", "Tool")}


def _tr(text: object) -> str:
    return QCoreApplication.translate("ChatModel", str(text))


ACCESSIBLE_CHARS = 2_000  # a screen reader reads the row's start; Ctrl+C still copies all of it


def accessible_text(row: ChatRow) -> str:
    """What a screen reader says for a row: who speaks, then the text ("Claude: Here is…")."""
    if row.kind == "message" and row.message is not None:
        speaker = _tr(SPEAKERS.get(row.message.role, row.message.role))
    else:
        speaker = _tr(CARD_SPEAKERS.get(row.kind, row.kind))
    text = row.plain_text if len(row.plain_text) <= ACCESSIBLE_CHARS else row.plain_text[:ACCESSIBLE_CHARS] + "…"
    return f"{speaker}: {text}"


def accessible_status(row: ChatRow) -> str:
    """The row's tag in words (interrupted, error, shortened in the context), '' when there is none; a message
    with other versions says which one it is first."""
    status = _accessible_tag(row)
    if row.versions is None:
        return status
    which = QCoreApplication.translate("ChatModel", "Version %1 of %2 (Alt+Left, Alt+Right)").replace(
        "%1", str(row.versions[0])).replace("%2", str(row.versions[1]))
    return f"{which}. {status}" if status else which


def _accessible_tag(row: ChatRow) -> str:
    if row.status == "interrupted":
        return QCoreApplication.translate("ChatModel", "Interrupted")
    if row.status == "error":
        detail = str(row.message.meta.get("error") or "") if row.message else ""
        return (QCoreApplication.translate("ChatModel", "Error: {detail}").format(detail=detail) if detail
                else QCoreApplication.translate("ChatModel", "Error"))
    if row.status == "streaming":
        return QCoreApplication.translate("ChatModel", "Still being written")
    if row.cut_reason:
        return (QCoreApplication.translate("ChatModel", "Cut off: Continue resumes it") if row.detail.get("continuable")
                else QCoreApplication.translate("ChatModel", "Cut off"))
    if row.detail.get("trimmed"):
        return QCoreApplication.translate("ChatModel", "Shortened in the context sent to the model")
    return ""


def _one_line(text: str, limit: int = PREVIEW_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def tool_use_line(block: Block) -> str:
    """'⚙ Read src/app.py': the tool name and its most telling argument."""
    name = str(block.get("name") or "tool")
    args = block.get("input")
    arg = ""
    if isinstance(args, dict):
        arg = next((str(args[k]) for k in _TOOL_ARG_KEYS if isinstance(args.get(k), str) and args[k]), "")
        if not arg and args:
            arg = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
    elif args:
        arg = str(args)
    return _one_line(f"{TOOL_ICON} {name} {arg}".rstrip())


def _result_text(content: Any) -> tuple[str, int]:
    """(text, number of non-text parts such as images) of a tool_result's content."""
    if isinstance(content, str):
        return content, 0
    texts, other = [], 0
    for part in content or []:
        if isinstance(part, dict) and part.get("type") == "text":
            texts.append(str(part.get("text", "")))
        else:
            other += 1
    return "\n".join(texts), other


def tool_result_line(block: Block) -> str:
    """A collapsed one-line preview: '↳ first line… (+41 lines)', '✖' for errors."""
    text, other = _result_text(block.get("content"))
    lines = [ln for ln in text.splitlines() if ln.strip()]
    head = "✖ " + QCoreApplication.translate("ChatModel", "error: ") if block.get("is_error") else "↳ "
    preview = _one_line(lines[0]) if lines else (_no_output() if not other else "")
    extra = []
    if len(lines) > 1:
        extra.append(QCoreApplication.translate("ChatModel", "+{n} lines").format(n=len(lines) - 1))
    if other:
        extra.append(QCoreApplication.translate("ChatModel", "{n} images").format(n=other) if other > 1
                     else QCoreApplication.translate("ChatModel", "1 image"))
    return head + preview + (f"  ({', '.join(extra)})" if extra else "")


_COMMAND_RE = re.compile(r"^\s*<command-name>(.*?)</command-name>(?:.*?<command-args>(.*?)</command-args>)?",
                         re.DOTALL)
_STDOUT_RE = re.compile(r"^\s*<local-command-(stdout|stderr)>(.*?)</local-command-\1>\s*$", re.DOTALL)


def _client_command_line(text: str) -> str | None:
    """Claude Code's slash-command records (in imported sessions) shown as one quiet line, not raw tags."""
    if m := _COMMAND_RE.match(text):
        return _one_line(f"{m.group(1).strip()} {(m.group(2) or '').strip()}".strip())
    if m := _STDOUT_RE.match(text):
        return _one_line("↳ " + (m.group(2).strip() or _no_output()))
    return None


# A tool call's live state (from the tools' events): status and seconds it took.
ToolStates = dict[str, tuple[str, float | None]]
TOOL_STATUS_WORDS: dict[str, object] = {
    "asking": QT_TRANSLATE_NOOP("ChatModel", "waiting for your permission"),
    "running": QT_TRANSLATE_NOOP("ChatModel", "running…"), "ok": "✓",
    "error": QT_TRANSLATE_NOOP("ChatModel", "✖ error"), "denied": QT_TRANSLATE_NOOP("ChatModel", "denied"),
    "cancelled": QT_TRANSLATE_NOOP("ChatModel", "cancelled")}


def _no_output() -> str:
    return QCoreApplication.translate("ChatModel", "(no output)")
EXPANDED_CHARS = 20_000  # an expanded tool card shows this much of an input or an output


def _tool_status(block: Block, states: ToolStates | None) -> str:
    state = (states or {}).get(str(block.get("id") or ""))
    if state is None:
        return ""
    status, took = state
    words = _tr(TOOL_STATUS_WORDS.get(status, status))
    return f"  ·  {words}" + (f" {took:.2f} s" if took is not None and status not in ("running", "asking") else "")


def _fenced(text: str, lang: str = "") -> str:
    cut = text if len(text) <= EXPANDED_CHARS else text[:EXPANDED_CHARS] + "\n…"
    fence = "````" if "```" in cut else "```"
    return f"{fence}{lang}\n{cut}\n{fence}"


def _expanded(block: Block) -> Segment:
    """The full input of a call or output of a result, for an expanded tool card."""
    if block.get("type") == "tool_use":
        return Segment("markdown", _fenced(json.dumps(block.get("input"), ensure_ascii=False, indent=2), "json"))
    text, other = _result_text(block.get("content"))
    extra = ("\n\n" + QCoreApplication.translate("ChatModel", "({n} images or documents)").format(n=other)
             if other else "")
    return Segment("markdown", _fenced(text or _no_output()) + extra)


def attachment_segment(block: Block, name: str = "") -> Segment:
    """An attached image (a thumbnail and its file name) or document (its name, kind and size)."""
    source = block.get("source") if isinstance(block.get("source"), dict) else {}
    assert isinstance(source, dict)
    if block.get("type") == "image":
        data = str(source.get("data") or "") if source.get("type") == "base64" else ""
        return Segment("image", name or QCoreApplication.translate("ChatModel", "Image"), media=data)
    title = str(block.get("title") or name or QCoreApplication.translate("ChatModel", "attachment"))
    if source.get("type") == "text":
        text = str(source.get("data") or "")
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        return Segment("image", QCoreApplication.translate("ChatModel", "{name} · text, {n:,} lines").format(name=title, n=lines))
    if source.get("media_type") == "application/pdf":
        return Segment("image", QCoreApplication.translate("ChatModel", "{name} · PDF").format(name=title))
    return Segment("image", QCoreApplication.translate("ChatModel", "[document: {name}]").format(name=title))


def segments_for(content: list[Block], states: ToolStates | None = None,
                 expanded: bool = False, *, files: Sequence[str] = ()) -> tuple[Segment, ...]:
    """Content blocks -> what the delegate paints. Text stays Markdown; everything else is one muted line (a
    tool card: the call, its status and duration; its result's first line), and an expanded card adds the full
    input and output. ``files``: the attached files' names, in block order (kept with the message)."""
    out: list[Segment] = []
    names = iter(files)
    for block in content:
        kind = block.get("type")
        if expanded and kind in ("tool_use", "tool_result"):
            head = tool_use_line(block) + _tool_status(block, states) if kind == "tool_use" else \
                tool_result_line(block)
            out.extend((Segment("tool" if kind == "tool_use" else "result", head), _expanded(block)))
            continue
        if kind == "text":
            if block.get("text"):
                text = str(block["text"])
                client = _client_command_line(text)
                out.append(Segment("note", client) if client else Segment("markdown", text))
        elif kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
            out.append(Segment("tool", tool_use_line(block) + _tool_status(block, states)))
        elif kind in ("tool_result", "web_search_tool_result", "mcp_tool_result"):
            out.append(Segment("result", tool_result_line(block)))
        elif kind == "thinking" and expanded:  # the whole thought, as the model wrote it
            out.append(Segment("thinking", f"{THINKING_ICON} {str(block.get('thinking', '')).strip()}"))
        elif kind == "thinking":
            first = next((ln for ln in str(block.get("thinking", "")).splitlines() if ln.strip()), "")
            out.append(Segment("thinking", _one_line(THINKING_ICON + " " + (first or QCoreApplication.translate("ChatModel", "Thinking…")))))
        elif kind == "redacted_thinking":
            out.append(Segment("thinking", THINKING_ICON + " "
                               + QCoreApplication.translate("ChatModel", "Thinking (redacted)")))
        elif kind in ("image", "document"):
            out.append(attachment_segment(block, next(names, "")))
        else:
            out.append(Segment("note", f"[{kind}]"))
    return tuple(out)


_TOOL_USE_TYPES = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_ASSISTANT_TOOL_ONLY = _TOOL_USE_TYPES | {"thinking", "redacted_thinking"}


def _row_kind(msg: StoredMessage) -> RowKind:
    """Rows nobody wrote as prose are painted as compact tool rows (no bubble), so a tool-heavy session reads
    as a list of steps: a user-role row of tool results only, and an assistant turn that only calls tools."""
    types = {b.get("type") for b in msg.content}
    if msg.role == "user" and types and types <= {"tool_result"}:
        return "tool"
    if msg.role == "assistant" and types & _TOOL_USE_TYPES and types <= _ASSISTANT_TOOL_ONLY:
        return "tool"
    return "message"


def _own_copy(msg: StoredMessage) -> StoredMessage:
    # append_text edits the last text block in place; never touch the engine's objects.
    return replace(msg, content=[dict(b) for b in msg.content], meta=dict(msg.meta))


def _file_names(msg: StoredMessage) -> list[str]:
    files = msg.meta.get("files") if msg.role == "user" else None
    return [str(f) for f in files] if isinstance(files, list) else []


def _message_row(msg: StoredMessage, states: ToolStates | None = None, expanded: bool = False) -> ChatRow:
    own = _own_copy(msg)
    row = ChatRow(
        key=own.id,
        sort_key=(own.id, 0, 0),
        kind=_row_kind(own),
        segments=segments_for(own.content, states, expanded, files=_file_names(own)),
        message=own,
    )
    if expanded:
        row.detail["expanded"] = True
    row.refresh()
    return row


def _row_chars(row: ChatRow) -> int:
    return sum(len(s.text) if s.kind == "markdown" else 80 for s in row.segments) + 80


def _budget_cut(rows: list[ChatRow], budget: int, min_rows: int) -> int:
    """Index splitting ``rows`` (oldest first) so the newest part fits ``budget`` characters (>= min_rows)."""
    total, cut = 0, len(rows)
    while cut > 0:
        total += _row_chars(rows[cut - 1])
        if total > budget and len(rows) - cut >= min_rows:
            break
        cut -= 1
    return cut


class ChatModel(QAbstractListModel):
    """Rows = a window of messages (oldest first) + cards. Only the newest page is loaded at first."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[ChatRow] = []
        self._held: list[ChatRow] = []  # older rows of the first page not shown yet (oldest first)
        self._keys: list[tuple[int, int, int]] = []  # parallel to _rows, for bisect
        self._has_older = False
        self._card_seq = itertools.count(1)
        # Streaming deltas are coalesced: in Qt 6.12 every dataChanged makes QListView re-lay out all rows.
        self._dirty: set[RowKey] = set()
        self._emit_timer = QTimer(self)
        self._emit_timer.setSingleShot(True)
        self._emit_timer.setInterval(STREAM_EMIT_MS)
        self._emit_timer.timeout.connect(self.flush)
        self.tool_states: ToolStates = {}  # tool_use id -> (status, seconds), from the tools' events
        self._expanded: set[int] = set()  # message ids of tool cards shown with their full input and output
        self._versions: dict[int, tuple[int, int]] = {}  # message id -> (position, count): ‹ 2/3 ›

    def _row(self, msg: StoredMessage) -> ChatRow:
        row = _message_row(msg, self.tool_states, msg.id in self._expanded)
        if (versions := self._versions.get(msg.id)) is not None:
            row.versions = versions
            row.refresh()
        return row

    # -- tool cards ----------------------------------------------------------------------------------------

    def set_tool_state(self, tool_use_id: str, status: str, duration: float | None = None) -> None:
        """A call's live status (asking, running, ok, error, denied, cancelled) on the card that made it."""
        self.tool_states[tool_use_id] = (status, duration)
        for i, row in enumerate(self._rows):
            msg = row.message
            if msg is not None and msg.role == "assistant" and any(
                    b.get("type") == "tool_use" and b.get("id") == tool_use_id for b in msg.content):
                row.segments = segments_for(msg.content, self.tool_states, bool(row.detail.get("expanded")))
                row.refresh()
                self._changed(i)

    def toggle_expanded(self, i: int) -> bool:
        """Expand (or collapse) a tool card to its full input and output. False: the row is not a tool card."""
        if not 0 <= i < len(self._rows) or self._rows[i].kind != "tool" or self._rows[i].message is None:
            return False
        return self._toggle(i)

    def toggle_thinking(self, i: int) -> bool:
        """Show (or fold back) the full text of a row's thinking. False: the row has no thinking to show."""
        msg = self._rows[i].message if 0 <= i < len(self._rows) else None
        if msg is None or not any(b.get("type") == "thinking" for b in msg.content):
            return False
        return self._toggle(i)

    def _toggle(self, i: int) -> bool:
        row = self._rows[i]
        assert row.message is not None
        expanded = not row.detail.get("expanded")
        (self._expanded.add if expanded else self._expanded.discard)(row.message.id)
        row.detail["expanded"] = expanded
        row.segments = segments_for(row.message.content, self.tool_states, expanded)
        row.refresh()
        self._changed(i)
        return True

    # -- Qt API ------------------------------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        msg = row.message
        if role in (Qt.ItemDataRole.DisplayRole, Roles.Text):
            return row.plain_text  # DisplayRole: QAbstractItemView's Ctrl+C copies it
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return accessible_text(row)
        if role == Qt.ItemDataRole.AccessibleDescriptionRole:
            return accessible_status(row)
        if role == Roles.Role:
            return msg.role if msg else ""
        if role == Roles.Status:
            return msg.status if msg else "complete"
        if role == Roles.Kind:
            return row.kind
        if role == Roles.Id:
            return row.key
        if role == Roles.Segments:
            return row.segments
        if role == Roles.CodeBlocks:
            return row.code_blocks
        if role == Roles.ContentHash:
            return row.content_hash
        if role == Roles.Title:
            return row.title
        if role == Roles.StatusDetail:
            return str(msg.meta.get("error") or "") if msg else ""
        return None

    def roleNames(self) -> dict[int, QByteArray]:
        names = dict(super().roleNames())
        names.update({r.value: QByteArray(r.name.lower().encode()) for r in Roles})
        return names

    # -- queries -------------------------------------------------------------------------------------------

    @property
    def has_older(self) -> bool:
        """More history exists above the window (held rows here, or older pages in the store)."""
        return self._has_older or bool(self._held)

    @property
    def store_has_older(self) -> bool:
        return self._has_older

    def row_of(self, key: RowKey) -> int:
        """Row number of a message id or card key, -1 if not in the window."""
        if isinstance(key, int):
            i = bisect.bisect_left(self._keys, (key, 0, 0))
            return i if i < len(self._rows) and self._rows[i].key == key else -1
        return next((i for i, r in enumerate(self._rows) if r.key == key), -1)

    def row_at(self, row: int) -> ChatRow:
        return self._rows[row]

    def message_ids(self) -> list[int]:
        return [r.key for r in self._rows if isinstance(r.key, int)]

    def oldest_message_id(self) -> int | None:
        """The id to page back from (``store.messages(before_id=...)``), counting held rows."""
        rows = self._held or self._rows
        return next((r.key for r in rows if isinstance(r.key, int)), None)

    # -- paging --------------------------------------------------------------------------------------------

    def set_messages(self, newest_page: list[StoredMessage], has_older: bool,
                     versions: dict[int, tuple[int, int]] | None = None) -> None:
        """Replace everything (session switch): the newest page, oldest first. Cards are dropped. ``versions``:
        the page's messages that have other versions (the store's Page.versions)."""
        self._dirty.clear()
        self._versions = dict(versions or {})
        rows = sorted((self._row(m) for m in newest_page), key=lambda r: r.sort_key)
        cut = _budget_cut(rows, FIRST_PAGE_CHAR_BUDGET, MIN_FIRST_ROWS)
        self.beginResetModel()
        # QListView measures every row before the first paint; a page of long Markdown answers would cost
        # seconds, so only the newest ~FIRST_PAGE_CHAR_BUDGET characters are shown and the rest are held
        # back and released (release_held) when the user scrolls up, without a store round trip.
        self._held, self._rows = rows[:cut], rows[cut:]
        self._keys = [r.sort_key for r in self._rows]
        self._has_older = has_older
        self.endResetModel()
        self._mark_continuable()

    def release_held(self) -> bool:
        """Show the next chunk of held rows above the window; False when nothing is held."""
        if not self._held:
            return False
        cut = _budget_cut(self._held, FIRST_PAGE_CHAR_BUDGET, MIN_FIRST_ROWS)
        release, self._held = self._held[cut:], self._held[:cut]
        self._insert_sorted(release)
        return True

    def prepend_older(self, page: list[StoredMessage], has_older: bool,
                      versions: dict[int, tuple[int, int]] | None = None) -> None:
        """Insert an older page above the window. Messages already present are skipped."""
        self._versions.update(versions or {})
        self._has_older = has_older
        held, self._held = self._held, []
        held_ids = {r.key for r in held}
        fresh = [self._row(m) for m in page if self.row_of(m.id) < 0 and m.id not in held_ids]
        self._insert_sorted(sorted(held + fresh, key=lambda r: r.sort_key))

    def append_message(self, msg: StoredMessage) -> None:
        """A new row (normally at the end); an id already shown is updated instead."""
        if self.row_of(msg.id) >= 0:
            self.update_message(msg)
            return
        self._insert_sorted([self._row(msg)])
        self._mark_continuable()

    def update_message(self, msg: StoredMessage) -> None:
        """Replace a message (final text, status, usage) by id; ignored if it is outside the window."""
        i = self.row_of(msg.id)
        if i < 0:
            return
        trimmed = self._rows[i].detail.get("trimmed")
        self._rows[i] = self._row(msg)
        if trimmed:
            self._rows[i].detail["trimmed"] = True
            self._rows[i].refresh()
        self._changed(i)
        self._mark_continuable()

    def append_text(self, message_id: int, delta: str) -> None:
        """Streaming: add ``delta`` to the message's last text block (a new one if the last block is not text).

        The row's visible data and dataChanged follow within STREAM_EMIT_MS (or at ``flush()``).
        """
        i = self.row_of(message_id)
        if i < 0 or not delta:
            return
        row = self._rows[i]
        msg = row.message
        assert msg is not None
        if msg.content and msg.content[-1].get("type") == "text":
            last = msg.content[-1]
            last["text"] = str(last.get("text", "")) + delta
        else:
            msg.content.append({"type": "text", "text": delta})
        if msg.status == "complete":
            msg.status = "streaming"
        # What the view reads (segments, hash) changes only in flush(), so the delegate builds one document
        # per flush, not one per delta, and a row is never painted with text its height was not measured for.
        self._dirty.add(row.key)
        if not self._emit_timer.isActive():
            self._emit_timer.start()

    def flush(self) -> None:
        """Emit the dataChanged that append_text deferred (at most every STREAM_EMIT_MS)."""
        self._emit_timer.stop()
        keys, self._dirty = self._dirty, set()
        for key in keys:
            i = self.row_of(key)
            if i >= 0:
                row = self._rows[i]
                if row.message is not None:
                    row.segments = segments_for(row.message.content, self.tool_states,
                                                bool(row.detail.get("expanded")))
                    row.kind = _row_kind(row.message)  # a tool-only turn that gained text is a message again
                row.refresh()
                self._changed(i)

    def remove_message(self, message_id: int) -> None:
        self._remove_row(self.row_of(message_id))
        self._mark_continuable()

    def _mark_continuable(self) -> None:
        """Only the newest message can be continued, and only when the provider cut it short."""
        newest = next((i for i in range(len(self._rows) - 1, -1, -1) if self._rows[i].message is not None), -1)
        for i, row in enumerate(self._rows):
            wanted = i == newest and bool(row.cut_reason)
            if bool(row.detail.get("continuable")) != wanted:
                row.detail["continuable"] = wanted
                row.refresh()
                self._changed(i)

    def continuable_message_id(self) -> int | None:
        """The cut reply Continue would resume, if the newest message is one."""
        return next((int(r.key) for r in self._rows if r.detail.get("continuable")), None)

    def collapse_through(self, message_id: int) -> None:
        """A summary now replaces every message up to ``message_id``: they leave the window (cards stay)."""
        self._held = [r for r in self._held if not (isinstance(r.key, int) and r.key <= message_id)]
        end = bisect.bisect_right(self._keys, (message_id, 1 << 62, 1 << 62))
        for i in reversed([i for i in range(end) if isinstance(self._rows[i].key, int)]):
            self._remove_row(i)

    # -- cards -----------------------------------------------------------------------------------------------

    def add_card(
        self,
        kind: Literal["compaction", "notice"],
        text: str,
        *,
        title: str = "",
        after_message_id: int | None = None,
        detail: dict[str, Any] | None = None,
    ) -> str:
        """Insert a non-message row after ``after_message_id`` (default: after the newest message). Returns its key.

        Cards are never stored; the window re-adds compaction cards after a reload.
        """
        anchor = after_message_id
        if anchor is None:
            ids = self.message_ids()
            anchor = ids[-1] if ids else 0
        seq = next(self._card_seq)
        row = ChatRow(
            key=f"card:{seq}",
            sort_key=(anchor, 1 if kind == "compaction" else 2, seq),
            kind=kind,
            segments=(Segment("markdown", text),) if text else (),
            title=title,
            detail=dict(detail or {}),
        )
        row.refresh()
        self._insert_sorted([row])
        return str(row.key)

    def add_compaction_card(
        self, summary: str, covered_count: int, tokens_saved: int, covers_through_message_id: int,
        title: str | None = None,
    ) -> str:
        title = title or QCoreApplication.translate(
            "ChatModel", "Context compacted · {count} messages summarized · ~{saved} tokens saved").format(
            count=fmt_count(covered_count), saved=fmt_count(tokens_saved))
        return self.add_card(
            "compaction",
            summary,
            title=title,
            after_message_id=covers_through_message_id,
            detail={
                "covered_count": covered_count,
                "tokens_saved": tokens_saved,
                "covers_through_message_id": covers_through_message_id,
            },
        )

    def set_trimmed(self, message_ids: set[int]) -> None:
        """Mark the rows whose content requests carry shortened (the view shows a quiet tag)."""
        for i, row in enumerate(self._rows):
            if row.message is None:
                continue
            trimmed = row.key in message_ids
            if bool(row.detail.get("trimmed")) != trimmed:
                row.detail["trimmed"] = trimmed
                row.refresh()
                self._changed(i)

    def set_pinned(self, message_ids: set[int]) -> None:
        """Mark the rows the user pinned (the view shows a quiet tag)."""
        for i, row in enumerate(self._rows):
            if row.message is None:
                continue
            pinned = row.key in message_ids
            if bool(row.detail.get("pinned")) != pinned:
                row.detail["pinned"] = pinned
                row.refresh()
                self._changed(i)

    def set_card_detail(self, key: str, **changes: Any) -> None:
        """Change what a card shows (e.g. expanded summary); the row is re-measured and repainted."""
        i = self.row_of(key)
        if i < 0:
            return
        row = self._rows[i]
        row.detail.update(changes)
        row.refresh()
        self._changed(i)

    def card(self, key: str) -> ChatRow | None:
        i = self.row_of(key)
        return self._rows[i] if i >= 0 else None

    def add_notice(self, text: str, title: str = "") -> str:
        """An ephemeral card (e.g. the /context breakdown) at the bottom of the transcript."""
        return self.add_card("notice", text, title=title)

    def clear_cards(self, kind: Literal["compaction", "notice"] | None = None) -> None:
        for i in reversed(range(len(self._rows))):
            row = self._rows[i]
            if isinstance(row.key, str) and (kind is None or row.kind == kind):
                self._remove_row(i)

    # -- internals -------------------------------------------------------------------------------------------

    def _insert_sorted(self, rows: list[ChatRow]) -> None:
        """Insert rows (sorted) at their sorted positions, one beginInsertRows per contiguous run."""
        i = 0
        while i < len(rows):
            pos = bisect.bisect_left(self._keys, rows[i].sort_key)
            j = i + 1
            # Extend the run while the next row would land at the same place (nothing in between).
            while j < len(rows) and (pos >= len(self._keys) or rows[j].sort_key < self._keys[pos]):
                j += 1
            run = rows[i:j]
            self.beginInsertRows(QModelIndex(), pos, pos + len(run) - 1)
            self._rows[pos:pos] = run
            self._keys[pos:pos] = [r.sort_key for r in run]
            self.endInsertRows()
            i = j

    def _remove_row(self, i: int) -> None:
        if i < 0:
            return
        self.beginRemoveRows(QModelIndex(), i, i)
        del self._rows[i]
        del self._keys[i]
        self.endRemoveRows()

    def _changed(self, i: int) -> None:
        idx = self.index(i, 0)
        self.dataChanged.emit(idx, idx, [Roles.ContentHash.value])
