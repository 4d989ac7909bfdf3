"""The transcript as a Qt list model: a window of the newest messages plus non-message cards.

The model never holds a whole 10,000-message session: the window loads the newest page with ``set_messages`` and
older pages with ``prepend_older`` when the view asks (``ChatView.older_requested``). Rows stay sorted by a key
(message id, then cards anchored after a message id), so a compaction card lands after the last message it
covers even when those messages are paged in later.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from enum import IntEnum
from typing import Any, Literal

from msgspec import Struct, field
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

from desktop.ui.api import Block, StoredMessage, display
from desktop.ui.look.format import fmt_count
from desktop.ui.transcript.markdown_render import extract_code_blocks

RowKind = Literal["message", "tool", "compaction", "notice"]
SegmentKind = Literal["markdown", "tool", "result", "thinking", "image", "note", "grid"]
RowKey = int | str  # message id, or "card:N"

PREVIEW_CHARS = 100
REPORT_FENCE = "```text\n"  # how the window hands over an aligned plain-text report (the /context card)
STREAM_EMIT_MS = 40
# ~4.5 ms per 1,000 characters of Markdown with code and tables (render + setHtml + layout, 2-core box):
# this keeps the first paint near 200 ms whatever the messages look like.
FIRST_PAGE_CHAR_BUDGET = 40_000
MIN_FIRST_ROWS = 20
# Of those, a screenful (with a margin) is laid out before the chat's gauge is measured; the rest of them are
# pending and follow once it has its figure (release_pending), or at once when find, scrolling or a restored
# place needs them. ~8,000 characters fill a tall window's reading column.
SCREEN_CHAR_BUDGET = 8_000
MIN_SCREEN_ROWS = 8
PENDING_FALLBACK_MS = 1500  # a measurement that never reports does not leave the page half-shown
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


class Segment(Struct, frozen=True):
    """A piece of a row, by kind (markdown, a tool call or result, thinking, an image, a note)."""

    kind: SegmentKind
    text: str
    media: str = ""  # an image segment: the block's base64 data, for the bubble's thumbnail


class ChatRow(Struct):
    """One row of the chat view (a message, a tool row, a compaction card or a notice) and what it shows."""

    key: RowKey
    sort_key: tuple[int, int, int]
    kind: RowKind
    segments: tuple[Segment, ...]
    message: StoredMessage | None = None  # the row's own copy (streaming deltas edit it)
    shown: display.DisplayMessage | None = None  # what the engine says to show of the message
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
        return self.shown.cut_reason if self.shown is not None else ""

    @property
    def is_user_bubble(self) -> bool:
        return self.kind == "message" and self.message is not None and self.message.role == "user"

    def refresh(self) -> None:
        """Recompute what the view reads; called after every change to the row."""
        status = self.message.status if self.message else ""
        expanded = bool(self.detail.get("expanded"))
        self.content_hash = hash(
            (
                self.kind,
                self.title,
                status,
                self.segments,
                expanded,
                bool(self.detail.get("originals_shown")),
                bool(self.detail.get("trimmed")),
                self.cut_reason,
                bool(self.detail.get("continuable")),
                bool(self.detail.get("undoable")),
                self.versions,
            )
        )
        self._code_blocks = None
        lines = [self.title] if self.title else []
        lines.extend(seg.text for seg in self.segments)
        self.plain_text = "\n\n".join(line for line in lines if line)


# Marked for lupdate (context "ChatModel"), translated where they are read.
SPEAKERS: dict[str, object] = {"user": QT_TRANSLATE_NOOP("ChatModel", "You"), "assistant": "Claude"}
CARD_SPEAKERS: dict[str, object] = {
    "compaction": QT_TRANSLATE_NOOP("ChatModel", "Summary card"),
    "notice": QT_TRANSLATE_NOOP("ChatModel", "Notice"),
    "tool": QT_TRANSLATE_NOOP("ChatModel", "Tool"),
}


def _tr(text: object) -> str:
    return QCoreApplication.translate("ChatModel", str(text))


ACCESSIBLE_CHARS = 2_000  # a screen reader reads the row's start; Ctrl+C still copies all of it


def accessible_text(row: ChatRow) -> str:
    """What a screen reader says for a row: who speaks, then the text ("Claude: Here is…")."""
    if row.kind == "message" and row.message is not None:
        speaker = _tr(SPEAKERS.get(row.message.role, row.message.role))
    else:
        speaker = _tr(CARD_SPEAKERS.get(row.kind, row.kind))
    text = (
        row.plain_text if len(row.plain_text) <= ACCESSIBLE_CHARS else row.plain_text[:ACCESSIBLE_CHARS] + "…"
    )
    return f"{speaker}: {text}"


def accessible_status(row: ChatRow) -> str:
    """The row's tag in words (interrupted, error, shortened in the context), '' when there is none; a message
    with other versions says which one it is first."""
    status = _accessible_tag(row)
    if row.versions is None:
        return status
    which = (
        QCoreApplication.translate("ChatModel", "Version %1 of %2 (Alt+Left, Alt+Right)")
        .replace("%1", str(row.versions[0]))
        .replace("%2", str(row.versions[1]))
    )
    return f"{which}. {status}" if status else which


def _accessible_tag(row: ChatRow) -> str:
    if row.status == "interrupted":
        return QCoreApplication.translate("ChatModel", "Interrupted")
    if row.status == "error":
        detail = row.shown.error if row.shown is not None else ""
        return (
            QCoreApplication.translate("ChatModel", "Error: {detail}").format(detail=detail)
            if detail
            else QCoreApplication.translate("ChatModel", "Error")
        )
    if row.status == "streaming":
        return QCoreApplication.translate("ChatModel", "Still being written")
    if row.cut_reason:
        return (
            QCoreApplication.translate("ChatModel", "Cut off: Continue resumes it")
            if row.detail.get("continuable")
            else QCoreApplication.translate("ChatModel", "Cut off")
        )
    if row.detail.get("trimmed"):
        return QCoreApplication.translate("ChatModel", "Shortened in the context sent to the model")
    return ""


def _one_line(text: str, limit: int = PREVIEW_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# A tool call's live state, worded after the call's line.
TOOL_STATUS_WORDS: dict[display.ToolState, object] = {
    display.ToolState.ASKING: QT_TRANSLATE_NOOP("ChatModel", "waiting for your permission"),
    display.ToolState.RUNNING: QT_TRANSLATE_NOOP("ChatModel", "running…"),
    display.ToolState.OK: "✓",
    display.ToolState.ERROR: QT_TRANSLATE_NOOP("ChatModel", "✖ error"),
    display.ToolState.DENIED: QT_TRANSLATE_NOOP("ChatModel", "denied"),
    display.ToolState.CANCELLED: QT_TRANSLATE_NOOP("ChatModel", "cancelled"),
}
EXPANDED_CHARS = 20_000  # an expanded tool card shows this much of an input or an output


def _no_output() -> str:
    return QCoreApplication.translate("ChatModel", "(no output)")


def tool_call_line(call: display.ToolCall) -> str:
    """'⚙ Read src/app.py  ·  ✓ 0.12 s': the tool name, its most telling argument, and its state."""
    line = _one_line(f"{TOOL_ICON} {call.name} {call.argument}".rstrip())
    if (run := call.run) is None:
        return line
    took = f" {run.seconds:.2f} s" if run.seconds is not None and run.finished else ""
    return f"{line}  ·  {_tr(TOOL_STATUS_WORDS.get(run.state, run.state))}{took}"


def tool_result_line(result: display.ToolResult) -> str:
    """A collapsed one-line preview: '↳ first line… (+41 lines)', '✖' for errors."""
    head = "✖ " + QCoreApplication.translate("ChatModel", "error: ") if result.is_error else "↳ "
    preview = (
        _one_line(result.first_line) if result.first_line else (_no_output() if not result.media else "")
    )
    extra = []
    if result.more_lines:
        extra.append(QCoreApplication.translate("ChatModel", "+{n} lines").format(n=result.more_lines))
    if result.media:
        extra.append(
            QCoreApplication.translate("ChatModel", "{n} images").format(n=result.media)
            if result.media > 1
            else QCoreApplication.translate("ChatModel", "1 image")
        )
    return head + preview + (f"  ({', '.join(extra)})" if extra else "")


def _command_line(command: display.ClientCommand) -> str:
    """Claude Code's slash-command records (in imported sessions) shown as one quiet line, not raw tags."""
    return _one_line("↳ " + (command.text or _no_output())) if command.output else _one_line(command.text)


def _fenced(text: str, lang: str = "") -> str:
    cut = text if len(text) <= EXPANDED_CHARS else text[:EXPANDED_CHARS] + "\n…"
    fence = "````" if "```" in cut else "```"
    return f"{fence}{lang}\n{cut}\n{fence}"


def _full_result(result: display.ToolResult) -> Segment:
    """The full output of a result, for an expanded tool card."""
    extra = (
        "\n\n" + QCoreApplication.translate("ChatModel", "({n} images or documents)").format(n=result.media)
        if result.media
        else ""
    )
    return Segment("markdown", _fenced(result.text or _no_output()) + extra)


def _thinking(thought: display.Thinking, expanded: bool) -> Segment:
    if thought.redacted:
        return Segment(
            "thinking", THINKING_ICON + " " + QCoreApplication.translate("ChatModel", "Thinking (redacted)")
        )
    if expanded:  # the whole thought, as the model wrote it
        return Segment("thinking", f"{THINKING_ICON} {thought.text}")
    first = thought.first_line or QCoreApplication.translate("ChatModel", "Thinking…")
    return Segment("thinking", _one_line(f"{THINKING_ICON} {first}"))


def attachment_segment(attachment: display.Attachment) -> Segment:
    """An attached image (a thumbnail and its file name) or document (its name, kind and size)."""
    if attachment.type is display.AttachmentKind.IMAGE:
        return Segment(
            "image",
            attachment.name or QCoreApplication.translate("ChatModel", "Image"),
            media=attachment.media,
        )
    title = attachment.name or QCoreApplication.translate("ChatModel", "attachment")
    if attachment.type is display.AttachmentKind.TEXT:
        return Segment(
            "image",
            QCoreApplication.translate("ChatModel", "{name} · text, {n:,} lines").format(
                name=title, n=attachment.lines
            ),
        )
    if attachment.type is display.AttachmentKind.PDF:
        return Segment("image", QCoreApplication.translate("ChatModel", "{name} · PDF").format(name=title))
    return Segment("image", QCoreApplication.translate("ChatModel", "[document: {name}]").format(name=title))


def segments_of(parts: Sequence[display.Part], expanded: bool = False) -> tuple[Segment, ...]:
    """The engine's display parts -> what the delegate paints. Text stays Markdown; everything else is one muted
    line (a tool card: the call, its status and duration; its result's first line), and an expanded card adds
    the full input and output."""
    out: list[Segment] = []
    for part in parts:
        match part:
            case display.Markdown(text=text):
                out.append(Segment("markdown", text))
            case display.ClientCommand():
                out.append(Segment("note", _command_line(part)))
            case display.ToolCall():
                out.append(Segment("tool", tool_call_line(part)))
                if expanded and part.expandable:
                    out.append(Segment("markdown", _fenced(part.input_json(), "json")))
            case display.ToolResult():
                out.append(Segment("result", tool_result_line(part)))
                if expanded and part.expandable:
                    out.append(_full_result(part))
            case display.Thinking():
                out.append(_thinking(part, expanded))
            case display.Attachment():
                out.append(attachment_segment(part))
            case display.OtherBlock(type=name):
                out.append(Segment("note", f"[{name}]"))
    return tuple(out)


def segments_for(
    content: list[Block],
    runs: display.ToolRuns | None = None,
    expanded: bool = False,
    *,
    files: Sequence[str] = (),
) -> tuple[Segment, ...]:
    """Stored content -> painted segments (the engine reads the blocks, ``display.parts_of``)."""
    return segments_of(display.parts_of(content, runs, files=files), expanded)


_ROW_KINDS: dict[display.RowKind, RowKind] = {
    display.RowKind.MESSAGE: "message",
    display.RowKind.TOOL: "tool",
}


def _message_row(msg: StoredMessage, runs: display.ToolRuns, expanded: bool = False) -> ChatRow:
    own = display.own_copy(msg)
    shown = display.show(own, runs)
    row = ChatRow(
        key=own.id,
        sort_key=(own.id, 0, 0),
        kind=_ROW_KINDS[shown.kind],
        segments=segments_of(shown.parts, expanded),
        message=own,
        shown=shown,
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
        self._pending: list[ChatRow] = []  # rows of the first page past its first screenful (oldest first)
        self._pending_timer = QTimer(self)
        self._pending_timer.setSingleShot(True)
        self._pending_timer.setInterval(PENDING_FALLBACK_MS)
        self._pending_timer.timeout.connect(self.release_pending)
        self._keys: list[tuple[int, int, int]] = []  # parallel to _rows, for bisect
        self._has_older = False
        self._card_seq = itertools.count(1)
        # Streaming deltas are coalesced: in Qt 6.12 every dataChanged makes QListView re-lay out all rows.
        self._dirty: set[RowKey] = set()
        self._emit_timer = QTimer(self)
        self._emit_timer.setSingleShot(True)
        self._emit_timer.setInterval(STREAM_EMIT_MS)
        self._emit_timer.timeout.connect(self.flush)
        self.tool_runs: dict[str, display.ToolRun] = {}  # tool_use id -> its state, from the tools' events
        self._expanded: set[int] = set()  # message ids of tool cards shown with their full input and output
        self._versions: dict[int, tuple[int, int]] = {}  # message id -> (position, count): ‹ 2/3 ›

    def _row(self, msg: StoredMessage) -> ChatRow:
        row = _message_row(msg, self.tool_runs, msg.id in self._expanded)
        if (versions := self._versions.get(msg.id)) is not None:
            row.versions = versions
            row.refresh()
        return row

    # -- tool cards ----------------------------------------------------------------------------------------

    def set_tool_state(
        self, tool_use_id: str, status: display.ToolState | str, duration: float | None = None
    ) -> None:
        """A call's live status (asking, running, ok, error, denied, cancelled) on the card that made it."""
        self.tool_runs[tool_use_id] = display.ToolRun(display.ToolState(status), duration)
        for i, row in enumerate(self._rows):
            if row.shown is not None and tool_use_id in row.shown.calls:
                row.shown = row.shown.with_runs(self.tool_runs)
                row.segments = segments_of(row.shown.parts, bool(row.detail.get("expanded")))
                row.refresh()
                self._changed(i)

    def set_tool_states(self, states: dict[str, tuple[str, float | None]]) -> None:
        """Many calls' statuses at once (a chat opened again: how its calls ended, from the audit log); the rows
        that show one of them are rebuilt once, held rows included."""
        runs = {
            k: display.ToolRun(display.ToolState(status), seconds) for k, (status, seconds) in states.items()
        }
        fresh = {k: run for k, run in runs.items() if self.tool_runs.get(k) != run}
        if not fresh:
            return
        self.tool_runs.update(fresh)
        for rows, shown in ((self._held, False), (self._pending, False), (self._rows, True)):
            for i, row in enumerate(rows):
                if row.shown is not None and any(k in fresh for k in row.shown.calls):
                    row.shown = row.shown.with_runs(self.tool_runs)
                    row.segments = segments_of(row.shown.parts, bool(row.detail.get("expanded")))
                    row.refresh()
                    if shown:
                        self._changed(i)

    def toggle_expanded(self, i: int) -> bool:
        """Expand (or collapse) a tool card to its full input and output. False: the row is not a tool card."""
        if not 0 <= i < len(self._rows) or self._rows[i].kind != "tool" or self._rows[i].message is None:
            return False
        return self._toggle(i)

    def toggle_thinking(self, i: int) -> bool:
        """Show (or fold back) the full text of a row's thinking. False: the row has no thinking to show."""
        shown = self._rows[i].shown if 0 <= i < len(self._rows) else None
        if shown is None or not shown.has_thinking:
            return False
        return self._toggle(i)

    def _toggle(self, i: int) -> bool:
        row = self._rows[i]
        assert row.message is not None and row.shown is not None
        expanded = not row.detail.get("expanded")
        (self._expanded.add if expanded else self._expanded.discard)(row.message.id)
        row.detail["expanded"] = expanded
        row.segments = segments_of(row.shown.parts, expanded)
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
            return row.shown.error if row.shown is not None else ""
        return None

    def roleNames(self) -> dict[int, QByteArray]:
        names = dict(super().roleNames())
        names.update({r.value: QByteArray(r.name.lower().encode()) for r in Roles})
        return names

    # -- queries -------------------------------------------------------------------------------------------

    @property
    def has_older(self) -> bool:
        """More history exists above the window (held rows here, or older pages in the store)."""
        return self._has_older or bool(self._held) or bool(self._pending)

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
        rows = self._held or self._pending or self._rows
        return next((r.key for r in rows if isinstance(r.key, int)), None)

    # -- paging --------------------------------------------------------------------------------------------

    def set_messages(
        self,
        newest_page: list[StoredMessage],
        has_older: bool,
        versions: dict[int, tuple[int, int]] | None = None,
    ) -> None:
        """Replace everything (session switch): the newest page, oldest first. Cards are dropped. ``versions``:
        the page's messages that have other versions (the store's Page.versions)."""
        self._dirty.clear()
        self._versions = dict(versions or {})
        rows = sorted((self._row(m) for m in newest_page), key=lambda r: r.sort_key)
        cut = _budget_cut(rows, FIRST_PAGE_CHAR_BUDGET, MIN_FIRST_ROWS)
        shown = rows[cut:]
        screen = _budget_cut(shown, SCREEN_CHAR_BUDGET, MIN_SCREEN_ROWS)
        self.beginResetModel()
        # QListView measures every row before the first paint; a page of long Markdown answers would cost
        # seconds, so only the newest ~FIRST_PAGE_CHAR_BUDGET characters are shown and the rest are held
        # back and released (release_held) when the user scrolls up, without a store round trip. Of the shown
        # ones, only a screenful is laid out now: the rest wait for release_pending (the chat's measurement
        # runs first).
        self._held, self._pending, self._rows = rows[:cut], shown[:screen], shown[screen:]
        if self._pending:
            self._pending_timer.start()
        else:
            self._pending_timer.stop()
        self._keys = [r.sort_key for r in self._rows]
        self._has_older = has_older
        self.endResetModel()
        self._mark_continuable()

    def release_pending(self) -> bool:
        """Show the rest of the first page (what a screenful left out); False when nothing was pending."""
        self._pending_timer.stop()
        if not self._pending:
            return False
        rows, self._pending = self._pending, []
        self._insert_sorted(rows)
        return True

    def release_held(self) -> bool:
        """Show the next chunk of held rows above the window (the rest of the first page first); False when
        nothing is held."""
        if self.release_pending():
            return True
        if not self._held:
            return False
        cut = _budget_cut(self._held, FIRST_PAGE_CHAR_BUDGET, MIN_FIRST_ROWS)
        release, self._held = self._held[cut:], self._held[:cut]
        self._insert_sorted(release)
        return True

    def prepend_older(
        self, page: list[StoredMessage], has_older: bool, versions: dict[int, tuple[int, int]] | None = None
    ) -> None:
        """Insert an older page above the window. Messages already present are skipped."""
        self._versions.update(versions or {})
        self._has_older = has_older
        self._pending_timer.stop()
        held, self._held, self._pending = self._held + self._pending, [], []
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
            self._pending = [self._row(msg) if r.key == msg.id else r for r in self._pending]
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
        assert row.message is not None
        display.append_text(row.message, delta)  # the row's own copy
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
                    row.shown = display.show(row.message, self.tool_runs)
                    row.segments = segments_of(row.shown.parts, bool(row.detail.get("expanded")))
                    row.kind = _ROW_KINDS[
                        row.shown.kind
                    ]  # a tool-only turn that gained text is a message again
                row.refresh()
                self._changed(i)

    def remove_message(self, message_id: int) -> None:
        self._pending = [r for r in self._pending if r.key != message_id]
        self._remove_row(self.row_of(message_id))
        self._mark_continuable()

    def _mark_continuable(self) -> None:
        """Only the newest message can be continued, and only when the provider cut it short."""
        newest = next(
            (i for i in range(len(self._rows) - 1, -1, -1) if self._rows[i].message is not None), -1
        )
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
        self._pending = [r for r in self._pending if not (isinstance(r.key, int) and r.key <= message_id)]
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
        as_grid: bool = False,
    ) -> str:
        """Insert a non-message row after ``after_message_id`` (default: after the newest message). Returns its key.
        ``as_grid``: ``text`` is an aligned plain-text report, shown as a grid (not Markdown).

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
            segments=(Segment("grid" if as_grid else "markdown", text),) if text else (),
            title=title,
            detail=dict(detail or {}),
        )
        row.refresh()
        self._insert_sorted([row])
        return str(row.key)

    def add_compaction_card(
        self,
        summary: str,
        covered_count: int,
        tokens_saved: int,
        covers_through_message_id: int,
        title: str | None = None,
    ) -> str:
        title = title or QCoreApplication.translate(
            "ChatModel", "Context compacted · {count} messages summarised · ~{saved} tokens saved"
        ).format(count=fmt_count(covered_count), saved=fmt_count(tokens_saved))
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
        self._set_tag("trimmed", message_ids)

    def set_pinned(self, message_ids: set[int]) -> None:
        """Mark the rows the user pinned (the view shows a quiet tag)."""
        self._set_tag("pinned", message_ids)

    def _set_tag(self, tag: str, message_ids: set[int]) -> None:
        """The quiet tag ``tag`` on exactly the message rows in ``message_ids``; rows not shown yet (held or
        pending) keep it for when they are."""
        shown = len(self._rows)
        for i, row in enumerate(self._rows + self._held + self._pending):
            if row.message is None:
                continue
            wanted = row.key in message_ids
            if bool(row.detail.get(tag)) != wanted:
                row.detail[tag] = wanted
                row.refresh()
                if i < shown:
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
        """An ephemeral card (e.g. the /context breakdown) at the bottom of the transcript.

        A report of aligned plain text (``/context``: columns padded with spaces, handed over as a ```text block)
        is shown as a grid: in another language the labels are not as wide as the spaces assume (a Chinese
        character is not two spaces wide in the body font, nor in a monospace one without CJK glyphs), and the
        columns drifted."""
        if text.startswith(REPORT_FENCE) and text.endswith("\n```"):
            return self.add_card("notice", text[len(REPORT_FENCE) : -len("\n```")], title=title, as_grid=True)
        return self.add_card("notice", text, title=title)

    def remove_card(self, key: str) -> None:
        self._remove_row(self.row_of(key))

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
