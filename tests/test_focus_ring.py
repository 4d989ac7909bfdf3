"""A visible focus ring in both themes: whatever the keyboard is on shows a ring of at least 2 px in a colour that
stands out from the window (3:1, the contrast asked of controls' outlines), in light and in dark."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication

from desktop.ui.look import icons
from tests.test_window import until

pytestmark = pytest.mark.qt


@pytest.fixture
def keep_palette(qapp):
    palette, sheet = QApplication.palette(), qapp.styleSheet()
    yield
    qapp.setPalette(palette)
    qapp.setStyleSheet(sheet)
    icons.clear_cache()


def _luminance(c: QColor) -> float:
    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())


def contrast(a: QColor, b: QColor) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def ring_pixels(widget, before: QImage, after: QImage) -> int:
    """Pixels that changed with focus to a colour standing out 3:1 from both the window and what was there."""
    window = widget.palette().color(QPalette.ColorRole.Window)
    count = 0
    for y in range(after.height()):
        for x in range(after.width()):
            old, new = before.pixelColor(x, y), after.pixelColor(x, y)
            if old != new and contrast(new, window) >= 3 and contrast(new, old) >= 1.5:
                count += 1
    return count


def focusables(window):
    look = window.look
    return {
        "composer": window.composer.edit,
        "attach": window.composer.attach_button,
        "sidebar toggle": look.sidebar_toggle,
        "new chat": window.sidebar.new_button,
        "filter": window.sidebar.filter_edit,
        "instructions": window.organise.instructions_button,
        "workspace": window.tools.workspace,
        "model": window.model_picker,
    }


@pytest.mark.parametrize("theme", ["light", "dark"])
async def test_the_focused_control_shows_a_ring_in_both_themes(window, fake_api, qtbot, keep_palette, theme):
    window.look.set_theme(theme)
    window.tools.workspace.setVisible(True)
    window.resize(1200, 800)
    missing = {}
    for name, widget in focusables(window).items():
        if widget is None:
            continue
        window.chat.setFocus()
        await until(lambda w=widget: not w.hasFocus())
        before = widget.grab().toImage()
        widget.setFocus()
        await until(
            lambda w=widget: (
                w.hasFocus()
                or (w.focusProxy() is not None and w.focusProxy().hasFocus())
                or w.isAncestorOf(QApplication.focusWidget())
            )
        )
        after = widget.grab().toImage()
        ring = ring_pixels(widget, before, after)
        needed = 2 * (widget.width() + widget.height()) * 2 * 0.6  # most of a 2 px ring around it
        if ring < needed:
            missing[name] = (ring, int(needed))
    assert missing == {}, missing
