"""The circular context gauge: a small painted ring showing how full the context window is.

Input is a ContextSnapshot and nothing else, so the ring, the card, ``/context`` and the CLI agree.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import shiboken6
from msgspec import Struct
from PySide6.QtCore import QEasingCurve, QPointF, QRectF, QSize, Qt, QVariantAnimation, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QKeyEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from desktop.ui.api import ContextSnapshot
from desktop.ui.look.format import fmt_percent, fmt_tokens, gauge_text, state_color_hex
from desktop.ui.look.theme import is_dark

if TYPE_CHECKING:
    from desktop.ui.gauge.hover_card import HoverCard

ANIMATION_MS = 250
SPIN_MS = 1100
SIDE = 40  # preferred size in logical pixels: room for "100%" at a readable size
MIN_TEXT_PX = 8  # the number is never drawn smaller than this
UNIT_SCALE = 0.62  # the "%" is set smaller than the digits, so three digits and the unit fit the ring
BUSY_SPAN_DEG = 80
DASHES = 12  # segments of the "capacity unknown" ring


class GaugeColors(Struct, frozen=True):
    """The gauge's colours for its current state."""

    arc: QColor  # the filled part (state colour)
    track: QColor  # the unfilled part
    text: QColor


def _with_alpha(color: QColor, alpha: float) -> QColor:
    c = QColor(color)
    c.setAlphaF(alpha)
    return c


class ContextGauge(QWidget):
    compact_requested = Signal()
    snapshot_changed = Signal(
        object
    )  # ContextSnapshot: what the ring now shows (the figure beside it follows)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._snapshot: ContextSnapshot | None = None
        self._busy: str | None = None
        self._fraction = 0.0  # what is painted (animated towards the snapshot's ratio)
        self._spin_deg = 0.0

        self.setAccessibleName(self.tr("Context usage"))
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setAttribute(Qt.WidgetAttribute.WA_Hover, True)

        self._anim = QVariantAnimation(self)
        self._anim.setDuration(ANIMATION_MS)
        self._anim.setEasingCurve(QEasingCurve.Type.OutCubic)
        self._anim.valueChanged.connect(self._on_anim)

        self._spin = QVariantAnimation(self)
        self._spin.setStartValue(0.0)
        self._spin.setEndValue(360.0)
        self._spin.setDuration(SPIN_MS)
        self._spin.setLoopCount(-1)
        self._spin.valueChanged.connect(self._on_spin)

        # The detail card is a third of the window's widgets: built when first needed (a hover, the keyboard, a
        # click), after the first paint, not with the gauge.
        self._card: HoverCard | None = None
        self._update_accessible()

    @property
    def card(self) -> HoverCard:
        """The detail card, built on first use with what the gauge shows."""
        if self._card is None:
            from desktop.ui.gauge.hover_card import HoverCard

            self._card = HoverCard(self)
            self._card.compact_clicked.connect(self.compact_requested)
            if self._snapshot is not None:
                self._card.set_snapshot(self._snapshot)
            if self._busy:
                self._card.set_busy(self._busy)
        return self._card

    # -- public API -----------------------------------------------------------------------------

    def snapshot(self) -> ContextSnapshot | None:
        return self._snapshot

    def set_snapshot(self, snapshot: ContextSnapshot, animate: bool = True) -> None:
        self._snapshot = snapshot
        target = self._target_fraction()
        self._anim.stop()
        if animate and self.isVisible() and abs(target - self._fraction) > 1e-4:
            self._anim.setStartValue(float(self._fraction))
            self._anim.setEndValue(float(target))
            self._anim.start()
        else:
            self._fraction = target
        if self._card is not None:
            self._card.set_snapshot(snapshot)
        self._update_accessible()
        self.update()
        self.snapshot_changed.emit(snapshot)

    def set_busy(self, text: str | None) -> None:
        """Compressing (or similar) in progress: a rotating segment over the ring; None clears it."""
        self._busy = text or None
        if self._busy:
            if self._spin.state() != QVariantAnimation.State.Running:
                self._spin.start()
        else:
            self._spin.stop()
            self._spin_deg = 0.0
        if self._card is not None:
            self._card.set_busy(self._busy)
        self._update_accessible()
        self.update()

    def is_busy(self) -> bool:
        return self._busy is not None

    def displayed_fraction(self) -> float:
        """The fraction of the ring currently painted (0..1), mid-animation included."""
        return self._fraction

    def label_text(self) -> str:
        """The number painted in the middle of the ring, with its unit ("42%")."""
        snap = self._snapshot
        if snap is None or snap.source == "none":
            return "–"
        return gauge_text(snap.percent)

    def label_fonts(self) -> tuple[QFont, QFont]:
        """(digits, unit) fonts: the largest size at which the whole label fits inside the ring's hole."""
        text = self.label_text()
        digits, unit = (text[:-1], "%") if text.endswith("%") else (text, "")
        inner = self.ring_rect().width() - self.pen_width()
        room_w, room_h = (
            inner * 0.9,
            inner * 0.62,
        )  # the text is short: near the centre the hole is its full width
        px = max(MIN_TEXT_PX, round(room_h))
        while True:
            big, small = QFont(self.font()), QFont(self.font())
            big.setPixelSize(px)
            big.setBold(text == "?")
            small.setPixelSize(max(6, round(px * UNIT_SCALE)))
            width = QFontMetricsF(big).horizontalAdvance(digits) + (
                QFontMetricsF(small).horizontalAdvance(unit) if unit else 0.0
            )
            if width <= room_w or px <= MIN_TEXT_PX:
                return big, small
            px -= 1

    def label_width(self) -> float:
        """How wide the painted label is (logical pixels)."""
        big, small = self.label_fonts()
        text = self.label_text()
        digits, unit = (text[:-1], "%") if text.endswith("%") else (text, "")
        return QFontMetricsF(big).horizontalAdvance(digits) + (
            QFontMetricsF(small).horizontalAdvance(unit) if unit else 0.0
        )

    def tick_fraction(self) -> float | None:
        """Where on the ring automatic compaction starts (0..1 of the window), or None when there is no such point."""
        snap = self._snapshot
        if snap is None or not snap.window or not snap.compact_at_tokens:
            return None
        return max(0.0, min(1.0, snap.compact_at_tokens / snap.window))

    def ring_rect(self) -> QRectF:
        """The circle the stroke is centred on, in logical coordinates."""
        side = min(self.width(), self.height())
        pen = self.pen_width()
        inset = pen / 2 + max(1.0, side * 0.04)  # room for the stroke plus a hairline for the focus ring
        x = (self.width() - side) / 2 + inset
        y = (self.height() - side) / 2 + inset
        return QRectF(x, y, side - 2 * inset, side - 2 * inset)

    def pen_width(self) -> float:
        return max(2.5, min(self.width(), self.height()) * 0.11)

    def has_data(self) -> bool:
        return self._snapshot is not None and self._snapshot.source != "none"

    def window_known(self) -> bool:
        return self._snapshot is not None and bool(self._snapshot.window)

    def colors(self) -> GaugeColors:
        pal = self.palette()
        dark = is_dark(pal)
        text = pal.color(QPalette.ColorRole.WindowText)
        snap = self._snapshot
        if snap is None or not self.has_data():
            # Muted grey: nothing measured yet, so no colour claims anything.
            return GaugeColors(
                arc=_with_alpha(text, 0.25), track=_with_alpha(text, 0.14), text=_with_alpha(text, 0.5)
            )
        if not self.window_known():
            return GaugeColors(arc=_with_alpha(text, 0.55), track=_with_alpha(text, 0.55), text=text)
        arc = QColor(state_color_hex(snap.state if snap.state != "unknown" else "normal", dark))
        return GaugeColors(arc=arc, track=_with_alpha(arc, 0.22), text=text)

    def description(self) -> str:
        """Accessible description: the numbers behind the ring, in words."""
        snap = self._snapshot
        parts: list[str] = []
        if self._busy:
            parts.append(self._busy)
        if snap is None or snap.source == "none":
            parts.append(self.tr("No context usage data yet."))
        elif not snap.window:
            parts.append(self.tr("{used} tokens used; capacity unknown.").format(used=fmt_tokens(snap.used)))
        else:
            parts.append(
                self.tr("{used} of {window} tokens used ({pct}). Next turn about {nxt} ({npct}).").format(
                    used=fmt_tokens(snap.used),
                    window=fmt_tokens(snap.window),
                    pct=fmt_percent(snap.percent),
                    nxt=fmt_tokens(snap.next_turn),
                    npct=fmt_percent(snap.next_turn_percent),
                )
            )
            words = {
                "warning": self.tr("Context is getting full."),
                "critical": self.tr("Context almost full."),
            }
            if snap.state in words:
                parts.append(words[snap.state])
        if snap is not None and snap.summary_active:
            parts.append(self.tr("Summary active."))
        return " ".join(parts)

    # -- internals ------------------------------------------------------------------------------

    def _target_fraction(self) -> float:
        snap = self._snapshot
        if snap is None or not snap.window or snap.source == "none":
            return 0.0
        return max(0.0, min(1.0, snap.used / snap.window))  # clamp: never wraps past a full ring

    def _on_anim(self, value: float) -> None:
        self._fraction = float(value)
        self.update()

    def _on_spin(self, value: float) -> None:
        self._spin_deg = float(value)
        self.update()

    def _update_accessible(self) -> None:
        self.setAccessibleDescription(self.description())

    # -- Qt -------------------------------------------------------------------------------------

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        return QSize(SIDE, SIDE)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(20, 20)

    def hideEvent(self, event) -> None:  # noqa: N802
        # The card is a window of its own: it goes when its anchor goes (a closed or minimised window), and so
        # is never still on screen, painting, while the gauge and its children are destroyed.
        if self._card is not None:
            self._card.hide()
        super().hideEvent(event)

    def enterEvent(self, event) -> None:  # noqa: N802
        self.card.anchor_entered()
        super().enterEvent(event)

    def leaveEvent(self, event) -> None:  # noqa: N802
        if self._card is not None:
            self._card.anchor_left()
        super().leaveEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if (
            event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space)
            and self._snapshot is not None
        ):
            self.card.open_from_keyboard()
            event.accept()
            return
        if event.key() == Qt.Key.Key_Escape and self._card is not None and self._card.isVisible():
            self.card.close_card()
            event.accept()
            return
        super().keyPressEvent(event)

    def mousePressEvent(self, event) -> None:  # noqa: N802
        # A click pins the card open (touch, or to reach the button); a second click closes it.
        if event.button() == Qt.MouseButton.LeftButton and self._snapshot is not None:
            if self.card.isVisible() and self.card.is_pinned():
                self.card.close_card()
            else:
                self.card.open_from_keyboard()
            event.accept()
            return
        super().mousePressEvent(event)

    def focusInEvent(self, event) -> None:  # noqa: N802
        self.update()
        super().focusInEvent(event)

    def focusOutEvent(self, event) -> None:  # noqa: N802
        self.update()
        super().focusOutEvent(event)

    def paintEvent(self, _event) -> None:  # noqa: N802
        if not shiboken6.isValid(self):  # a paint reaching a widget Python already let go of: nothing to draw
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = self.ring_rect()
        pen_w = self.pen_width()
        colors = self.colors()

        if self.hasFocus():
            focus = QPen(self.palette().color(QPalette.ColorRole.Highlight), 1.0)
            painter.setPen(focus)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawEllipse(
                rect.adjusted(-pen_w / 2 - 0.5, -pen_w / 2 - 0.5, pen_w / 2 + 0.5, pen_w / 2 + 0.5)
            )

        track = QPen(colors.track, pen_w)
        track.setCapStyle(Qt.PenCapStyle.FlatCap)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if self.has_data() and not self.window_known():
            # A dashed ring means "capacity unknown". Dashes divide the circumference evenly (no short
            # one at the seam) and one is centred on 12 o'clock; the pattern is in pen widths.
            period = math.pi * rect.width() / DASHES / pen_w
            track.setDashPattern([period * 0.55, period * 0.45])
            track.setDashOffset(period * 0.55 / 2)
            painter.setPen(track)
            painter.drawArc(rect, 90 * 16, -360 * 16)
        else:
            painter.setPen(track)
            painter.drawEllipse(rect)

        if self.window_known() and self.has_data() and self._fraction > 0:
            arc_color = _with_alpha(colors.arc, 0.4) if self._busy else colors.arc
            arc = QPen(arc_color, pen_w)
            arc.setCapStyle(Qt.PenCapStyle.FlatCap)
            painter.setPen(arc)
            if self._fraction >= 1.0:
                painter.drawEllipse(rect)  # a closed circle: no seam at 12 o'clock
            else:
                # Qt angles: 1/16 degree, 0 at 3 o'clock, positive counter-clockwise. Start at 12, go clockwise.
                painter.drawArc(rect, 90 * 16, -round(self._fraction * 360 * 16))

        tick = self.tick_fraction()
        if tick is not None and self.has_data():
            # A short radial bar across the stroke, in the text colour: it reads on the track and on the arc.
            angle = math.radians(tick * 360.0)
            r = rect.width() / 2
            c = rect.center()
            out, inn = r + pen_w * 0.75, r - pen_w * 0.75
            sin, cos = math.sin(angle), math.cos(angle)
            mark = QPen(self.palette().color(QPalette.ColorRole.WindowText), max(1.5, pen_w * 0.32))
            mark.setCapStyle(Qt.PenCapStyle.FlatCap)
            painter.setPen(mark)
            painter.drawLine(
                QPointF(c.x() + inn * sin, c.y() - inn * cos), QPointF(c.x() + out * sin, c.y() - out * cos)
            )

        if self._busy:
            spin_color = (
                colors.arc if self.window_known() else self.palette().color(QPalette.ColorRole.Highlight)
            )
            spin = QPen(spin_color, pen_w)
            spin.setCapStyle(Qt.PenCapStyle.RoundCap)
            painter.setPen(spin)
            painter.drawArc(rect, round((90 - self._spin_deg) * 16), -BUSY_SPAN_DEG * 16)

        text = self.label_text()
        digits, unit = (text[:-1], "%") if text.endswith("%") else (text, "")
        big, small = self.label_fonts()
        big_m, small_m = QFontMetricsF(big), QFontMetricsF(small)
        width = big_m.horizontalAdvance(digits) + (small_m.horizontalAdvance(unit) if unit else 0.0)
        x = rect.center().x() - width / 2
        # Digits centred on the cap height; the unit shares their baseline.
        baseline = rect.center().y() + big_m.capHeight() / 2
        painter.setPen(colors.text)
        painter.setFont(big)
        painter.drawText(QPointF(x, baseline), digits)
        if unit:
            painter.setFont(small)
            painter.drawText(QPointF(x + big_m.horizontalAdvance(digits), baseline), unit)
        painter.end()
