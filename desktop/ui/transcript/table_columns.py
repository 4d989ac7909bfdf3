"""Columns of a Markdown table that break words only where nothing else fits.

A QTextDocument wraps at word boundaries or anywhere, and its table layout then counts a cell's narrowest width as
one character: in a narrow window "compaction_threshold" broke as "compaction_thre / shold" beside a column with
room to spare. Here each column is given at least its longest word (and at most what its longest line needs),
the rest of the room shared by what the columns would still take; only a table whose words cannot fit side by side
is left to Qt (a word then breaks, as it must).
"""

from __future__ import annotations

from msgspec import Struct
from PySide6.QtGui import QFontMetricsF, QTextDocument, QTextFrame, QTextLength, QTextTable

MD_TABLE_PADDING = (
    4  # the Markdown table's cellpadding (code blocks and quotes are tables with other paddings)
)
TABLE_FRAME = 10  # px a bordered table takes beyond its columns and their borders (measured: Qt 6)


class Columns(Struct):
    """A table's columns: the narrowest each can be without breaking a word, and the widest it would want."""

    table: QTextTable
    least: list[float]
    most: list[float]


def _tables(frame: QTextFrame) -> list[QTextTable]:
    found = []
    for child in frame.childFrames():
        if isinstance(child, QTextTable) and child.format().cellPadding() == MD_TABLE_PADDING:
            found.append(child)
        found.extend(_tables(child))
    return found


def measure(doc: QTextDocument) -> list[Columns]:
    """Every Markdown table of ``doc`` with its columns' word and line widths (cell padding and border included)."""
    out = []
    for table in _tables(doc.rootFrame()):
        extra = (
            2 * table.format().cellPadding() + 2
        )  # the cell's padding, and a pixel of rounding either side
        least = [0.0] * table.columns()
        most = [0.0] * table.columns()
        for row in range(table.rows()):
            for col in range(table.columns()):
                cell = table.cellAt(row, col)
                if cell.column() != col or cell.columnSpan() != 1:
                    continue
                block = cell.firstCursorPosition().block()
                end = cell.lastCursorPosition().position()
                while block.isValid() and block.position() <= end:
                    line = 0.0
                    it = block.begin()
                    while not it.atEnd():
                        fragment = it.fragment()
                        if fragment.isValid():
                            metrics = QFontMetricsF(fragment.charFormat().font())
                            text = fragment.text()
                            line += metrics.horizontalAdvance(text)
                            for word in text.split():
                                least[col] = max(least[col], metrics.horizontalAdvance(word))
                        it += 1
                    most[col] = max(most[col], line)
                    block = block.next()
        out.append(Columns(table, [w + extra for w in least], [max(w, 0.0) + extra for w in most]))
    return out


def fit(columns: list[Columns], width: float) -> None:
    """Widths for each table at a text width of ``width``: every column its longest word or more, the room over
    that shared by what each column still wants; a table that cannot fit its words is left to Qt."""
    for table in columns:
        count = len(table.least)
        # What Qt adds to the columns' own widths: a border each side of every column, and the table's frame.
        room = width - 2 * count * table.table.format().border() - TABLE_FRAME
        least, most = table.least, [max(m, w) for m, w in zip(table.most, table.least, strict=True)]
        if count == 0 or sum(least) > room:
            widths: list[float] | None = None
        elif sum(most) <= room:
            widths = most
        else:
            spare = room - sum(least)
            wants = [m - w for m, w in zip(most, least, strict=True)]
            total = sum(wants) or 1.0
            widths = [w + spare * want / total for w, want in zip(least, wants, strict=True)]
        fmt = table.table.format()
        constraints = (
            [QTextLength(QTextLength.Type.FixedLength, int(w)) for w in widths] if widths is not None else []
        )
        if fmt.columnWidthConstraints() != constraints:
            fmt.setColumnWidthConstraints(constraints)
            table.table.setFormat(fmt)
