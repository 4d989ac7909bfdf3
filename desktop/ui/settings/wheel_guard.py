"""The mouse wheel over a number box or a choice list on a scrolling page scrolls the page, unless the box has the
keyboard's focus: scrolling Settings past "Max output tokens" changed it from 8192 to 11264 without a word.

Qt gives these boxes the focus on a wheel turn (Qt.WheelFocus) and changes their value whether or not they have
it. Guarded, a box takes the focus from a click or Tab only, and a wheel turn over an unfocused box goes to the
page's scroll bar instead.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QAbstractSpinBox, QComboBox, QWidget


class WheelGuard(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, QWidget) or watched.hasFocus():
            return False
        area = _scroll_area_of(watched)
        if area is not None:
            QCoreApplication.sendEvent(area.verticalScrollBar(), event)
        return True  # never the box's value


def _scroll_area_of(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QAbstractScrollArea):
        parent = parent.parentWidget()
    return parent


def guard_wheel(page: QWidget) -> WheelGuard:
    """Guard every number box and choice list on ``page`` (call once its fields are built)."""
    guard = WheelGuard(page)
    for box in (*page.findChildren(QAbstractSpinBox), *page.findChildren(QComboBox)):
        box.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        box.installEventFilter(guard)
    return guard
