"""The header's profile button: which provider profile the open chat uses, and a menu to move the chat to another.

A chat keeps the profile it was made on (its session's ``profile``; none: the active one); its requests, gauge
and model list follow that profile (desktop/engine/providers/route.py).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from desktop.ui.look.icons import icon, icon_size


class ChatProfileButton(QToolButton):
    profile_chosen = Signal(str)  # the profile the user moves the open chat to

    def __init__(self, profiles: Callable[[], list[str]], parent: QWidget | None = None) -> None:
        """``profiles``: the names of the profiles a chat can use, asked each time the menu opens."""
        super().__init__(parent)
        self.setObjectName("profile_button")
        self._profiles = profiles
        self._current = ""
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setAutoRaise(True)
        self._menu = QMenu(self)
        self._menu.aboutToShow.connect(self._fill)
        self.setMenu(self._menu)
        self.refresh_icons()
        self.show_profile("")

    @property
    def current(self) -> str:
        return self._current

    def show_profile(self, name: str) -> None:
        """Show the chat's profile (empty: no profile is set up: the settings' own connection)."""
        self._current = name
        label = name or self.tr("Default")
        self.setText(label)
        self.setToolTip(
            self.tr("This chat uses the profile “{name}”; click to move it to another profile").format(
                name=label
            )
        )
        self.setAccessibleName(self.tr("Profile of this chat: {name}").format(name=label))

    def refresh_icons(self) -> None:
        self.setIcon(icon("profile"))
        self.setIconSize(icon_size(16))

    def choices(self) -> list[str]:
        names = list(dict.fromkeys(self._profiles()))
        if self._current and self._current not in names:
            names.insert(0, self._current)
        return names

    def _fill(self) -> None:
        self._menu.clear()
        names = self.choices()
        if not names:
            none = self._menu.addAction(self.tr("No other profile: add one in Settings"))
            none.setEnabled(False)
            return
        group = QActionGroup(self._menu)
        for name in names:
            action = QAction(name, self._menu, checkable=True, checked=name == self._current)
            action.triggered.connect(lambda _checked=False, n=name: self._choose(n))
            group.addAction(action)
            self._menu.addAction(action)

    def _choose(self, name: str) -> None:
        if name != self._current:
            self.profile_chosen.emit(name)
