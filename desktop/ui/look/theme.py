"""Light and dark: the one rule every widget that picks colours asks (``is_dark``), the two designed palettes and
the user's choice (system / light / dark) applied to the whole application.

Colours live here and in the palette only; the style sheet (desktop/assets/styles/precis.qss) holds shapes and
spacing and refers to palette roles, so it follows whichever palette is in force.
"""

from __future__ import annotations

from typing import Literal

from msgspec import Struct
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from desktop.resources import stylesheet

ThemeChoice = Literal["system", "light", "dark"]
THEMES: tuple[ThemeChoice, ...] = ("system", "light", "dark")


def is_dark(palette: QPalette, surface: QPalette.ColorRole = QPalette.ColorRole.Window) -> bool:
    """Dark when the surface painted on is dark: the window by default, the base for list and text views."""
    return palette.color(surface).lightness() < 128


class Colours(Struct, frozen=True):
    """A palette's colours, by role."""

    window: str  # the chrome: header, sidebar, composer surround
    base: str  # the transcript and text fields
    alternate: str  # the sidebar, hovered rows
    text: str
    muted: str  # secondary text, placeholders
    button: str
    mid: str  # hairlines and borders
    accent: str  # selection, the Send button, the user's bubble tint
    accent_text: str
    link: str


# Text that says something went well or wrong, as (on a light surface, on a dark one): 4.5:1 or more on the
# window and text-field colours of its theme.
GOOD = ("#1a7f37", "#6fd08c")
BAD = ("#b42318", "#ff8a80")

LIGHT = Colours(
    window="#f5f4ef",
    base="#ffffff",
    alternate="#eceae3",
    text="#1f1e1b",
    muted="#6f6c64",
    button="#fbfaf7",
    mid="#d9d6cc",
    accent="#c8643b",
    accent_text="#ffffff",
    link="#1f6fc5",
)
DARK = Colours(
    window="#262624",
    base="#1e1d1b",
    alternate="#2f2e2b",
    text="#ecebe6",
    muted="#a19e95",
    button="#34332f",
    mid="#45433e",
    accent="#d97a50",
    accent_text="#1a1918",
    link="#7db4f5",
)


def palette_for(dark: bool) -> QPalette:
    c = DARK if dark else LIGHT
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: c.window,
        QPalette.ColorRole.WindowText: c.text,
        QPalette.ColorRole.Base: c.base,
        QPalette.ColorRole.AlternateBase: c.alternate,
        QPalette.ColorRole.Text: c.text,
        QPalette.ColorRole.PlaceholderText: c.muted,
        QPalette.ColorRole.Button: c.button,
        QPalette.ColorRole.ButtonText: c.text,
        QPalette.ColorRole.BrightText: "#ffffff",
        QPalette.ColorRole.Highlight: c.accent,
        QPalette.ColorRole.HighlightedText: c.accent_text,
        QPalette.ColorRole.Link: c.link,
        QPalette.ColorRole.LinkVisited: c.link,
        QPalette.ColorRole.ToolTipBase: c.base,
        QPalette.ColorRole.ToolTipText: c.text,
        QPalette.ColorRole.Mid: c.mid,
        QPalette.ColorRole.Midlight: c.alternate,
        QPalette.ColorRole.Light: c.base if dark else "#ffffff",
        QPalette.ColorRole.Dark: c.mid,
        QPalette.ColorRole.Shadow: "#000000",
    }
    for role, value in roles.items():
        pal.setColor(role, QColor(value))
    muted = QColor(c.muted)
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, muted)
    return pal


def system_is_dark() -> bool:
    hints = QGuiApplication.styleHints()
    return hints.colorScheme() == Qt.ColorScheme.Dark


def resolve(choice: str) -> bool:
    """Whether ``choice`` means dark right now (system: the desktop's colour scheme)."""
    if choice == "dark":
        return True
    if choice == "light":
        return False
    return system_is_dark()


def apply_theme(app: QApplication, choice: str = "system") -> bool:
    """Put the chosen palette and the style sheet on the application; returns whether it is dark."""
    dark = resolve(choice if choice in THEMES else "system")
    palette, sheet = palette_for(dark), stylesheet()
    if app.palette() == palette and app.styleSheet() == sheet:
        return dark  # unchanged: setting them again would re-polish every widget (a tenth of a cold start)
    app.setPalette(palette)
    app.setStyleSheet(sheet)
    return dark
