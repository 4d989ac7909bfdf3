"""A scroll area's viewport made in Python, so PySide6 never has to guess the type of one Qt made."""

from __future__ import annotations

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QAbstractScrollArea, QWidget


def own_viewport(view: QAbstractScrollArea) -> QWidget:
    """Give ``view`` a viewport made here, set up as the one Qt makes, and return it. PySide6 wraps a widget that
    Qt returns for the first time by making every QWidget subclass of QtWidgets it might be (75 classes with their
    enums, ~15 ms before the first paint); a widget made in Python is known already."""
    widget = QWidget(view)
    widget.setObjectName("qt_scrollarea_viewport")
    widget.setBackgroundRole(QPalette.ColorRole.Base)
    widget.setAutoFillBackground(True)
    view.setViewport(widget)
    return widget
