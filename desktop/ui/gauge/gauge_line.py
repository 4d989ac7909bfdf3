"""The gauge's figure in words beside the ring on wide windows: "42 % · 84K / 200K"."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from desktop.ui.api import ContextSnapshot
from desktop.ui.look.format import fmt_tokens, gauge_line

WIDE = 980  # px of window width from which the line shows (below it the ring alone, to leave the title room)


class ContextLine(QLabel):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("context_line")
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)
        self._wanted = True  # the window is wide enough
        self._has_data = False

    def set_snapshot(self, snap: ContextSnapshot | None) -> None:
        self._has_data = snap is not None and snap.source != "none"
        if snap is None or not self._has_data:
            self.setText("")
        elif snap.window and snap.percent is not None:
            self.setText(gauge_line(snap.used, snap.window, snap.percent))
        else:
            self.setText(self.tr("{used} used").format(used=fmt_tokens(snap.used)))
        self._update_visible()

    def set_room(self, window_width: int) -> None:
        self._wanted = window_width >= WIDE
        self._update_visible()

    def _update_visible(self) -> None:
        self.setVisible(self._wanted and self._has_data)
