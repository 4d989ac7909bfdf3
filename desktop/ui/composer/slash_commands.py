"""`/` commands in the composer, offered with completion as the name is typed.

/compact and /context run in the engine (the same entry points as `precis compact` and `precis context`);
/help, /clear and /model run the window's own actions (the same as their menu entries and the model picker).
"""

from __future__ import annotations

from msgspec import Struct
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QObject, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel, QTextCursor
from PySide6.QtWidgets import QAbstractItemView, QCompleter, QPlainTextEdit

_CONTEXT = "SlashCommands"
NAME_ROLE = Qt.ItemDataRole.UserRole + 1


class SlashCommand(Struct, frozen=True):
    """A window command typed in the composer (/help, /clear, ...)."""

    name: str
    what: object  # marked with QT_TRANSLATE_NOOP; shown through describe()
    argument: str = ""  # how its argument is written ('' : none)

    def describe(self) -> str:
        return QCoreApplication.translate(_CONTEXT, str(self.what))


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("/help", QT_TRANSLATE_NOOP("SlashCommands", "The commands and keyboard shortcuts")),
    SlashCommand("/clear", QT_TRANSLATE_NOOP("SlashCommands", "Clear this chat's history (asks first)")),
    SlashCommand("/model", QT_TRANSLATE_NOOP("SlashCommands", "Change this chat's model"), "[model]"),
    SlashCommand("/compact", QT_TRANSLATE_NOOP("SlashCommands", "Summarise the older part now"), "[focus]"),
    SlashCommand("/context", QT_TRANSLATE_NOOP("SlashCommands", "What fills the context window")),
)
WINDOW_COMMANDS = ("/help", "/clear", "/model")  # the rest go to the engine as typed


def parse(text: str) -> tuple[str, str] | None:
    """(command, argument) of a composer text that is a known command, else None."""
    name, _, arg = text.strip().partition(" ")
    if any(c.name == name for c in COMMANDS):
        return name, arg.strip()
    return None


class SlashCompleter(QObject):
    """Completion of command names at the start of the composer (a popup under the cursor)."""

    chosen = Signal(str)  # a command name was picked from the popup

    def __init__(self, edit: QPlainTextEdit):
        super().__init__(edit)
        self.edit = edit
        model = QStandardItemModel(self)
        for c in COMMANDS:
            item = QStandardItem(f"{c.name} {c.argument}".strip() + "  —  " + c.describe())
            item.setData(c.name, NAME_ROLE)
            model.appendRow(item)
        self.completer = QCompleter(model, self)
        self.completer.setObjectName("slash_completer")
        self.completer.setWidget(edit)
        self.completer.setCompletionRole(NAME_ROLE)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.completer.activated.connect(self.take)
        self._popup().setObjectName("slash_popup")  # its rows are spaced like the other lists (precis.qss)
        self._quiet = False  # the text is being set from a choice: no popup for it
        edit.textChanged.connect(self._update)

    def _popup(self) -> QAbstractItemView:
        popup = self.completer.popup()
        assert popup is not None  # a completer always has its popup once it has a widget
        return popup

    def hide_popup(self) -> None:
        self._popup().hide()

    def popup_visible(self) -> bool:
        return self._popup().isVisible()

    def _update(self) -> None:
        text = self.edit.toPlainText()
        if self._quiet or not text.startswith("/") or any(ch.isspace() for ch in text):
            self._popup().hide()
            return
        self.completer.setCompletionPrefix(text)
        if self.completer.completionCount() == 0:
            self._popup().hide()
            return
        rect = self.edit.cursorRect()
        popup = self._popup()
        rect.setWidth(
            max(320, popup.sizeHintForColumn(0) + popup.verticalScrollBar().sizeHint().width() + 24)
        )
        self.completer.complete(rect)

    def offered(self) -> list[str]:
        """The command names the popup offers now."""
        model = self.completer.completionModel()
        return [str(model.index(i, 0).data(NAME_ROLE)) for i in range(model.rowCount())]

    def take_current(self) -> bool:
        """Enter while the popup is open: the highlighted (else the first) command goes into the composer."""
        if not self.popup_visible():
            return False
        index = self._popup().currentIndex()
        names = self.offered()
        name = str(index.data(NAME_ROLE)) if index.isValid() else (names[0] if names else "")
        self._popup().hide()
        if name:
            self.take(name)
        return bool(name)

    def take(self, name: str) -> None:
        command = next((c for c in COMMANDS if c.name == name), None)
        self._quiet = True
        try:
            self.edit.setPlainText(name + (" " if command is not None and command.argument else ""))
        finally:
            self._quiet = False
        self.edit.moveCursor(QTextCursor.MoveOperation.End)
        self._popup().hide()
        self.chosen.emit(name)
