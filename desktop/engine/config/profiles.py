"""Provider profiles: where requests go, how they authenticate, which models a chat uses by default.

A profile is plain settings (saved in settings.json); its key lives in the OS keyring under the profile's own
account (see secrets.py). The presets carry the Anthropic-compatible base URLs the providers document.
"""

from __future__ import annotations

from typing import Any, Literal, cast

import msgspec
from msgspec import Struct, field
from msgspec.structs import replace

from desktop.engine import messages as M
from desktop.engine.messages import QT_TRANSLATE_NOOP

AuthKind = Literal["x-api-key", "bearer", "none"]
AUTH_KINDS: tuple[AuthKind, ...] = ("x-api-key", "bearer", "none")
AUTH_WORDS: dict[AuthKind, str] = {  # marked for lupdate (context "Engine"): views word them
    "x-api-key": QT_TRANSLATE_NOOP("Engine", "API key (x-api-key header)"),
    "bearer": QT_TRANSLATE_NOOP("Engine", "Bearer token (Authorization header)"),
    "none": QT_TRANSLATE_NOOP("Engine", "No key (a local server)"),
}


class Profile(Struct):
    """A named provider set-up: endpoint, authentication, models and per-model overrides."""

    name: str
    base_url: str = ""  # empty: the Anthropic API
    auth: AuthKind = "x-api-key"
    model: str = ""
    small_model: str = ""  # summaries; empty: the chat model
    # Per-model window and price overrides, as in settings.model_overrides: {model: {"window": N, ...}}
    model_overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    long_cache_ttl: bool = True  # some compatible providers reject the cache ttl field

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = msgspec.to_builtins(self)  # a Struct's builtins are a dict
        return data

    @classmethod
    def from_json(cls, data: Any) -> Profile | None:
        """A profile from settings.json, or None when it has no usable name (fields of the wrong type fall
        back to their defaults)."""
        if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"].strip():
            return None
        out = cls(data["name"].strip())
        for name in ("base_url", "model", "small_model"):
            if isinstance(data.get(name), str):
                setattr(out, name, data[name].strip())
        if data.get("auth") in AUTH_KINDS:
            out.auth = cast(AuthKind, data["auth"])
        if isinstance(data.get("long_cache_ttl"), bool):
            out.long_cache_ttl = data["long_cache_ttl"]
        if isinstance(data.get("model_overrides"), dict):
            out.model_overrides = {
                str(k): dict(v) for k, v in data["model_overrides"].items() if isinstance(v, dict)
            }
        return out

    @property
    def keyring_account(self) -> str:
        """Where the profile's key is kept (the Anthropic profile keeps the account older versions used)."""
        return "anthropic-api-key" if self.name == ANTHROPIC else f"profile:{self.name}"


ANTHROPIC = "Anthropic"

# Base URLs from the providers' documentation of their Anthropic-compatible endpoints (the SDK appends
# /v1/messages). Models are the providers' own names; the model picker lists what the provider serves.
PRESETS: tuple[Profile, ...] = (
    Profile(ANTHROPIC, "", "x-api-key", "claude-opus-5-5", "claude-haiku-4-5"),
    Profile(
        "OpenRouter",
        "https://openrouter.ai/api",
        "bearer",
        "anthropic/claude-sonnet-4.6",
        "anthropic/claude-haiku-4.5",
    ),
    Profile(
        "DeepSeek",
        "https://api.deepseek.com/anthropic",
        "bearer",
        "deepseek-v4-pro",
        "deepseek-flash",
        long_cache_ttl=False,
    ),
    Profile(
        "Zhipu GLM",
        "https://api.z.ai/api/anthropic",
        "bearer",
        "glm-4.7",
        "glm-4.5-air",
        long_cache_ttl=False,
    ),
    Profile(
        "Moonshot Kimi", "https://api.moonshot.ai/anthropic", "bearer", "kimi-k2.5", "", long_cache_ttl=False
    ),
    Profile(
        "MiniMax",
        "https://api.minimax.io/anthropic",
        "bearer",
        "MiniMax-M2",
        "",
        {"MiniMax-M2": {"window": 204_800}},
        long_cache_ttl=False,
    ),
    Profile("Ollama", "http://localhost:11434", "none", "qwen3-coder", "", long_cache_ttl=False),
    Profile("llama.cpp server", "http://localhost:8080", "none", "default", "", long_cache_ttl=False),
)


# "Custom": any other Anthropic-compatible endpoint; the user fills in its URL and model.
CUSTOM = "Custom"
CUSTOM_PRESET = Profile(CUSTOM, "", "bearer", "", "", long_cache_ttl=False)


def preset(name: str) -> Profile | None:
    found = next((p for p in (*PRESETS, CUSTOM_PRESET) if p.name == name), None)
    return (
        replace(found, model_overrides={k: dict(v) for k, v in found.model_overrides.items()})
        if found
        else None
    )


def find(profiles: list[Profile], name: str | None) -> Profile | None:
    """The saved profile called ``name``, else the preset of that name."""
    if not name:
        return None
    return next((p for p in profiles if p.name == name), None) or preset(name)


# --- editing the list of profiles (Settings: Add, Duplicate, Delete, rename) -----------------------------------
NAME_EMPTY = QT_TRANSLATE_NOOP("Engine", "A profile needs a name.")
NAME_TAKEN = QT_TRANSLATE_NOOP("Engine", "Two profiles are called “{name}”: give each its own name.")
LAST_PROFILE = QT_TRANSLATE_NOOP(
    "Engine", "Précis needs one profile to send with: add another before deleting this one."
)


class Draft(Struct):
    """A profile as Settings edits it: ``origin`` is the saved name it started as (None: added in this edit), and
    ``key_from`` the saved profile whose key it copies (None: no key copied)."""

    profile: Profile
    origin: str | None = None
    key_from: str | None = None


class ProfileEdits(Struct, frozen=True):
    """What saving the edited list does beyond settings.json: keys and chats follow renames, keys are copied
    when the user asked, and a deleted profile's key is removed and its chats move to the profile in use."""

    renamed: dict[str, str] = field(default_factory=dict)  # old name -> new name
    deleted: tuple[str, ...] = ()
    copy_keys: dict[str, str] = field(
        default_factory=dict
    )  # new name -> the saved profile whose key it takes

    def __bool__(self) -> bool:
        return bool(self.renamed or self.deleted or self.copy_keys)


def drafts(saved: list[Profile], current: Profile) -> list[Draft]:
    """The list Settings starts from: the saved profiles, else the one in use (not saved yet: saving keeps it)."""
    if saved:
        return [Draft(copy(p), p.name) for p in saved]
    return [Draft(copy(current))]


def copy(profile: Profile) -> Profile:
    return replace(profile, model_overrides={k: dict(v) for k, v in profile.model_overrides.items()})


def unique_name(name: str, taken: list[str]) -> str:
    """``name``, or ``name 2``, ``name 3``… (the first one no profile uses)."""
    if name not in taken:
        return name
    n = 2
    while f"{name} {n}" in taken:
        n += 1
    return f"{name} {n}"


def added(items: list[Draft], preset_name: str) -> Draft:
    """A new profile from a preset (or Custom), under a name no other profile uses; appended to ``items``."""
    base = preset(preset_name) or copy(CUSTOM_PRESET)
    draft = Draft(replace(base, name=unique_name(base.name, [d.profile.name for d in items])))
    items.append(draft)
    return draft


def duplicated(items: list[Draft], index: int, with_key: bool) -> Draft:
    """A copy of ``items[index]`` after it, called "… copy"; its key only when the user asked (from the saved
    profile the original started as: an unsaved profile has no key to copy yet)."""
    source = items[index]
    name = unique_name(f"{source.profile.name} copy", [d.profile.name for d in items])
    key_from = (source.origin or source.key_from) if with_key else None
    draft = Draft(replace(copy(source.profile), name=name), None, key_from)
    items.insert(index + 1, draft)
    return draft


def removal_problem(items: list[Draft]) -> str | None:
    """Why the selected profile cannot be deleted (None: it can)."""
    return M.say(LAST_PROFILE) if len(items) <= 1 else None


def successor(items: list[Draft], index: int, active: str) -> int:
    """Which profile is shown (and in use once saved) after ``items[index]`` is deleted, as an index into the
    list without it: the active one when it stays, else the one that took the deleted one's place. Chats of
    the deleted profile move to it."""
    rest = [d for i, d in enumerate(items) if i != index]
    return next(
        (i for i, d in enumerate(rest) if d.origin == active or d.profile.name == active),
        min(index, len(rest) - 1),
    )


def name_problem(items: list[Draft]) -> str | None:
    """The first problem with the names (empty, or the same name twice), in one sentence; None when they are
    fine."""
    seen: set[str] = set()
    for d in items:
        name = d.profile.name.strip()
        if not name:
            return M.say(NAME_EMPTY)
        if name in seen:
            return M.say(NAME_TAKEN, name=name)
        seen.add(name)
    return None


def edits(saved: list[Profile], items: list[Draft]) -> ProfileEdits:
    """What saving ``items`` over the ``saved`` profiles changes besides the list itself."""
    kept = {d.origin for d in items if d.origin is not None}
    renamed = {d.origin: d.profile.name for d in items if d.origin is not None and d.origin != d.profile.name}
    deleted = tuple(p.name for p in saved if p.name not in kept)
    copy_keys = {d.profile.name: d.key_from for d in items if d.key_from is not None}
    return ProfileEdits(renamed, deleted, copy_keys)
