"""Paints transcript rows as bubbles from cached, laid-out QTextDocuments.

Why the caches: QListView asks every row for its height before the first paint, and a QTextDocument build
(markdown-it + Pygments + setHtml) is the expensive step. Documents are kept per row (LRU) and only re-laid out
when the width bucket changes; heights are cached by (row key, width bucket, content hash, theme) so a
relayout of unchanged rows costs a dict lookup.
"""

from __future__ import annotations

import html
import math
import re
import time
from collections import OrderedDict
from typing import Any

from msgspec import Struct
from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QCoreApplication,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPointF,
    QRect,
    QRectF,
    QSize,
    Qt,
    QTimer,
    QUrl,
    Signal,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPalette,
    QPen,
    QRegion,
    QTextBlockFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QAbstractItemView, QStyledItemDelegate, QStyleOptionViewItem, QToolTip

from desktop.ui.look.theme import BAD, is_dark
from desktop.ui.transcript import code_scroll, table_columns
from desktop.ui.transcript.chat_model import ChatRow, Segment
from desktop.ui.transcript.markdown_render import (
    SafeTextDocument,
    copy_anchor_index,
    extract_code_blocks,
    link_is_safe,
    render_markdown,
    theme_for,
)
from desktop.ui.transcript.markdown_stream import render_streaming
from desktop.ui.transcript.role_marker import paint_role_marker
from desktop.ui.transcript.text_marks import TextMarks
from desktop.ui.transcript.thumbnails import data_thumbnail, thumbnail_key
from desktop.ui.window.reading_column import LINE_HEIGHT, OBJECT, column_width

MARGIN_V = 5
PAD = 10
RADIUS = 10.0
TAG_H = 20
VERSIONS_H = 30  # the ‹ 2/3 › line under a message: arrows large enough to read and to hit
WIDTH_BUCKET = 16
USER_MAX_FRACTION = 0.78
DOC_CACHE_SIZE = 512
HEIGHT_CACHE_LIMIT = 50_000
STREAM_DUTY = 4.0  # a streaming reply waits 4x its last rebuild's cost before the next one

Index = QModelIndex | QPersistentModelIndex


class _DocEntry(Struct):
    """A row's laid-out document, cached with what it was built for."""

    content_hash: int
    dark: bool
    text_width: int
    doc: QTextDocument
    cost: float = 0.0  # seconds its build and layout took
    built_at: float = 0.0
    streaming: bool = False


class _Geometry(Struct):
    """Where a row's bubble and document sit in the viewport."""

    bubble: QRectF
    origin: QPointF  # top-left of the document inside the viewport
    doc: QTextDocument
    tag: str
    bare: bool = False  # painted without a bubble (tool rows)
    versions: tuple[int, int] | None = None  # ‹ position/count › of a message with other versions
    user: bool = False  # the user's bubble: on the column's right


def _blend(a: QColor, b: QColor, t: float) -> QColor:
    return QColor(
        round(a.red() + (b.red() - a.red()) * t),
        round(a.green() + (b.green() - a.green()) * t),
        round(a.blue() + (b.blue() - a.blue()) * t),
    )


CARD_SCHEME = "precis-card:"
CITE_SCHEME = "precis-cite:"  # a summary's citation [#123]: opens the message it cites
PINNED_TAG = QT_TRANSLATE_NOOP("ChatDelegate", "pinned")
PINNED_TIP = QT_TRANSLATE_NOOP(
    "ChatDelegate", "Pinned: kept verbatim beside every summary (Unpin in its actions)"
)
# Source texts (context "ChatDelegate"), translated where they are shown.
TRIMMED_TAG = QT_TRANSLATE_NOOP("ChatDelegate", "shortened in the context sent to the model")
TRIMMED_TIP = QT_TRANSLATE_NOOP(
    "ChatDelegate",
    "Older tool output or media in this message is sent to the model in a shortened form to save context. "
    "The full text stays here and in the history.",
)
# Tag text colours (light theme, dark theme): the light shades are dark enough to read on a pale pill, the
# dark shades light enough to read on a dark one.
TAG_FILL = 0.14  # how much of the tag colour tints its pill
TAG_COLOURS = {"error": BAD, "interrupted": ("#7d5300", "#f0b43c")}


def card_actions(detail: dict[str, Any]) -> list[tuple[str, str]]:
    """The compaction card's actions as (action, label), in the order the card shows them."""
    if detail.get("failure"):  # a summary that failed outside any row: its text, and Retry
        return [
            (
                "summary",
                QCoreApplication.translate("ChatDelegate", "Hide details")
                if detail.get("expanded")
                else QCoreApplication.translate("ChatDelegate", "Show details"),
            ),
            ("retry_summary", QCoreApplication.translate("ChatDelegate", "Retry")),
        ]
    actions = [
        (
            "summary",
            QCoreApplication.translate("ChatDelegate", "Hide summary")
            if detail.get("expanded")
            else QCoreApplication.translate("ChatDelegate", "View summary"),
        ),
        (
            "originals",
            QCoreApplication.translate("ChatDelegate", "Hide originals")
            if detail.get("originals_shown")
            else QCoreApplication.translate("ChatDelegate", "Show originals"),
        ),
    ]
    if detail.get("undoable"):
        actions.append(("undo", QCoreApplication.translate("ChatDelegate", "Undo")))
        actions.append(("edit", QCoreApplication.translate("ChatDelegate", "Edit summary…")))
        actions.append(("handoff", QCoreApplication.translate("ChatDelegate", "New chat from summary")))
    if detail.get("retryable"):  # a trimmed row whose summary failed: try the summary again
        actions.append(("retry_summary", QCoreApplication.translate("ChatDelegate", "Retry the summary")))
    return actions


def card_actions_html(detail: dict[str, Any], link_colour: str = "") -> str:
    """The compaction card's own links (our HTML, never model output): View summary · Show originals · Undo.

    ``link_colour`` comes from the theme: the palette's Link role is plain blue in many dark palettes.
    """
    style = f' style="color:{link_colour}"' if link_colour else ""
    links = [f'<a href="{CARD_SCHEME}{action}"{style}>{label}</a>' for action, label in card_actions(detail)]
    return "<p>" + " · ".join(links) + "</p>"


def cut_text(reason: str) -> str:
    """What a reply the provider cut short says under its text."""
    if reason == "model_context_window_exceeded":
        return QCoreApplication.translate("ChatDelegate", "Cut off: the context window is full")
    if reason == "stream_ended":
        return QCoreApplication.translate("ChatDelegate", "Cut off: the provider ended the reply early")
    return QCoreApplication.translate("ChatDelegate", "Cut off: output limit reached")


def cut_html(reason: str, continuable: bool, muted: str, link_colour: str = "") -> str:
    """The cut marker, with Continue (our own link, like the card actions) on the newest reply."""
    line = html.escape(cut_text(reason))
    if continuable:
        style = f' style="color:{link_colour}"' if link_colour else ""
        label = html.escape(QCoreApplication.translate("ChatDelegate", "Continue"))
        line += f' · <a href="{CARD_SCHEME}continue"{style}>{label}</a>'
    return f'<p style="color:{muted}; margin-top:6px">{line}</p>'


def tag_colour(tag: str, palette: QPalette) -> QColor:
    """Text colour of a row's tag pill, readable on light and dark palettes."""
    dark = is_dark(palette, QPalette.ColorRole.Base)
    for key, (light_hex, dark_hex) in TAG_COLOURS.items():
        if tag.startswith((key, QCoreApplication.translate("ChatDelegate", key))):
            return QColor(dark_hex if dark else light_hex)
    # The quiet "shortened" tag: between text and background, not the palette's placeholder colour, which
    # some palettes set too faint to read at a small size.
    return _blend(palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text), 0.72)


def _lay_out(doc: QTextDocument, width: float, bubble: bool) -> None:
    """Lay ``doc`` out ``width`` wide; a user's bubble then shrinks to its text, so a centred line (a display
    formula) centres in the bubble instead of in the whole column, where it fell outside the bubble."""
    if isinstance(doc, SafeTextDocument) and doc.columns:
        table_columns.fit(doc.columns, width)
    doc.setTextWidth(width)
    if bubble and (ideal := math.ceil(doc.idealWidth())) < width:
        doc.setTextWidth(ideal)


class ChatDelegate(QStyledItemDelegate):
    """Bubble painter for ChatModel rows. Clicking a code block's "Copy" puts its code on the clipboard."""

    code_copied = Signal(int)  # code block number within the row
    version_requested = Signal(int, int)  # message id, -1 (previous version) or +1 (next): the ‹ › arrows
    card_action = Signal(str, str)  # card key, action ("summary" | "originals" | "undo")
    link_activated = Signal(str)  # a safe (http/https/mailto) link was clicked

    def __init__(self, view: QAbstractItemView) -> None:
        super().__init__(view)
        self._view = view
        self._docs: OrderedDict[Any, _DocEntry] = OrderedDict()
        self._heights: dict[tuple[Any, int, int, bool], int] = {}
        self._refresh_pending: set[Any] = set()  # streaming rows waiting for their next rebuild
        self._code_offsets: dict[tuple[Any, int], float] = {}  # (row key, code block): px scrolled sideways
        self._splits: dict[
            tuple[Any, int], int
        ] = {}  # (row key, segment): where a streaming text's open tail starts
        self._model: Any = None
        self._dark = is_dark(view.palette(), QPalette.ColorRole.Base)
        self.marks = TextMarks()  # the user's text selection and the find bar's matches, painted in paint()
        self.wide = False  # the wide reading column (View menu) instead of the centred ~760 px one

    # -- wiring -----------------------------------------------------------------------------------------------

    def attach_model(self, model: Any) -> None:
        """Forward model.dataChanged as sizeHintChanged: a row whose content grew (a streaming reply) must be
        re-measured, and the view asks for a row's height again only on sizeHintChanged."""
        if self._model is not None:
            self._model.dataChanged.disconnect(self._on_data_changed)
        self._model = model
        if model is not None:
            model.dataChanged.connect(self._on_data_changed)

    def _on_data_changed(self, top: QModelIndex, bottom: QModelIndex, roles: list[int] | None = None) -> None:
        # Forwarded at once: ChatModel already coalesces streaming updates (one dataChanged per
        # STREAM_EMIT_MS), and Qt merges this with the relayout dataChanged itself schedules in Qt 6.12.
        for r in range(top.row(), bottom.row() + 1):
            self.sizeHintChanged.emit(top.siblingAtRow(r))

    def clear_caches(self) -> None:
        """After a font or theme change."""
        self._docs.clear()
        self._heights.clear()
        self._dark = is_dark(self._view.palette(), QPalette.ColorRole.Base)

    # -- geometry ----------------------------------------------------------------------------------------------

    def _viewport_width(self) -> int:
        # Inside sizeHint, option.rect is not a reliable source of the row's width; the viewport's width is.
        return max(self._view.viewport().width(), 120)

    @staticmethod
    def _bucket(width: int) -> int:
        return width - width % WIDTH_BUCKET

    def column(self) -> tuple[int, int]:
        """(left, width) of the reading column in the viewport: centred, at most the column's width."""
        vw = self._viewport_width()
        width = self._bucket(column_width(vw, self.wide))
        return (vw - width) // 2, width

    def _text_width(self, index: Index, bucket: int) -> int:
        avail = bucket
        if self._row(index).is_user_bubble:
            avail = int(avail * USER_MAX_FRACTION)
        return max(avail - 2 * PAD, 60)

    def _tag(self, index: Index) -> str:
        row = self._row(index)
        if row.status == "interrupted":
            return QCoreApplication.translate("ChatDelegate", "interrupted")
        if row.status == "error":
            detail = str(row.message.meta.get("error") or "") if row.message else ""
            error = QCoreApplication.translate("ChatDelegate", "error")
            return error + (f": {' '.join(detail.split())}" if detail else "")  # elided when painted
        if row.detail.get("trimmed"):
            return QCoreApplication.translate("ChatDelegate", str(TRIMMED_TAG))
        if row.detail.get("pinned"):
            return QCoreApplication.translate("ChatDelegate", str(PINNED_TAG))
        return ""

    def _row(self, index: Index) -> ChatRow:
        # Direct access: sizeHint runs for every row on every relayout, and each index.data() costs a Qt call.
        return self._model.row_at(index.row())

    def document(self, index: Index) -> QTextDocument:
        """The row's laid-out document at the current width (built or reused)."""
        row = self._row(index)
        key, content_hash, dark = row.key, row.content_hash, self._dark
        text_width = self._text_width(index, self.column()[1])
        entry = self._docs.get(key)
        if (
            entry is not None
            and entry.content_hash != content_hash
            and entry.dark == dark
            and self._keep_streaming(entry, row, index)
        ):
            self._docs.move_to_end(key)
        elif entry is None or entry.content_hash != content_hash or entry.dark != dark:
            started = time.perf_counter()
            entry = _DocEntry(content_hash, dark, text_width, self._build(index, dark))
            _lay_out(entry.doc, text_width, row.is_user_bubble)
            entry.doc.size()  # the layout is part of what a rebuild costs
            entry.cost = time.perf_counter() - started
            entry.built_at = time.perf_counter()
            entry.streaming = row.status == "streaming"
            self._docs[key] = entry
            if len(self._docs) > DOC_CACHE_SIZE:
                self._docs.popitem(last=False)
        else:
            self._docs.move_to_end(key)
        if entry.text_width != text_width:
            _lay_out(entry.doc, text_width, row.is_user_bubble)
            entry.text_width = text_width
        return entry.doc

    def is_current(self, index: Index) -> bool:
        """The row's document shows its latest content (a long streaming reply's may lag a moment behind)."""
        entry = self._docs.get(self._row(index).key)
        return entry is not None and entry.content_hash == self._row(index).content_hash

    def _keep_streaming(self, entry: _DocEntry, row: ChatRow, index: Index) -> bool:
        """A long streaming reply is rebuilt at most every STREAM_DUTY times what its last rebuild cost (so at
        most a quarter of the time goes to it); in between its last document stays up, and a timer asks for
        the newer text once the wait is over."""
        if row.status != "streaming" or not entry.streaming:
            return False
        wait = entry.built_at + STREAM_DUTY * entry.cost - time.perf_counter()
        if wait <= 0:
            return False
        if row.key not in self._refresh_pending:
            self._refresh_pending.add(row.key)
            persistent = QPersistentModelIndex(index)
            QTimer.singleShot(int(wait * 1000) + 1, lambda: self._refresh(row.key, persistent))
        return True

    def _refresh(self, key: Any, index: QPersistentModelIndex) -> None:
        self._refresh_pending.discard(key)
        if index.isValid() and self._model is not None:
            self.sizeHintChanged.emit(self._model.index(index.row(), 0))

    def _build(self, index: Index, dark: bool) -> QTextDocument:
        theme = theme_for(dark)
        row = self._row(index)
        segments, user = row.segments, row.is_user_bubble
        doc = SafeTextDocument()
        doc.setUndoRedoEnabled(False)
        doc.setDocumentMargin(0)
        doc.setDefaultFont(self._view.font())
        title = row.title
        streaming = row.status == "streaming"
        if streaming and not segments:
            doc.setHtml(f'<span style="color:{theme.muted}">…</span>')
            return doc
        chunks = [f"<p><b>{html.escape(title)}</b></p>"] if title else []
        if row.kind == "compaction":
            chunks.append(card_actions_html(row.detail, theme.link))
            if not row.detail.get("expanded"):
                segments = ()  # the summary shows on "View summary"
        code_start = 0
        for n, seg in enumerate(segments):
            if seg.kind == "markdown":
                chunks.append(self._markdown_html(row.key, n, seg.text, dark, user, code_start, streaming))
                code_start += _count_code(seg.text)
            elif seg.kind == "image" and seg.media:
                chunks.append(_image_html(doc, seg, theme.muted))
            elif seg.kind == "thinking":
                chunks.append(thinking_html(seg, theme.muted, theme.link, bool(row.detail.get("expanded"))))
            elif seg.kind == "grid":
                chunks.append(grid_html(seg.text))
            else:
                chunks.append(_line_html(seg, theme.muted))
        if row.cut_reason:
            chunks.append(
                cut_html(row.cut_reason, bool(row.detail.get("continuable")), theme.muted, theme.link)
            )
        doc.setHtml("".join(chunks))
        spread_lines(doc, self._view.font())
        doc.columns = table_columns.measure(doc)
        doc.code = code_scroll.prepare(doc)
        return doc

    def _markdown_html(
        self, key: Any, n: int, text: str, dark: bool, user: bool, code_start: int, streaming: bool
    ) -> str:
        """One Markdown segment. A streaming reply goes through the same renderer, re-rendering only its open
        last block (the split is remembered per row and segment while it streams)."""
        if not streaming:
            self._splits.pop((key, n), None)
            return render_markdown(text, dark, user, code_start)
        out, split = render_streaming(text, dark, user, code_start, self._splits.get((key, n), 0))
        self._splits[(key, n)] = split
        return out

    def _geometry(self, index: Index, rect: QRect) -> _Geometry:
        doc = self.document(index)
        col_left, col_w = self.column()
        size = doc.size()
        row = self._row(index)
        kind, user = row.kind, row.is_user_bubble
        width = min(doc.idealWidth(), doc.textWidth()) if user else doc.textWidth()
        bubble_w = width + 2 * PAD
        left = rect.left() + col_left + (col_w - bubble_w if user else 0)
        pad_v = PAD / 2 if kind == "tool" else PAD  # tool rows have no bubble: keep them compact
        # Prose lines sit at the foot of their spread height (spread_lines): the room above the first one is
        # the bubble's, not the text's, or the text would sit low in its bubble.
        first = doc.begin().layout()
        lead = first.lineAt(0).y() if first is not None and first.lineCount() else 0.0
        bubble = QRectF(left, rect.top() + MARGIN_V, bubble_w, size.height() - lead + 2 * pad_v)
        origin = QPointF(bubble.left() + PAD, bubble.top() + pad_v - lead)
        return _Geometry(bubble, origin, doc, self._tag(index), kind == "tool", row.versions, user)

    # -- QStyledItemDelegate -----------------------------------------------------------------------------------

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        vw = self._viewport_width()
        bucket = self.column()[1]
        row = self._row(index)
        key = (row.key, bucket, row.content_hash, self._dark)
        height = self._heights.get(key)
        if height is None:
            geo = self._geometry(index, QRect(0, 0, vw, 0))
            height = (
                int(geo.bubble.bottom())
                + MARGIN_V
                + (VERSIONS_H if row.versions else TAG_H if geo.tag else 0)
                + 1
            )
            if len(self._heights) > HEIGHT_CACHE_LIMIT:
                self._heights.clear()
            if self._docs[row.key].content_hash == row.content_hash:  # not a streaming row's kept document
                self._heights[key] = height
        return QSize(vw, height)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        geo = self._geometry(index, option.rect)
        palette = self._view.palette()
        base = palette.color(QPalette.ColorRole.Base)
        text = palette.color(QPalette.ColorRole.Text)
        row = self._row(index)
        kind = row.kind
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        on_page = kind == "message" and not row.is_user_bubble  # a reply reads on the page, as prose does
        if kind != "tool" and not on_page:
            if row.is_user_bubble:
                fill = _blend(base, palette.color(QPalette.ColorRole.Highlight), 0.16)
            elif kind == "compaction":
                fill = _blend(base, QColor("#d4a72c"), 0.14)
            elif kind == "notice":
                fill = _blend(base, QColor("#2f81f7"), 0.08)
            else:
                fill = _blend(base, text, 0.05)  # a row of another kind (a note from the app)
            border = _blend(fill, text, 0.12)
            pen = QPen(border, 1.0, Qt.PenStyle.DashLine if kind == "notice" else Qt.PenStyle.SolidLine)
            painter.setPen(pen)
            painter.setBrush(fill)
            painter.drawRoundedRect(geo.bubble, RADIUS, RADIUS)
        elif kind == "tool":  # a tool card: a faint outline, no fill, so a run of steps reads as a list
            painter.setPen(QPen(_blend(base, text, 0.14), 1.0))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(geo.bubble, RADIUS, RADIUS)
        if kind == "message" and row.message is not None:
            paint_role_marker(painter, geo.bubble, row.is_user_bubble, palette)
        # The row with the keyboard's focus, as Qt's State_HasFocus says it, read from the view: option.state is a
        # QStyle flag, and the first read of one builds all of QStyle's enums (~10 ms of a start that paints rows).
        if index == self._view.currentIndex() and self._view.hasFocus():
            painter.setPen(QPen(palette.color(QPalette.ColorRole.Highlight), 1.5))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(geo.bubble.adjusted(-2, -2, 2, 2), RADIUS + 2, RADIUS + 2)
        painter.translate(geo.origin)
        # Clip to what is on screen: a 14K-character reply is far taller than the viewport.
        visible = (
            QRectF(self._view.viewport().rect()).intersected(QRectF(option.rect)).translated(-geo.origin)
        )
        selections = self.marks.selections(row.key, geo.doc, palette, self._dark)
        self._draw_document(painter, geo.doc, row.key, visible, palette, selections)
        painter.translate(-geo.origin)
        if geo.tag:
            self._paint_tag(painter, geo, palette)
        if geo.versions:
            self._paint_versions(painter, geo, geo.versions, palette)
        painter.restore()

    def _draw_document(
        self,
        painter: QPainter,
        doc: QTextDocument,
        key: Any,
        visible: QRectF,
        palette: QPalette,
        selections: list[QAbstractTextDocumentLayout.Selection],
    ) -> None:
        """The document, with each code block that runs past the column clipped to it and shifted by its own
        offset (``code_scroll``); painter and ``visible`` in document coordinates."""
        layout = doc.documentLayout()
        scrolling = [(n, a) for n, a in enumerate(self._code_areas(doc)) if a.overflow > 0]
        ctx = _paint_context(palette, visible)
        ctx.selections = selections
        if not scrolling:
            layout.draw(painter, ctx)
            return
        painter.save()
        rest = QRegion(visible.toAlignedRect())
        for _n, area in scrolling:  # the block's whole band: its lines run on past the column's edge
            band = QRectF(
                visible.left() - 1, area.rect.top(), visible.width() + area.overflow + 2, area.rect.height()
            )
            rest -= QRegion(band.toAlignedRect())
        painter.setClipRegion(rest, Qt.ClipOperation.IntersectClip)
        layout.draw(painter, ctx)
        painter.restore()
        theme = theme_for(self._dark)
        for n, area in scrolling:
            shown = area.rect.intersected(visible)
            if shown.isEmpty():
                continue
            offset = self.code_offset(key, n, area)
            painter.save()
            painter.setClipRect(shown, Qt.ClipOperation.IntersectClip)
            painter.translate(-offset, 0)
            moved = _paint_context(palette, visible.translated(offset, 0))
            moved.selections = selections
            layout.draw(painter, moved)
            painter.restore()
            painter.save()  # its frame stays put, and a bar says how far along it is
            painter.setPen(QPen(QColor(theme.code_border), 1.0))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(area.rect.adjusted(0.5, 0.5, -0.5, -0.5))
            track, thumb = code_scroll.bar_rects(area, offset)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(theme.code_border))
            painter.drawRoundedRect(track, 1.5, 1.5)
            painter.setBrush(QColor(theme.muted))
            painter.drawRoundedRect(thumb, 1.5, 1.5)
            painter.restore()

    def _code_areas(self, doc: QTextDocument) -> list[code_scroll.CodeArea]:
        """Where the document's code blocks are at its current width (kept with the document until it changes)."""
        tables = doc.code if isinstance(doc, SafeTextDocument) else []
        if not tables:
            return []
        kept = getattr(doc, "code_areas", None)
        if kept is not None and kept[0] == doc.textWidth():
            return kept[1]
        found = code_scroll.areas(doc, tables)
        doc.code_areas = (doc.textWidth(), found)  # type: ignore[attr-defined]
        return found

    def code_offset(self, key: Any, n: int, area: code_scroll.CodeArea) -> float:
        """How far code block ``n`` of row ``key`` is scrolled (within what it can scroll at this width)."""
        return min(max(self._code_offsets.get((key, n), 0.0), 0.0), area.overflow)

    def _to_document(self, geo: _Geometry, key: Any, pos: QPointF) -> QPointF:
        """A viewport point in the row's document, with a scrolled code block's offset added back."""
        point = pos - geo.origin
        found = self._code_areas(geo.doc)
        n = code_scroll.at(found, point)
        return point + QPointF(self.code_offset(key, n, found[n]), 0) if n >= 0 else point

    def scroll_code(self, index: Index, rect: QRect, pos: QPointF, pixels: float) -> bool:
        """Scroll the code block under ``pos`` sideways by ``pixels``; False when no block there runs past the
        column (the wheel then scrolls the transcript)."""
        geo = self._geometry(index, rect)
        found = self._code_areas(geo.doc)
        n = code_scroll.at(found, pos - geo.origin)
        if n < 0:
            return False
        key = self._row(index).key
        self._code_offsets[(key, n)] = min(
            max(self.code_offset(key, n, found[n]) + pixels, 0.0), found[n].overflow
        )
        self._view.viewport().update(rect)
        return True

    def _tag_font(self) -> QFont:
        font = QFont(self._view.font())
        if font.pixelSize() > 0:  # the transcript's type is set in pixels (reading_column.BODY_PX)
            font.setPixelSize(max(round(font.pixelSize() * 0.85), 10))
        else:
            font.setPointSizeF(max(font.pointSizeF() * 0.85, 7.0))
        return font

    def _tag_layout(self, geo: _Geometry) -> tuple[QRectF, str]:
        """Where the row's tag pill goes (under the bubble, on the bubble's side) and its elided text."""
        metrics = QFontMetricsF(self._tag_font())
        # A tag may be wider than a short bubble ("ok" with a long error), never wider than the row.
        room = self.column()[1] - 12
        text = metrics.elidedText(geo.tag, Qt.TextElideMode.ElideRight, max(room, 40))
        w = metrics.horizontalAdvance(text) + 12
        left = geo.bubble.right() - w if geo.user else geo.bubble.left()
        if geo.bare:  # no bubble edge to line up with: line up with the text
            left = geo.origin.x() - 6
        left += self._versions_offset(geo)
        return QRectF(left, geo.bubble.bottom() + 3, w, TAG_H - 5), text

    def tag_rect(self, index: Index, rect: QRect) -> QRectF:
        """The tag pill of the row painted at ``rect`` (viewport coordinates); empty when it has no tag."""
        geo = self._geometry(index, rect)
        return self._tag_layout(geo)[0] if geo.tag else QRectF()

    def _paint_tag(self, painter: QPainter, geo: _Geometry, palette: QPalette) -> None:
        painter.setFont(self._tag_font())
        pill, text = self._tag_layout(geo)
        colour = tag_colour(geo.tag, palette)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(_blend(palette.color(QPalette.ColorRole.Base), colour, TAG_FILL))
        painter.drawRoundedRect(pill, pill.height() / 2, pill.height() / 2)
        painter.setPen(colour)
        painter.drawText(pill, Qt.AlignmentFlag.AlignCenter, text)

    # -- versions: ‹ 2/3 › under the bubble, on its leading side (the tag pill moves past it) -------------------

    def versions_fonts(self) -> tuple[QFont, QFont]:
        """The ‹ 2/3 › fonts: the position at the text's own size, the arrows half as large again and bold."""
        label = QFont(self._view.font())
        arrows = QFont(label)
        if label.pixelSize() > 0:  # the reading font is set in pixels; pointSizeF() is then -1
            arrows.setPixelSize(round(label.pixelSize() * 1.6))
        else:
            arrows.setPointSizeF(label.pointSizeF() * 1.6)
        arrows.setBold(True)
        return label, arrows

    def _versions_layout(
        self, geo: _Geometry, versions: tuple[int, int]
    ) -> tuple[QRectF, QRectF, QRectF, str]:
        """(previous arrow, label, next arrow, label text) of a message with other versions."""
        metrics = QFontMetricsF(self.versions_fonts()[0])
        label = f"{versions[0]}/{versions[1]}"
        arrow_w, text_w = VERSIONS_H - 2, metrics.horizontalAdvance(label) + 6
        width = 2 * arrow_w + text_w
        user = geo.user
        left = geo.bubble.right() - width if user else (geo.origin.x() - 6 if geo.bare else geo.bubble.left())
        top, h = geo.bubble.bottom() + 2, VERSIONS_H - 4
        return (
            QRectF(left, top, arrow_w, h),
            QRectF(left + arrow_w, top, text_w, h),
            QRectF(left + arrow_w + text_w, top, arrow_w, h),
            label,
        )

    def _versions_offset(self, geo: _Geometry) -> float:
        """How far the tag pill moves so it does not cover the version arrows (0 without versions)."""
        if not geo.versions:
            return 0.0
        prev, _label, nxt, _text = self._versions_layout(geo, geo.versions)
        user = geo.user
        return -(nxt.right() - prev.left() + 6) if user else nxt.right() - prev.left() + 6

    def version_rects(self, index: Index, rect: QRect) -> tuple[QRectF, QRectF] | None:
        """Where the row painted at ``rect`` has its ‹ and › arrows (viewport coordinates); None without
        versions."""
        row = self._row(index)
        if not row.versions:
            return None
        prev, _label, nxt, _text = self._versions_layout(self._geometry(index, rect), row.versions)
        return prev, nxt

    def _paint_versions(
        self, painter: QPainter, geo: _Geometry, versions: tuple[int, int], palette: QPalette
    ) -> None:
        prev, label_rect, nxt, label = self._versions_layout(geo, versions)
        base, text = palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text)
        pill = prev.united(nxt)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(_blend(base, text, 0.07))
        painter.drawRoundedRect(pill, pill.height() / 2, pill.height() / 2)
        readable, muted = _blend(base, text, 0.8), _blend(base, text, 0.3)
        label_font, arrows = self.versions_fonts()
        painter.setFont(label_font)
        painter.setPen(readable)
        painter.drawText(label_rect, Qt.AlignmentFlag.AlignCenter, label)
        painter.setFont(arrows)
        for rect, glyph, live in ((prev, "‹", versions[0] > 1), (nxt, "›", versions[0] < versions[1])):
            painter.setPen(readable if live else muted)
            painter.drawText(rect.translated(0, -1), Qt.AlignmentFlag.AlignCenter, glyph)

    def _version_click(self, index: Index, rect: QRect, pos: QPointF) -> bool:
        """A click on ‹ or ›: ask for that version (the window switches and reloads the page)."""
        row = self._row(index)
        rects = self.version_rects(index, rect)
        if rects is None or not isinstance(row.key, int) or row.versions is None:
            return False
        for hit, delta in ((rects[0], -1), (rects[1], 1)):
            if hit.contains(pos):
                position, count = row.versions
                if 1 <= position + delta <= count:
                    self.version_requested.emit(row.key, delta)
                return True
        return False

    def helpEvent(  # noqa: N802 (Qt override)
        self, event: QHelpEvent, view: QAbstractItemView, option: QStyleOptionViewItem, index: Index
    ) -> bool:
        # The tags are terse; hovering one says what it means (the full error text for a cut-off error tag).
        if event is not None and event.type() == QEvent.Type.ToolTip and index.isValid():
            geo = self._geometry(index, option.rect)
            if geo.tag and self._tag_layout(geo)[0].contains(QPointF(event.pos())):
                QToolTip.showText(event.globalPos(), self.tag_tooltip(index), view)
                return True
        return super().helpEvent(event, view, option, index)

    def tag_tooltip(self, index: Index) -> str:
        row = self._row(index)
        tag = self._tag(index)
        if row.detail.get("trimmed") and row.status not in ("error", "interrupted"):
            return QCoreApplication.translate("ChatDelegate", str(TRIMMED_TIP))
        if row.detail.get("pinned") and row.status not in ("error", "interrupted"):
            return QCoreApplication.translate("ChatDelegate", str(PINNED_TIP))
        if row.status == "error":
            error = QCoreApplication.translate("ChatDelegate", "error")
            return str(row.message.meta.get("error") or error) if row.message else error
        if row.status == "interrupted":
            return QCoreApplication.translate(
                "ChatDelegate", "The reply was stopped before it finished; what arrived is kept."
            )
        return tag

    def editorEvent(self, event: QEvent, model: Any, option: QStyleOptionViewItem, index: Index) -> bool:
        if (
            event.type() == QEvent.Type.MouseButtonRelease
            and isinstance(event, QMouseEvent)
            and event.button() == Qt.MouseButton.LeftButton
        ):
            if self._version_click(index, option.rect, event.position()):
                return True
            href = self.anchor_at(index, option.rect, event.position())
            if href.startswith(CARD_SCHEME):
                self.card_action.emit(str(self._row(index).key), href[len(CARD_SCHEME) :])
                return True
            if href.startswith(CITE_SCHEME):  # a citation in a summary: the window opens the cited message
                self.card_action.emit(str(self._row(index).key), "cite:" + href[len(CITE_SCHEME) :])
                return True
            n = copy_anchor_index(href)
            if n is not None:
                return self.copy_code_block(index, n)
            if href and link_is_safe(href):
                self.link_activated.emit(href)
                return True
        return super().editorEvent(event, model, option, index)

    # -- affordances ------------------------------------------------------------------------------------------

    def bubble_rect(self, index: Index, rect: QRect) -> QRectF:
        """Where the row painted at ``rect`` draws its bubble (viewport coordinates)."""
        return self._geometry(index, rect).bubble

    def anchor_at(self, index: Index, rect: QRect, pos: QPointF) -> str:
        """The link under ``pos`` (viewport coordinates) in the row painted at ``rect``; '' if none."""
        geo = self._geometry(index, rect)
        return geo.doc.documentLayout().anchorAt(self._to_document(geo, self._row(index).key, pos))

    def text_origin(self, index: Index, rect: QRect) -> QPointF:
        """Where the row painted at ``rect`` puts its document's top-left (viewport coordinates)."""
        return self._geometry(index, rect).origin

    def hit_position(self, index: Index, rect: QRect, pos: QPointF) -> int:
        """The document position nearest to ``pos`` (viewport coordinates) in the row painted at ``rect``."""
        geo = self._geometry(index, rect)
        point = self._to_document(geo, self._row(index).key, pos)
        return geo.doc.documentLayout().hitTest(point, Qt.HitTestAccuracy.FuzzyHit)

    def position_point(self, index: Index, rect: QRect, position: int) -> QPointF:
        """Viewport point at the top of the line holding document ``position`` in the row painted at ``rect``."""
        geo = self._geometry(index, rect)
        block = geo.doc.findBlock(position)
        top = geo.doc.documentLayout().blockBoundingRect(block).top()
        line = block.layout().lineForTextPosition(position - block.position()) if block.isValid() else None
        return geo.origin + QPointF(0.0, top + (line.y() if line is not None and line.isValid() else 0.0))

    def copy_anchor_points(self, index: Index, rect: QRect) -> list[QPointF]:
        """Viewport points of each code block's "Copy" label, in block order (hover hints and tests)."""
        geo = self._geometry(index, rect)
        layout = geo.doc.documentLayout()
        points: dict[int, QPointF] = {}
        block = geo.doc.begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                n = copy_anchor_index(frag.charFormat().anchorHref()) if frag.isValid() else None
                if n is not None and n not in points:
                    line = block.layout().lineForTextPosition(frag.position() - block.position())
                    x = line.cursorToX(frag.position() - block.position())[0] if line.isValid() else 0.0
                    br = layout.blockBoundingRect(block)
                    y = br.top() + (line.y() + line.height() / 2 if line.isValid() else br.height() / 2)
                    points[n] = geo.origin + QPointF(br.left() + x + 3, y)
                it += 1
            block = block.next()
        return [points[k] for k in sorted(points)]

    def copy_code_block(self, index: Index, n: int) -> bool:
        blocks = self._row(index).code_blocks
        if not 0 <= n < len(blocks):
            return False
        QGuiApplication.clipboard().setText(blocks[n])
        self.code_copied.emit(n)
        return True


def spread_lines(doc: QTextDocument, body: QFont) -> None:
    """Prose lines LINE_HEIGHT percent of the body font's line spacing apart, whatever script they are in; code
    blocks and tables (their cells) stay tight, and so does a line that holds an image.

    In pixels, not as a proportion of each line's own height: that height comes from whichever font draws the
    line, and a paragraph in Chinese, drawn by the CJK fallback font, came out with another spacing than one in
    English (~20 px against 27 px on a reader's machine). A line with something taller in it (a formula, a
    heading) grows as it needs."""
    spacing = QFontMetricsF(body).lineSpacing()
    pitch = float(round(spacing * LINE_HEIGHT / 100))
    row = float(round(spacing * GRID_LINE_HEIGHT / 100))
    block = doc.begin()
    cursor = QTextCursor(doc)
    while block.isValid():
        cursor.setPosition(block.position())
        table = cursor.currentTable()
        if table is not None and table.format().cellPadding() == GRID_PADDING:
            # A report's grid: every row one height, so a label in Chinese and its value in Latin letters share
            # a baseline (each line sits at the foot of its height).
            fmt = QTextBlockFormat()
            fmt.setLineHeight(row, QTextBlockFormat.LineHeightTypes.MinimumHeight.value)
            cursor.mergeBlockFormat(fmt)
        elif table is None and OBJECT not in block.text():
            fmt = QTextBlockFormat()
            if block.blockFormat().headingLevel() > 0:  # a heading keeps the air under it
                fmt.setLineHeight(LINE_HEIGHT, QTextBlockFormat.LineHeightTypes.ProportionalHeight.value)
            else:
                fmt.setLineHeight(pitch, QTextBlockFormat.LineHeightTypes.MinimumHeight.value)
            cursor.mergeBlockFormat(fmt)
        block = block.next()


GRID_PADDING = 1  # the report grid's cellpadding (Markdown tables, code blocks and quotes use others)
GRID_LINE_HEIGHT = 130  # percent of the body's line spacing: a grid's rows
_GAP = re.compile(r" {2,}")
_FIGURE = re.compile(r"[~$(]?[\d.,]+\s*%?\)?")


def grid_html(report: str) -> str:
    """An aligned plain-text report (the ``/context`` card) as tables: a label and its value per line, and a
    table of figures (tokens, share, label) below a heading. Columns are cells, not runs of spaces, so they line
    up whatever the language (the spaces drifted in Chinese). Sections are the report's blank-line-separated
    parts; a line indented under another continues it (its first cell empty)."""
    out = []
    for section in report.split("\n\n"):
        rows: list[list[str]] = []
        for line in section.split("\n"):
            if not line.strip():
                continue
            if line.startswith("  "):  # indented: a row of figures, or the line above continued
                cells = _GAP.split(line.strip())
                rows.append(cells if len(cells) > 1 else ["", cells[0]])
            else:
                rows.append(_GAP.split(line.strip(), maxsplit=1))
        if not rows:
            continue
        width = max(len(r) for r in rows)
        html_rows = []
        for cells in rows:
            tds = []
            for n, cell in enumerate(cells):
                last = n == len(cells) - 1
                span = f' colspan="{width - n}"' if last and len(cells) < width else ""
                align = ' align="right"' if len(cells) > 2 and _FIGURE.fullmatch(cell) else ""
                pad = "" if last else ' style="padding-right:16px"'
                tds.append(f"<td{span}{align}{pad}>{html.escape(cell)}</td>")
            html_rows.append("<tr>" + "".join(tds) + "</tr>")
        out.append(
            f'<table cellspacing="0" cellpadding="{GRID_PADDING}" style="margin-bottom:8px">'
            + "".join(html_rows)
            + "</table>"
        )
    return "".join(out)


def _line_html(seg: Segment, muted: str) -> str:
    style = f"color:{muted}; margin-top:1px; margin-bottom:1px"
    if seg.kind == "thinking":
        style += "; font-style:italic"
    return f'<p style="{style}">{html.escape(seg.text)}</p>'


def _image_html(doc: QTextDocument, seg: Segment, muted: str) -> str:
    """An attached image: its thumbnail (a resource of this document only) over its file name."""
    image = data_thumbnail(seg.media)
    name = f'<p style="color:{muted}; margin-top:2px; margin-bottom:4px">{html.escape(seg.text)}</p>'
    if image is None:
        return name
    url = f"precis-thumb:{thumbnail_key(seg.media)}"
    doc.addResource(QTextDocument.ResourceType.ImageResource.value, QUrl(url), image)
    return f'<p style="margin-top:2px"><img src="{url}" width="{image.width()}" height="{image.height()}"></p>{name}'


def thinking_html(seg: Segment, muted: str, link: str, expanded: bool) -> str:
    """A thinking block: its first line with "Show thinking", or its whole text (lines kept) with "Hide"."""
    redacted = seg.text.endswith("(redacted)")
    label = (
        QCoreApplication.translate("ChatDelegate", "Hide thinking")
        if expanded
        else QCoreApplication.translate("ChatDelegate", "Show thinking")
    )
    action = (
        ""
        if redacted
        else (
            f' · <a href="{CARD_SCHEME}thinking" style="color:{link}; font-style:normal">'
            f"{html.escape(label)}</a>"
        )
    )
    wrap = "; white-space:pre-wrap" if expanded else ""
    style = f"color:{muted}; margin-top:1px; margin-bottom:1px; font-style:italic{wrap}"
    return f'<p style="{style}">{html.escape(seg.text)}{action}</p>'


def _count_code(text: str) -> int:
    return len(extract_code_blocks(text))


def _paint_context(palette: QPalette, clip: QRectF) -> QAbstractTextDocumentLayout.PaintContext:
    ctx = QAbstractTextDocumentLayout.PaintContext()
    ctx.palette = palette
    ctx.clip = clip
    return ctx
