"""Settings fields for where automatic compaction starts, per profile and model: a percent of the input room
and an absolute cap (e.g. 200K in a 1M window). Both empty: the default of today."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QLabel, QSpinBox, QWidget

from desktop.ui.api import (
    THRESHOLD_CAP,
    THRESHOLD_CAP_RANGE,
    THRESHOLD_PERCENT,
    THRESHOLD_PERCENT_RANGE,
    threshold_percent,
)


class ThresholdFields(QWidget):
    def __init__(self, default_ratio: float, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.percent = QSpinBox(self)
        self.percent.setObjectName("compact_percent")
        # 0: the default (below the range's floor is clamped by the settings check)
        self.percent.setRange(0, int(THRESHOLD_PERCENT_RANGE[1]))
        self.percent.setSuffix(" %")
        # The figure the hover card and /context show for the same rule (threshold_percent: one rounding).
        self.percent.setSpecialValueText(
            self.tr("default ({n} %)").format(n=threshold_percent(default_ratio))
        )
        self.percent.setToolTip(
            self.tr(
                "Percent of the input room (the context window less the output reserve) "
                "at which the older part of the chat is summarised; the chat's hover card "
                "shows the same figure"
            )
        )
        self.cap = QSpinBox(self)
        self.cap.setObjectName("compact_at_tokens")
        self.cap.setRange(0, THRESHOLD_CAP_RANGE[1])
        self.cap.setSingleStep(10_000)
        self.cap.setSuffix(self.tr(" tokens"))
        self.cap.setSpecialValueText(self.tr("no cap"))
        self.cap.setGroupSeparatorShown(True)
        self.cap.setToolTip(
            self.tr(
                "Summarise at this many tokens at the latest, whatever the window (useful "
                "for 1M-token windows: every turn rereads what the context holds)"
            )
        )
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.percent)
        row.addWidget(QLabel(self.tr("at most"), self))
        row.addWidget(self.cap, 1)

    def show_override(self, override: Mapping[str, Any]) -> None:
        self.percent.setValue(int(round(float(override.get(THRESHOLD_PERCENT, 0) or 0))))
        self.cap.setValue(int(override.get(THRESHOLD_CAP, 0) or 0))

    def apply(self, override: dict[str, Any]) -> None:
        """Write the fields into a model's override (an empty field removes its key)."""
        for key, value in ((THRESHOLD_PERCENT, self.percent.value()), (THRESHOLD_CAP, self.cap.value())):
            if value and (key != THRESHOLD_CAP or value >= THRESHOLD_CAP_RANGE[0]):
                override[key] = value
            else:
                override.pop(key, None)
