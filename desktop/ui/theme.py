"""The one rule for light or dark: every widget that picks colours asks this."""

from __future__ import annotations

from PySide6.QtGui import QPalette


def is_dark(palette: QPalette, surface: QPalette.ColorRole = QPalette.ColorRole.Window) -> bool:
    """Dark when the surface painted on is dark: the window by default, the base for list and text views."""
    return palette.color(surface).lightness() < 128
