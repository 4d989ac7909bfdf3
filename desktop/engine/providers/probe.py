"""Test connection: one tiny request to a profile's provider, and what it says in plain words."""

from __future__ import annotations

from msgspec import Struct, field

from desktop.engine import messages as M
from desktop.engine.config.catalog import ModelCatalog
from desktop.engine.config.profiles import AUTH_WORDS, Profile
from desktop.engine.config.secrets import Credentials
from desktop.engine.config.settings import Settings
from desktop.engine.providers.errors import classify
from desktop.engine.providers.provider import AnthropicProvider, auth_sent
from desktop.engine.types import MessagesRequest

PROBE_TOKENS = 8  # the tiny request's output limit: enough for a word, costs next to nothing


class ProbeResult(Struct):
    """The outcome of a connection test, line by line, with the models listed."""

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
    provider = AnthropicProvider(settings, credentials)
    sent = auth_sent(credentials)  # what went on the wire, which is not always what the profile names
    try:
        try:
            listed = await provider.models()
        except Exception:  # noqa: BLE001 - not every compatible provider lists its models
            listed = []
            result.lines.append(M.say(M.NO_MODEL_LIST))
        else:
            result.models = [m["id"] for m in listed]
            count, shown = len(result.models), ", ".join(result.models[:6])
            result.lines.append(
                M.say(M.MODELS_OFFERED_MORE, count=count, shown=shown, more=count - 6)
                if count > 6
                else M.say(M.MODELS_OFFERED, count=count, shown=shown)
                if count
                else M.say(M.NO_MODELS)
            )
        request: MessagesRequest = {
            "model": model,
            "max_tokens": PROBE_TOKENS,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Say OK."}]}],
        }
        try:
            _text, usage, _stop = await provider.complete(request)
        except Exception as exc:  # noqa: BLE001 - every failure is reported in words
            error = classify(exc)
            if error.kind == "auth":
                result.lines.insert(
                    0, M.say(M.CREDENTIALS_REFUSED, auth=M.say(AUTH_WORDS[sent]), error=error.message)
                )
            else:
                result.lines.insert(0, M.say(M.TEST_FAILED, model=model, error=error.message))
            return result
        result.ok = True
        how = (
            M.say(M.NO_KEY_NEEDED) if sent == "none" else M.say(M.KEY_ACCEPTED, auth=M.say(AUTH_WORDS[sent]))
        )
        result.lines.insert(
            0,
            M.say(
                M.CONNECTED,
                model=model,
                tokens_in=usage.input_tokens,
                tokens_out=usage.output_tokens,
                how=how,
            ),
        )
        window = next((m["window"] for m in listed if m["id"] == model and m.get("window")), None)
        info = ModelCatalog(settings.model_overrides).info(model)
        if window:
            result.window = int(window)
            result.lines.append(M.say(M.WINDOW_FROM_PROVIDER, model=model, window=int(window)))
        elif info.window:
            result.window = info.window
            result.lines.append(
                M.say(
                    M.WINDOW_FROM_OVERRIDE if info.window_source == "override" else M.WINDOW_FROM_CATALOG,
                    model=model,
                    window=info.window,
                )
            )
        else:
            result.lines.append(M.say(M.WINDOW_UNKNOWN, model=model))
        if model not in result.models and result.models:
            result.lines.append(M.say(M.NOT_LISTED, model=model))
        return result
    finally:
        await provider.close()
