"""What the window gives back when it opens again: the chat that was open, where each chat was scrolled to, and
how the chat's tool calls ended. Geometry and the splitter are kept by the window itself, in the same file.

All of it lives in the window's own state file (``Paths.window_state``: QSettings, INI, created 0600), never in the
chats' database rows: it is about this window, not about the conversation. Wired into the window by one line.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QPoint, QSettings

from desktop.ui.api import Page

if TYPE_CHECKING:
    from collections.abc import Iterable

    from desktop.ui.window.window_parts import OpenChat

LAST_CHAT_KEY = "chats/last"
PLACES_KEY = (
    "chats/places"  # JSON: {"chat id": [message id at the top of the view, pixels scrolled past its top]}
)
MAX_PLACES = 300  # chats whose place is kept (the most recently left)

Place = tuple[int, int]


class WindowState(QObject):
    def __init__(self, host: QObject, view: OpenChat, qsettings: QSettings) -> None:
        super().__init__(host)
        self.view = view
        self._qsettings = qsettings
        self._shown: int | None = None  # the chat whose rows the view holds now
        self.places: dict[int, Place] = _read_places(qsettings.value(PLACES_KEY, ""))
        # The view's rows are replaced (another chat opens, or this one is read again): where it was is noted
        # first, while the old rows are still laid out.
        view.chat_model.modelAboutToBeReset.connect(self._note_place)
        view.bridge.session_opened.connect(self._on_opened)  # after the window's own handler: rows are in
        host.installEventFilter(self)

    # --- the last chat ------------------------------------------------------------------------------------
    def last_chat(self, listed: Iterable[int]) -> int | None:
        """The chat open when the window closed, if it is still listed."""
        try:
            last = int(str(self._qsettings.value(LAST_CHAT_KEY, "") or 0))
        except ValueError:
            return None
        return last if last and last in set(listed) else None

    # --- scroll places ------------------------------------------------------------------------------------
    def place(self) -> Place | None:
        """Where the view is: the message at its top and how far past that message's top (None: at the bottom,
        where a chat opens anyway)."""
        chat, model = self.view.chat, self.view.chat_model
        if model.rowCount() == 0 or chat.is_at_bottom():
            return None
        index = chat.indexAt(QPoint(1, 1))
        row = index.row() if index.isValid() else 0
        while row < model.rowCount() and not isinstance(model.row_at(row).key, int):
            row += 1  # a card (its key is text) is not kept: the message after it is
        if row >= model.rowCount():
            return None
        key = model.row_at(row).key
        assert isinstance(key, int)
        return key, -chat.visualRect(model.index(row, 0)).top()

    def _note_place(self) -> None:
        if self._shown is None:
            return
        place = self.place()
        self.places.pop(self._shown, None)
        if place is not None:
            self.places[self._shown] = place  # newest last: the oldest go first when there are too many
            while len(self.places) > MAX_PLACES:
                del self.places[next(iter(self.places))]

    def _on_opened(self, page: Page) -> None:
        sid = page.session.id
        switched, self._shown = sid != self._shown, sid
        self._qsettings.setValue(LAST_CHAT_KEY, sid)
        if switched:
            place = self.places.get(sid)
            if place is not None:
                self._scroll_to(*place)
            self.view.bridge.spawn(self._show_tool_outcomes(sid))

    def _scroll_to(self, message_id: int, past: int) -> bool:
        """Put message ``message_id`` ``past`` pixels above the view's top; False when it is not on the page."""
        chat, model = self.view.chat, self.view.chat_model
        while model.row_of(message_id) < 0 and model.release_held():
            pass  # rows of the first page held back until scrolled to
        row = model.row_of(message_id)
        if row < 0:
            return False
        chat.doItemsLayout()
        bar = chat.verticalScrollBar()
        bar.setValue(bar.value() + chat.visualRect(model.index(row, 0)).top() + past)
        return True

    # --- tool calls -------------------------------------------------------------------------------------------
    async def _show_tool_outcomes(self, session_id: int) -> None:
        """A call that finished in an earlier run shows how it ended (✓, error, denied), not nothing."""
        outcomes = await self.view.bridge.tool_outcomes(session_id)
        if outcomes and session_id == self.view.session_id:
            self.view.chat_model.set_tool_states(outcomes)

    # --- closing ----------------------------------------------------------------------------------------------
    def save(self) -> None:
        self._note_place()
        if self._shown is not None:
            self._qsettings.setValue(LAST_CHAT_KEY, self._shown)
        self._qsettings.setValue(PLACES_KEY, json.dumps({str(k): list(v) for k, v in self.places.items()}))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self.parent() and event.type() == QEvent.Type.Close:
            self.save()  # before the window's closeEvent writes its geometry and syncs the file
        return super().eventFilter(watched, event)


def _read_places(value: object) -> dict[int, Place]:
    """The stored places; a damaged value reads as none (the chats open at their bottom, as before)."""
    try:
        data = json.loads(str(value or "{}"))
        return {int(k): (int(v[0]), int(v[1])) for k, v in data.items()} if isinstance(data, dict) else {}
    except (ValueError, TypeError, IndexError, KeyError):
        return {}
