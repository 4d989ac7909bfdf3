"""Test connection: one tiny request to a profile's provider, and what it says in plain words."""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop.engine.catalog import ModelCatalog
from desktop.engine.errors import classify
from desktop.engine.profiles import AUTH_WORDS, Profile
from desktop.engine.provider import Provider
from desktop.engine.secrets import Credentials
from desktop.engine.settings import Settings

PROBE_TOKENS = 8  # the tiny request's output limit: enough for a word, costs next to nothing


@dataclass(slots=True)
class ProbeResult:
    ok: bool
    lines: list[str] = field(default_factory=list)  # one finding each, for the dialog
    models: list[str] = field(default_factory=list)  # what GET /v1/models listed
    window: int | None = None

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


async def probe(settings: Settings, profile: Profile, credentials: Credentials) -> ProbeResult:
    """List the models, send one tiny message to the profile's model, and report auth, models and window."""
    settings = settings.with_profile(profile).with_env()
    model = settings.model
    result = ProbeResult(False)
    provider = Provider(settings, credentials)
    try:
        try:
            listed = await provider.models()
        except Exception:  # noqa: BLE001 - not every compatible provider lists its models
            listed = []
            result.lines.append("The provider does not list its models (GET /v1/models did not answer); type "
                                "the model's name.")
        else:
            result.models = [m["id"] for m in listed]
            shown = ", ".join(result.models[:6]) + (f" and {len(result.models) - 6} more"
                                                    if len(result.models) > 6 else "")
            result.lines.append(f"Models offered: {len(result.models)} ({shown})." if result.models
                                else "The provider lists no models.")
        request = {"model": model, "max_tokens": PROBE_TOKENS,
                   "messages": [{"role": "user", "content": [{"type": "text", "text": "Say OK."}]}]}
        try:
            _text, usage, _stop = await provider.complete(request)
        except Exception as exc:  # noqa: BLE001 - every failure is reported in words
            error = classify(exc)
            if error.kind == "auth":
                result.lines.insert(0, f"The provider refused the credentials ({AUTH_WORDS[profile.auth]}): "
                                       f"{error.message}")
            else:
                result.lines.insert(0, f"The test message to {model} failed: {error.message}")
            return result
        result.ok = True
        how = ("no key was needed" if credentials.source == "not_needed"
               else f"the {AUTH_WORDS[profile.auth]} was accepted")
        result.lines.insert(0, f"Connected: {model} answered a test message ({usage.input_tokens} tokens in, "
                               f"{usage.output_tokens} out); {how}.")
        window = next((m["window"] for m in listed if m["id"] == model and m.get("window")), None)
        info = ModelCatalog(settings.model_overrides).info(model)
        if window:
            result.window = int(window)
            result.lines.append(f"Context window of {model}: {int(window):,} tokens (from the provider).")
        elif info.window:
            result.window = info.window
            source = "your override" if info.window_source == "override" else "the built-in catalog"
            result.lines.append(f"Context window of {model}: {info.window:,} tokens (from {source}).")
        else:
            result.lines.append(f"The context window of {model} is unknown: set it below, or Précis learns it "
                                f"from the provider's first \"too long\" error.")
        if model not in result.models and result.models:
            result.lines.append(f"Note: {model} is not in the provider's list, but it answered.")
        return result
    finally:
        await provider.close()
