"""Sessions sidebar: new chat and new project, rename, delete (with confirmation), pin, move to a project, filter
by title. Projects come first, each a collapsible header with its count of chats, a "+" (a new chat in it) and a
menu, its chats under it; the other chats are grouped by date with the pinned ones on top.

Headers are painted above the chat they precede (a collapsed or empty project's above the next chat shown, or
below the last one), so the list holds chats only: every row is a chat, as the keyboard's chat switching counts
them."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from typing import Literal

from msgspec import Struct
from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QPointF,
    QRect,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QHelpEvent,
    QIcon,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPalette,
    QPixmap,
    QPolygonF,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.api import Project, SessionInfo, one_line
from desktop.ui.look import icons
from desktop.ui.look.plural import numerus
from desktop.ui.look.viewport import own_viewport
from desktop.ui.sidebar.session_groups import group_key, group_label

ID_ROLE = Qt.ItemDataRole.UserRole
PINNED_ROLE = Qt.ItemDataRole.UserRole + 2
GROUP_KEY_ROLE = Qt.ItemDataRole.UserRole + 3  # the chat's date group ('today', …), or 'project:<id>'
ABOVE_ROLE = Qt.ItemDataRole.UserRole + 4  # the headers painted above the chat (list[Band])
BELOW_ROLE = Qt.ItemDataRole.UserRole + 5  # the headers painted below it (after the last chat shown)
ROWLESS_ROLE = Qt.ItemDataRole.UserRole + 6  # only its headers show (every chat is in a collapsed project)
PROJECT_ROLE = Qt.ItemDataRole.UserRole + 7  # the chat's project id (None: none)
HEADER_HEIGHT = 26
PROJECT_HEIGHT = 30
BUTTON = 20  # the side of a project header's "+" and menu buttons
INDENT = 14  # a project's chats, under its name

BandPart = Literal["toggle", "menu", "add"]


class Band(Struct, frozen=True):
    """A header painted in the list: the Projects section's title, a date group's or a project's."""

    kind: Literal["section", "group", "project"]
    title: str
    project_id: int = 0
    count: int = 0
    collapsed: bool = False

    @property
    def height(self) -> int:
        return PROJECT_HEIGHT if self.kind == "project" else HEADER_HEIGHT


def _bands(index: QModelIndex | QPersistentModelIndex, role: int) -> list[Band]:
    value = index.data(role)
    return list(value) if isinstance(value, list | tuple) else []


def place(
    rect: QRect, above: Sequence[Band], below: Sequence[Band], rowless: bool
) -> tuple[list[tuple[Band, QRect]], QRect | None]:
    """Where an item's headers and its chat row go inside the item's ``rect`` (the row None when only the
    headers show). One rule for painting and for clicks."""
    placed: list[tuple[Band, QRect]] = []
    top = rect.top()
    for band in above:
        placed.append((band, QRect(rect.left(), top, rect.width(), band.height)))
        top += band.height
    row_height = 0 if rowless else rect.height() - sum(b.height for b in (*above, *below))
    row = QRect(rect.left(), top, rect.width(), row_height) if not rowless else None
    top += row_height
    for band in below:
        placed.append((band, QRect(rect.left(), top, rect.width(), band.height)))
        top += band.height
    return placed, row


def project_parts(rect: QRect) -> dict[BandPart, QRect]:
    """A project header's buttons: "+" at the right end, the menu before it; the rest folds and unfolds."""
    middle = rect.top() + 2 + (rect.height() - 2) // 2
    add = QRect(rect.right() - 4 - BUTTON, middle - BUTTON // 2, BUTTON, BUTTON)
    menu = QRect(add.left() - 2 - BUTTON, add.top(), BUTTON, BUTTON)
    return {
        "add": add,
        "menu": menu,
        "toggle": QRect(rect.left(), rect.top(), menu.left() - rect.left(), rect.height()),
    }


def new_project_icon(colour: QColor, side: int = 20) -> QIcon:
    """A folder with a "+" at its corner (New project…), drawn from the bundled icons in ``colour``."""
    pixmap = QPixmap(side * 2, side * 2)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    icons.icon("folder", colour).paint(painter, QRect(0, 0, side * 2 - 6, side * 2 - 6))
    corner = QRect(side - 2, side - 2, side + 2, side + 2)
    painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Clear)  # room for the "+"
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(Qt.GlobalColor.black)
    painter.drawEllipse(corner)
    painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)
    icons.icon("new-chat", colour).paint(painter, corner.adjusted(1, 1, -1, -1))
    painter.end()
    pixmap.setDevicePixelRatio(2.0)
    return QIcon(pixmap)


class GroupedDelegate(QStyledItemDelegate):
    """A chat row with the headers that go above (or below) it."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:  # noqa: N802
        size = super().sizeHint(option, index)
        above, below = _bands(index, ABOVE_ROLE), _bands(index, BELOW_ROLE)
        row = 0 if index.data(ROWLESS_ROLE) else size.height()
        return QSize(size.width(), row + sum(b.height for b in (*above, *below)))

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        above, below = _bands(index, ABOVE_ROLE), _bands(index, BELOW_ROLE)
        indent = INDENT if index.data(PROJECT_ROLE) is not None else 0
        if not above and not below and not indent:
            super().paint(painter, option, index)
            return
        placed, row = place(QRect(option.rect), above, below, bool(index.data(ROWLESS_ROLE)))
        for band, rect in placed:
            painter.save()
            if band.kind == "project":
                self._paint_project(painter, option, band, rect)
            else:
                self._paint_title(painter, option, band.title, rect)
            painter.restore()
        if row is not None:
            shown = QStyleOptionViewItem(option)
            shown.rect = row.adjusted(indent, 0, 0, 0)  # a project's chats sit under its name
            super().paint(painter, shown, index)

    @staticmethod
    def _paint_title(painter: QPainter, option: QStyleOptionViewItem, title: str, rect: QRect) -> None:
        font = QFont(option.font)
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
        font.setWeight(QFont.Weight.DemiBold)
        painter.setFont(font)
        painter.setPen(option.palette.color(QPalette.ColorRole.PlaceholderText))
        painter.drawText(
            rect.adjusted(6, 6, 0, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, title
        )

    @staticmethod
    def _paint_project(painter: QPainter, option: QStyleOptionViewItem, band: Band, rect: QRect) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        faint = option.palette.color(QPalette.ColorRole.PlaceholderText)
        text = option.palette.color(QPalette.ColorRole.Text)
        parts = project_parts(rect)
        middle = parts["add"].center().y()
        # The fold mark: ▸ folded, ▾ open.
        x = rect.left() + 8
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(faint)
        if band.collapsed:
            mark = [QPointF(x, middle - 4), QPointF(x + 5, middle), QPointF(x, middle + 4)]
        else:
            mark = [QPointF(x - 1, middle - 2), QPointF(x + 7, middle - 2), QPointF(x + 3, middle + 3)]
        painter.drawPolygon(QPolygonF(mark))
        icons.icon("folder", text).paint(painter, QRect(x + 12, middle - 8, 16, 16))
        font = QFont(option.font)
        font.setWeight(QFont.Weight.DemiBold)
        painter.setFont(font)
        count = str(band.count)
        count_width = painter.fontMetrics().horizontalAdvance(count) + 8
        name_left = x + 34
        name_rect = QRect(
            name_left, rect.top() + 2, parts["menu"].left() - count_width - name_left, rect.height() - 2
        )
        painter.setPen(text)
        name = painter.fontMetrics().elidedText(
            band.title, Qt.TextElideMode.ElideRight, max(0, name_rect.width())
        )
        painter.drawText(name_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, name)
        font.setWeight(QFont.Weight.Normal)
        painter.setFont(font)
        painter.setPen(faint)
        painter.drawText(
            QRect(parts["menu"].left() - count_width, name_rect.top(), count_width - 4, name_rect.height()),
            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
            count,
        )
        # The menu (three dots) and "+": drawn, so they take the text colour of light and dark alike.
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(faint)
        dots = parts["menu"].center()
        for dx in (-5, 0, 5):
            painter.drawEllipse(QPointF(dots.x() + dx, dots.y() + 0.5), 1.6, 1.6)
        icons.icon("new-chat", faint).paint(painter, parts["add"].adjusted(3, 3, -3, -3))


class Sidebar(QWidget):
    session_selected = Signal(int)
    new_requested = Signal()
    rename_requested = Signal(int, str)
    delete_requested = Signal(int)
    pin_requested = Signal(int, bool)  # session id, pinned
    filter_changed = Signal(str)
    new_project_requested = Signal(object)  # a chat to move into the new project (its id), or None
    new_in_project_requested = Signal(int)  # project id: a new chat in it
    project_page_requested = Signal(int)  # project id: its page
    project_delete_requested = Signal(int)  # project id: Delete project… (it asks about the project's chats)
    move_requested = Signal(int, object)  # session id, project id (None: out of any project)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setMinimumWidth(180)
        self.new_button = QPushButton(self.tr("New chat"), self)
        self.new_button.setObjectName("new_chat_button")
        self.new_project_button = QToolButton(self)
        self.new_project_button.setObjectName("new_project_button")
        self.new_project_button.setToolTip(self.tr("New project…"))
        self.new_project_button.setAccessibleName(self.tr("New project"))
        self.new_project_button.setAutoRaise(True)
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setObjectName("session_filter")
        self.filter_edit.setPlaceholderText(self.tr("Filter by title"))
        self.filter_edit.setClearButtonEnabled(True)
        self.list = QListWidget(self)
        own_viewport(self.list)
        self.list.setObjectName("session_list")
        self.delegate = GroupedDelegate(self.list)
        self.list.setItemDelegate(self.delegate)
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
        self.list.viewport().installEventFilter(self)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.setSpacing(4)
        top.addWidget(self.new_button, 1)
        top.addWidget(self.new_project_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 4, 8)
        layout.addLayout(top)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.list, 1)
        self.new_button.clicked.connect(self.new_requested)
        self.new_project_button.clicked.connect(lambda: self.new_project_requested.emit(None))
        self.filter_edit.textChanged.connect(self.filter_changed)
        self.list.currentItemChanged.connect(self._current_changed)
        self.list.customContextMenuRequested.connect(self._context_menu)
        self._current_id: int | None = None
        self._sessions: list[SessionInfo] = []
        self._projects: list[Project] = []
        self.collapsed: set[int] = set()  # projects folded (this run)
        self._groups: list[tuple[str, list[int]]] = []
        self._shown_projects: list[Band] = []
        self.refresh_icons()

    def refresh_icons(self) -> None:
        """Icons are drawn in the palette's text colour: again after a theme change (the headers on repaint)."""
        self.new_project_button.setIcon(new_project_icon(self.palette().color(QPalette.ColorRole.ButtonText)))
        self.list.viewport().update()

    # --- what the list shows --------------------------------------------------------------------------------
    def set_sessions(self, sessions: list[SessionInfo]) -> None:
        self._sessions = list(sessions)
        self._fill()

    def set_projects(self, projects: list[Project]) -> None:
        self._projects = list(projects)
        self.collapsed &= {p.id for p in projects}
        self._fill()

    def projects(self) -> list[Project]:
        """Every project, as last listed."""
        return list(self._projects)

    def _entries(self) -> list[Band | SessionInfo]:
        """Headers and chats in the order shown: the projects (each with its chats; while filtering, only those
        with a chat whose title matches), then the other chats by date."""
        known = {p.id for p in self._projects}
        inside: dict[int, list[SessionInfo]] = {p.id: [] for p in self._projects}
        loose: list[SessionInfo] = []
        for s in self._sessions:
            if s.project_id in known and s.project_id is not None:
                inside[s.project_id].append(s)
            else:  # a project deleted elsewhere and not listed yet: its chats show as chats without one
                loose.append(s)
        filtering = bool(self.filter_edit.text().strip())
        shown = [p for p in self._projects if inside[p.id] or not filtering]
        out: list[Band | SessionInfo] = []
        if shown:
            out.append(Band("section", self.tr("Projects")))
        for p in shown:
            chats = inside[p.id]
            out.append(Band("project", one_line(p.name), p.id, len(chats), p.id in self.collapsed))
            out.extend(chats)
        now = _dt.datetime.now()
        previous = None
        for s in loose:
            key = group_key(s.updated_at, s.pinned, now)
            if key != previous:
                out.append(Band("group", group_label(key)))
                previous = key
            out.append(s)
        return out

    def _fill(self) -> None:
        scroll = self.list.verticalScrollBar().value()
        self.list.blockSignals(True)
        self.list.clear()
        pending: list[Band] = []
        last_shown: QListWidgetItem | None = None
        self._groups, self._shown_projects = [], []
        project: Band | None = None
        for entry in self._entries():
            if isinstance(entry, Band):
                pending.append(entry)
                if entry.kind != "section":
                    self._groups.append((entry.title, []))
                project = entry if entry.kind == "project" else None
                if project is not None:
                    self._shown_projects.append(project)
                continue
            item = self._item(entry, project)
            self._groups[-1][1].append(entry.id)
            self.list.addItem(item)
            if project is not None and project.collapsed:
                item.setHidden(True)
            else:
                item.setData(ABOVE_ROLE, pending)
                pending, last_shown = [], item
            if entry.id == self._current_id:
                self.list.setCurrentItem(item)
        if pending and last_shown is not None:
            last_shown.setData(BELOW_ROLE, pending)
        elif pending and self.list.count():  # every chat in a folded project: the first carries the headers
            first = self.list.item(0)
            first.setHidden(False)
            first.setData(ABOVE_ROLE, pending)
            first.setData(ROWLESS_ROLE, True)
        self.list.verticalScrollBar().setValue(scroll)
        self.list.blockSignals(False)

    def _item(self, s: SessionInfo, project: Band | None) -> QListWidgetItem:
        title = one_line(s.title)  # a title stored before titles were made one line
        item = QListWidgetItem(title or self.tr("Untitled"))
        item.setData(ID_ROLE, s.id)
        item.setData(PINNED_ROLE, s.pinned)
        item.setData(PROJECT_ROLE, project.project_id if project is not None else None)
        item.setData(GROUP_KEY_ROLE, f"project:{project.project_id}" if project is not None else None)
        # The whole title (a long one is cut in the list, "… (continued)" with it) and the count, worded
        # through Qt's %n.
        count = numerus(self.tr("%n message(s)", "", s.message_count), s.message_count)
        item.setToolTip(f"{title}\n{count}" if title else count)
        return item

    def groups(self) -> list[tuple[str, list[int]]]:
        """The groups as listed: (a project's name or a date group's title, its chats' ids in order); a folded
        project's chats included."""
        return [(title, list(ids)) for title, ids in self._groups]

    def shown_projects(self) -> list[tuple[int, str, int, bool]]:
        """The project headers as listed: (project id, name, chats, folded)."""
        return [(b.project_id, b.title, b.count, b.collapsed) for b in self._shown_projects]

    def set_collapsed(self, project_id: int, collapsed: bool) -> None:
        if collapsed:
            self.collapsed.add(project_id)
        else:
            self.collapsed.discard(project_id)
        self._fill()

    def select(self, session_id: int) -> None:
        self._current_id = session_id
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(ID_ROLE) == session_id:
                project = item.data(PROJECT_ROLE)
                if project in self.collapsed:  # the open chat is shown: its project unfolds
                    self.set_collapsed(project, False)
                    return
                self.list.blockSignals(True)
                self.list.setCurrentItem(item)
                self.list.blockSignals(False)

    def _current_changed(self, item: QListWidgetItem | None, _prev: QListWidgetItem | None) -> None:
        if item is not None:
            self._current_id = int(item.data(ID_ROLE))
            self.session_selected.emit(self._current_id)

    # --- the headers: clicks, tooltips, menus ---------------------------------------------------------------
    def band_at(self, pos: QPoint) -> tuple[Band, BandPart | None] | None:
        """The header under ``pos`` (viewport coordinates) and, on a project's, the part: its buttons or the
        rest (which folds it)."""
        item = self.list.itemAt(pos)
        if item is None:
            return None
        above, below = (
            _bands(self.list.indexFromItem(item), ABOVE_ROLE),
            _bands(self.list.indexFromItem(item), BELOW_ROLE),
        )
        placed, _row = place(self.list.visualItemRect(item), above, below, bool(item.data(ROWLESS_ROLE)))
        for band, rect in placed:
            if rect.contains(pos):
                if band.kind != "project":
                    return band, None
                parts = project_parts(rect)
                for part in ("add", "menu"):
                    if parts[part].contains(pos):
                        return band, part
                return band, "toggle"
        return None

    def band_rect(self, project_id: int) -> QRect | None:
        """Where a project's header is in the viewport (None: not listed)."""
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.isHidden():
                continue
            index = self.list.indexFromItem(item)
            placed, _row = place(
                self.list.visualItemRect(item),
                _bands(index, ABOVE_ROLE),
                _bands(index, BELOW_ROLE),
                bool(item.data(ROWLESS_ROLE)),
            )
            for band, rect in placed:
                if band.kind == "project" and band.project_id == project_id:
                    return rect
        return None

    def click_band(self, band: Band, part: BandPart | None, at: QPoint | None = None) -> None:
        """A click on a header: a project's "+" makes a chat in it, its menu button opens its menu, the rest
        folds or unfolds it. Section and date titles do nothing."""
        if band.kind != "project" or part is None:
            return
        if part == "add":
            self.new_in_project_requested.emit(band.project_id)
        elif part == "menu":
            menu = self.build_project_menu(band.project_id)
            menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            menu.popup(at if at is not None else self.list.viewport().mapToGlobal(QPoint(0, 0)))
        else:
            self.set_collapsed(band.project_id, not band.collapsed)

    def _band_tip(self, band: Band, part: BandPart | None) -> str:
        if band.kind != "project":
            return ""
        if part == "add":
            return self.tr("New chat in “{name}”").format(name=band.title)
        if part == "menu":
            return self.tr("Project menu")
        count = numerus(self.tr("%n chat(s)", "", band.count), band.count)
        return f"{band.title}\n{count}"

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self.list.viewport():
            kind = event.type()
            if isinstance(event, QMouseEvent) and kind in (
                QEvent.Type.MouseButtonPress,
                QEvent.Type.MouseButtonRelease,
                QEvent.Type.MouseButtonDblClick,
            ):
                hit = self.band_at(event.position().toPoint())
                if hit is None:
                    return super().eventFilter(watched, event)
                if kind == QEvent.Type.MouseButtonPress and event.button() == Qt.MouseButton.LeftButton:
                    self.click_band(*hit, at=event.globalPosition().toPoint())
                return True  # a header is not a chat: it selects nothing
            if kind == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
                hit = self.band_at(event.pos())
                if hit is not None:
                    tip = self._band_tip(*hit)
                    if tip:
                        QToolTip.showText(event.globalPos(), tip, self.list.viewport())
                    else:
                        QToolTip.hideText()
                    return True
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
        hit = self.band_at(pos)
        if hit is not None:
            band = hit[0]
            if band.kind == "project":
                self.build_project_menu(band.project_id).exec(self.list.viewport().mapToGlobal(pos))
            return
        item = self.list.itemAt(pos)
        if item is not None:
            self.build_context_menu(item).exec(self.list.viewport().mapToGlobal(pos))

    def build_project_menu(self, project_id: int) -> QMenu:
        """A project header's menu (separate from exec, for tests): a new chat in it, its page, fold, delete."""
        menu = QMenu(self)
        menu.setObjectName("project_menu")
        new = menu.addAction(self.tr("New chat in this project"))
        new.setObjectName("project_new_chat_action")
        new.triggered.connect(lambda: self.new_in_project_requested.emit(project_id))
        page = menu.addAction(self.tr("Project settings…"))
        page.setObjectName("project_page_action")
        page.triggered.connect(lambda: self.project_page_requested.emit(project_id))
        folded = project_id in self.collapsed
        fold = menu.addAction(self.tr("Expand") if folded else self.tr("Collapse"))
        fold.triggered.connect(lambda: self.set_collapsed(project_id, not folded))
        menu.addSeparator()
        delete = menu.addAction(self.tr("Delete project…"))
        delete.setObjectName("project_delete_action")
        delete.triggered.connect(lambda: self.project_delete_requested.emit(project_id))
        return menu

    def build_context_menu(self, item: QListWidgetItem) -> QMenu:
        """The menu of one chat (separate from exec, for tests): Pin or Unpin, Rename…, Move to project ›,
        Delete…."""
        menu = QMenu(self)
        pinned = bool(item.data(PINNED_ROLE))
        sid = int(item.data(ID_ROLE))
        pin = menu.addAction(self.tr("Unpin") if pinned else self.tr("Pin"))
        pin.setObjectName("pin_action")
        pin.triggered.connect(lambda: self.pin_requested.emit(sid, not pinned))
        menu.addAction(self.tr("Rename…")).triggered.connect(lambda: self.ask_rename(item))
        menu.addMenu(self.build_move_menu(sid, item.data(PROJECT_ROLE), menu))
        menu.addAction(self.tr("Delete…")).triggered.connect(lambda: self.ask_delete(item))
        return menu

    def build_move_menu(self, session_id: int, current: int | None, parent: QWidget) -> QMenu:
        """Move to project ›: every project (the chat's own checked), No project, New project…."""
        menu = QMenu(self.tr("Move to project"), parent)
        menu.setObjectName("move_menu")
        for project in self._projects:
            action = menu.addAction(one_line(project.name))
            action.setObjectName(f"move_to_{project.id}")
            action.setCheckable(True)
            action.setChecked(project.id == current)
            action.setEnabled(project.id != current)
            action.triggered.connect(
                lambda _c=False, pid=project.id: self.move_requested.emit(session_id, pid)
            )
        if self._projects:
            menu.addSeparator()
        out = menu.addAction(self.tr("No project"))
        out.setObjectName("move_out")
        out.setCheckable(True)
        out.setChecked(current is None)
        out.setEnabled(current is not None)
        out.triggered.connect(lambda: self.move_requested.emit(session_id, None))
        new = menu.addAction(self.tr("New project…"))
        new.setObjectName("move_to_new")
        new.triggered.connect(lambda: self.new_project_requested.emit(session_id))
        return menu

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
