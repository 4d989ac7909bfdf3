"""Sessions sidebar: new, rename, delete (with confirmation), pin, filter by title; chats grouped by date with
the pinned ones on top (each group's title is painted above its first chat, so the list holds chats only)."""

from __future__ import annotations

import datetime as _dt

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import QFont, QKeyEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.api import SessionInfo, one_line
from desktop.ui.look.plural import numerus
from desktop.ui.sidebar.session_groups import group_key, group_label

ID_ROLE = Qt.ItemDataRole.UserRole
GROUP_ROLE = Qt.ItemDataRole.UserRole + 1  # the group title painted above the first chat of a group
PINNED_ROLE = Qt.ItemDataRole.UserRole + 2
GROUP_KEY_ROLE = Qt.ItemDataRole.UserRole + 3
HEADER_HEIGHT = 26


class GroupedDelegate(QStyledItemDelegate):
    """A chat row; the first row of a group also carries the group's title above it."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:  # noqa: N802
        size = super().sizeHint(option, index)
        return QSize(size.width(), size.height() + (HEADER_HEIGHT if index.data(GROUP_ROLE) else 0))

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        title = index.data(GROUP_ROLE)
        if not title:
            super().paint(painter, option, index)
            return
        rect = QRect(option.rect)
        header = QRect(rect.left() + 6, rect.top(), rect.width() - 6, HEADER_HEIGHT)
        painter.save()
        font = QFont(option.font)
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
        font.setWeight(QFont.Weight.DemiBold)
        painter.setFont(font)
        painter.setPen(option.palette.color(QPalette.ColorRole.PlaceholderText))
        painter.drawText(
            header.adjusted(0, 6, 0, 0),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            str(title),
        )
        painter.restore()
        row = QStyleOptionViewItem(option)
        row.rect = rect.adjusted(0, HEADER_HEIGHT, 0, 0)
        super().paint(painter, row, index)


class Sidebar(QWidget):
    session_selected = Signal(int)
    new_requested = Signal()
    rename_requested = Signal(int, str)
    delete_requested = Signal(int)
    pin_requested = Signal(int, bool)  # session id, pinned
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
        self.list.setItemDelegate(GroupedDelegate(self.list))
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.setAccessibleName(self.tr("Chats"))
        self.list.setAccessibleDescription(
            self.tr(
                "F2 renames the open chat (anywhere in the window); Delete on "
                "this list deletes the selected one"
            )
        )
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
        now = _dt.datetime.now()
        previous = None
        for s in sessions:
            title = one_line(s.title)  # a title stored before titles were made one line
            item = QListWidgetItem(title or self.tr("Untitled"))
            item.setData(ID_ROLE, s.id)
            item.setData(PINNED_ROLE, s.pinned)
            key = group_key(s.updated_at, s.pinned, now)
            item.setData(GROUP_KEY_ROLE, key)
            if key != previous:
                item.setData(GROUP_ROLE, group_label(key))
                previous = key
            # The whole title (a long one is cut in the list, "… (continued)" with it) and the count, worded
            # through Qt's %n.
            count = numerus(self.tr("%n message(s)", "", s.message_count), s.message_count)
            item.setToolTip(f"{title}\n{count}" if title else count)
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
        if item is not None:
            self.build_context_menu(item).exec(self.list.viewport().mapToGlobal(pos))

    def build_context_menu(self, item: QListWidgetItem) -> QMenu:
        """The menu of one chat (separate from exec, for tests): Pin or Unpin, Rename…, Delete…."""
        menu = QMenu(self)
        pinned = bool(item.data(PINNED_ROLE))
        sid = int(item.data(ID_ROLE))
        pin = menu.addAction(self.tr("Unpin") if pinned else self.tr("Pin"))
        pin.setObjectName("pin_action")
        pin.triggered.connect(lambda: self.pin_requested.emit(sid, not pinned))
        menu.addAction(self.tr("Rename…")).triggered.connect(lambda: self.ask_rename(item))
        menu.addAction(self.tr("Delete…")).triggered.connect(lambda: self.ask_delete(item))
        return menu

    def groups(self) -> list[tuple[str, list[int]]]:
        """The groups as shown: (title, chat ids in order)."""
        out: list[tuple[str, list[int]]] = []
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(GROUP_ROLE):
                out.append((str(item.data(GROUP_ROLE)), []))
            if out:
                out[-1][1].append(int(item.data(ID_ROLE)))
        return out

    def rename_current(self) -> None:
        """The window's Rename chat… (F2 wherever the focus is)."""
        item = self.list.currentItem()
        if item is not None:
            self.ask_rename(item)

    def ask_rename(self, item: QListWidgetItem) -> None:
        from PySide6.QtWidgets import QInputDialog  # a dialog class, made when first opened

        title, ok = QInputDialog.getText(self, self.tr("Rename chat"), self.tr("Title:"), text=item.text())
        if ok and title.strip():
            self.rename_requested.emit(int(item.data(ID_ROLE)), title.strip())

    def ask_delete(self, item: QListWidgetItem) -> None:
        from PySide6.QtWidgets import QMessageBox  # a dialog class, made when first opened

        answer = QMessageBox.question(
            self,
            self.tr("Delete chat"),
            self.tr("Delete “{title}” and all its messages? This cannot be undone.").format(
                title=item.text()
            ),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.delete_requested.emit(int(item.data(ID_ROLE)))
