"""Sessions sidebar: new, rename, delete (with confirmation), filter by title."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QInputDialog,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.bridge import SessionInfo

ID_ROLE = Qt.ItemDataRole.UserRole


class Sidebar(QWidget):
    session_selected = Signal(int)
    new_requested = Signal()
    rename_requested = Signal(int, str)
    delete_requested = Signal(int)
    filter_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setMinimumWidth(180)
        self.new_button = QPushButton(self.tr("New chat"), self)
        self.new_button.setObjectName("new_chat_button")
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setObjectName("session_filter")
        self.filter_edit.setPlaceholderText(self.tr("Filter by title"))
        self.filter_edit.setClearButtonEnabled(True)
        self.list = QListWidget(self)
        self.list.setObjectName("session_list")
        self.list.setUniformItemSizes(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.setAccessibleName(self.tr("Chats"))
        self.list.setAccessibleDescription(self.tr("F2 renames the open chat (anywhere in the window); Delete on "
                                                   "this list deletes the selected one"))
        self.filter_edit.setAccessibleName(self.tr("Filter chats by title"))
        self.list.installEventFilter(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 4, 8)
        layout.addWidget(self.new_button)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.list, 1)
        self.new_button.clicked.connect(self.new_requested)
        self.filter_edit.textChanged.connect(self.filter_changed)
        self.list.currentItemChanged.connect(self._current_changed)
        self.list.customContextMenuRequested.connect(self._context_menu)
        self._current_id: int | None = None

    def set_sessions(self, sessions: list[SessionInfo]) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for s in sessions:
            item = QListWidgetItem(s.title or self.tr("Untitled"))
            item.setData(ID_ROLE, s.id)
            item.setToolTip(self.tr("{n} messages").format(n=s.message_count))
            self.list.addItem(item)
            if s.id == self._current_id:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)

    def select(self, session_id: int) -> None:
        self._current_id = session_id
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(ID_ROLE) == session_id:
                self.list.blockSignals(True)
                self.list.setCurrentItem(item)
                self.list.blockSignals(False)

    def _current_changed(self, item: QListWidgetItem | None, _prev: QListWidgetItem | None) -> None:
        if item is not None:
            self._current_id = int(item.data(ID_ROLE))
            self.session_selected.emit(self._current_id)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        # F2 / Delete on the list: the keyboard way to the context menu's Rename… / Delete….
        if watched is self.list and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            item = self.list.currentItem()
            if item is not None and not event.modifiers():
                if event.key() == Qt.Key.Key_F2:  # a sidebar on its own; in the window F2 is window-wide
                    self.ask_rename(item)
                    return True
                if event.key() == Qt.Key.Key_Delete:
                    self.ask_delete(item)
                    return True
        return super().eventFilter(watched, event)

    def _context_menu(self, pos) -> None:  # noqa: ANN001 - QPoint
        item = self.list.itemAt(pos)
        if item is None:
            return
        menu = QMenu(self)
        rename = menu.addAction(self.tr("Rename…"))
        delete = menu.addAction(self.tr("Delete…"))
        chosen = menu.exec(self.list.viewport().mapToGlobal(pos))
        if chosen is rename:
            self.ask_rename(item)
        elif chosen is delete:
            self.ask_delete(item)

    def rename_current(self) -> None:
        """The window's Rename chat… (F2 wherever the focus is)."""
        item = self.list.currentItem()
        if item is not None:
            self.ask_rename(item)

    def ask_rename(self, item: QListWidgetItem) -> None:
        title, ok = QInputDialog.getText(self, self.tr("Rename chat"), self.tr("Title:"), text=item.text())
        if ok and title.strip():
            self.rename_requested.emit(int(item.data(ID_ROLE)), title.strip())

    def ask_delete(self, item: QListWidgetItem) -> None:
        answer = QMessageBox.question(
            self,
            self.tr("Delete chat"),
            self.tr("Delete “{title}” and all its messages? This cannot be undone.").format(title=item.text()),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.delete_requested.emit(int(item.data(ID_ROLE)))
