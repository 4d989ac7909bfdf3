"""The chat header's "Thinking" switch: extended thinking for this chat, offered when its model has it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QToolButton, QWidget

from desktop.ui.api import supports_thinking

if TYPE_CHECKING:
    from desktop.ui.window.window_parts import OpenChat


class ThinkingToggle(QToolButton):
    def __init__(self, window: OpenChat, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("thinking_toggle")
        self._window = window
        self.setText(self.tr("Thinking"))
        self.setCheckable(True)
        self.setAccessibleName(self.tr("Extended thinking for this chat"))
        self.toggled.connect(self._on_toggled)
        window.bridge.session_opened.connect(lambda _page: self.reload())
        window.model_picker.currentTextChanged.connect(lambda _t: self._offer())
        self._offer()

    def _model(self) -> str:
        return self._window.model_picker.currentText().strip()

    def _offer(self) -> None:
        supported = supports_thinking(self._model())
        self.setEnabled(supported)
        budget = self._window.bridge.settings.thinking_budget_tokens
        self.setToolTip(
            self.tr("The model thinks before it answers (budget %1 tokens, in Settings)").replace(
                "%1", f"{budget:,}"
            )
            if supported
            else self.tr("This chat's model does not offer extended thinking")
        )

    def reload(self) -> None:
        """Show the open chat's own setting."""
        window = self._window
        self._offer()
        if window.session_id is None:
            return

        async def load(session_id: int) -> None:
            on = await window.bridge.engine.thinking(session_id)
            if session_id == window.session_id:
                self.blockSignals(True)
                self.setChecked(on)
                self.blockSignals(False)
                self._offer()

        window.bridge.spawn(load(window.session_id))

    def _on_toggled(self, on: bool) -> None:
        window = self._window
        if window.session_id is not None:
            window.bridge.spawn(window.bridge.engine.set_thinking(window.session_id, on))
