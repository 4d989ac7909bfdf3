"""The gauge's detail card: every number behind the ring, the breakdown bar and a "Compact now" button.

Opens on hover (tool-tip window, never steals focus) or from the keyboard (popup window that takes focus so
Tab/Escape work). Value labels carry objectNames "row_<key>" so tests and accessibility tools can read them.
"""

from __future__ import annotations

import re

import shiboken6
from PySide6.QtCore import QEvent, QPoint, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QKeyEvent, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import QFrame, QGridLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.ui.api import WARNING_RATIO, ContextSnapshot
from desktop.ui.gauge import bill_rows, cache_rows
from desktop.ui.gauge.breakdown_bar import BreakdownBar, category_color, category_label, ordered_items
from desktop.ui.look.format import fmt_cost, fmt_percent, fmt_tokens, fmt_tokens_exact, state_color_hex
from desktop.ui.look.theme import is_dark
from desktop.ui.look.wording import word

OPEN_DELAY_MS = 200
CLOSE_DELAY_MS = 300
CARD_WIDTH = 330
MIN_TEXT_PX = 14  # the card's type: at least this, beside the transcript's 15 px body (it read at 11 px)
MAX_CARD_WIDTH = 480
GAP = 6  # pixels between the gauge and the card


class HoverCard(QFrame):
    compact_clicked = Signal()

    def __init__(self, anchor: QWidget) -> None:
        super().__init__(anchor)
        self._anchor = anchor
        self._snapshot: ContextSnapshot | None = None
        self._busy: str | None = None
        self._over_anchor = False
        self._over_card = False
        self._keyboard_mode = False
        self.setAccessibleName(self.tr("Context details"))
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        # Clicking the gauge while the popup is open only closes it (no replayed press that reopens it).
        self.setAttribute(Qt.WidgetAttribute.WA_NoMouseReplay, True)
        self._set_hover_flags()

        self._open_timer = QTimer(self, singleShot=True, interval=OPEN_DELAY_MS)
        self._open_timer.timeout.connect(self._open_from_hover)
        self._close_timer = QTimer(self, singleShot=True, interval=CLOSE_DELAY_MS)
        self._close_timer.timeout.connect(self._close_if_pointer_gone)
        self._tick = QTimer(self, interval=1000)  # the cache countdown, only while the card is shown
        self._tick.timeout.connect(self._refresh_cache_rows)

        self._values: dict[str, QLabel] = {}
        self._labels: dict[str, QLabel] = {}
        self._build()

    # -- layout ---------------------------------------------------------------------------------

    def _build(self) -> None:
        small = self.font()
        # In points, as a desktop's larger text scales it: 14 px at the screen's logical DPI, or more.
        least = MIN_TEXT_PX * 72.0 / max(self.logicalDpiY(), 1)
        small.setPointSizeF(max(least, small.pointSizeF() * 0.9))
        self.setFont(small)
        self.setFixedWidth(CARD_WIDTH)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(12, 10, 12, 10)
        outer.setSpacing(6)

        title = QLabel(self.tr("Context window"), self)
        title.setObjectName("card_title")
        bold = title.font()
        bold.setBold(True)
        title.setFont(bold)
        outer.addWidget(title)

        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(2)
        outer.addLayout(grid)
        rows = [
            ("model", self.tr("Model")),
            ("window", self.tr("Window")),
            ("window_source", self.tr("Window size from")),
            ("used", self.tr("Used")),
            ("percent", self.tr("Usage")),
            ("next_turn", self.tr("Next turn (est.)")),
            ("-", ""),
            ("cache_read", self.tr("Cache read")),
            ("cache_creation", self.tr("Cache creation")),
            ("output", self.tr("Output tokens")),
            ("cost_last", self.tr("Cost, last turn")),
            ("cost_session", self.tr("Cost, session")),
            *bill_rows.labels().items(),
            ("-", ""),
            ("summary", self.tr("Summary")),
            *cache_rows.labels().items(),
        ]
        for row, (key, text) in enumerate(rows):
            if key == "-":
                grid.addWidget(self._divider(), row, 0, 1, 2)
                continue
            label = QLabel(text, self)
            label.setObjectName(f"label_{key}")
            value = QLabel(self)
            value.setObjectName(f"row_{key}")
            value.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
            grid.addWidget(label, row, 0)
            if key == "summary":  # a compact badge, not a bar across the column
                grid.addWidget(value, row, 1, Qt.AlignmentFlag.AlignRight)
            else:
                grid.addWidget(value, row, 1)
            self._labels[key] = label
            self._values[key] = value
        grid.setColumnStretch(1, 1)
        self._grid = grid
        self._outer = outer

        for key in ("breaker", "status", "hint"):
            label = QLabel(self)
            label.setObjectName(f"row_{key}")
            label.setWordWrap(True)
            outer.addWidget(label)
            self._values[key] = label

        self.breakdown = BreakdownBar(self)
        self.breakdown.setObjectName("breakdown")
        self.breakdown.setAccessibleName(self.tr("Context breakdown"))
        outer.addWidget(self.breakdown)
        self._legend = QGridLayout()
        self._legend.setHorizontalSpacing(10)
        self._legend.setVerticalSpacing(1)
        outer.addLayout(self._legend)

        self._footnote = QLabel(self)
        self._footnote.setObjectName("row_source")
        self._footnote.setWordWrap(True)
        italic = self._footnote.font()
        italic.setItalic(True)
        self._footnote.setFont(italic)
        outer.addWidget(self._footnote)
        self._values["source"] = self._footnote

        buttons = QHBoxLayout()
        self.compact_button = QPushButton(self.tr("Compact now"), self)
        self.compact_button.setObjectName("compact_button")
        self.compact_button.setAutoDefault(True)  # Enter presses it once the keyboard popup focuses it
        self.compact_button.clicked.connect(self._on_compact)
        self._compact_reason = QLabel(self)
        self._compact_reason.setObjectName("compact_reason")
        self._compact_reason.setWordWrap(True)
        buttons.addWidget(self._compact_reason, 1)
        buttons.addWidget(self.compact_button, 0, Qt.AlignmentFlag.AlignRight)
        outer.addLayout(buttons)

    def _divider(self) -> QFrame:
        line = QFrame(self)
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Plain)
        line.setForegroundRole(QPalette.ColorRole.Mid)
        return line

    # -- data -----------------------------------------------------------------------------------

    def value(self, key: str) -> QLabel:
        """The value label of a row ("used", "percent", "hint", "source", ...)."""
        return self._values[key]

    def set_snapshot(self, snapshot: ContextSnapshot) -> None:
        self._snapshot = snapshot
        self._refresh()

    def set_busy(self, text: str | None) -> None:
        self._busy = text or None
        self._refresh()

    def _show_row(self, key: str, visible: bool) -> None:
        self._values[key].setVisible(visible)
        if key in self._labels:
            self._labels[key].setVisible(visible)

    def _set_color(self, label: QLabel, color: QColor | None) -> None:
        pal = label.palette()
        pal.setColor(
            QPalette.ColorRole.WindowText, color or self.palette().color(QPalette.ColorRole.WindowText)
        )
        label.setPalette(pal)

    def _muted(self) -> QColor:
        color = QColor(self.palette().color(QPalette.ColorRole.WindowText))
        color.setAlphaF(0.65)
        return color

    def _refresh(self) -> None:
        snap = self._snapshot
        if snap is None:
            return
        dark = is_dark(self.palette())
        v = self._values
        usage = snap.last_usage

        self._set_model_text(snap.model or "—")
        v["window"].setText(fmt_tokens(snap.window) if snap.window else self.tr("capacity unknown"))
        sources = {
            "api": self.tr("the provider's API"),
            "catalog": self.tr("the model catalog"),
            "learned": self.tr("an overflow error"),
            "override": self.tr("your override"),
            "env": self.tr("PRECIS_CONTEXT_WINDOW"),
            "unknown": self.tr("unknown"),
        }
        v["window_source"].setText(sources.get(snap.window_source, snap.window_source))
        v["window_source"].setToolTip(
            self.tr(
                "Where Précis got this model's context window size: reported by the provider's models API, "
                "the built-in catalog, learned from a context-overflow error, an override in Settings, "
                "or the PRECIS_CONTEXT_WINDOW variable"
            )
        )
        v["compact_at"].setToolTip(
            self.tr(
                "Automatic compaction starts here (the tick on the ring): the percent "
                "of the input room (the window less the output reserve) set in "
                "Settings"
            )
        )
        v["used"].setText(fmt_tokens(snap.used))
        v["used"].setToolTip(self.tr("{n} tokens").format(n=fmt_tokens_exact(snap.used)))
        v["percent"].setText(fmt_percent(snap.percent))
        self._show_row("percent", snap.window is not None and snap.window > 0)

        next_text = "~" + fmt_tokens(snap.next_turn)
        if snap.next_turn_percent is not None:
            next_text += f" ({fmt_percent(snap.next_turn_percent)})"
        v["next_turn"].setText(next_text)
        hot = snap.window is not None and snap.window > 0 and snap.next_turn / snap.window >= WARNING_RATIO
        self._set_color(v["next_turn"], QColor(state_color_hex("warning", dark)) if hot else None)

        v["cache_read"].setText(fmt_tokens(usage.cache_read_input_tokens) if usage else "—")
        v["cache_creation"].setText(fmt_tokens(usage.cache_creation_input_tokens) if usage else "—")
        v["output"].setText(fmt_tokens(usage.output_tokens) if usage else "—")
        last, turn = fmt_cost(snap.cost_last_turn), snap.last_turn
        if (
            snap.cost_last_turn is not None
            and turn is not None
            and turn.compaction is not None
            and turn.compaction.total
        ):
            last = self.tr("{total} (compaction {part})").format(
                total=last, part=fmt_cost(turn.compaction.total)
            )
        v["cost_last"].setText(last)
        session = fmt_cost(snap.cost_session)
        if snap.cost_session is not None and snap.cost_compaction:
            session = self.tr("{total} (compaction {part})").format(
                total=session, part=fmt_cost(snap.cost_compaction)
            )
        v["cost_session"].setText(session)
        for key, text in bill_rows.values(snap).items():
            v[key].setText(text or "")
            v[key].setToolTip(bill_rows.tooltip() if key != "bill_cold" else "")
            self._show_row(key, text is not None)
            self._set_color(self._labels[key], self._muted())

        self._show_row("summary", snap.summary_active)
        if snap.compactions == 1:
            badge = self.tr("Active · 1 compaction")
        elif snap.compactions > 1:
            badge = self.tr("Active · {n} compactions").format(n=snap.compactions)
        else:
            badge = self.tr("Active")
        v["summary"].setText(badge)
        green = state_color_hex("summary", dark)
        v["summary"].setStyleSheet(
            f"color: {green}; border: 1px solid {green}; border-radius: 3px; padding: 0px 5px;"
        )

        v["breaker"].setText(self.tr("Auto-compaction paused after 3 failures"))
        v["breaker"].setVisible(snap.breaker_open)
        self._set_color(v["breaker"], QColor(state_color_hex("warning", dark)))

        v["status"].setText(self._busy or "")
        v["status"].setVisible(self._busy is not None)
        self._set_color(v["status"], QColor(state_color_hex("normal", dark)))

        state = snap.state
        hints = {
            "warning": self.tr("Context is getting full: Précis will compact soon"),
            "critical": self.tr("Context almost full: the next turn will be compacted first"),
        }
        show_hint = snap.source != "none" and state in hints
        v["hint"].setText(hints.get(state, "") if show_hint else "")
        v["hint"].setVisible(show_hint)
        if show_hint:
            self._set_color(v["hint"], QColor(state_color_hex(state, dark)))

        self.breakdown.set_breakdown(snap.breakdown)
        self.breakdown.setVisible(self.breakdown.total() > 0)
        self._rebuild_legend(snap)

        footnotes = {
            "api": self.tr("From the last API response"),
            "estimate": self.tr("Estimated (no comparable API response yet)"),
            "none": self.tr("No context usage data yet"),
        }
        self._footnote.setText(footnotes.get(snap.source, ""))
        self._set_color(self._footnote, self._muted())

        self._refresh_cache_rows()
        enabled = snap.can_compact and self._busy is None
        self.compact_button.setEnabled(enabled)
        if enabled:
            self.compact_button.setToolTip(self.tr("Summarise older messages now to free up context"))
            reason = ""
        else:
            reason = self._busy or word(snap.compact_reason) or self.tr("Nothing to compact yet")
            self.compact_button.setToolTip(reason)
        self._compact_reason.setText(reason)
        # While busy the status line already says why; don't print it twice.
        self._compact_reason.setVisible(bool(reason) and self._busy is None)
        self._set_color(self._compact_reason, self._muted())

        for key in (
            "model",
            "window",
            "window_source",
            "used",
            "percent",
            "cache_read",
            "cache_creation",
            "output",
        ):
            self._set_color(self._labels[key], self._muted())
        for key in ("next_turn", "cost_last", "cost_session", "summary"):
            self._set_color(self._labels[key], self._muted())
        self._fit_width()
        self.adjustSize()

    def _fit_width(self) -> None:
        """CARD_WIDTH, or wider when a row needs it (a long reason, a larger desktop font): a value is never cut."""
        margins = self._outer.contentsMargins()
        shown = [key for key in self._labels if self._labels[key].isVisibleTo(self)]
        if not shown:
            return
        need = (
            margins.left()
            + margins.right()
            + max(6, self._grid.horizontalSpacing())
            + max(self._labels[key].sizeHint().width() for key in shown)
            + max(self._values[key].sizeHint().width() for key in shown)
        )
        self.setFixedWidth(min(MAX_CARD_WIDTH, max(CARD_WIDTH, need)))

    def _set_model_text(self, model: str) -> None:
        # One line: wrapping broke ids like "claude-sonnet-4-5-20250929" at a hyphen. When the id is too long,
        # its date stamp goes first (the family matters more), then the end; the tooltip has the full id.
        label = self._values["model"]
        margins = self._outer.contentsMargins()
        room = max(
            40,
            CARD_WIDTH
            - margins.left()
            - margins.right()
            - self._grid.horizontalSpacing()
            - max(lab.sizeHint().width() for lab in self._labels.values()),
        )  # the label column
        metrics = label.fontMetrics()
        text = model
        if metrics.horizontalAdvance(text) > room:
            text = re.sub(r"-\d{8}$", "", text)
        text = metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
        label.setText(text)
        label.setToolTip(model if text != model else "")

    def _rebuild_legend(self, snap: ContextSnapshot) -> None:
        # One line per non-zero category (swatch, name, tokens, share): the bar's tooltips, always visible.
        while self._legend.count():
            item = self._legend.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        items = [(k, v) for k, v in ordered_items(snap.breakdown) if v > 0]
        total = sum(v for _, v in items)
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        for row, (key, tokens) in enumerate(items):
            swatch = QLabel(self)
            swatch.setPixmap(self._swatch(key))
            name = QLabel(category_label(key), self)
            name.setObjectName(f"legend_{key}")
            name.setToolTip(self.breakdown.segment_tooltip(key))
            amount = QLabel(fmt_tokens(tokens), self)
            amount.setObjectName(f"legend_{key}_tokens")
            share = QLabel(fmt_percent(100.0 * tokens / total), self)
            share.setObjectName(f"legend_{key}_share")
            for label in (name, amount, share):
                self._set_color(label, self._muted())
            self._legend.addWidget(swatch, row, 0)
            self._legend.addWidget(name, row, 1)
            self._legend.addWidget(amount, row, 2, right)
            self._legend.addWidget(share, row, 3, right)
        self._legend.setColumnStretch(1, 1)

    def _swatch(self, key: str) -> QPixmap:
        size = 9
        pixmap = QPixmap(size, size)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.fillRect(0, 0, size, size, category_color(key, self.palette()))
        if key == "reserved_output":
            hatch = QColor(self.palette().color(QPalette.ColorRole.WindowText))
            hatch.setAlphaF(0.35)
            painter.fillRect(0, 0, size, size, QBrush(hatch, Qt.BrushStyle.BDiagPattern))
        painter.end()
        return pixmap

    # -- open / close ---------------------------------------------------------------------------

    def _set_hover_flags(self) -> None:
        self.setWindowFlags(Qt.WindowType.ToolTip | Qt.WindowType.FramelessWindowHint)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)
        self._keyboard_mode = False

    def _set_keyboard_flags(self) -> None:
        # A popup takes keyboard focus (so Tab reaches the button) and closes on an outside click.
        self.setWindowFlags(Qt.WindowType.Popup | Qt.WindowType.FramelessWindowHint)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, False)
        self._keyboard_mode = True

    def anchor_entered(self) -> None:
        self._over_anchor = True
        self._close_timer.stop()
        if not self.isVisible():
            self._open_timer.start()

    def anchor_left(self) -> None:
        self._over_anchor = False
        self._open_timer.stop()
        if self.isVisible() and not self._keyboard_mode:
            self._close_timer.start()

    def open_from_keyboard(self) -> None:
        self._open_timer.stop()
        self._close_timer.stop()
        if self.isVisible():
            self.hide()
        self._set_keyboard_flags()
        self._place_and_show()
        self.activateWindow()
        if self.compact_button.isEnabled():
            self.compact_button.setFocus(Qt.FocusReason.PopupFocusReason)
        else:
            self.setFocus(Qt.FocusReason.PopupFocusReason)

    def is_pinned(self) -> bool:
        """Opened by keyboard or click (a focus-taking popup) rather than by hover."""
        return self._keyboard_mode and self.isVisible()

    def close_card(self) -> None:
        self._open_timer.stop()
        self._close_timer.stop()
        was_keyboard = self._keyboard_mode
        self.hide()
        if was_keyboard:
            self._anchor.setFocus(Qt.FocusReason.PopupFocusReason)

    def _open_from_hover(self) -> None:
        if not self._over_anchor or self._snapshot is None:
            return
        if self._keyboard_mode:
            self._set_hover_flags()
        self._place_and_show()

    def _close_if_pointer_gone(self) -> None:
        if not (self._over_anchor or self._over_card) and not self._keyboard_mode:
            self.hide()

    def _place_and_show(self) -> None:
        self._refresh()
        self.adjustSize()
        self.move(self._position())
        self.show()
        self.raise_()

    def _position(self) -> QPoint:
        """Above the gauge, centred on it, kept on screen; below it when there is no room above."""
        top_left = self._anchor.mapToGlobal(QPoint(0, 0))
        anchor = QRect(top_left, self._anchor.size())
        size = self.size()  # after adjustSize(): the fixed width and the wrapped height
        screen = self._anchor.screen()
        area = screen.availableGeometry() if screen is not None else QRect(0, 0, 10_000, 10_000)
        x = anchor.center().x() - size.width() // 2
        # Stay inside the gauge's own window when it is wide enough (a gauge at the right edge gets a
        # card that ends at that edge rather than one hanging outside), and on screen in any case.
        window = self._anchor.window().frameGeometry()
        if window.width() >= size.width():
            x = max(window.left(), min(x, window.right() - size.width() + 1))
        x = max(area.left(), min(x, area.right() - size.width() + 1))
        y = anchor.top() - GAP - size.height()
        if y < area.top():
            y = anchor.bottom() + GAP + 1
        return QPoint(x, y)

    # -- Qt events ------------------------------------------------------------------------------

    def enterEvent(self, event) -> None:  # noqa: N802 (Qt API)
        self._over_card = True
        self._close_timer.stop()
        super().enterEvent(event)

    def leaveEvent(self, event) -> None:  # noqa: N802
        self._over_card = False
        if not self._keyboard_mode:
            self._close_timer.start()
        super().leaveEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Escape:
            self.close_card()
            event.accept()
            return
        super().keyPressEvent(event)

    def hideEvent(self, event) -> None:  # noqa: N802
        self._over_card = False
        self._tick.stop()
        super().hideEvent(event)

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        self._refresh_cache_rows()

    def _refresh_cache_rows(self) -> None:
        snap = self._snapshot
        if snap is None or not shiboken6.isValid(self):
            return
        for key, text in cache_rows.values(snap).items():
            self._values[key].setText(text or "")
            self._show_row(key, text is not None)
            self._set_color(self._labels[key], self._muted())
        if cache_rows.ticking(snap) and self.isVisible():
            self._tick.start()
        else:
            self._tick.stop()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.PaletteChange:
            self._refresh()
        super().changeEvent(event)

    def paintEvent(self, event) -> None:  # noqa: N802
        if not shiboken6.isValid(self):  # a paint reaching a widget Python already let go of: nothing to draw
            return
        # Window colour + a hairline border from the palette: follows light/dark, never hard-coded white.
        painter = QPainter(self)
        painter.fillRect(self.rect(), self.palette().color(QPalette.ColorRole.Window))
        painter.setPen(self.palette().color(QPalette.ColorRole.Mid))
        painter.drawRect(self.rect().adjusted(0, 0, -1, -1))
        painter.end()

    def _on_compact(self) -> None:
        self.close_card()
        self.compact_clicked.emit()
