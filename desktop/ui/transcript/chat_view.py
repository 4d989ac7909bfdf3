"""The transcript list: per-pixel scrolling, sticky bottom while streaming, paging upward, copy actions."""

from __future__ import annotations

from typing import Any, cast

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QPoint,
    QPointF,
    Qt,
    QTimer,
    QUrl,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QContextMenuEvent,
    QDesktopServices,
    QFocusEvent,
    QGuiApplication,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPalette,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QAbstractItemView, QListView, QMenu, QWidget

from desktop.ui.look.viewport import own_viewport
from desktop.ui.transcript import math_render
from desktop.ui.transcript.chat_delegate import ChatDelegate, card_actions
from desktop.ui.transcript.chat_model import ChatModel, Roles
from desktop.ui.transcript.code_scroll import STEP as CODE_STEP
from desktop.ui.transcript.markdown_render import render_markdown
from desktop.ui.window.reading_column import body_font

PLACEHOLDER = QT_TRANSLATE_NOOP("ChatView", "Start a conversation — Enter sends, Shift+Enter adds a line")
BOTTOM_SLACK = 4  # px: "at the bottom" tolerates rounding
TOP_TRIGGER = 0  # px from the top at which older rows are requested
TOP_GAP = 16  # px of page between the header's line and the messages, so the first one does not touch it


class ChatView(QListView):
    older_requested = Signal()  # once per arrival at the top while the model has older rows
    link_activated = Signal(str)
    code_copied = Signal(int)
    card_action = Signal(str, str)  # card key, action: see ChatDelegate.card_action
    edit_requested = Signal(int)  # a user message id to edit and resend
    delete_requested = Signal(int)  # a message id to delete
    regenerate_requested = Signal(int)  # an assistant message id to answer again (a new version)
    version_requested = Signal(int, int)  # message id, -1 / +1: show its previous / next version
    summarise_before = Signal(int)  # a message id: summarise everything before it

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._laid_out_width = -1  # the viewport width the rows' heights were last measured at
        self._reflow_anchor: tuple[Any, int] | None = None  # the top row kept across a width change
        self._stick_to_bottom = True
        own_viewport(self)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        # SinglePass: heights are cached, and the view must know all of them to open at the bottom.
        self.setLayoutMode(QListView.LayoutMode.SinglePass)
        self.setUniformItemSizes(False)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setMouseTracking(True)
        self.setFrameShape(QListView.Shape.NoFrame)
        self.verticalScrollBar().setSingleStep(24)
        self.setAccessibleName(self.tr("Conversation"))
        self.setAccessibleDescription(
            self.tr(
                "Messages, oldest first. Ctrl+C copies the current message; the menu key shows its actions."
            )
        )
        self.open_links_externally = True
        self._placeholder = self.tr(str(PLACEHOLDER))
        self._stick_to_bottom = True
        self._older_pending = False
        self._anchor: tuple[Any, int] | None = None  # (row key, top y) kept across a prepend
        self._delegate = ChatDelegate(self)
        self.setItemDelegate(self._delegate)
        # The band above the viewport is the view's own: painted as the page, it reads as the page's top margin.
        self.setBackgroundRole(QPalette.ColorRole.Base)
        self.setAutoFillBackground(True)
        self.setViewportMargins(0, TOP_GAP, 0, 0)
        self.setFont(body_font(self.font()))
        self._delegate.code_copied.connect(self.code_copied)
        self._delegate.link_activated.connect(self._on_link)
        self._delegate.card_action.connect(self.card_action)
        self.card_action.connect(self._after_card_action)
        self._delegate.version_requested.connect(self.version_requested)
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range_changed)
        math_render.notifier().ready.connect(self._on_math_ready)

    # -- model wiring ------------------------------------------------------------------------------------------

    @property
    def delegate(self) -> ChatDelegate:
        return self._delegate

    def text_column(self) -> tuple[int, int]:
        """(left, width) of the reading column the messages are laid out in (viewport pixels)."""
        return self._delegate.column()

    def is_wide(self) -> bool:
        return self._delegate.wide

    def set_wide(self, wide: bool) -> None:
        """The wide reading column, or the centred one."""
        if wide != self._delegate.wide:
            self._delegate.wide = wide
            self.scheduleDelayedItemsLayout()
            self.viewport().update()

    def setModel(self, model: Any) -> None:  # noqa: N802 (Qt override)
        old = self.model()
        if isinstance(old, ChatModel):
            old.rowsAboutToBeInserted.disconnect(self._before_insert)
            old.rowsInserted.disconnect(self._after_insert)
            old.modelReset.disconnect(self._on_reset)
        super().setModel(model)
        self._delegate.attach_model(model)
        if model is not None:
            model.rowsAboutToBeInserted.connect(self._before_insert)
            model.rowsInserted.connect(self._after_insert)
            model.modelReset.connect(self._on_reset)
        self._on_reset()

    def _on_reset(self) -> None:
        self._stick_to_bottom = True
        self._older_pending = False
        self._anchor = None
        self.scrollToBottom()

    def _before_insert(self, parent: QModelIndex, first: int, last: int) -> None:
        model = self.model()
        # Any insert while the user reads (older page at row 0, a card in the middle): keep their place.
        if not self._stick_to_bottom and model.rowCount() > 0:
            # Remember which row is at the top and where, to put it back after the rows above it appear.
            top = self.indexAt(QPoint(1, 1))
            top = top if top.isValid() else model.index(0, 0)
            self._anchor = (top.data(Roles.Id), self.visualRect(top).top())

    def _after_insert(self, parent: QModelIndex, first: int, last: int) -> None:
        if first == 0:
            self._older_pending = False
        if self._anchor is not None:
            key, y = self._anchor
            self._anchor = None
            self.doItemsLayout()  # heights of the new rows are needed now, not on the next idle pass
            row = cast(ChatModel, self.model()).row_of(key)
            if row >= 0:
                bar = self.verticalScrollBar()
                bar.setValue(bar.value() + self.visualRect(self.model().index(row, 0)).top() - y)
        if self._stick_to_bottom:
            self.scrollToBottom()

    # -- width changes -----------------------------------------------------------------------------------------

    def doItemsLayout(self) -> None:  # noqa: N802 (Qt override)
        """Every row measured again at the viewport's width; a reader not at the bottom keeps the top row where
        it was."""
        self._laid_out_width = self.viewport().width()
        super().doItemsLayout()
        anchor, self._reflow_anchor = self._reflow_anchor, None
        if anchor is not None and not self._stick_to_bottom:
            row = (
                cast(ChatModel, self.model()).row_of(anchor[0]) if isinstance(self.model(), ChatModel) else -1
            )
            if row >= 0:
                bar = self.verticalScrollBar()
                bar.setValue(bar.value() + self.visualRect(self.model().index(row, 0)).top() - anchor[1])

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        # The viewport's resize arrives here too (QAbstractScrollArea hands its viewport's events to the view).
        super().resizeEvent(event)
        self.viewport_resized()

    def viewport_resized(self) -> None:
        """The viewport's width changed (the window's resize, the sidebar folding away in the same resize, the
        scroll bar coming or going): every row is measured again at it.

        QListView lays its rows out again when its height changes, not when only its width does (a flow from top
        to bottom), and a row's height depends on the width it wraps at. Rows kept heights measured for another
        width: after a one-step shrink the viewport sat on the empty end of rows measured half as wide, blank
        until the next large resize."""
        if self.model() is None or self.viewport().width() == self._laid_out_width:
            return
        if not self._stick_to_bottom and self._reflow_anchor is None:
            top = self.indexAt(QPoint(1, 1))
            if top.isValid():
                self._reflow_anchor = (top.data(Roles.Id), self.visualRect(top).top())
        self.scheduleDelayedItemsLayout()

    def updateGeometries(self) -> None:  # noqa: N802 (Qt override)
        super().updateGeometries()
        # Rows are as wide as the viewport: nothing to scroll sideways. (A touchpad's sideways swipe moved the
        # whole transcript off to the left while rows measured for a wider viewport were still laid out.)
        self.horizontalScrollBar().setRange(0, 0)

    # -- cards -------------------------------------------------------------------------------------------------

    def _after_card_action(self, key: str, action: str) -> None:
        if action == "summary":  # the window opens the card once this signal has reached it: look after that
            QTimer.singleShot(0, lambda: self.show_card_start(key))

    def show_card_start(self, key: str) -> None:
        """A card just opened (View summary) shows from its start: it grew downwards, and a view that followed
        the bottom left the summary's heading and first lines above the viewport."""
        model = self.model()
        if not isinstance(model, ChatModel) or (row := model.row_of(key)) < 0:
            return
        if not model.row_at(row).detail.get("expanded"):
            return
        self.doItemsLayout()  # its new height, now
        rect, height = self.visualRect(model.index(row, 0)), self.viewport().height()
        bar = self.verticalScrollBar()
        # Its start at the top (a long summary reads down from it), or all of it when it fits.
        if rect.top() < 0 or rect.height() > height:
            self._stick_to_bottom = False
            bar.setValue(bar.value() + rect.top())
        elif rect.bottom() > height:
            bar.setValue(bar.value() + rect.bottom() - height)

    # -- scrolling ---------------------------------------------------------------------------------------------

    def is_at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - BOTTOM_SLACK

    def _on_scrolled(self, value: int) -> None:
        self._stick_to_bottom = self.is_at_bottom()
        if value <= TOP_TRIGGER:
            self._maybe_request_older()

    def _on_range_changed(self, minimum: int, maximum: int) -> None:
        # Content grew (streaming) or the view resized: follow the bottom only if we were there.
        if self._stick_to_bottom:
            self.verticalScrollBar().setValue(maximum)

    def _maybe_request_older(self) -> None:
        model = self.model()
        if not isinstance(model, ChatModel) or self._older_pending or not model.rowCount():
            return
        if model.release_held():  # rows the model already has: no store round trip
            return
        if model.has_older:
            self._older_pending = True
            self.older_requested.emit()

    def older_request_done(self) -> None:
        """The window calls this if a requested page turned out empty or failed, to allow another request."""
        self._older_pending = False

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        # Shift+wheel, or a sideways swipe, over a code block that runs past the column scrolls that block.
        delta = event.angleDelta()
        shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        sideways = delta.x() if delta.x() else (delta.y() if shift else 0)
        if sideways and (shift or abs(delta.x()) > abs(delta.y())):
            pos = event.position()
            index = self.indexAt(pos.toPoint())
            pixels = -sideways / 120 * CODE_STEP
            if index.isValid() and self._delegate.scroll_code(index, self.visualRect(index), pos, pixels):
                event.accept()
                return
        # A window that fits without a scrollbar never reaches "the top" by scrolling; a wheel-up asks instead.
        if event.angleDelta().y() > 0 and self.verticalScrollBar().value() <= TOP_TRIGGER:
            self._maybe_request_older()
        super().wheelEvent(event)

    def scroll_to_bottom(self) -> None:
        self._stick_to_bottom = True
        self.scrollToBottom()

    # -- empty state -------------------------------------------------------------------------------------------

    def set_placeholder_text(self, text: str) -> None:
        self._placeholder = text
        self.viewport().update()

    def is_showing_placeholder(self) -> bool:
        model = self.model()
        return bool(self._placeholder) and (model is None or model.rowCount() == 0)

    def paintEvent(self, event: Any) -> None:  # noqa: N802
        super().paintEvent(event)
        if self.is_showing_placeholder():
            painter = QPainter(self.viewport())
            painter.setPen(self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
            rect = self.viewport().rect().adjusted(24, 0, -24, 0)
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self._placeholder)
            painter.end()

    # -- links, hover, copy ------------------------------------------------------------------------------------

    def _on_link(self, href: str) -> None:
        self.link_activated.emit(href)
        if self.open_links_externally:
            QDesktopServices.openUrl(QUrl(href))

    def anchor_at(self, pos: QPoint | QPointF) -> str:
        index = self.indexAt(QPointF(pos).toPoint())
        if not index.isValid():
            return ""
        return self._delegate.anchor_at(index, self.visualRect(index), QPointF(pos))

    def _over_version_arrow(self, pos: QPointF) -> bool:
        index = self.indexAt(pos.toPoint())
        rects = self._delegate.version_rects(index, self.visualRect(index)) if index.isValid() else None
        return rects is not None and any(r.contains(pos) for r in rects)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        pos = event.position()
        index = self.indexAt(pos.toPoint())
        if self.anchor_at(pos) or self._over_version_arrow(pos):
            shape = Qt.CursorShape.PointingHandCursor
        elif index.isValid() and self._delegate.bubble_rect(index, self.visualRect(index)).contains(pos):
            shape = Qt.CursorShape.IBeamCursor  # message text can be selected
        else:
            shape = Qt.CursorShape.ArrowCursor
        self.viewport().setCursor(shape)
        super().mouseMoveEvent(event)

    def copy_message(self, index: QModelIndex) -> None:
        if index.isValid():
            QGuiApplication.clipboard().setText(str(index.data(Roles.Text) or ""))

    def build_context_menu(self, pos: QPoint) -> QMenu:
        """The menu for a right-click at ``pos`` (viewport coordinates); separate from exec for tests."""
        menu = QMenu(self)
        index = self.indexAt(pos)
        if index.isValid() and index.data(Roles.Kind) == "compaction":
            # The card's links as menu items, so the keyboard (menu key) reaches them too.
            key = str(index.data(Roles.Id))
            row = cast(ChatModel, self.model()).row_at(index.row())
            for action, label in card_actions(row.detail):
                act = QAction(label, menu)
                act.triggered.connect(lambda _=False, a=action: self.card_action.emit(key, a))
                menu.addAction(act)
            menu.addSeparator()
        if index.isValid():
            copy = QAction(self.tr("Copy message"), menu)
            copy.triggered.connect(lambda: self.copy_message(index))
            menu.addAction(copy)
            blocks = index.data(Roles.CodeBlocks) or ()
            for n in range(len(blocks)):
                act = QAction(self.tr("Copy code block {n}").format(n=n + 1), menu)
                act.triggered.connect(lambda _=False, n=n: self._delegate.copy_code_block(index, n))
                menu.addAction(act)
            href = self.anchor_at(pos)
            if href and not href.startswith("precis-copy:"):
                link = QAction(self.tr("Copy link address"), menu)
                link.triggered.connect(lambda: QGuiApplication.clipboard().setText(href))
                menu.addAction(link)
            key = index.data(Roles.Id)
            if isinstance(key, int) and cast(ChatModel, self.model()).row_at(index.row()).detail.get(
                "continuable"
            ):
                resume = QAction(self.tr("Continue the reply"), menu)
                resume.triggered.connect(lambda: self.card_action.emit(str(key), "continue"))
                menu.addAction(resume)
            if isinstance(key, int) and index.data(Roles.Status) != "streaming":
                menu.addSeparator()
                # Only what the user typed can be edited (a tool-result row has the user role too).
                if index.data(Roles.Role) == "user" and index.data(Roles.Kind) == "message":
                    edit = QAction(self.tr("Edit and resend…"), menu)
                    edit.triggered.connect(lambda: self.edit_requested.emit(key))
                    menu.addAction(edit)
                self._add_version_actions(menu, index, key)
                here = QAction(self.tr("Summarise up to here"), menu)
                here.setToolTip(
                    self.tr("Summarise everything before this message; it and the rest stay verbatim")
                )
                here.triggered.connect(lambda: self.summarise_before.emit(key))
                menu.addAction(here)
                delete = QAction(self.tr("Delete message…"), menu)
                delete.triggered.connect(lambda: self.delete_requested.emit(key))
                menu.addAction(delete)
        return menu

    def _add_version_actions(self, menu: QMenu, index: QModelIndex, key: int) -> None:
        """Regenerate on a reply; Previous/Next version (Alt+Left/Alt+Right) on a message that has versions."""
        if index.data(Roles.Role) == "assistant":
            regenerate = QAction(self.tr("Regenerate"), menu)
            regenerate.triggered.connect(lambda: self.regenerate_requested.emit(key))
            menu.addAction(regenerate)
        versions = cast(ChatModel, self.model()).row_at(index.row()).versions
        if versions is not None:
            for label, delta, live in (
                (self.tr("Previous version"), -1, versions[0] > 1),
                (self.tr("Next version"), 1, versions[0] < versions[1]),
            ):
                act = QAction(f"{label} ({versions[0]}/{versions[1]})", menu)
                act.setShortcut(
                    QKeySequence(Qt.Modifier.ALT | (Qt.Key.Key_Left if delta < 0 else Qt.Key.Key_Right))
                )
                act.setEnabled(live)
                act.triggered.connect(lambda _=False, d=delta: self.version_requested.emit(key, d))
                menu.addAction(act)

    def _step_version(self, delta: int) -> bool:
        """Alt+Left / Alt+Right on the current message: its previous / next version."""
        index = self.currentIndex()
        if not index.isValid():
            return False
        row = cast(ChatModel, self.model()).row_at(index.row())
        if (
            row.versions is None
            or not isinstance(row.key, int)
            or not 1 <= row.versions[0] + delta <= row.versions[1]
        ):
            return False
        self.version_requested.emit(row.key, delta)
        return True

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802
        pos, global_pos = event.pos(), event.globalPos()
        if event.reason() == QContextMenuEvent.Reason.Keyboard and self.currentIndex().isValid():
            # The menu key acts on the current row, wherever the pointer happens to be.
            self.scrollTo(self.currentIndex())
            rect = self.visualRect(self.currentIndex()).intersected(self.viewport().rect())
            pos = QPoint(rect.left() + 24, rect.top() + min(rect.height() // 2, 24))
            global_pos = self.viewport().mapToGlobal(pos)
        menu = self.build_context_menu(pos)
        if menu.actions():
            menu.exec(global_pos)
        menu.deleteLater()

    def focusInEvent(self, event: QFocusEvent) -> None:  # noqa: N802
        # Qt makes row 0 current on a Tab into the list, so the first arrow key jumps to the top of the page
        # (and asks for older history). Start from the newest row on screen instead.
        model = self.model()
        if not self.currentIndex().isValid() and model is not None and model.rowCount():
            index = self.indexAt(QPoint(1, self.viewport().height() - 2))
            if not index.isValid():
                index = model.index(model.rowCount() - 1, 0)
            self.selectionModel().setCurrentIndex(index, QItemSelectionModel.SelectionFlag.NoUpdate)
        super().focusInEvent(event)

    def keyPressEvent(self, event: Any) -> None:  # noqa: N802
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_message(self.currentIndex())
            return
        index = self.currentIndex()
        if (
            event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and index.isValid()
            and index.data(Roles.Kind) == "compaction"
        ):
            self.card_action.emit(str(index.data(Roles.Id)), "summary")  # Enter opens/closes the summary
            return
        if event.key() == Qt.Key.Key_End and not event.modifiers():
            self.scroll_to_bottom()
        if (
            event.modifiers() == Qt.KeyboardModifier.AltModifier
            and event.key() in (Qt.Key.Key_Left, Qt.Key.Key_Right)
            and self._step_version(-1 if event.key() == Qt.Key.Key_Left else 1)
        ):
            return
        super().keyPressEvent(event)

    def _on_math_ready(self) -> None:
        """matplotlib has loaded: formulas shown as their source are rendered again, typeset."""
        render_markdown.cache_clear()
        self._delegate.clear_caches()
        self.scheduleDelayedItemsLayout()
        self.viewport().update()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.PaletteChange, QEvent.Type.StyleChange):
            self._delegate.clear_caches()
            self.scheduleDelayedItemsLayout()
        super().changeEvent(event)
