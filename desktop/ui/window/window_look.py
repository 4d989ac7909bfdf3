"""The window's designed look: the header bar (sidebar toggle, title, profile, model picker, gauge and its
one-line figure), the collapsible sidebar (folds away by itself in a narrow window), icons, the reading column
(centred, or wide from the View menu) and the theme (system / light / dark, chosen in Settings or the View menu);
both choices are kept in the window's settings.

Attached to the main window after it is built, like the tools, so the window's own code stays about chatting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QObject, QSettings, Qt
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QHBoxLayout,
    QMainWindow,
    QMenu,
    QSplitter,
    QToolButton,
    QWidget,
)

from desktop.ui.composer.composer import Composer
from desktop.ui.gauge.gauge import ContextGauge
from desktop.ui.gauge.gauge_line import ContextLine
from desktop.ui.look import icons
from desktop.ui.look.theme import THEMES, apply_theme
from desktop.ui.sidebar.sidebar import Sidebar
from desktop.ui.transcript.chat_view import ChatView
from desktop.ui.window.reading_column import WIDE_KEY, use_emoji_font

NARROW = 760  # px of window width below which the sidebar folds away by itself
THEME_KEY = "appearance/theme"
SIDEBAR_KEY = "window/sidebar"  # the chats shown or hidden by the user's choice (Ctrl+B, the header's toggle)


class WindowLook(QObject):
    """Styles the window's parts it is given; ``more_icons`` redraw the icons of parts it does not own."""

    def __init__(
        self,
        window: QMainWindow,
        header: QHBoxLayout,
        *,
        qsettings: QSettings,
        sidebar: Sidebar,
        splitter: QSplitter,
        gauge: ContextGauge,
        chat: ChatView,
        composer: Composer,
        more_icons: Sequence[Callable[[], None]] = (),
    ):
        super().__init__(window)
        self.window = window
        self._qsettings = qsettings
        self.sidebar = sidebar
        self.chat = chat
        self.composer = composer
        self._more_icons = tuple(more_icons)
        self._narrow: bool | None = None  # the width class last seen (None: not laid out yet)
        self.theme = str(qsettings.value(THEME_KEY, "system") or "system")
        if self.theme not in THEMES:
            self.theme = "system"

        sidebar.setObjectName("sidebar")
        sidebar.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        splitter.setChildrenCollapsible(False)
        splitter.setHandleWidth(1)

        self.sidebar_toggle = QToolButton(window)
        self.sidebar_toggle.setObjectName("sidebar_toggle")
        self.sidebar_toggle.setCheckable(True)
        self.sidebar_toggle.setChecked(True)
        self.sidebar_toggle.setToolTip(self.tr("Show or hide the chats (Ctrl+B)"))
        self.sidebar_toggle.setAccessibleName(self.tr("Show the chats"))
        self.sidebar_toggle.toggled.connect(self._choose_sidebar)
        header.insertWidget(0, self.sidebar_toggle)

        self.context_line = ContextLine(window)
        header.insertWidget(header.indexOf(gauge) + 1, self.context_line)
        gauge.snapshot_changed.connect(self.context_line.set_snapshot)
        self.context_line.set_snapshot(gauge.snapshot())

        use_emoji_font()
        self._build_view_menu()
        self.set_wide_column(_truthy(qsettings.value(WIDE_KEY, False)), save=False)
        self.refresh_icons()
        window.installEventFilter(self)
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._system_scheme_changed)

    # --- menu ---------------------------------------------------------------------------------------------
    def _build_view_menu(self) -> None:
        bar = self.window.menuBar()
        menu = QMenu(self.tr("&View"), bar)
        help_menu = bar.findChild(QMenu, "help_menu")  # Help stays the last menu, as on every desktop
        if help_menu is not None:
            bar.insertMenu(help_menu.menuAction(), menu)
        else:
            bar.addMenu(menu)
        self.toggle_action = QAction(self.tr("Show &chats"), self.window, checkable=True, checked=True)
        self.toggle_action.setShortcut(QKeySequence("Ctrl+B"))
        self.toggle_action.toggled.connect(self._choose_sidebar)
        menu.addAction(self.toggle_action)
        self.wide_action = QAction(self.tr("&Wide reading column"), self.window, checkable=True)
        self.wide_action.setToolTip(
            self.tr("Messages and the composer use the window's width instead of a centred column")
        )
        self.wide_action.toggled.connect(self.set_wide_column)
        menu.addAction(self.wide_action)
        themes = menu.addMenu(self.tr("&Theme"))
        group = QActionGroup(self.window)
        self.theme_actions: dict[str, QAction] = {}
        for choice, label in zip(THEMES, self.theme_labels(), strict=True):
            action = QAction(label, self.window, checkable=True, checked=choice == self.theme)
            action.triggered.connect(lambda _checked=False, c=choice: self.set_theme(c))
            group.addAction(action)
            themes.addAction(action)
            self.theme_actions[choice] = action

    def theme_labels(self) -> list[str]:
        return [self.tr("System"), self.tr("Light"), self.tr("Dark")]

    # --- sidebar ------------------------------------------------------------------------------------------
    def sidebar_shown(self) -> bool:
        return not self.sidebar.isHidden()

    def set_sidebar_shown(self, shown: bool) -> None:
        self.sidebar.setVisible(shown)
        for control in (self.sidebar_toggle, self.toggle_action):
            control.blockSignals(True)
            control.setChecked(shown)
            control.blockSignals(False)
        self.sidebar_toggle.setAccessibleName(
            self.tr("Hide the chats") if shown else self.tr("Show the chats")
        )

    def _choose_sidebar(self, shown: bool) -> None:
        """The user showed or hid the chats: kept for the next start (a narrow window's folding is not kept)."""
        self.set_sidebar_shown(shown)
        self._qsettings.setValue(SIDEBAR_KEY, shown)

    def _fit_width(self, width: int) -> None:
        narrow = width < NARROW
        if narrow != self._narrow:  # only when the width class changes: a choice made meanwhile is kept
            first = self._narrow is None
            self._narrow = narrow
            chosen = str(self._qsettings.value(SIDEBAR_KEY, "true")).lower() != "false"
            self.set_sidebar_shown(not narrow and (chosen or not first))
        self.context_line.set_room(width)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self.window and event.type() == QEvent.Type.Resize:
            self._fit_width(self.window.width())
        return super().eventFilter(watched, event)

    # --- reading column -----------------------------------------------------------------------------------
    def set_wide_column(self, wide: bool, *, save: bool = True) -> None:
        """The wide reading column (kept in the window's settings), or the centred one."""
        self.chat.set_wide(wide)
        self.composer.set_wide(wide)
        if self.wide_action.isChecked() != wide:
            self.wide_action.blockSignals(True)
            self.wide_action.setChecked(wide)
            self.wide_action.blockSignals(False)
        if save:
            self._qsettings.setValue(WIDE_KEY, wide)

    # --- theme --------------------------------------------------------------------------------------------
    def apply_saved_theme(self) -> None:
        """At start-up (the app; tests keep the default palette unless they ask)."""
        self.set_theme(self.theme, save=False)

    def set_theme(self, choice: str, *, save: bool = True) -> None:
        if choice not in THEMES:
            return
        self.theme = choice
        if save:
            self._qsettings.setValue(THEME_KEY, choice)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, choice)
        action = self.theme_actions.get(choice)
        if action is not None and not action.isChecked():
            action.setChecked(True)
        icons.clear_cache()
        self.refresh_icons()
        self.chat.viewport().update()

    def _system_scheme_changed(self, *_args: object) -> None:
        if self.theme == "system":
            self.set_theme("system", save=False)

    def refresh_icons(self) -> None:
        """Icons are drawn in the palette's text colour: again after a theme change."""
        self.sidebar_toggle.setIcon(icons.icon("sidebar"))
        self.sidebar.new_button.setIcon(icons.icon("new-chat"))
        self.composer.refresh_icons()
        for refresh in self._more_icons:
            refresh()

    # --- Settings -----------------------------------------------------------------------------------------
    def attach_settings(self, dialog: QWidget) -> None:
        """The Settings dialog's theme choice: shown as it is, applied when the dialog is saved."""
        box = getattr(dialog, "theme_box", None)
        if not isinstance(box, QComboBox):
            return
        box.setCurrentIndex(max(0, box.findData(self.theme)))
        accepted = getattr(dialog, "accepted", None)
        if accepted is not None:
            accepted.connect(lambda: self.set_theme(str(box.currentData())))


def _truthy(value: object) -> bool:
    """A flag read back from an INI file (where it comes back as the text "true" or "false")."""
    return value is True or str(value).lower() in ("true", "1")
