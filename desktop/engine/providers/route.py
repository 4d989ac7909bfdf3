"""The provider profile a chat's requests go to, as its chats use it.

A chat keeps the profile it was made on (its session's ``profile``; none: the active one). Every request of the
chat -- turns, summaries of every kind, token counts, window look-ups -- goes through its ``Route``: that
profile's settings, model facts (its own window and price overrides, what its provider reported), client and
compaction policy. Saving or switching the active profile makes new routes for the chats, never moves a chat.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from msgspec import Struct, field

from desktop.engine.config.secrets import Credentials
from desktop.engine.config.settings import Settings
from desktop.engine.providers.provider import Provider
from desktop.engine.turn.session import Shared

if TYPE_CHECKING:
    from desktop.engine.compaction.compactor import Compactor

NO_PROFILE = ""  # the route of chats that name no profile while none is active


class Route(Struct):
    """A provider profile as its chats use it. The client is made on the first request."""

    key: str  # the profile's name, or NO_PROFILE
    shared: Shared  # the profile's settings and model facts, as every view and policy of its chats reads them
    credentials: Callable[[], Credentials]  # the profile's own key (read when the client is made)
    connect: Callable[[Settings, Credentials], Provider]
    clock: Callable[[], float]  # the engine's clock (replaced by tests and the replay bench)
    windows_asked: set[str] = field(default_factory=set)  # models whose window this provider was asked for
    _provider: Provider | None = None
    _compactor: Compactor | None = None

    @property
    def compactor(self) -> Compactor:
        """The policy, summarising with this route's client only. Made on first use: its module and the
        compaction building blocks load with a chat's first measurement, not before the window's first paint."""
        if self._compactor is None:
            from desktop.engine.compaction.compactor import Compactor

            self._compactor = Compactor(self.shared, lambda: self.provider)
            self._compactor.clock = lambda: self.clock()
        return self._compactor

    @property
    def settings(self) -> Settings:
        return self.shared.settings

    @property
    def provider(self) -> Provider:
        if self._provider is None:
            self._provider = self.connect(self.shared.settings, self.credentials())
        return self._provider

    async def connected(self, credentials: Credentials | None = None) -> Provider:
        """The client, made on first use with the key read in a worker thread (unless the caller has just read it):
        the keyring stack and a desktop's secret service (which may ask to be unlocked) never hold the loop, the
        window's UI thread."""
        if self._provider is None:
            if credentials is None:
                credentials = await asyncio.to_thread(self.credentials)
            if self._provider is None:  # another request of the chat made it meanwhile
                self._provider = self.connect(self.shared.settings, credentials)
        return self._provider

    @property
    def made(self) -> Provider | None:
        """The client, when one was made (to close it)."""
        return self._provider
