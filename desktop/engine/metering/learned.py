"""Windows learned from prompt-too-long errors, per provider profile: a model name served by two profiles (a
local server and the API) has a window on each, and what one server's error taught says nothing of the other."""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field

from desktop.engine.config.catalog import ModelCatalog

LEARNED_KEY = "profile_learned_windows"  # {profile: {"learned": {model: window}, "reported": [model, ...]}}


class LearnedWindows(Struct):
    """Context windows learned from providers' answers, per profile and model."""

    learned: dict[str, dict[str, int]] = field(default_factory=dict)
    reported: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def read(
        cls, stored: Any, active: str, legacy_learned: Any = None, legacy_reported: Any = None
    ) -> LearnedWindows:
        """The stored value; before it existed, one set of windows for every profile was kept: it is read as
        the active profile's (the profile most chats that learned it ran on)."""
        out = cls()
        if isinstance(stored, dict):
            for profile, entry in stored.items():
                if isinstance(entry, dict):
                    learned, reported = entry.get("learned"), entry.get("reported")
                    out.learned[str(profile)] = dict(learned) if isinstance(learned, dict) else {}
                    out.reported[str(profile)] = (
                        [str(m) for m in reported] if isinstance(reported, list) else []
                    )
        elif isinstance(legacy_learned, dict):
            out.learned[active] = dict(legacy_learned)
            out.reported[active] = (
                [str(m) for m in legacy_reported] if isinstance(legacy_reported, list) else []
            )
        return out

    def of(self, profile: str) -> tuple[dict[str, int], list[str]]:
        """The profile's (learned windows, models whose learned window its provider's API reported)."""
        return dict(self.learned.get(profile, {})), list(self.reported.get(profile, []))

    def keep(self, profile: str, catalog: ModelCatalog) -> None:
        self.learned[profile], self.reported[profile] = catalog.learned(), catalog.reported()

    def to_json(self) -> dict[str, Any]:
        return {p: {"learned": w, "reported": self.reported.get(p, [])} for p, w in self.learned.items()}
