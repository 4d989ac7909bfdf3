"""What the chat remembers past a summary, from the window: pin a message (or its selected part) from its hover
actions, list and remove pins, preview a compaction before it happens, search earlier in this chat (the recall
search) and open the message a summary's citation names. Wired into the window by one line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMainWindow, QMenu, QWidget

from desktop.ui.api import Pin, SearchHit
from desktop.ui.transcript.chat_model import Roles

if TYPE_CHECKING:
    from desktop.ui.sidebar.organise_ui import OrganiseUi
    from desktop.ui.sidebar.search_dialog import SearchDialog
    from desktop.ui.transcript.compact_preview import CompactPreview
    from desktop.ui.transcript.message_actions import MessageActions
    from desktop.ui.transcript.pins_dialog import PinsDialog
    from desktop.ui.transcript.text_select import TextSelector
    from desktop.ui.window.window_parts import OpenChat


class MemoryUi(QObject):
    def __init__(
        self,
        host: QMainWindow,
        view: OpenChat,
        actions: MessageActions,
        selector: TextSelector,
        organise: OrganiseUi,
        chat_menu: QMenu | None,
    ) -> None:
        super().__init__(host)
        self.host = host
        self.view = view
        self.bridge = view.bridge
        self.actions = actions
        self.selector = selector
        self.organise = organise
        self.pinned: set[int] = set()
        self.pins_dialog: PinsDialog | None = None
        self.preview: CompactPreview | None = None
        self.recall_dialog: SearchDialog | None = None
        actions.pin_requested.connect(self.toggle_pin)
        QWidget.setTabOrder(actions.regenerate_button, actions.pin_button)
        self.bridge.pins_changed.connect(self._on_pins)
        self.bridge.session_opened.connect(lambda page: self.bridge.spawn(self.bridge.pins(page.session.id)))
        view.chat.card_action.connect(self._on_card_action)
        if chat_menu is not None:
            chat_menu.addSeparator()
            for name, text, slot in (
                ("pins", self.tr("&Pinned messages…"), self.show_pins),
                ("recall", self.tr("Search &earlier in this chat…"), self.open_recall),
            ):
                action = chat_menu.addAction(text)
                action.setObjectName(f"{name}_action")
                action.triggered.connect(slot)

    # --- pins -------------------------------------------------------------------------------------------
    def _on_pins(self, session_id: int, pins: list[Pin]) -> None:
        if session_id != self.view.session_id:
            return
        self.pinned = {p.message_id for p in pins}
        self.actions.pinned = set(self.pinned)
        self.view.chat_model.set_pinned(self.pinned)
        index = self.actions.index
        if index.isValid():
            self.actions.show_pinned(index.data(Roles.Id) in self.pinned)
        if self.pins_dialog is not None:
            self.pins_dialog.show_pins(pins)

    def toggle_pin(self, message_id: int) -> None:
        """Pin the message (its selected part when text in it is selected), or unpin a pinned one."""
        sid = self.view.session_id
        if sid is None:
            return
        if message_id in self.pinned:
            self.bridge.spawn(self._unpin(sid, message_id))
            return
        part = self.selector.selection_text() if self.selector.marks.selection_key == message_id else ""
        self.bridge.spawn(self._pin(sid, message_id, part or None))

    async def _pin(self, sid: int, message_id: int, part: str | None) -> None:
        pin = await self.bridge.pin_message(sid, message_id, part)
        if pin is not None:
            self.view.toast.show_message(
                self.tr("Pinned: the selected part stays verbatim beside every summary.")
                if pin.part
                else self.tr("Pinned: it stays verbatim beside every summary."),
                "info",
            )

    async def _unpin(self, sid: int, message_id: int) -> None:
        if await self.bridge.unpin_message(sid, message_id):
            self.view.toast.show_message(self.tr("Unpinned."), "info")

    def show_pins(self) -> PinsDialog:
        if self.pins_dialog is None:
            from desktop.ui.transcript.pins_dialog import PIN_ROLE, PinsDialog

            dialog = PinsDialog(self.host)
            dialog.remove_button.clicked.connect(self._remove_selected)
            dialog.list.itemDoubleClicked.connect(lambda item: self.open_message(int(item.data(PIN_ROLE))))
            self.pins_dialog = dialog
        if self.view.session_id is not None:
            self.bridge.spawn(self.bridge.pins(self.view.session_id))
        self.pins_dialog.show()
        self.pins_dialog.raise_()
        return self.pins_dialog

    def _remove_selected(self) -> None:
        sid, dialog = self.view.session_id, self.pins_dialog
        if sid is not None and dialog is not None and (mid := dialog.selected()) is not None:
            self.bridge.spawn(self._unpin(sid, mid))

    # --- the preview before a compaction ------------------------------------------------------------------
    def preview_compaction(self, before_message: int | None = None) -> None:
        """Compact now / Summarise up to here: the plan first; the compaction runs when the user confirms."""
        if self.view.session_id is not None:
            self.bridge.spawn(self.open_preview(self.view.session_id, before_message))

    async def open_preview(self, sid: int, before_message: int | None = None) -> CompactPreview:
        from desktop.ui.transcript.compact_preview import CompactPreview  # dialogs load when first opened

        plan = await self.bridge.engine.plan_compaction(sid, before_message)
        if self.preview is not None:
            self.preview.close()
        self.preview = dialog = CompactPreview(plan, self.host, up_to_here=before_message is not None)
        dialog.accepted.connect(
            lambda: self.bridge.spawn(
                self.bridge.engine.compact(
                    sid,
                    focus=dialog.focus() or None,
                    before_message=before_message,
                    exclude=dialog.excluded(),
                )
            )
        )
        dialog.finished.connect(lambda _result: self._closed(dialog))
        dialog.open()
        return dialog

    def _closed(self, dialog: CompactPreview) -> None:
        if self.preview is dialog:
            self.preview = None

    # --- earlier in this chat and citations ---------------------------------------------------------------
    def open_recall(self) -> SearchDialog:
        """Search this chat's own history, the summarised part included; a hit opens the message."""
        if self.recall_dialog is None:
            from desktop.ui.sidebar.search_dialog import SearchDialog  # dialogs load when first opened

            dialog = SearchDialog(self.host)
            dialog.setObjectName("recall_dialog")
            dialog.setWindowTitle(self.tr("Search earlier in this chat"))
            dialog.edit.setPlaceholderText(self.tr("Words from this chat, summarised messages included…"))
            dialog.edit.setAccessibleName(self.tr("Search earlier in this chat"))
            dialog.query_changed.connect(lambda q: self.bridge.spawn(self._recall(q)))
            dialog.hit_chosen.connect(lambda hit: self.bridge.spawn(self.organise.jump_to(hit)))
            self.recall_dialog = dialog
        self.recall_dialog.show()
        self.recall_dialog.raise_()
        self.recall_dialog.edit.setFocus()
        self.recall_dialog.edit.selectAll()
        return self.recall_dialog

    async def _recall(self, query: str) -> None:
        sid = self.view.session_id
        hits = (
            await self.bridge.engine.library.recall(sid, query) if query.strip() and sid is not None else []
        )
        if self.recall_dialog is not None:
            self.recall_dialog.show_results(query, hits)

    def _on_card_action(self, _key: str, action: str) -> None:
        if action.startswith("cite:") and action[5:].isdigit():
            self.open_message(int(action[5:]))

    def open_message(self, message_id: int) -> None:
        """Scroll to a message of the open chat (shown with the originals when a summary covers it)."""
        sid = self.view.session_id
        if sid is not None:
            self.bridge.spawn(
                self.organise.jump_to(SearchHit("message", sid, "", message_id, None, "", "", 0.0))
            )
