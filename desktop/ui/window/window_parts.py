"""What the window's helpers (tools, organise, reading, look, the thinking switch) see of the window: the open
chat's widgets and ids, as a Protocol the window implements, and the commands it lends them. No helper imports
the window; each gets this narrow view and the Qt host it parents its own widgets to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from msgspec import Struct

from desktop.ui.bridge import Bridge
from desktop.ui.composer.composer import Composer
from desktop.ui.transcript.chat_model import ChatModel
from desktop.ui.transcript.chat_view import ChatView
from desktop.ui.window.model_picker import ModelPicker
from desktop.ui.window.status_line import StatusLine
from desktop.ui.window.toast import Toast


class OpenChat(Protocol):
    """The open chat as the helpers read it (read-only: the window alone changes which chat is open)."""

    @property
    def bridge(self) -> Bridge: ...
    @property
    def session_id(self) -> int | None: ...
    @property
    def hidden_through(self) -> int: ...  # messages up to this id are under the active summary's card
    @property
    def chat(self) -> ChatView: ...
    @property
    def chat_model(self) -> ChatModel: ...
    @property
    def composer(self) -> Composer: ...
    @property
    def model_picker(self) -> ModelPicker: ...
    @property
    def status(self) -> StatusLine: ...
    @property
    def toast(self) -> Toast: ...
    @property
    def title_label(self) -> StatusLine: ...


class ChatCommands(Struct, frozen=True):
    """What the window does that the `/` commands and ↑ ask it to: its own code runs them."""

    clear_history: Callable[[], None]
    edit_message: Callable[[int], None]
    pick_model: Callable[[], None]
