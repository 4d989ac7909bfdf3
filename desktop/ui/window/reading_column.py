"""The reading column: how wide the transcript and the composer are (a centred column, or a wide one when the
user asks), the body type (size and line height) and the emoji font Qt falls back to.

A long line is hard to follow: at 1920 px a reply ran 1,500 px wide. Readers' clients centre a column of about
760 px; "Wide reading column" in the View menu lets a reader with wide tables or code have more.
"""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase, QTextBlockFormat, QTextCursor, QTextDocument

COLUMN = 760  # px: the column's width (bubble padding included) in a window wider than that
WIDE_COLUMN = 1200  # px: the wide column
GUTTER = 12  # px kept on each side of the column when the window is narrower than it
WIDE_KEY = "appearance/wide_column"  # the window's settings: whether the wide column is chosen
BODY_PX = 15  # the transcript's body type
OBJECT = "\ufffc"  # where an image sits in a text block
LINE_HEIGHT = 150  # percent of the font's line spacing, for prose (code keeps its own)
EMOJI_FAMILY = "Noto Color Emoji"  # packaging/dev.sh installs it (fonts-noto-color-emoji, OFL)


def column_width(viewport: int, wide: bool) -> int:
    """The column's width in a viewport ``viewport`` px wide."""
    return max(min(viewport - 2 * GUTTER, WIDE_COLUMN if wide else COLUMN), 100)


def body_font(base: QFont) -> QFont:
    font = QFont(base)
    font.setPixelSize(BODY_PX)
    return font


def spread_lines(doc: QTextDocument) -> None:
    """Prose lines at LINE_HEIGHT percent; code blocks and tables (their cells) stay tight, and so does a line that
    holds an image (the picture would take half again its height)."""
    block = doc.begin()
    cursor = QTextCursor(doc)
    while block.isValid():
        cursor.setPosition(block.position())
        if cursor.currentTable() is None and OBJECT not in block.text():
            fmt = QTextBlockFormat()
            fmt.setLineHeight(LINE_HEIGHT, QTextBlockFormat.LineHeightTypes.ProportionalHeight.value)
            cursor.mergeBlockFormat(fmt)
        block = block.next()


def use_emoji_font() -> None:
    """Emoji are drawn from the colour emoji font when one is installed (else Qt shows empty boxes)."""
    if EMOJI_FAMILY not in QFontDatabase.applicationEmojiFontFamilies():
        QFontDatabase.addApplicationEmojiFontFamily(EMOJI_FAMILY)
