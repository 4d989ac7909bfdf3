"""Provider profiles: where requests go, how they authenticate, which models a chat uses by default.

A profile is plain settings (saved in settings.json); its key lives in the OS keyring under the profile's own
account (see secrets.py). The presets carry the Anthropic-compatible base URLs the providers document.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal, cast

from desktop.engine.messages import QT_TRANSLATE_NOOP

AuthKind = Literal["x-api-key", "bearer", "none"]
AUTH_KINDS: tuple[AuthKind, ...] = ("x-api-key", "bearer", "none")
AUTH_WORDS: dict[AuthKind, str] = {  # marked for lupdate (context "Engine"): views word them
    "x-api-key": QT_TRANSLATE_NOOP("Engine", "API key (x-api-key header)"),
    "bearer": QT_TRANSLATE_NOOP("Engine", "Bearer token (Authorization header)"),
    "none": QT_TRANSLATE_NOOP("Engine", "No key (a local server)"),
}


@dataclass(slots=True)
class Profile:
    name: str
    base_url: str = ""  # empty: the Anthropic API
    auth: AuthKind = "x-api-key"
    model: str = ""
    small_model: str = ""  # summaries; empty: the chat model
    # Per-model window and price overrides, as in settings.model_overrides: {model: {"window": N, ...}}
    model_overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    long_cache_ttl: bool = True  # some compatible providers reject the cache ttl field

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

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
            out.model_overrides = {str(k): dict(v) for k, v in data["model_overrides"].items() if isinstance(v, dict)}
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
    Profile("OpenRouter", "https://openrouter.ai/api", "bearer", "anthropic/claude-sonnet-4.6",
            "anthropic/claude-haiku-4.5"),
    Profile("DeepSeek", "https://api.deepseek.com/anthropic", "bearer", "deepseek-v4-pro", "deepseek-flash",
            long_cache_ttl=False),
    Profile("Zhipu GLM", "https://api.z.ai/api/anthropic", "bearer", "glm-4.7", "glm-4.5-air",
            long_cache_ttl=False),
    Profile("Moonshot Kimi", "https://api.moonshot.ai/anthropic", "bearer", "kimi-k2.5", "",
            long_cache_ttl=False),
    Profile("MiniMax", "https://api.minimax.io/anthropic", "bearer", "MiniMax-M2", "",
            {"MiniMax-M2": {"window": 204_800}}, long_cache_ttl=False),
    Profile("Ollama", "http://localhost:11434", "none", "qwen3-coder", "", long_cache_ttl=False),
    Profile("llama.cpp server", "http://localhost:8080", "none", "default", "", long_cache_ttl=False),
)


def preset(name: str) -> Profile | None:
    found = next((p for p in PRESETS if p.name == name), None)
    return replace(found, model_overrides={k: dict(v) for k, v in found.model_overrides.items()}) if found else None


def find(profiles: list[Profile], name: str | None) -> Profile | None:
    """The saved profile called ``name``, else the preset of that name."""
    if not name:
        return None
    return next((p for p in profiles if p.name == name), None) or preset(name)
