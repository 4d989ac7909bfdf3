"""Where Précis keeps things, and the non-secret settings (the API key never lives here: see secrets.py)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec
import platformdirs
from msgspec import Struct

from desktop.engine import messages as M
from desktop.engine.compaction import threshold
from desktop.engine.config import files
from desktop.engine.config.profiles import Profile, find
from desktop.engine.messages import QT_TRANSLATE_NOOP
from desktop.engine.metering.tokens import V3, V47

DEFAULT_MODEL = "claude-opus-5-5"  # the provider's current recommendation


class Paths(Struct, frozen=True):
    """Where the settings, the data and the caches live."""

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
        """Create the folders readable by their owner only (0700 whatever the umask, the home above them too), and
        tighten ones an older version left open.

        The window-state file is created empty and 0600 here: Qt keeps an existing file's mode when it
        rewrites it, and would otherwise create it world-readable.
        """
        # The spill folder too: what writes a session's spill files makes only the session's own folder in it.
        for d in (self.config_dir, self.data_dir, self.data_dir / "spill", self.cache_dir):
            files.private_dir(d)
        files.touch_private(self.window_state)
        return self

    @classmethod
    def resolve(cls, env: Mapping[str, str] | None = None) -> Paths:
        """PRECIS_HOME relocates everything (portable mode, tests); otherwise the platform's folders."""
        environ: Mapping[str, str] = os.environ if env is None else env
        home = environ.get("PRECIS_HOME")
        if home:
            root = Path(home).expanduser()
            return cls(root / "config", root / "data", root / "cache")
        return cls(
            Path(platformdirs.user_config_dir("precis", appauthor=False)),
            Path(platformdirs.user_data_dir("precis", appauthor=False)),
            Path(platformdirs.user_cache_dir("precis", appauthor=False)),
        )


# Settings fields an environment variable overrides for a run.
ENV_FIELDS = {
    "base_url": "ANTHROPIC_BASE_URL",
    "model": "ANTHROPIC_MODEL",
    "small_model": "ANTHROPIC_SMALL_FAST_MODEL",
}

# Ranges a value from settings.json is clamped to (inclusive).
INT_RANGES: dict[str, tuple[int, int]] = {
    "max_output_tokens": (1, 128_000),
    "max_retries": (0, 10),
    "keep_tool_results": (0, 1_000),
    "pin_budget_tokens": (0, 1_000_000),
    "max_model_calls": (1, 1_000),
    "thinking_budget_tokens": (1_024, 128_000),
}
FLOAT_RANGES: dict[str, tuple[float, float]] = {
    "request_timeout": (1.0, 3_600.0),
    "first_byte_timeout": (1.0, 3_600.0),
    "idle_timeout": (1.0, 3_600.0),
    "auto_compact_ratio": (0.05, 0.99),
    "prepare_ratio": (0.05, 0.99),
}
OVERRIDE_COUNT_RANGES: dict[str, tuple[int, int]] = {
    "window": (1, 10_000_000),
    "max_output": (1, 1_000_000),
    "min_cache_tokens": (1, 1_000_000),
    "media_limit": (1, 100_000),
    threshold.CAP: threshold.CAP_RANGE,  # automatic compaction's absolute cap
}
OVERRIDE_PRICES = ("input_price", "output_price", "input", "output")  # USD per million tokens
MAX_PRICE = 100_000.0
# Compaction hooks (README "Compaction hooks"): a command line run before each compaction and one after it ("":
# none), each with a time limit in seconds; allow_unsandboxed lets them run where bubblewrap cannot start.
HOOK_COMMANDS = ("pre", "post")
HOOK_TIMEOUTS: dict[str, tuple[float, float]] = {"pre_timeout": (1.0, 600.0), "post_timeout": (1.0, 600.0)}
HOOK_DEFAULTS: dict[str, Any] = {
    "pre": "",
    "post": "",
    "pre_timeout": 10.0,
    "post_timeout": 30.0,
    "allow_unsandboxed": False,
}


@dataclass(slots=True)
class Settings:
    """The user's settings as read from settings.json (defaults for what is missing)."""

    base_url: str = ""
    model: str = DEFAULT_MODEL
    small_model: str = ""
    max_output_tokens: int = 8192
    max_retries: int = 2
    request_timeout: float = 600.0
    # A stream either progresses or ends in one sentence (seconds): the reply must start (its first event, past
    # any retries) within first_byte_timeout of the request, and then never go idle_timeout without an event
    # other than a keep-alive ping. Generous, so a slow model starting on a long prompt is not cut off.
    first_byte_timeout: float = 120.0
    idle_timeout: float = 90.0
    # Per-model overrides: {"model-id": {"window": int, "input_price": $/MTok, "output_price": $/MTok,
    #                                   "max_output": int, "media_limit": int}}
    model_overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Compaction policy (fractions of the window unless named _tokens). Summaries start at half the input room:
    # every token carried is read again by every later request, and the replay benchmark shows a smaller
    # context after earlier summaries costs less in total than carrying more until 80 %.
    auto_compact_ratio: float = 0.50
    prepare_ratio: float = 0.40
    keep_tool_results: int = 10  # the newest tool results clearing leaves whole: the ten a summary keeps
    pin_budget_tokens: int = 20_000
    # 1-hour cache TTL on the stable prefix (system, summary): costs 2x to write, survives pauses. Some
    # Anthropic-compatible providers reject the ttl field: turn it off for them.
    long_cache_ttl: bool = True
    # Price cliffs (a prompt over N tokens costs more on every token, e.g. Haiku 5.5 at 100K): off, chats
    # compact before crossing one; on, a model's whole window is used.
    allow_price_tiers: bool = False
    # Tools: model calls one turn may make; read-only tools run without asking only when this is on.
    max_model_calls: int = 50
    auto_approve_read_only: bool = False
    # Every command of the run tool has the network (off: only loopback, and the host's abstract sockets closed,
    # unless a command asks for it and the user allows that one). Read when Précis starts.
    command_network: bool = False
    # Default instructions for every chat (a chat adds its own): sent in the system prompt, inside the cache.
    instructions: str = ""
    # Extended thinking, when a chat turns it on: tokens the model may think (fitted under max_output_tokens).
    thinking_budget_tokens: int = 4_096
    # The provider profile in use ("" : the fields above as they are) and the profiles the user saved.
    profile: str = ""
    profiles: list[Profile] = field(default_factory=list)
    # The window's and the CLI's language: "" follows the system, "en" English, "zh_CN" Simplified Chinese.
    language: str = ""
    # Commands run before and after a compaction, sandboxed like the run tool's (HOOK_DEFAULTS: the keys).
    compaction_hooks: dict[str, Any] = field(default_factory=lambda: dict(HOOK_DEFAULTS))
    # What Settings.load had to fix or ignore in settings.json, one line each (never saved).
    problems: list[str] = field(default_factory=list, compare=False, repr=False)
    # Fields an ANTHROPIC_* environment value overrides for this run: field -> the value without it. The
    # environment is a runtime override: save() writes these values, never the environment's.
    env_overrides: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    # The overrides of no profile, before with_profile merged a profile's own into model_overrides: what save()
    # writes, and what another profile starts from (None: model_overrides has no profile's merged in).
    base_overrides: dict[str, dict[str, Any]] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def load(cls, paths: Paths, env: Mapping[str, str] | None = None) -> Settings:
        """The settings file's values, each checked: never raises.

        A value of the wrong type falls back to its default, a number out of range is clamped, and each fix
        is described in ``problems``; a missing file gives the defaults with no problem.
        """
        environ: Mapping[str, str] = os.environ if env is None else env
        problems: list[str] = []
        data: Any = {}
        try:
            # A pipe or a device is refused from its descriptor, a BOM accepted (editors write one).
            data = json.loads(files.decode_text(files.read_regular(paths.settings_file)))
        except FileNotFoundError:
            pass
        except (files.NotRegularFile, files.FileTooLarge) as exc:
            problems.append(M.say(M.SETTINGS_UNREADABLE, error=str(exc)))
            data = {}
        except OSError as exc:  # unreadable (a failing disk, no permission): defaults apply, said in words
            problems.append(M.say(M.SETTINGS_UNREADABLE, error=files.os_words(exc)))
            data = {}
        except (ValueError, RecursionError) as exc:  # not JSON: defaults apply
            problems.append(M.say(M.SETTINGS_UNREADABLE, error=type(exc).__name__))
            data = {}
        if not isinstance(data, dict):
            problems.append(M.say(M.SETTINGS_NOT_OBJECT, kind=_kind(data)))
            data = {}
        settings = cls(**_validated(data, problems))
        settings.problems = problems
        active = find(settings.profiles, settings.profile)
        if active is not None:  # the profile's URL, models and overrides are the ones in use
            settings = settings.with_profile(active)
            settings.problems = problems
        return settings.with_env(environ)

    def with_profile(self, profile: Profile) -> Settings:
        """These settings as ``profile`` uses them (its URL, models, overrides and cache choice)."""
        base = self.model_overrides if self.base_overrides is None else self.base_overrides
        overrides = {k: dict(v) for k, v in base.items()}
        for model, over in profile.model_overrides.items():
            overrides[model] = {**overrides.get(model, {}), **over}
        out = replace(
            self,
            base_url=profile.base_url,
            model=profile.model or self.model,
            small_model=profile.small_model,
            long_cache_ttl=profile.long_cache_ttl,
            model_overrides=overrides,
            profile=profile.name,
            base_overrides={k: dict(v) for k, v in base.items()},
        )
        out.env_overrides = {}
        return out

    def with_env(self, env: Mapping[str, str] | None = None) -> Settings:
        """The ecosystem's environment names win over the file and the profile, like the SDK and Claude Code,
        for this run only (remembered in env_overrides so that save() never writes them)."""
        environ: Mapping[str, str] = os.environ if env is None else env
        for name, var in ENV_FIELDS.items():
            value = environ.get(var)
            if value and getattr(self, name) != value:
                self.env_overrides.setdefault(name, getattr(self, name))
                setattr(self, name, value)
        return self

    def save(self, paths: Paths) -> None:
        """Atomically, readable by the owner only (0600); environment overrides are not saved."""
        paths.ensure()
        data = msgspec.to_builtins({name: getattr(self, name) for name in KNOWN_FIELDS})
        base = data.pop("base_overrides", None)
        if base is not None:  # a profile's overrides stay the profile's: never saved as everyone's
            data["model_overrides"] = base
        data.update(self.env_overrides)
        files.write_private(paths.settings_file, json.dumps(data, indent=2, sort_keys=True))

    @property
    def summary_model(self) -> str:
        return self.small_model or self.model


# --- checking settings.json ------------------------------------------------------------------------------
_DEFAULTS = Settings()


def _show(value: Any) -> str:
    """A short one-line rendering of a JSON value for a problem message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
        if not _unicode(text):  # a lone surrogate shows as its escape
            text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _kind(value: Any) -> str:
    if value is None:
        return M.say(QT_TRANSLATE_NOOP("Engine", "null"))
    if isinstance(value, bool):
        return M.say(QT_TRANSLATE_NOOP("Engine", "a boolean"))
    if isinstance(value, int | float):
        return M.say(QT_TRANSLATE_NOOP("Engine", "a number"))
    if isinstance(value, str):
        return M.say(QT_TRANSLATE_NOOP("Engine", "a string"))
    if isinstance(value, list):
        return M.say(QT_TRANSLATE_NOOP("Engine", "a list"))
    return (
        M.say(QT_TRANSLATE_NOOP("Engine", "an object")) if isinstance(value, dict) else type(value).__name__
    )


def _number(value: Any) -> float | None:
    """A JSON number, or a string holding one, as a float (may be infinite); None for anything else or NaN."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if isinstance(value, float) and not math.isnan(value):
        return value
    return None


def _clamp(name: str, value: Any, lo: float, hi: float, problems: list[str]) -> float | None:
    n = _number(value)
    if n is None:
        return None
    if n < lo or n > hi:
        fixed = lo if n < lo else hi
        problems.append(
            M.say(
                M.OUT_OF_RANGE, name=name, value=_show(value), lo=_show(lo), hi=_show(hi), fixed=_show(fixed)
            )
        )
        return fixed
    return n


def _int(name: str, value: Any, lo: int, hi: int, default: int, problems: list[str]) -> int:
    n = _clamp(name, value, lo, hi, problems)
    if n is None:
        problems.append(M.say(M.NOT_A_WHOLE_NUMBER, name=name, value=_show(value), default=str(default)))
        return default
    if n != math.floor(n):
        problems.append(M.say(M.ROUNDED, name=name, value=_show(value), fixed=str(round(n))))
    return int(round(n))


def _float(name: str, value: Any, lo: float, hi: float, default: float, problems: list[str]) -> float:
    n = _clamp(name, value, lo, hi, problems)
    if n is None:
        problems.append(M.say(M.NOT_A_NUMBER, name=name, value=_show(value), default=str(default)))
        return default
    return float(n)


def _validated(data: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    """The known fields of a settings.json object, each of the right type and range (unknown keys are ignored)."""
    out: dict[str, Any] = {}
    for name in ("base_url", "model", "small_model"):
        if name not in data:
            continue
        value = data[name]
        if not isinstance(value, str) or (name == "model" and not value.strip()) or not _plain(value):
            problems.append(
                M.say(M.NOT_A_MODEL_ID if name == "model" else M.NOT_TEXT, name=name, value=_show(value))
            )
            continue
        out[name] = value
    for name, (lo, hi) in INT_RANGES.items():
        if name in data:
            out[name] = _int(name, data[name], lo, hi, getattr(_DEFAULTS, name), problems)
    for name, (flo, fhi) in FLOAT_RANGES.items():
        if name in data:
            out[name] = _float(name, data[name], flo, fhi, getattr(_DEFAULTS, name), problems)
    for name in ("long_cache_ttl", "auto_approve_read_only", "command_network", "allow_price_tiers"):
        if name not in data:
            continue
        value = data[name]
        if isinstance(value, bool):
            out[name] = value
        elif type(value) is int and value in (0, 1):
            out[name] = bool(value)
        else:
            problems.append(M.say(M.NOT_A_BOOLEAN, name=name, value=_show(value)))
    if "instructions" in data:
        if isinstance(data["instructions"], str) and _unicode(data["instructions"]):
            out["instructions"] = data["instructions"]
        else:
            problems.append(M.say(M.NOT_TEXT, name="instructions", value=_show(data["instructions"])))
    if "model_overrides" in data:
        out["model_overrides"] = _overrides(data["model_overrides"], problems)
    if "language" in data:
        if data["language"] in ("", "en", "zh_CN"):
            out["language"] = data["language"]
        else:
            problems.append(M.say(M.NOT_A_LANGUAGE, value=_show(data["language"])))
    if "profiles" in data:
        out["profiles"] = _profiles(data["profiles"], problems)
    if "compaction_hooks" in data:
        out["compaction_hooks"] = _hooks(data["compaction_hooks"], problems)
    if "profile" in data:
        value = data["profile"]
        if not isinstance(value, str) or not _plain(value):
            problems.append(f"profile: expected the name of a profile, got {_show(value)}; ignored")
        elif value.strip() and find(out.get("profiles", []), value.strip()) is None:
            problems.append(f"profile: no profile is called {_show(value.strip())}; ignored")
        else:
            out["profile"] = value.strip()
    for key in data:
        if key not in KNOWN_FIELDS:
            problems.append(f"{_show(key)}: not a setting Précis knows; ignored")
    return out


KNOWN_FIELDS = frozenset(f for f in Settings.__dataclass_fields__ if f not in ("problems", "env_overrides"))


def _unicode(text: str) -> bool:
    """True when ``text`` can be stored and sent (no lone surrogate from a ``\\udXXX`` escape)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _plain(text: str) -> bool:
    """A name, id or URL: valid Unicode without control characters."""
    return _unicode(text) and not any(ord(ch) < 32 or ord(ch) == 127 for ch in text)


def _boolean(name: str, value: Any, problems: list[str]) -> bool | None:
    """A JSON boolean (0 and 1 read as one); None, with the problem said, for anything else."""
    if isinstance(value, bool):
        return value
    if type(value) is int and value in (0, 1):
        return bool(value)
    problems.append(M.say(M.NOT_A_BOOLEAN, name=name, value=_show(value)))
    return None


def _hooks(value: Any, problems: list[str]) -> dict[str, Any]:
    """``compaction_hooks``: every key of HOOK_DEFAULTS, each checked (a wrong one is named and left at its
    default: no hook runs rather than a half-read one); null is no hooks."""
    out = dict(HOOK_DEFAULTS)
    if value is None:
        return out
    if not isinstance(value, dict):
        problems.append(f"compaction_hooks: expected an object, got {_kind(value)}; no hooks")
        return out
    for key, item in value.items():
        where = f"compaction_hooks.{key}"
        if key in HOOK_COMMANDS:
            if item is None:
                continue
            if isinstance(item, str) and _unicode(item) and "\0" not in item:
                out[key] = item.strip()
            else:
                problems.append(M.say(M.NOT_TEXT, name=where, value=_show(item)))
        elif key in HOOK_TIMEOUTS:
            lo, hi = HOOK_TIMEOUTS[key]
            out[key] = _float(where, item, lo, hi, HOOK_DEFAULTS[key], problems)
        elif key == "allow_unsandboxed":
            flag = _boolean(where, item, problems)
            if flag is not None:
                out[key] = flag
        else:
            problems.append(M.say(M.UNKNOWN_KEY, where="compaction_hooks", key=_show(key)))
    return out


def _profiles(value: Any, problems: list[str]) -> list[Profile]:
    """The saved profiles: a list of objects with distinct names; anything else is named and ignored."""
    if not isinstance(value, list):
        problems.append(f"profiles: expected a list, got {_kind(value)}; ignored")
        return []
    out: list[Profile] = []
    for entry in value:
        profile = (
            Profile.from_json(entry)
            if not isinstance(entry, dict) or _plain(str(entry.get("name")))
            else None
        )
        if profile is None:
            problems.append(M.say(M.PROFILE_WITHOUT_NAME))
            continue
        if any(p.name == profile.name for p in out):
            problems.append(
                f"profiles: a second profile called {_show(profile.name)}; ignored (the first is used)"
            )
            continue
        profile.model_overrides = _overrides(profile.model_overrides, problems)
        out.append(profile)
    return out


def _overrides(value: Any, problems: list[str]) -> dict[str, dict[str, Any]]:
    """``{model: {...}}`` with known keys of the right type; ``{model: N}`` is read as ``{model: {"window": N}}``."""
    if not isinstance(value, dict):
        if value is not None:
            problems.append(M.say(M.OVERRIDES_NOT_OBJECT, kind=_kind(value)))
        return {}
    out: dict[str, dict[str, Any]] = {}
    for model, over in value.items():
        where = f"model_overrides[{_show(model)}]"
        if not isinstance(model, str) or not model.strip():
            problems.append(M.say(M.OVERRIDE_EMPTY_MODEL))
            continue
        n = _number(over)
        if n is not None and n > 0:
            over = {"window": over}
        if not isinstance(over, dict):
            problems.append(M.say(M.OVERRIDE_NOT_OBJECT, where=where, value=_show(over)))
            continue
        clean: dict[str, Any] = {}
        for key, item in over.items():
            if key in OVERRIDE_COUNT_RANGES:
                lo, hi = OVERRIDE_COUNT_RANGES[key]
                count = _number(item)
                if count == 0:  # a cleared field means no override: said, since the file asked for one
                    problems.append(
                        f"{where}.{key}: 0 is no limit Précis can use; ignored (the model's own applies)"
                    )
                    continue
                if count is None or count < 0:
                    problems.append(M.say(M.NOT_A_COUNT, where=f"{where}.{key}", value=_show(item)))
                    continue
                fixed = _clamp(f"{where}.{key}", max(count, lo), lo, hi, problems)
                clean[key] = int(round(lo if fixed is None else fixed))
            elif key in OVERRIDE_PRICES:
                price = _number(item)
                if price is None or price < 0:
                    problems.append(M.say(M.NOT_A_PRICE, where=f"{where}.{key}", value=_show(item)))
                    continue
                fixed = _clamp(f"{where}.{key}", price, 0.0, MAX_PRICE, problems)
                clean[key] = 0.0 if fixed is None else float(fixed)
            elif key == threshold.PERCENT:
                percent = _number(item)
                if percent is None or percent <= 0:
                    problems.append(f"{where}.{key}: expected a percent, got {_show(item)}; ignored")
                    continue
                clean[key] = float(
                    _clamp(f"{where}.{key}", percent, *threshold.PERCENT_RANGE, problems) or percent
                )
            elif key == "family":
                if item in (V3, V47):
                    clean[key] = item
                else:
                    problems.append(
                        M.say(
                            M.NOT_A_FAMILY,
                            where=f"{where}.family",
                            one=repr(V3),
                            other=repr(V47),
                            value=_show(item),
                        )
                    )
            else:
                problems.append(M.say(M.UNKNOWN_KEY, where=where, key=_show(key)))
        if clean:
            out[model] = clean
    return out
