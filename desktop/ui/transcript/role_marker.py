"""Who speaks, at a glance: a short accent bar on the bubble's outer edge (the user's on the right, the model's
on the left), so a long transcript reads as turns even where the bubble tints are faint."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPalette

BAR_W = 3.0
BAR_H = 18.0
INSET = 10.0  # from the bubble's top, clear of the rounded corner
ASSISTANT = QColor("#c8643b")  # the brand's clay: the model's voice
ASSISTANT_DARK = QColor("#e08a5f")


def marker_rect(bubble: QRectF, user: bool) -> QRectF:
    height = min(BAR_H, max(6.0, bubble.height() - 2 * INSET))
    x = bubble.right() - BAR_W - 1.0 if user else bubble.left() + 1.0
    return QRectF(x, bubble.top() + min(INSET, (bubble.height() - height) / 2), BAR_W, height)


def marker_colour(user: bool, palette: QPalette) -> QColor:
    if user:
        return palette.color(QPalette.ColorRole.Highlight)
    dark = palette.color(QPalette.ColorRole.Base).lightness() < 128
    return ASSISTANT_DARK if dark else ASSISTANT


def paint_role_marker(painter: QPainter, bubble: QRectF, user: bool, palette: QPalette) -> None:
    painter.save()
    painter.setPen(Qt.PenStyle.NoPen)
    colour = marker_colour(user, palette)
    if user:  # the user's bubble is tinted with the accent already: a quieter bar
        colour = QColor(colour)
        colour.setAlphaF(0.7)
    painter.setBrush(colour)
    painter.drawRoundedRect(marker_rect(bubble, user), BAR_W / 2, BAR_W / 2)
    painter.restore()
