"""Horizontal stacked bar: what fills the context window, by category, in the CATEGORIES order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import shiboken6
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QEvent, QRect, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QHelpEvent, QPainter, QPainterPath, QPalette
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from desktop.ui.api import CATEGORIES
from desktop.ui.look.format import fmt_percent, fmt_tokens, fmt_tokens_exact

_CONTEXT = "BreakdownBar"

# Marked for lupdate; translated at runtime by category_label().
_LABELS: dict[str, object] = {  # QT_TRANSLATE_NOOP is typed as returning object; the values are str
    "system": QT_TRANSLATE_NOOP("BreakdownBar", "System prompt"),
    "instructions": QT_TRANSLATE_NOOP("BreakdownBar", "Instructions"),
    "project": QT_TRANSLATE_NOOP("BreakdownBar", "Project"),
    "tools": QT_TRANSLATE_NOOP("BreakdownBar", "Tools"),
    "summary": QT_TRANSLATE_NOOP("BreakdownBar", "Summary"),
    "pinned": QT_TRANSLATE_NOOP("BreakdownBar", "Pinned"),
    "messages": QT_TRANSLATE_NOOP("BreakdownBar", "Messages"),
    "tool_results": QT_TRANSLATE_NOOP("BreakdownBar", "Tool results"),
    "media": QT_TRANSLATE_NOOP("BreakdownBar", "Media"),
    "free": QT_TRANSLATE_NOOP("BreakdownBar", "Free"),
    "reserved_output": QT_TRANSLATE_NOOP("BreakdownBar", "Reserved for output"),
}

# Fixed hues, distinguishable from each other in light and dark themes; "free" and "reserved_output"
# are drawn from the palette instead (empty track / hatched track), so they never look like content.
_HUES: dict[str, str] = {
    "system": "#7b61c9",
    "instructions": "#9c7a2e",
    "project": "#c25b3f",
    "tools": "#b05cc0",
    "summary": "#3a9a52",
    "pinned": "#1f9aa0",
    "messages": "#3b82c4",
    "tool_results": "#e08a1e",
    "media": "#d45a8a",
}


def category_label(key: str) -> str:
    return QCoreApplication.translate(_CONTEXT, str(_LABELS.get(key, key)))


def ordered_items(breakdown: Mapping[str, int]) -> list[tuple[str, int]]:
    """Known categories in CATEGORIES order, then any unknown keys (so nothing is silently dropped)."""
    items = [(key, int(breakdown.get(key, 0) or 0)) for key in CATEGORIES]
    items += [(key, int(v or 0)) for key, v in breakdown.items() if key not in CATEGORIES]
    return [(key, max(0, v)) for key, v in items]


def segment_widths(values: Sequence[int], width: int) -> list[int]:
    """Integer pixel widths proportional to values that sum exactly to ``width`` (largest remainder)."""
    total = sum(max(0, v) for v in values)
    if total <= 0 or width <= 0:
        return [0] * len(values)
    exact = [max(0, v) * width / total for v in values]
    widths = [int(x) for x in exact]
    short = width - sum(widths)
    # Hand the leftover pixels to the largest fractional parts; ties go left to right.
    order = sorted(range(len(values)), key=lambda i: (-(exact[i] - widths[i]), i))
    for i in order[:short]:
        widths[i] += 1
    return widths


def category_color(key: str, palette: QPalette) -> QColor:
    if key in _HUES:
        return QColor(_HUES[key])
    # free / reserved / unknown: a faint version of the text colour, readable on light and dark.
    color = QColor(palette.color(QPalette.ColorRole.WindowText))
    color.setAlphaF(0.16 if key == "free" else 0.32)
    return color


class BreakdownBar(QWidget):
    """Paints one segment per non-zero category; hovering a segment shows its name, tokens and share."""

    BAR_HEIGHT = 10

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._items: list[tuple[str, int]] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)

    # -- data -----------------------------------------------------------------------------------

    def set_breakdown(self, breakdown: Mapping[str, int]) -> None:
        self._items = ordered_items(breakdown)
        self.setAccessibleDescription("; ".join(self.segment_tooltip(k) for k, v in self._items if v > 0))
        self.update()

    def total(self) -> int:
        return sum(v for _, v in self._items)

    def items(self) -> list[tuple[str, int]]:
        return list(self._items)

    def segment_rects(self) -> dict[str, QRect]:
        """Pixel rectangle of every non-zero segment, keyed by category."""
        widths = segment_widths([v for _, v in self._items], self.width())
        rects: dict[str, QRect] = {}
        x = 0
        top = (self.height() - self.BAR_HEIGHT) // 2
        for (key, _), w in zip(self._items, widths, strict=True):
            if w > 0:
                rects[key] = QRect(x, top, w, self.BAR_HEIGHT)
            x += w
        return rects

    def segment_at(self, x: int) -> str | None:
        for key, rect in self.segment_rects().items():
            if rect.left() <= x <= rect.right():
                return key
        return None

    def segment_tooltip(self, key: str) -> str:
        value = dict(self._items).get(key, 0)
        total = self.total()
        share = fmt_percent(100.0 * value / total) if total else fmt_percent(None)
        return self.tr("{name}: {tokens} tokens ({exact}), {share}").format(
            name=category_label(key), tokens=fmt_tokens(value), exact=fmt_tokens_exact(value), share=share
        )

    # -- Qt -------------------------------------------------------------------------------------

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        return QSize(240, self.BAR_HEIGHT + 4)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(60, self.BAR_HEIGHT + 4)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            key = self.segment_at(event.pos().x())
            if key is None:
                QToolTip.hideText()
                event.ignore()
            else:
                QToolTip.showText(
                    event.globalPos(), self.segment_tooltip(key), self, self.segment_rects()[key]
                )
            return True
        return super().event(event)

    def paintEvent(self, _event) -> None:  # noqa: N802
        if not shiboken6.isValid(self):  # a paint reaching a widget Python already let go of: nothing to draw
            return
        # Everything read from the widget comes first: a paint that reaches a widget being destroyed then fails
        # before a painter is open on it (an open painter on a destroyed device crashed the process).
        palette, width, height = self.palette(), self.width(), self.height()
        rects = self.segment_rects()
        empty = self.total() == 0
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        top = (height - self.BAR_HEIGHT) // 2
        outline = QPainterPath()
        outline.addRoundedRect(0, top, width, self.BAR_HEIGHT, 3, 3)
        painter.setClipPath(outline)
        if empty:  # empty track, so the bar still reads as a bar
            painter.fillRect(QRect(0, top, width, self.BAR_HEIGHT), category_color("free", palette))
        for key, rect in rects.items():
            painter.fillRect(rect, category_color(key, palette))
            if key == "reserved_output":
                # Hatched: space set aside for the reply, not something the user put there.
                hatch = QColor(palette.color(QPalette.ColorRole.WindowText))
                hatch.setAlphaF(0.35)
                painter.fillRect(rect, QBrush(hatch, Qt.BrushStyle.BDiagPattern))
        painter.end()
