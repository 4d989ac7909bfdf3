"""Interface icons: bundled single-colour SVGs, drawn in the palette's text colour so they suit light and dark."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

from desktop.resources import ui_icon_svg

PLACEHOLDER = "#000000"  # the colour every bundled icon is drawn in, replaced when rendered
SIZES = (16, 20, 24, 32, 48)
_cache: dict[tuple[str, str], QIcon] = {}


def _colour(role: QPalette.ColorRole = QPalette.ColorRole.WindowText) -> QColor:
    app = QGuiApplication.instance()
    palette = QGuiApplication.palette() if app is not None else QPalette()
    return palette.color(role)


def render(name: str, side: int, colour: QColor) -> QPixmap:
    """One icon at ``side`` pixels (device-independent), in ``colour``; transparent when it does not exist."""
    svg = ui_icon_svg(name).replace(PLACEHOLDER, colour.name())
    ratio = 2.0  # crisp on HiDPI screens, cheap elsewhere
    pixmap = QPixmap(round(side * ratio), round(side * ratio))
    pixmap.fill(Qt.GlobalColor.transparent)
    if svg:
        renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
        painter = QPainter(pixmap)
        renderer.render(painter, QRectF(0, 0, pixmap.width(), pixmap.height()))
        painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap


def icon(name: str, colour: QColor | None = None) -> QIcon:
    """A QIcon of a bundled icon; by default in the application palette's text colour (disabled: faded)."""
    colour = colour or _colour()
    key = (name, colour.name(QColor.NameFormat.HexArgb))
    if (hit := _cache.get(key)) is not None:
        return hit
    faded = QColor(colour)
    faded.setAlphaF(0.38)
    out = QIcon()
    for side in SIZES:
        out.addPixmap(render(name, side, colour), QIcon.Mode.Normal)
        out.addPixmap(render(name, side, faded), QIcon.Mode.Disabled)
    _cache[key] = out
    return out


def clear_cache() -> None:
    """After a theme change: icons are drawn again in the new text colour."""
    _cache.clear()


def icon_size(side: int = 18) -> QSize:
    return QSize(side, side)
