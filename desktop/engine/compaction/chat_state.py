"""One chat's compaction state between its requests, owned by the chat's ``Conversation``.

The compaction policy (``compactor.Compactor``) is made once per provider profile and shared by every chat on it;
whatever belongs to a single chat — the summary prepared in the background, the schedule's last logged reason —
lives here, with the chat, so that one chat's state can never be read, dropped or committed by another. What
outlives the process (the breaker's counts, horizons) is the session's stored state, not this.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field

from desktop.engine.compaction.schedule import Why


class Prepared(Struct):
    """A summary made in the background, not yet committed."""

    boundary: int  # compaction id it was made on top of
    covers_through: int
    summary: str
    stats: dict[str, Any]
    idle: bool = False  # made just before the cache expired: the next (cold) send commits it


class ChatCompaction(Struct):
    """What one chat's compaction remembers between requests (not stored: a restart prepares afresh)."""

    prepared: Prepared | None = None
    told: dict[int, Why] = field(default_factory=dict)  # boundary: the schedule's last reason logged for it

    def prepared_on(self, boundary: int) -> Prepared | None:
        """The prepared summary when it was made on the chat's current boundary."""
        ready = self.prepared
        return ready if ready is not None and ready.boundary == boundary else None
