"""The chat's model picker: an editable combo box that says when its list is opened, so the provider's models
are asked for then (that needs the SDK, loaded on demand) rather than at every start."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox


class ModelPicker(QComboBox):
    popup_opened = Signal()

    def showPopup(self) -> None:  # noqa: N802 - Qt override
        self.popup_opened.emit()
        # As wide as its longest model id (with the rows' padding and the scroll bar), never cut to the box's width.
        view = self.view()
        bar = view.verticalScrollBar().sizeHint().width()
        view.setMinimumWidth(min(view.sizeHintForColumn(0) + bar + 24, 480))
        super().showPopup()
