"""What is marked in the painted transcript: the user's text selection and the find bar's matches.

The chat stays a painted list: a mark is a character range in a row's document (positions survive a rebuild of
the document, which renders the same text the same way), and the delegate hands the marks of the row it paints
to the document layout as its selections. Nothing here holds a widget per row.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)

from desktop.ui.transcript.math_render import formula_for_url

FIND_LIGHT, FIND_DARK = QColor("#fff3a3"), QColor("#6b5b00")
CURRENT_LIGHT, CURRENT_DARK = QColor("#ffb547"), QColor("#b86e00")
OBJECT_CHAR = "\ufffc"  # what QTextDocument holds for an image (a typeset formula)


class Range(Struct):
    """A span of a row's text, in characters."""

    start: int
    end: int


class TextMarks(Struct):
    """Selection (one row at a time) and find matches (any rows), keyed by the row's key."""

    selection_key: Any = None
    anchor: int = 0
    position: int = 0
    matches: dict[Any, list[Range]] = field(default_factory=dict)
    current: tuple[Any, Range] | None = None

    # -- selection -----------------------------------------------------------------------------------------

    def has_selection(self) -> bool:
        return self.selection_key is not None and self.anchor != self.position

    def select(self, key: Any, anchor: int, position: int) -> None:
        self.selection_key, self.anchor, self.position = key, anchor, position

    def clear_selection(self) -> None:
        self.selection_key, self.anchor, self.position = None, 0, 0

    def cursor(self, doc: QTextDocument) -> QTextCursor:
        """The selection as a cursor in ``doc`` (the selected row's document), clamped to its length."""
        last = max(doc.characterCount() - 1, 0)
        cursor = QTextCursor(doc)
        cursor.setPosition(min(self.anchor, last))
        cursor.setPosition(min(self.position, last), QTextCursor.MoveMode.KeepAnchor)
        return cursor

    # -- painting ------------------------------------------------------------------------------------------

    def selections(
        self, key: Any, doc: QTextDocument, palette: QPalette, dark: bool
    ) -> list[QAbstractTextDocumentLayout.Selection]:
        """The layout selections to paint for the row ``key``: find matches under the user's selection."""
        out: list[QAbstractTextDocumentLayout.Selection] = []
        found = self.matches.get(key)
        if found:
            last = max(doc.characterCount() - 1, 0)
            for r in found:
                is_current = self.current is not None and self.current[0] == key and self.current[1] == r
                colour = (
                    (CURRENT_DARK if dark else CURRENT_LIGHT)
                    if is_current
                    else (FIND_DARK if dark else FIND_LIGHT)
                )
                out.append(_selection(doc, min(r.start, last), min(r.end, last), colour, None))
        if key == self.selection_key and self.has_selection():
            cursor = self.cursor(doc)
            out.append(
                _selection(
                    doc,
                    cursor.selectionStart(),
                    cursor.selectionEnd(),
                    palette.color(QPalette.ColorRole.Highlight),
                    palette.color(QPalette.ColorRole.HighlightedText),
                )
            )
        return out


def _selection(
    doc: QTextDocument, start: int, end: int, background: QColor, foreground: QColor | None
) -> QAbstractTextDocumentLayout.Selection:
    sel = QAbstractTextDocumentLayout.Selection()
    cursor = QTextCursor(doc)
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    sel.cursor = cursor
    fmt = QTextCharFormat()
    fmt.setBackground(background)
    if foreground is not None:
        fmt.setForeground(foreground)
    sel.format = fmt
    return sel


def selected_text(cursor: QTextCursor) -> str:
    """The selection as plain text; a typeset formula gives back its TeX source between dollars."""
    if not cursor.hasSelection():
        return ""
    doc = cursor.document()
    start, end = cursor.selectionStart(), cursor.selectionEnd()
    parts: list[str] = []
    block = doc.findBlock(start)
    while block.isValid() and block.position() < end:
        if parts:
            parts.append("\n")
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            lo, hi = max(frag.position(), start), min(frag.position() + frag.length(), end)
            if frag.isValid() and lo < hi:
                fmt = frag.charFormat()
                made = formula_for_url(fmt.toImageFormat().name()) if fmt.isImageFormat() else None
                if made is not None:
                    parts.append(f"${made.source}$")
                else:
                    parts.append(frag.text()[lo - frag.position() : hi - frag.position()])
            it += 1
        block = block.next()
    text = "".join(parts).replace("\u2028", "\n").replace(OBJECT_CHAR, "")
    # A document ends with the blank its last block gets from the HTML's final newline: not part of the text.
    return text.rstrip() if end >= doc.characterCount() - 1 else text


def find_all(doc: QTextDocument, needle: str) -> list[Range]:
    """Every case-insensitive occurrence of ``needle`` in ``doc``'s text."""
    out: list[Range] = []
    if not needle:
        return out
    cursor = doc.find(needle, 0)
    while not cursor.isNull():
        out.append(Range(cursor.selectionStart(), cursor.selectionEnd()))
        cursor = doc.find(needle, cursor.selectionEnd())
    return out
