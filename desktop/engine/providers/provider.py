"""What the engine asks of a provider (``Provider``), and the one place that talks to the Anthropic Messages API
through the official SDK (``AnthropicProvider``).

Retries (429, 5xx, 529, connection errors before the body starts) are the SDK's own; we never write our own.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Protocol

from msgspec import Struct

from desktop.engine import lazy_imports
from desktop.engine.config.profiles import AuthKind
from desktop.engine.config.secrets import Credentials
from desktop.engine.config.settings import Settings
from desktop.engine.providers.wire import BodyEncoder
from desktop.engine.types import Usage

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic


class PartKind(enum.StrEnum):
    """What a piece of a streamed reply is."""

    BLOCK_START = "block_start"
    TEXT = "text"
    THINKING = "thinking"
    BLOCK_STOP = "block_stop"
    USAGE = "usage"
    STOP = "stop"


class StreamPart(Struct, frozen=True):
    """What the engine needs from a stream, independent of SDK event classes."""

    kind: PartKind
    index: int = -1
    text: str = ""
    block: dict[str, Any] | None = None
    usage: Usage | None = None
    stop_reason: str | None = None


def _usage(obj: Any) -> Usage:
    return Usage(
        input_tokens=getattr(obj, "input_tokens", 0) or 0,
        output_tokens=getattr(obj, "output_tokens", 0) or 0,
        cache_creation_input_tokens=getattr(obj, "cache_creation_input_tokens", 0) or 0,
        cache_read_input_tokens=getattr(obj, "cache_read_input_tokens", 0) or 0,
    )


def block_to_dict(block: Any) -> dict[str, Any]:
    """SDK content block -> plain JSON block as the API accepts it back (no SDK-only fields)."""
    data: dict[str, Any] = block.model_dump(mode="json", exclude_none=True)
    kind = data.get("type")
    if kind == "text":
        return {"type": "text", "text": data.get("text", "")}
    if kind == "tool_use":
        return {"type": "tool_use", "id": data["id"], "name": data["name"], "input": data.get("input") or {}}
    if kind == "thinking":
        return {
            "type": "thinking",
            "thinking": data.get("thinking", ""),
            "signature": data.get("signature", ""),
        }
    return data


class Provider(Protocol):
    """A chat's provider as the engine uses it; the SDK one below, and an in-process one in the engine tests."""

    def stream(self, request: dict[str, Any]) -> AsyncIterator[StreamPart]:
        """Stream one request (an async generator); raises the SDK's exceptions on failure."""
        ...

    async def complete(self, request: dict[str, Any]) -> tuple[str, Usage, str | None]: ...

    async def count_tokens(self, request: dict[str, Any], timeout: float = 3.0) -> int | None: ...

    async def model_window(self, model: str, timeout: float = 3.0) -> tuple[int | None, int | None]: ...

    async def models(self, timeout: float = 5.0) -> list[dict[str, Any]]: ...

    async def close(self) -> None: ...


# How the engine makes a provider: settings (the profile's URL and models applied) and that profile's credentials.
ProviderFactory = Callable[[Settings, Credentials], Provider]


def auth_sent(credentials: Credentials) -> AuthKind:
    """How these credentials go on the wire: the key as x-api-key, the token as a bearer, or nothing."""
    if credentials.api_key:
        return "x-api-key"
    if credentials.auth_token:
        return "bearer"
    return "none"


class AnthropicProvider:
    """The provider through the official SDK (what the app uses)."""

    def __init__(self, settings: Settings, credentials: Credentials):
        self.settings = settings
        self._credentials = credentials
        self._client: AsyncAnthropic | None = None
        self._wire = BodyEncoder()

    @property
    def client(self) -> AsyncAnthropic:
        """The SDK client, made on first use (after ``ready`` in async code, so the SDK's import is done)."""
        if self._client is None:
            self._client = self._make_client()
        return self._client

    async def ready(self) -> AsyncAnthropic:
        """The client, with the SDK imported in a worker thread first: a cold import takes seconds and would
        freeze the window if it ran on the loop."""
        if self._client is None:
            await lazy_imports.load(lazy_imports.SDK)
        return self.client

    def _make_client(self) -> AsyncAnthropic:
        import anthropic

        settings, credentials = self.settings, self._credentials
        kwargs: dict[str, Any] = {
            "max_retries": settings.max_retries,
            "timeout": settings.request_timeout,
        }
        if settings.base_url:
            kwargs["base_url"] = settings.base_url
        # The SDK sends ``api_key`` as a bearer token and, given no credential at all, signs requests with
        # whatever it finds on the machine (its own profiles, the environment): the headers are set here so
        # each key goes exactly as configured and a keyless profile sends none.
        omit = anthropic.Omit()
        sent = auth_sent(credentials)
        if sent == "x-api-key":
            kwargs["api_key"] = credentials.api_key
            kwargs["default_headers"] = {"X-Api-Key": credentials.api_key, "Authorization": omit}
        elif sent == "bearer":
            kwargs["auth_token"] = credentials.auth_token
            kwargs["default_headers"] = {"X-Api-Key": omit}
        else:  # an explicit empty credential stops the SDK's own search; its header is omitted
            kwargs["auth_token"] = ""
            kwargs["default_headers"] = {"X-Api-Key": omit, "Authorization": omit}
        return anthropic.AsyncAnthropic(**kwargs)

    def _open(self, request: dict[str, Any]) -> Any:
        """The SDK's message stream for the request; its body encoded here when it can be (see wire.py), so
        the SDK neither copies nor re-encodes the whole context on every call."""
        body = self._wire.encode(request)
        if body is None:
            return self.client.messages.stream(**request)
        from anthropic import AsyncStream
        from anthropic.lib.streaming import AsyncMessageStreamManager
        from anthropic.types import Message, RawMessageStreamEvent

        call = self.client.post(
            "/v1/messages",
            content=body,
            cast_to=Message,
            stream=True,
            stream_cls=AsyncStream[RawMessageStreamEvent],
            options={
                "headers": {
                    "Content-Type": "application/json",
                    "X-Stainless-Helper-Method": "stream",
                    "X-Stainless-Stream-Helper": "messages",
                }
            },
        )
        return AsyncMessageStreamManager(call)

    async def stream(self, request: dict[str, Any]) -> AsyncIterator[StreamPart]:
        """Stream one request; yields StreamParts; raises SDK exceptions on failure."""
        await self.ready()
        async with self._open(request) as stream:
            async for event in stream:
                if event.type == "message_start":
                    yield StreamPart(PartKind.USAGE, usage=_usage(event.message.usage))
                elif event.type == "content_block_start":
                    yield StreamPart(
                        PartKind.BLOCK_START, index=event.index, block=block_to_dict(event.content_block)
                    )
                elif event.type == "text":
                    yield StreamPart(PartKind.TEXT, text=event.text)
                elif event.type == "thinking":
                    yield StreamPart(PartKind.THINKING, text=event.thinking)
                elif event.type == "content_block_stop":
                    yield StreamPart(
                        PartKind.BLOCK_STOP, index=event.index, block=block_to_dict(event.content_block)
                    )
                elif event.type == "message_delta":
                    yield StreamPart(
                        PartKind.USAGE,
                        usage=_usage(stream.current_message_snapshot.usage),
                        stop_reason=event.delta.stop_reason,
                    )
            final = await stream.get_final_message()
            yield StreamPart(PartKind.STOP, usage=_usage(final.usage), stop_reason=final.stop_reason)

    async def complete(self, request: dict[str, Any]) -> tuple[str, Usage, str | None]:
        """Non-interactive call (summaries): streamed under the hood so long outputs never hit SDK limits."""
        client = await self.ready()
        async with client.messages.stream(**request) as stream:
            final = await stream.get_final_message()
        text = "".join(getattr(b, "text", "") for b in final.content if getattr(b, "type", "") == "text")
        return text, _usage(final.usage), final.stop_reason

    async def count_tokens(self, request: dict[str, Any], timeout: float = 3.0) -> int | None:
        """Exact count from /v1/messages/count_tokens; None when unavailable (callers fall back silently)."""
        keys = ("model", "messages", "system", "tools", "tool_choice", "thinking")
        params = {k: v for k, v in request.items() if k in keys}
        client = await self.ready()
        try:
            result = await asyncio.wait_for(
                client.with_options(max_retries=0).messages.count_tokens(**params),
                timeout,
            )
        except Exception:
            return None
        return int(result.input_tokens)

    async def model_window(self, model: str, timeout: float = 3.0) -> tuple[int | None, int | None]:
        """(max_input_tokens, max_tokens) from models.retrieve(), when the provider offers it."""
        client = await self.ready()
        try:
            info = await asyncio.wait_for(client.models.retrieve(model), timeout)
        except Exception:
            return None, None
        return getattr(info, "max_input_tokens", None), getattr(info, "max_tokens", None)

    async def models(self, timeout: float = 5.0) -> list[dict[str, Any]]:
        """What GET /v1/models lists (id, and the window when the provider says); raises on failure."""
        client = await self.ready()
        page = await asyncio.wait_for(client.with_options(max_retries=0).models.list(limit=100), timeout)
        return [{"id": m.id, "window": getattr(m, "max_input_tokens", None)} for m in page.data]

    async def close(self) -> None:
        if self._client is not None:  # never made: nothing to close (and no SDK to import for it)
            await self._client.close()
