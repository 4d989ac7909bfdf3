"""Interface icons: bundled single-colour SVGs, drawn in the palette's text colour so they suit light and dark."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QIconEngine, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

from desktop.resources import ui_icon_svg

PLACEHOLDER = "#000000"  # the colour every bundled icon is drawn in, replaced when rendered
_cache: dict[tuple[str, str], QIcon] = {}


def _colour(role: QPalette.ColorRole = QPalette.ColorRole.WindowText) -> QColor:
    app = QGuiApplication.instance()
    palette = QGuiApplication.palette() if app is not None else QPalette()
    return palette.color(role)


def render(name: str, side: int, colour: QColor, ratio: float = 2.0) -> QPixmap:
    """One icon ``side`` pixels wide (device-independent, drawn at ``ratio``), in ``colour`` (its alpha kept);
    transparent when it does not exist."""
    svg = ui_icon_svg(name).replace(PLACEHOLDER, colour.name())
    pixmap = QPixmap(round(side * ratio), round(side * ratio))
    pixmap.fill(Qt.GlobalColor.transparent)
    if svg:
        renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
        painter = QPainter(pixmap)
        painter.setOpacity(colour.alphaF())
        renderer.render(painter, QRectF(0, 0, pixmap.width(), pixmap.height()))
        painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap


class _TintedSvg(QIconEngine):
    """Draws the icon only at the sizes and modes asked for, when asked: rendering every size up front cost
    ~2 ms an icon at start-up."""

    def __init__(self, name: str, colour: QColor):
        super().__init__()
        self._name, self._colour = name, QColor(colour)
        self._pixmaps: dict[tuple[int, int, bool], QPixmap] = {}

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        disabled = mode == QIcon.Mode.Disabled
        key = (size.width(), size.height(), disabled)
        if (hit := self._pixmaps.get(key)) is None:
            colour = QColor(self._colour)
            if disabled:
                colour.setAlphaF(0.38)
            hit = render(self._name, max(size.width(), size.height()), colour, ratio=1.0)
            self._pixmaps[key] = hit
        return hit

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        ratio = painter.device().devicePixelRatioF() if painter.device() is not None else 1.0
        side = round(max(rect.width(), rect.height()) * ratio)
        painter.drawPixmap(rect, self.pixmap(QSize(side, side), mode, state))

    def clone(self) -> QIconEngine:
        return _TintedSvg(self._name, self._colour)


def icon(name: str, colour: QColor | None = None) -> QIcon:
    """A QIcon of a bundled icon; by default in the application palette's text colour (disabled: faded)."""
    colour = colour or _colour()
    key = (name, colour.name(QColor.NameFormat.HexArgb))
    if (hit := _cache.get(key)) is not None:
        return hit
    out = QIcon(_TintedSvg(name, colour))
    _cache[key] = out
    return out


def clear_cache() -> None:
    """After a theme change: icons are drawn again in the new text colour."""
    _cache.clear()


def icon_size(side: int = 18) -> QSize:
    return QSize(side, side)
