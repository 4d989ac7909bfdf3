"""Code blocks keep their lines: a long line runs past the column and the block scrolls sideways on its own.

A wrapped line of code reads as two statements. The block's code sits in a table of its own (``code_block_html``:
the header with the language and "Copy" is another, above it), laid out without wrapping, so its table may be
wider than the column. The delegate paints it clipped to the column, shifted by the block's own offset, with a
thin bar under it saying how much more there is; Shift+wheel (or a sideways swipe) over it scrolls it.

The transcript is painted, not made of widgets, so this is done by hand: the document is drawn once without the
code blocks' areas and once per block, translated. Hit tests (links, selection) add the offset back.
"""

from __future__ import annotations

from msgspec import Struct
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import (
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFrame,
    QTextTable,
)

CODE_PADDING = 6  # the code table's cellpadding (its header's too); it has one column, the header two
BAR_H = 3.0  # px: the bar under a block that scrolls
STEP = 48  # px a wheel notch (120 eighths of a degree) moves a block


class CodeArea(Struct):
    """Where one code block's table is in its document, and how much wider than the column it runs."""

    table: QTextTable
    rect: QRectF  # document coordinates, from the column's left edge to its right one (what shows)
    overflow: float  # px past the column's right edge (0: it fits)


def _tables(frame: QTextFrame) -> list[QTextTable]:
    found = []
    for child in frame.childFrames():
        if (
            isinstance(child, QTextTable)
            and child.format().cellPadding() == CODE_PADDING
            and child.columns() == 1
        ):
            found.append(child)
        found.extend(_tables(child))
    return found


def prepare(doc: QTextDocument) -> list[QTextTable]:
    """The code tables of ``doc``; the empty paragraph Qt puts between a block's header and its code is closed."""
    tables = _tables(doc.rootFrame())
    cursor = QTextCursor(doc)
    block_fmt = QTextBlockFormat()
    block_fmt.setLineHeight(0, QTextBlockFormat.LineHeightTypes.FixedHeight.value)
    block_fmt.setTopMargin(0)
    block_fmt.setBottomMargin(0)
    char_fmt = QTextCharFormat()
    char_fmt.setFontPointSize(1)
    for table in tables:
        cursor.setPosition(max(table.firstPosition() - 1, 0))
        if cursor.currentTable() is None and not cursor.block().text():
            cursor.mergeBlockFormat(block_fmt)
            cursor.mergeBlockCharFormat(char_fmt)
    return tables


def areas(doc: QTextDocument, tables: list[QTextTable]) -> list[CodeArea]:
    """Each code table's area at the document's current width, and how far its longest line runs past it."""
    layout = doc.documentLayout()
    width = doc.textWidth()
    out = []
    for table in tables:
        top, bottom, right = float("inf"), float("-inf"), 0.0
        block = table.firstCursorPosition().block()
        while block.isValid() and block.position() <= table.lastPosition():
            rect = layout.blockBoundingRect(block)
            lines = block.layout()
            natural = max((lines.lineAt(i).naturalTextWidth() for i in range(lines.lineCount())), default=0.0)
            top, bottom = min(top, rect.top()), max(bottom, rect.bottom())
            right = max(right, rect.left() + natural)
            block = block.next()
        if top == float("inf"):
            continue
        edge = CODE_PADDING + 1
        area = QRectF(0.0, top - edge, width, bottom - top + 2 * edge)
        out.append(CodeArea(table, area, max(0.0, right + edge + 2 - width)))
    return out


def at(found: list[CodeArea], point: QPointF) -> int:
    """The index of the scrollable code area under ``point`` (document coordinates), or -1."""
    for n, area in enumerate(found):
        if area.overflow > 0 and area.rect.contains(point):
            return n
    return -1


def bar_rects(area: CodeArea, offset: float) -> tuple[QRectF, QRectF]:
    """(track, thumb) of the bar along a scrollable block's bottom edge, in document coordinates."""
    rect = area.rect
    track = QRectF(rect.left() + 2, rect.bottom() - BAR_H - 1, rect.width() - 4, BAR_H)
    total = rect.width() + area.overflow
    thumb_w = max(track.width() * rect.width() / total, 16.0)
    x = track.left() + (track.width() - thumb_w) * (offset / area.overflow if area.overflow else 0.0)
    return track, QRectF(x, track.top(), thumb_w, BAR_H)
