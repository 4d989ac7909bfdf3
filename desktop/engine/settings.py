"""Where Précis keeps things, and the non-secret settings (the API key never lives here: see secrets.py)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import platformdirs

from desktop.engine import files

DEFAULT_MODEL = "claude-sonnet-4-6"


@dataclass(frozen=True, slots=True)
class Paths:
    config_dir: Path
    data_dir: Path
    cache_dir: Path

    @property
    def settings_file(self) -> Path:
        return self.config_dir / "settings.json"

    @property
    def database(self) -> Path:
        return self.data_dir / "precis.db"

    def spill_dir(self, session_id: int) -> Path:
        """Where huge tool output and pastes of one session are kept outside the requests."""
        return self.data_dir / "spill" / f"session-{session_id}"

    @property
    def window_state(self) -> Path:
        """The window's geometry and splitter (QSettings, INI format)."""
        return self.config_dir / "window.ini"

    def ensure(self) -> Paths:
        """Create the folders readable by their owner only (0700), and tighten ones an older version left open.

        The window-state file is created empty and 0600 here: Qt keeps an existing file's mode when it
        rewrites it, and would otherwise create it world-readable.
        """
        for d in (self.config_dir, self.data_dir, self.cache_dir):
            files.private_dir(d)
        files.touch_private(self.window_state)
        return self

    @classmethod
    def resolve(cls, env: dict[str, str] | None = None) -> Paths:
        """PRECIS_HOME relocates everything (portable mode, tests); otherwise the platform's folders."""
        env = os.environ if env is None else env
        home = env.get("PRECIS_HOME")
        if home:
            root = Path(home).expanduser()
            return cls(root / "config", root / "data", root / "cache")
        return cls(
            Path(platformdirs.user_config_dir("precis", appauthor=False)),
            Path(platformdirs.user_data_dir("precis", appauthor=False)),
            Path(platformdirs.user_cache_dir("precis", appauthor=False)),
        )


@dataclass(slots=True)
class Settings:
    base_url: str = ""
    model: str = DEFAULT_MODEL
    small_model: str = ""
    max_output_tokens: int = 8192
    max_retries: int = 2
    request_timeout: float = 600.0
    # Per-model overrides: {"model-id": {"window": int, "input_price": $/MTok, "output_price": $/MTok,
    #                                   "max_output": int, "media_limit": int}}
    model_overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Compaction policy (fractions of the window unless named _tokens).
    auto_compact_ratio: float = 0.80
    prepare_ratio: float = 0.70
    keep_tool_results: int = 8
    pin_budget_tokens: int = 20_000
    # 1-hour cache TTL on the stable prefix (system, summary): costs 2x to write, survives pauses. Some
    # Anthropic-compatible providers reject the ttl field: turn it off for them.
    long_cache_ttl: bool = True

    @classmethod
    def load(cls, paths: Paths, env: dict[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        data: dict[str, Any] = {}
        try:
            data = json.loads(paths.settings_file.read_text("utf-8"))
        except FileNotFoundError:
            pass
        except (OSError, ValueError):
            data = {}  # a corrupt settings file must not stop the app; defaults apply
        known = {f.name for f in fields(cls)}
        settings = cls(**{k: v for k, v in data.items() if k in known})
        # The ecosystem's environment names win over the file, like the SDK and Claude Code.
        if env.get("ANTHROPIC_BASE_URL"):
            settings.base_url = env["ANTHROPIC_BASE_URL"]
        if env.get("ANTHROPIC_MODEL"):
            settings.model = env["ANTHROPIC_MODEL"]
        if env.get("ANTHROPIC_SMALL_FAST_MODEL"):
            settings.small_model = env["ANTHROPIC_SMALL_FAST_MODEL"]
        return settings

    def save(self, paths: Paths) -> None:
        """Atomically, readable by the owner only (0600)."""
        paths.ensure()
        files.write_private(paths.settings_file, json.dumps(asdict(self), indent=2, sort_keys=True))

    @property
    def summary_model(self) -> str:
        return self.small_model or self.model
