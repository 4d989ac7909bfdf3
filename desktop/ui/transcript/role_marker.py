"""Who speaks, at a glance: a reply carries a thin accent edge down its whole height on the left; the user's
bubble, on the right and tinted with the accent already, needs none.

It used to be a short bar, 3 x 18 px, at the first line: beside the text it read as a stray text cursor ending
every user message and starting every reply. A rule as tall as the reply reads as an edge, not as a caret.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPalette

EDGE_W = 2.0
INSET = 4.0  # from the bubble's top and bottom: clear of the rounded corners
EDGE_STRENGTH = 0.55  # of the clay over the page: an edge, quieter than the text beside it
ASSISTANT = QColor("#c8643b")  # the brand's clay: the model's voice
ASSISTANT_DARK = QColor("#e08a5f")


def marker_rect(bubble: QRectF, user: bool) -> QRectF | None:
    """Where the mark goes: down the reply's left edge, as tall as the reply; None for the user's bubble."""
    if user:
        return None
    return QRectF(bubble.left() + 1.0, bubble.top() + INSET, EDGE_W, max(bubble.height() - 2 * INSET, 1.0))


def marker_colour(user: bool, palette: QPalette) -> QColor:
    """The mark's colour (opaque): the clay, faded towards the page so it reads as an edge, not as text."""
    if user:
        return palette.color(QPalette.ColorRole.Highlight)
    base = palette.color(QPalette.ColorRole.Base)
    clay = ASSISTANT_DARK if base.lightness() < 128 else ASSISTANT
    return QColor(
        round(base.red() + (clay.red() - base.red()) * EDGE_STRENGTH),
        round(base.green() + (clay.green() - base.green()) * EDGE_STRENGTH),
        round(base.blue() + (clay.blue() - base.blue()) * EDGE_STRENGTH),
    )


def paint_role_marker(painter: QPainter, bubble: QRectF, user: bool, palette: QPalette) -> None:
    rect = marker_rect(bubble, user)
    if rect is None:
        return
    painter.save()
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(marker_colour(user, palette))
    painter.drawRoundedRect(rect, EDGE_W / 2, EDGE_W / 2)
    painter.restore()
