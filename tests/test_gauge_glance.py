"""The gauge at a glance: the number carries its unit and stays readable at three digits, a tick marks where
automatic compaction starts, the card names where the window size came from, a one-line figure on wide windows."""

from __future__ import annotations

import math

import pytest
from PySide6.QtGui import QColor, QFontMetricsF, QPalette

from desktop.engine.config.catalog import ModelCatalog
from desktop.engine.metering.context import context_report
from desktop.ui.gauge.gauge import SIDE
from desktop.ui.gauge.gauge_line import WIDE, ContextLine
from desktop.ui.look.format import gauge_line, gauge_text
from tests.test_gauge import background, close, grab, make_gauge, snap

pytestmark = pytest.mark.qt


def test_the_number_carries_its_unit():
    assert [gauge_text(p) for p in (42.0, 0.3, 99.9, 100.0, 150.0, None)] == [
        "42%",
        "<1%",
        "99%",
        "100%",
        "150%",
        "?",
    ]


@pytest.mark.parametrize("used", [84_000, 200_000, 300_000])  # 42 %, 100 %, 150 %
def test_three_digits_and_the_unit_fit_inside_the_ring_at_a_readable_size(qtbot, used):
    gauge = make_gauge(qtbot, snap(used=used, next_turn=used), size=SIDE)
    digits, unit = gauge.label_fonts()
    inner = gauge.ring_rect().width() - gauge.pen_width()
    assert gauge.label_text().endswith("%")
    assert gauge.label_width() <= inner * 0.9 + 0.5  # inside the hole, clear of the stroke
    assert digits.pixelSize() >= 10 and unit.pixelSize() < digits.pixelSize()
    assert QFontMetricsF(digits).capHeight() >= 6  # three digits still read as digits


def _ring_pixel(gauge, fraction: float, radius_scale: float = 1.0):
    rect = gauge.ring_rect()
    r = rect.width() / 2 * radius_scale
    theta = 2 * math.pi * fraction
    return (
        math.floor(rect.center().x() + r * math.sin(theta)),
        math.floor(rect.center().y() - r * math.cos(theta)),
    )


def test_a_tick_marks_where_automatic_compaction_starts(qtbot):
    gauge = make_gauge(
        qtbot, snap(used=30_000, compact_at_tokens=68_000), size=96
    )  # 15 % filled, tick at 34 %
    assert gauge.tick_fraction() == pytest.approx(0.34)
    image = grab(gauge)
    text = gauge.palette().color(QPalette.ColorRole.WindowText)
    on_tick = image.pixelColor(*_ring_pixel(gauge, 0.34))
    beside = image.pixelColor(*_ring_pixel(gauge, 0.45))
    assert close(on_tick, text, tol=40) and not close(beside, text, tol=60)
    # The tick crosses the stroke: it shows just outside the ring too, where the track is not painted.
    outside = image.pixelColor(
        *_ring_pixel(gauge, 0.34, 1 + gauge.pen_width() * 0.6 / gauge.ring_rect().width())
    )
    assert not close(outside, background(gauge), tol=20)

    plain = make_gauge(qtbot, snap(used=30_000), size=96)  # no threshold in the snapshot: no tick
    assert plain.tick_fraction() is None
    assert not close(grab(plain).pixelColor(*_ring_pixel(plain, 0.34)), text, tol=60)


def test_the_card_names_where_the_window_size_came_from(qtbot):
    words = {
        "api": "provider's API",
        "catalog": "model catalog",
        "learned": "overflow error",
        "override": "your override",
        "unknown": "unknown",
    }
    for source, phrase in words.items():
        gauge = make_gauge(qtbot, snap(window_source=source, compact_at_tokens=68_000, compact_percent=35.0))
        assert phrase in gauge.card.value("window_source").text(), source
    # The rule's own figure (a percent of the input room, as Settings sets it), not 68K over the whole window.
    assert gauge.card.value("compact_at").text() == "~68K (35 %)"


def test_the_engine_reports_where_the_window_came_from():
    catalog = ModelCatalog({"my-model": {"window": 50_000}})
    assert catalog.info("claude-sonnet-4-5").window_source == "catalog"
    assert catalog.info("my-model").window_source == "override"
    assert catalog.info("local-llama").window_source == "unknown"
    assert catalog.learn_window("local-llama", 32_768, reported=True)
    assert catalog.info("local-llama").window_source == "api"
    again = ModelCatalog({}, catalog.learned(), catalog.reported())  # what the next run reads back
    assert again.info("local-llama").window_source == "api"
    assert again.learn_window("local-llama", 16_000)  # an overflow error later says less
    assert again.info("local-llama").window_source == "learned" and again.reported() == []


async def test_the_snapshot_carries_the_threshold_and_the_source(engine, fake_api):
    fake_api.models = ["claude-test"]  # the provider does not report this chat's model: the catalog answers
    sid = await engine.new_session()
    fake_api.queue_text("hi")
    await engine.send(sid, "hello")
    snapshot = await engine.measure(sid)
    assert snapshot.window_source == "catalog"
    assert snapshot.compact_at_tokens == engine.compactor.threshold(snapshot.model) > 0
    report = context_report(snapshot)
    assert "Window from  the built-in model catalog" in report and "Compacts at" in report


def test_a_one_line_figure_beside_the_ring_on_wide_windows(qtbot):
    assert gauge_line(84_000, 200_000, 42.0) == "42 % · 84K / 200K"
    assert gauge_line(84_000, None, None) == "84K used"
    line = ContextLine()
    qtbot.addWidget(line)
    line.show()
    line.set_snapshot(snap(used=84_000, next_turn=86_000))
    line.set_room(WIDE + 100)
    assert line.isVisible() and line.text() == "42 % · 84K / 200K"
    line.set_room(WIDE - 100)
    assert not line.isVisible()  # narrow: the ring alone
    line.set_room(WIDE)
    line.set_snapshot(snap(used=0, next_turn=0, source="none", last_usage=None))
    assert not line.isVisible()  # nothing measured yet: no figure to show


def test_state_colours_stay_on_the_arc_with_a_tick(qtbot):
    gauge = make_gauge(qtbot, snap(used=170_000, next_turn=170_000, compact_at_tokens=68_000), size=96)
    image = grab(gauge)
    arc = QColor(gauge.colors().arc)
    assert close(image.pixelColor(*_ring_pixel(gauge, 0.6)), arc, tol=12)  # past the tick, still the arc
