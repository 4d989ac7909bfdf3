"""The marks every layer of compaction measures against, from the model's facts and the user's settings alone.

The input room (``budget``), where automatic compaction starts (``threshold`` and the ``Rule`` that puts it
there), whether the user chose that place, the hard limit (where a summary is made whether it pays or not), the
prepare mark (where a background summary starts) and the room the pinned user texts may take. Nothing here reads
a session: the cost model, the planner and the policy above all read the same lines.
"""

from __future__ import annotations

from desktop.engine.compaction.threshold import PERCENT, Rule, override_for, rule
from desktop.engine.config.settings import Settings
from desktop.engine.metering.context import reserved_output
from desktop.engine.turn.session import Shared

PIN_FRACTION = 0.1  # pinned instructions take at most this share of the window (and at most the pin budget)
DEFER_RATIO = 0.8  # below this share of the budget an automatic summary that frees under MIN_SAVING waits
DEFAULT_COMPACT_RATIO = Settings().auto_compact_ratio  # a different ratio is the user's choice


class Limits:
    """The lines for one provider profile (its settings and model facts, ``shared``)."""

    def __init__(self, shared: Shared):
        self.shared = shared

    def budget(self, model: str) -> int | None:
        """Input room: the window (up to the model's first price cliff unless the user allows crossing it) less
        the output reserve."""
        window = self.shared.catalog.info(model).prompt_room(self.shared.settings.allow_price_tiers)
        if not window:
            return None
        return max(1, window - reserved_output(self.shared.settings.max_output_tokens, window))

    def threshold(self, model: str) -> int | None:
        found = self.threshold_rule(model)
        return found.at if found is not None else None

    def threshold_rule(self, model: str) -> Rule | None:
        """Where automatic compaction starts and the rule that puts it there (None: the window is unknown)."""
        budget = self.budget(model)
        settings = self.shared.settings
        return rule(budget, settings.model_overrides, model, settings.auto_compact_ratio) if budget else None

    def user_threshold(self, model: str) -> bool:
        """Whether the user chose where compaction starts (a ratio other than the default, or a per-model percent
        or cap): then it starts there, and the schedule does not put it off."""
        settings = self.shared.settings
        own = override_for(settings.model_overrides, model)
        return (
            settings.auto_compact_ratio != DEFAULT_COMPACT_RATIO
            or PERCENT in own
            or own.get("compact_at_tokens") is not None
        )

    def hard_limit(self, model: str) -> int | None:
        """Where a summary is made whether it pays or not: near the end of the input room (at the user's
        threshold when they chose one)."""
        budget = self.budget(model)
        if not budget:
            return None
        if self.user_threshold(model):
            return self.threshold(model)
        return int(DEFER_RATIO * budget)

    def prepare_mark(self, model: str) -> int | None:
        """Where a background summary starts: the prepare ratio, moved down with a lower threshold."""
        budget, threshold = self.budget(model), self.threshold(model)
        if not budget or not threshold:
            return None
        settings = self.shared.settings
        return min(
            int(settings.prepare_ratio * budget),
            int(threshold * settings.prepare_ratio / max(settings.auto_compact_ratio, 0.05)),
        )

    def pin_room(self, model: str) -> int:
        """What the pinned user texts may take beside a summary: the pin budget, within PIN_FRACTION of the
        window."""
        budget, window = self.shared.settings.pin_budget_tokens, self.shared.catalog.info(model).window
        return min(budget, int(window * PIN_FRACTION)) if window else budget
