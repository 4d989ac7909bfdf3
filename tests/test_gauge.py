"""Context gauge, hover card and breakdown bar: painted pixels, card rows, keyboard and hover behaviour."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# The package is not installed in the venv and there is no conftest yet: make the repo root importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QEnterEvent, QHelpEvent, QImage, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QToolTip

from desktop.engine.metering.context import CATEGORIES, ContextSnapshot
from desktop.engine.types import Usage
from desktop.ui.gauge.breakdown_bar import BreakdownBar, category_label, segment_widths
from desktop.ui.gauge.gauge import ContextGauge
from desktop.ui.look.format import (
    fmt_cost,
    fmt_percent,
    fmt_tokens,
    fmt_tokens_exact,
    gauge_label,
    state_color_hex,
)
from desktop.ui.look.theme import is_dark

WINDOW = 200_000
BREAKDOWN = {
    "system": 3_000,
    "tools": 9_000,
    "summary": 2_000,
    "pinned": 1_000,
    "messages": 30_000,
    "tool_results": 8_000,
    "media": 0,
    "free": 83_000,
    "reserved_output": 64_000,
}


def snap(used: int = 50_000, **kw) -> ContextSnapshot:
    base = dict(
        model="claude-sonnet-4-5",
        window=WINDOW,
        max_output=64_000,
        used=used,
        next_turn=used + 2_200,
        source="api",
        last_usage=Usage(
            input_tokens=120,
            output_tokens=2_000,
            cache_creation_input_tokens=3_400,
            cache_read_input_tokens=46_480,
        ),
        cost_last_turn=0.0123,
        cost_session=1.5,
        breakdown=dict(BREAKDOWN),
        can_compact=True,
    )
    base.update(kw)
    return ContextSnapshot(**base)


# -- pixel helpers ---------------------------------------------------------------------------------


def make_gauge(qtbot, snapshot: ContextSnapshot | None, size: int = 64) -> ContextGauge:
    gauge = ContextGauge()
    qtbot.addWidget(gauge)
    gauge.setFixedSize(size, size)
    if snapshot is not None:
        gauge.set_snapshot(snapshot, animate=False)
    return gauge


def grab(gauge: ContextGauge) -> QImage:
    return gauge.grab().toImage()


def ring_point(gauge: ContextGauge, clock_deg: float, scale: float = 1.0) -> QPoint:
    """Pixel on the middle of the stroke, clock_deg clockwise from 12 o'clock."""
    rect = gauge.ring_rect()
    r = rect.width() / 2
    cx, cy = rect.center().x(), rect.center().y()
    theta = math.radians(clock_deg)
    return QPoint(
        math.floor((cx + r * math.sin(theta)) * scale), math.floor((cy - r * math.cos(theta)) * scale)
    )


def probe(image: QImage, gauge: ContextGauge, clock_deg: float, scale: float = 1.0) -> QColor:
    return image.pixelColor(ring_point(gauge, clock_deg, scale))


def background(gauge: ContextGauge) -> QColor:
    return gauge.palette().color(QPalette.ColorRole.Window)


def over(color: QColor, bg: QColor) -> QColor:
    """What a translucent colour looks like painted over an opaque background."""
    a = color.alphaF()
    return QColor(
        round(color.red() * a + bg.red() * (1 - a)),
        round(color.green() * a + bg.green() * (1 - a)),
        round(color.blue() * a + bg.blue() * (1 - a)),
    )


def close(a: QColor, b: QColor, tol: int = 8) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a.getRgb()[:3], b.getRgb()[:3], strict=True))


def arc_of(gauge: ContextGauge) -> QColor:
    return over(gauge.colors().arc, background(gauge))


def track_of(gauge: ContextGauge) -> QColor:
    return over(gauge.colors().track, background(gauge))


def hover(widget) -> None:
    local = QPointF(widget.width() / 2, widget.height() / 2)
    glob = QPointF(widget.mapToGlobal(local.toPoint()))
    QApplication.sendEvent(widget, QEnterEvent(local, local, glob))


def unhover(widget) -> None:
    QApplication.sendEvent(widget, QEvent(QEvent.Type.Leave))


# -- format helpers (pure) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0"),
        (950, "950"),
        (999, "999"),
        (1_000, "1K"),
        (31_234, "31.2K"),
        (31_960, "32K"),
        (200_000, "200K"),
        (999_960, "1M"),
        (1_000_000, "1M"),
        (1_234_567, "1.2M"),
        (None, "—"),
    ],
)
def test_fmt_tokens(n, text):
    assert fmt_tokens(n) == text


def test_other_formatters():
    assert fmt_tokens_exact(31_234) == "31,234"
    assert fmt_percent(15.649) == "15.6%"
    assert fmt_percent(None) == "—"
    assert fmt_cost(0.0123) == "$0.0123"
    assert fmt_cost(0.42) == "$0.42"
    assert fmt_cost(0.1234) == "$0.1234"
    assert fmt_cost(0.5) == "$0.50"
    assert fmt_cost(1.5) == "$1.50"
    assert fmt_cost(1234.5) == "$1,234.50"
    assert fmt_cost(0.00001) == "<$0.0001"
    assert fmt_cost(0) == "$0.00"
    assert fmt_cost(None) == "—"
    assert gauge_label(81.95) == "82"  # agrees with the card's "82.0%"
    assert gauge_label(15.6) == "16"
    assert gauge_label(99.9) == "99"  # never shows 100 before the window is full
    assert gauge_label(100.0) == "100"
    assert gauge_label(0.3) == "<1"
    assert gauge_label(0.6) == "1"
    assert gauge_label(0) == "0"
    assert gauge_label(150.0) == "150"
    assert gauge_label(None) == "?"
    assert state_color_hex("warning") != state_color_hex("warning", dark=True)


# -- ring pixels -----------------------------------------------------------------------------------


def test_quarter_arc_extent(qtbot):
    gauge = make_gauge(qtbot, snap(used=50_000))  # 25 %
    image = grab(gauge)
    arc, track = arc_of(gauge), track_of(gauge)
    assert not close(arc, track, tol=30)
    for deg in (4, 45, 85):  # just right of 12 o'clock, 1:30, just before 3 o'clock
        assert close(probe(image, gauge, deg), arc), deg
    for deg in (100, 135, 225, 356):  # after 3 o'clock, 4:30, 7:30, just left of 12 o'clock
        assert close(probe(image, gauge, deg), track), deg


def test_three_quarter_arc_extent(qtbot):
    gauge = make_gauge(qtbot, snap(used=150_000, next_turn=150_000))  # 75 %: still normal
    image = grab(gauge)
    for deg in (10, 135, 225, 260):
        assert close(probe(image, gauge, deg), arc_of(gauge)), deg
    for deg in (280, 315, 350):
        assert close(probe(image, gauge, deg), track_of(gauge)), deg


@pytest.mark.parametrize(
    ("used", "next_turn", "state"),
    [
        (100_000, 100_000, "normal"),
        (170_000, 170_000, "warning"),
        (140_000, 165_000, "warning"),  # only the next turn crosses 80 %: warn early
        (192_000, 192_000, "critical"),
    ],
)
def test_state_colours(qtbot, used, next_turn, state):
    gauge = make_gauge(qtbot, snap(used=used, next_turn=next_turn))
    assert gauge.snapshot().state == state
    expected = QColor(state_color_hex(state, is_dark(gauge.palette())))
    assert gauge.colors().arc == expected
    assert close(probe(grab(gauge), gauge, 20), expected)


def test_state_colours_differ(qtbot):
    seen = []
    for used in (100_000, 170_000, 192_000):
        gauge = make_gauge(qtbot, snap(used=used, next_turn=used))
        seen.append(probe(grab(gauge), gauge, 20))
    assert not close(seen[0], seen[1], tol=30)
    assert not close(seen[1], seen[2], tol=30)
    assert not close(seen[0], seen[2], tol=30)


def test_clamped_at_full_ring(qtbot):
    gauge = make_gauge(qtbot, snap(used=300_000, next_turn=310_000))  # 150 %
    assert gauge.displayed_fraction() == 1.0
    image = grab(gauge)
    arc = arc_of(gauge)
    for deg in [*range(0, 360, 15), 359, 1]:
        assert close(probe(image, gauge, deg), arc), deg
    assert gauge.label_text() == "150%"


def test_no_data_is_muted(qtbot):
    gauge = make_gauge(qtbot, snap(used=0, next_turn=0, source="none", last_usage=None))
    image = grab(gauge)
    muted = track_of(gauge)
    state_colours = [QColor(state_color_hex(s)) for s in ("normal", "warning", "critical")]
    for deg in range(0, 360, 30):
        pixel = probe(image, gauge, deg)
        assert close(pixel, muted), deg
        assert not any(close(pixel, c, tol=40) for c in state_colours)
    assert gauge.label_text() == "–"
    assert "No context usage data yet" in gauge.accessibleDescription()


def test_unknown_window_has_no_arc(qtbot):
    gauge = make_gauge(qtbot, snap(window=None, used=80_000))
    image = grab(gauge)
    state_colours = [QColor(state_color_hex(s)) for s in ("normal", "warning", "critical")]
    ring_pixels = [probe(image, gauge, deg) for deg in range(0, 360, 5)]
    assert not any(close(p, c, tol=40) for p in ring_pixels for c in state_colours)
    # Dashed: some of the ring is painted, some shows the background.
    bg = background(gauge)
    assert any(close(p, bg, tol=6) for p in ring_pixels)
    assert any(not close(p, bg, tol=30) for p in ring_pixels)
    assert gauge.label_text() == "?"
    assert "capacity unknown" in gauge.accessibleDescription()


def test_hidpi_render(qtbot):
    gauge = make_gauge(qtbot, snap(used=50_000), size=30)
    image = QImage(60, 60, QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(2.0)
    image.fill(background(gauge))
    gauge.render(image)
    assert close(probe(image, gauge, 45, scale=2.0), arc_of(gauge))
    assert close(probe(image, gauge, 135, scale=2.0), track_of(gauge))
    # Painted at device resolution: the stroke is about twice as many pixels wide as at 1x.
    column = round(gauge.ring_rect().center().x() * 2) + 3  # just right of 12 o'clock
    arc_pixels = sum(close(image.pixelColor(column, y), arc_of(gauge), tol=20) for y in range(30))
    assert arc_pixels >= round(gauge.pen_width() * 2) - 2


def test_animation_reaches_target(qtbot):
    gauge = make_gauge(qtbot, snap(used=20_000))
    gauge.show()
    qtbot.waitExposed(gauge)
    gauge.set_snapshot(snap(used=100_000), animate=True)
    assert gauge.displayed_fraction() < 0.5  # starts from where it was, not a jump
    qtbot.waitUntil(lambda: gauge.displayed_fraction() == pytest.approx(0.5), timeout=3000)


def test_busy_mode(qtbot):
    gauge = make_gauge(qtbot, snap())
    gauge.set_busy("Compressing context…")
    assert gauge.is_busy()
    assert gauge.accessibleDescription().startswith("Compressing context…")
    assert gauge.card.value("status").text() == "Compressing context…"
    assert not gauge.card.compact_button.isEnabled()
    image = grab(gauge)
    # The spinner segment starts at 12 o'clock (angle 0 before the animation advances) in full colour.
    assert close(probe(image, gauge, 20), arc_of(gauge))
    gauge.set_busy(None)
    assert not gauge.is_busy()
    assert "Compressing" not in gauge.accessibleDescription()
    assert gauge.card.compact_button.isEnabled()


def test_percentage_and_accessibility(qtbot):
    gauge = make_gauge(qtbot, snap(used=31_234, next_turn=33_434), size=30)
    assert gauge.label_text() == "16%"
    assert gauge.accessibleName() == "Context usage"
    desc = gauge.accessibleDescription()
    assert "31.2K of 200K tokens used (15.6%)" in desc
    assert "33.4K (16.7%)" in desc
    assert gauge.focusPolicy() & Qt.FocusPolicy.TabFocus
    assert 36 <= gauge.sizeHint().width() <= 44  # room for "100%" at a readable size
    assert gauge.sizeHint().width() == gauge.sizeHint().height()


# -- hover card ------------------------------------------------------------------------------------


def open_by_hover(qtbot, gauge: ContextGauge) -> None:
    gauge.show()
    qtbot.waitExposed(gauge)
    hover(gauge)
    assert not gauge.card.isVisible()  # not instantly: after the open delay
    qtbot.waitUntil(gauge.card.isVisible, timeout=2000)


def text_of(gauge: ContextGauge, key: str) -> str:
    label = gauge.card.findChild(QLabel, f"row_{key}")
    assert label is not None, key
    return label.text()


def test_card_rows_match_snapshot(qtbot):
    s = snap(used=31_234, next_turn=33_434)
    gauge = make_gauge(qtbot, s)
    open_by_hover(qtbot, gauge)
    assert text_of(gauge, "model") == "claude-sonnet-4-5"
    assert text_of(gauge, "window") == "200K"
    assert text_of(gauge, "used") == "31.2K"
    assert text_of(gauge, "percent") == "15.6%"
    assert text_of(gauge, "next_turn") == "~33.4K (16.7%)"
    assert text_of(gauge, "cache_read") == "46.5K"
    assert text_of(gauge, "cache_creation") == "3.4K"
    assert text_of(gauge, "output") == "2K"
    assert text_of(gauge, "cost_last") == "$0.0123"
    assert text_of(gauge, "cost_session") == "$1.50"
    assert text_of(gauge, "source") == "From the last API response"
    assert gauge.card.value("summary").isHidden()
    assert gauge.card.value("breaker").isHidden()
    assert gauge.card.value("hint").isHidden()
    assert gauge.card.findChild(QLabel, "legend_messages").text() == "Messages"
    assert gauge.card.findChild(QLabel, "legend_messages_tokens").text() == "30K"
    assert gauge.card.findChild(QLabel, "legend_media") is None  # zero categories are left out


def test_card_opens_above_the_gauge_on_screen(qtbot):
    gauge = make_gauge(qtbot, snap(), size=30)
    # Near the screen's bottom, so the card (taller since its type went from 12 to 14 px) has room above it.
    gauge.move(300, gauge.screen().availableGeometry().bottom() - 60)
    open_by_hover(qtbot, gauge)
    card = gauge.card.frameGeometry()
    top = gauge.mapToGlobal(QPoint(0, 0))
    assert card.bottom() < top.y()
    assert card.left() <= top.x() + 15 <= card.right()
    assert gauge.screen().availableGeometry().contains(card)


def test_card_stays_while_pointer_inside_and_closes_after(qtbot):
    gauge = make_gauge(qtbot, snap())
    open_by_hover(qtbot, gauge)
    unhover(gauge)
    hover(gauge.card)  # the pointer moved from the gauge onto the card
    qtbot.wait(450)  # longer than the close delay
    assert gauge.card.isVisible()
    unhover(gauge.card)
    qtbot.waitUntil(lambda: not gauge.card.isVisible(), timeout=2000)


def test_card_updates_live_and_hints(qtbot):
    gauge = make_gauge(qtbot, snap())
    open_by_hover(qtbot, gauge)
    gauge.set_snapshot(snap(used=170_000, next_turn=172_000), animate=False)
    assert text_of(gauge, "hint") == "Context is getting full: Précis will compact soon"
    assert not gauge.card.value("hint").isHidden()
    warning = QColor(state_color_hex("warning", is_dark(gauge.palette())))
    assert gauge.card.value("next_turn").palette().color(QPalette.ColorRole.WindowText) == warning
    gauge.set_snapshot(snap(used=192_000, next_turn=194_000), animate=False)
    assert text_of(gauge, "hint") == "Context almost full: the next turn will be compacted first"
    gauge.set_snapshot(snap(used=10_000, next_turn=12_000), animate=False)
    assert gauge.card.value("hint").isHidden()
    assert gauge.card.value("next_turn").palette().color(QPalette.ColorRole.WindowText) != warning


def test_summary_badge_and_breaker(qtbot):
    gauge = make_gauge(qtbot, snap(summary_active=True, compactions=2, breaker_open=True))
    open_by_hover(qtbot, gauge)
    assert text_of(gauge, "summary") == "Active · 2 compactions"
    assert not gauge.card.value("summary").isHidden()
    assert text_of(gauge, "breaker") == "Auto-compaction paused after 3 failures"
    assert not gauge.card.value("breaker").isHidden()
    gauge.set_snapshot(snap(summary_active=True, compactions=1), animate=False)
    assert text_of(gauge, "summary") == "Active · 1 compaction"
    assert gauge.card.value("breaker").isHidden()


def test_card_unknown_window_and_estimate(qtbot):
    gauge = make_gauge(qtbot, snap(window=None, used=80_000, next_turn=82_000, source="estimate"))
    open_by_hover(qtbot, gauge)
    assert text_of(gauge, "window") == "capacity unknown"
    assert gauge.card.value("percent").isHidden()
    assert text_of(gauge, "next_turn") == "~82K"
    assert text_of(gauge, "source") == "Estimated (no comparable API response yet)"


def test_compact_button(qtbot):
    gauge = make_gauge(qtbot, snap(can_compact=True))
    open_by_hover(qtbot, gauge)
    button = gauge.card.compact_button
    assert button.isEnabled()
    with qtbot.waitSignal(gauge.compact_requested, timeout=1000):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert not gauge.card.isVisible()

    reason = "Nothing older than the last 4 turns to summarise"
    gauge.set_snapshot(snap(can_compact=False, compact_reason=reason), animate=False)
    assert not button.isEnabled()
    assert button.toolTip() == reason
    assert gauge.card.findChild(QLabel, "compact_reason").text() == reason
    with qtbot.assertNotEmitted(gauge.compact_requested):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_keyboard_opens_card_and_escape_closes(qtbot):
    gauge = make_gauge(qtbot, snap())
    gauge.show()
    qtbot.waitExposed(gauge)
    gauge.activateWindow()
    gauge.setFocus()
    qtbot.keyClick(gauge, Qt.Key.Key_Return)
    assert gauge.card.isVisible()
    assert gauge.card.is_pinned()
    qtbot.waitUntil(gauge.card.compact_button.hasFocus, timeout=2000)
    qtbot.keyClick(gauge.card.compact_button, Qt.Key.Key_Escape)
    assert not gauge.card.isVisible()
    qtbot.keyClick(gauge, Qt.Key.Key_Space)
    assert gauge.card.isVisible()
    qtbot.keyClick(gauge.card, Qt.Key.Key_Escape)
    assert not gauge.card.isVisible()


def test_tab_reaches_the_gauge_enter_opens_escape_returns_focus(qtbot):
    from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QWidget

    host = QWidget()
    qtbot.addWidget(host)
    edit, gauge = QLineEdit(host), ContextGauge(host)
    layout = QHBoxLayout(host)
    layout.addWidget(edit)
    layout.addWidget(gauge)
    gauge.set_snapshot(snap(can_compact=True), animate=False)
    host.show()
    qtbot.waitExposed(host)
    host.activateWindow()
    qtbot.waitUntil(host.isActiveWindow, timeout=2000)
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_Tab)
    assert gauge.hasFocus() and gauge.accessibleName() == "Context usage"
    qtbot.keyClick(gauge, Qt.Key.Key_Enter)
    assert gauge.card.is_pinned()
    qtbot.waitUntil(gauge.card.compact_button.hasFocus, timeout=2000)
    qtbot.keyClick(gauge.card.compact_button, Qt.Key.Key_Escape)
    assert not gauge.card.isVisible()
    qtbot.waitUntil(gauge.hasFocus, timeout=2000)  # back where the keyboard user was
    qtbot.keyClick(gauge, Qt.Key.Key_Return)
    qtbot.waitUntil(gauge.card.compact_button.hasFocus, timeout=2000)
    with qtbot.waitSignal(gauge.compact_requested, timeout=1000):
        qtbot.keyClick(gauge.card.compact_button, Qt.Key.Key_Return)  # Enter presses the focused button
    assert not gauge.card.isVisible()


def test_long_model_id_stays_on_one_line_without_its_date(qtbot):
    model = "claude-sonnet-4-5-with-a-long-provider-prefix-20250929"
    gauge = make_gauge(qtbot, snap(model=model))
    open_by_hover(qtbot, gauge)
    label = gauge.card.value("model")
    assert not label.wordWrap() and "20250929" not in label.text()
    assert label.text().startswith("claude-sonnet") and label.toolTip() == model
    gauge.set_snapshot(snap(model="claude-haiku-4-5"), animate=False)
    assert label.text() == "claude-haiku-4-5" and label.toolTip() == ""


# -- breakdown bar ---------------------------------------------------------------------------------


@given(st.lists(st.integers(min_value=0, max_value=2_000_000), min_size=1, max_size=12), st.integers(1, 2000))
def test_segment_widths_sum_and_proportion(values, width):
    widths = segment_widths(values, width)
    total = sum(values)
    if total == 0:
        assert widths == [0] * len(values)
        return
    assert sum(widths) == width
    for v, w in zip(values, widths, strict=True):
        assert abs(w - v * width / total) < 1.0
        if v == 0:
            assert w == 0


def test_breakdown_bar_segments(qtbot):
    bar = BreakdownBar()
    qtbot.addWidget(bar)
    bar.resize(200, 14)
    bar.set_breakdown(BREAKDOWN)
    rects = bar.segment_rects()
    total = sum(BREAKDOWN.values())
    assert list(rects) == [
        k for k in CATEGORIES if BREAKDOWN.get(k, 0) > 0
    ]  # CATEGORIES order, zeros skipped
    assert sum(r.width() for r in rects.values()) == bar.width()
    for key, rect in rects.items():
        assert abs(rect.width() - BREAKDOWN[key] * 200 / total) < 1.0, key
    lefts = [r.left() for r in rects.values()]
    assert lefts == sorted(lefts) and lefts[0] == 0
    assert bar.segment_at(rects["messages"].center().x()) == "messages"
    assert bar.segment_tooltip("messages") == "Messages: 30K tokens (30,000), 15.0%"
    assert category_label("reserved_output") == "Reserved for output"


def test_breakdown_bar_tooltip_event(qtbot):
    bar = BreakdownBar()
    qtbot.addWidget(bar)
    bar.resize(200, 14)
    bar.set_breakdown(BREAKDOWN)
    bar.show()
    qtbot.waitExposed(bar)
    point = bar.segment_rects()["free"].center()
    QApplication.sendEvent(bar, QHelpEvent(QEvent.Type.ToolTip, point, bar.mapToGlobal(point)))
    qtbot.waitUntil(QToolTip.isVisible, timeout=2000)
    assert QToolTip.text() == bar.segment_tooltip("free")
    assert "Free: 83K tokens" in QToolTip.text()
    QToolTip.hideText()
