"""What the engine asks of a provider (``Provider``), and the one place that talks to the Anthropic Messages API
through the official SDK (``AnthropicProvider``).

Retries (429, 5xx, 529, connection errors before the body starts) are the SDK's own; we never write our own.
What the SDK does not bound or check is done here (``stream_guard``): the reply must start within the first-byte
time and never stall for the idle time, and a stream that breaks the protocol ends in one sentence.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import warnings
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Protocol

from msgspec import Struct

from desktop.engine import lazy_imports
from desktop.engine import messages as M
from desktop.engine.config.profiles import AuthKind
from desktop.engine.config.secrets import Credentials
from desktop.engine.config.settings import Settings
from desktop.engine.providers import stream_guard
from desktop.engine.providers.errors import ProviderViolation
from desktop.engine.providers.wire import BodyEncoder
from desktop.engine.types import MessagesRequest, Usage

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

log = logging.getLogger(__name__)

# Précis's own stop reason (no provider sends it): the stream ended cleanly without message_stop, so the reply
# may be unfinished. It is stored cut, like a reply stopped at the output limit.
STREAM_ENDED = "stream_ended"
# A token count past this is no count (the largest windows are a few million tokens): it is ignored, with a note.
USAGE_LIMIT = 10**12


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


def _usage(obj: Any, noted: set[str] | None = None) -> Usage:
    """The usage the provider reported; a number that cannot be a token count (negative, fractional, 1e30) is
    ignored with a note in the log, so the reply is still saved. ``noted``: the fields already noted."""
    noted = set() if noted is None else noted
    return Usage(
        input_tokens=_count(obj, "input_tokens", noted),
        output_tokens=_count(obj, "output_tokens", noted),
        cache_creation_input_tokens=_count(obj, "cache_creation_input_tokens", noted),
        cache_read_input_tokens=_count(obj, "cache_read_input_tokens", noted),
    )


def _count(obj: Any, name: str, noted: set[str]) -> int:
    value = getattr(obj, name, None)
    if value is None:
        return 0
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if whole and not isinstance(value, bool) and 0 <= value <= USAGE_LIMIT:
        return int(value)
    if name not in noted:
        noted.add(name)
        log.warning("the provider reported %s = %.40r, which is no token count: ignored", name, value)
    return 0


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

    def stream(self, request: MessagesRequest) -> AsyncIterator[StreamPart]:
        """Stream one request (an async generator); raises the SDK's exceptions on failure."""
        ...

    async def complete(self, request: MessagesRequest) -> tuple[str, Usage, str | None]: ...

    async def count_tokens(self, request: MessagesRequest, timeout: float = 3.0) -> int | None: ...

    async def model_window(self, model: str, timeout: float = 3.0) -> tuple[int | None, int | None]: ...

    async def models(self, timeout: float = 5.0) -> list[dict[str, Any]]: ...

    async def close(self) -> None: ...


# How the engine makes a provider: settings (the profile's URL and models applied) and that profile's credentials.
ProviderFactory = Callable[[Settings, Credentials], Provider]


def sdk_params(request: MessagesRequest) -> dict[str, Any]:
    """The request as the SDK's keyword arguments. The one place our request type meets the SDK's stricter
    parameter types (its Literal model ids, one TypedDict per tool kind): the SDK validates the wire shape."""
    return dict(request)


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

        # A usage number that is no count (1e30) is ignored with our own note (see _count); pydantic's warning
        # about the same value would be a second, raw one on the terminal.
        warnings.filterwarnings("ignore", "Pydantic serializer warnings", UserWarning, r"pydantic\.main")

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

    def _open(self, request: MessagesRequest) -> Any:
        """The SDK's message stream for the request; its body encoded here when it can be (see wire.py), so
        the SDK neither copies nor re-encodes the whole context on every call."""
        body = self._wire.encode(request)
        if body is None:
            return self.client.messages.stream(**sdk_params(request))
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

    async def stream(self, request: MessagesRequest) -> AsyncIterator[StreamPart]:
        """Stream one request; yields StreamParts. Raises the SDK's exceptions on failure, ``StreamStalled``
        past the first-byte or idle time and ``ProviderViolation`` for a stream that breaks the protocol; a stream
        that ends cleanly without message_stop ends with a STOP part whose stop reason is ``STREAM_ENDED``."""
        await self.ready()
        async with contextlib.aclosing(self._read(self._open(request))) as parts:  # closed with this one
            async for part in parts:
                yield part

    async def _read(self, manager: Any) -> AsyncGenerator[StreamPart]:
        """The parts of one SDK message stream (``manager``: what messages.stream returns), within the
        deadlines and the protocol."""
        settings = self.settings
        deadline = stream_guard.Deadline(settings.first_byte_timeout, settings.idle_timeout)
        noted: set[str] = set()
        async with contextlib.AsyncExitStack() as stack:
            # The response's headers, after the SDK's retries, all within the first-byte time.
            stream = await deadline.wait(stack.enter_async_context(manager))
            await stream_guard.refuse_non_stream(stream.response, deadline)
            started = stopped = False
            blocks = 0
            while (event := await deadline.wait(stream_guard.next_event(stream))) is not None:
                deadline.progress()  # a ping never gets here: the SDK drops it
                if not started and event.type != "message_start":
                    raise ProviderViolation(M.say(M.SENT_BEFORE_START, event=str(event.type)))
                if event.type == "message_start":
                    started = True
                    yield StreamPart(PartKind.USAGE, usage=_usage(event.message.usage, noted))
                elif event.type == "content_block_start":
                    blocks += 1
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
                        usage=_usage(stream.current_message_snapshot.usage, noted),
                        stop_reason=event.delta.stop_reason,
                    )
                elif event.type == "message_stop":
                    stopped = True
            if not started:
                raise ProviderViolation(stream_guard.no_events(stream.response))
            final = stream.current_message_snapshot
            usage = _usage(final.usage, noted)
            if stopped:
                yield StreamPart(PartKind.STOP, usage=usage, stop_reason=final.stop_reason)
            elif not blocks:
                raise ProviderViolation(M.say(M.SENT_NOTHING))
            else:  # what came is kept, marked cut; the turn says so
                log.info("the stream ended without message_stop after %s content blocks", blocks)
                yield StreamPart(PartKind.STOP, usage=usage, stop_reason=STREAM_ENDED)

    async def complete(self, request: MessagesRequest) -> tuple[str, Usage, str | None]:
        """Non-interactive call (summaries): streamed under the hood so long outputs never hit SDK limits, within
        the same deadlines. A summary whose stream ended before its end is a failure (its text may stop mid-way
        without saying so)."""
        client = await self.ready()
        texts: list[str] = []
        usage, stop = Usage(), None
        async with contextlib.aclosing(self._read(client.messages.stream(**sdk_params(request)))) as parts:
            async for part in parts:
                block = part.block
                if part.kind is PartKind.BLOCK_STOP and block is not None and block.get("type") == "text":
                    texts.append(str(block.get("text", "")))
                elif part.kind is PartKind.STOP:
                    usage, stop = part.usage or usage, part.stop_reason
        if stop == STREAM_ENDED:
            raise ProviderViolation(M.say(M.SENT_UNFINISHED))
        return "".join(texts), usage, stop

    async def count_tokens(self, request: MessagesRequest, timeout: float = 3.0) -> int | None:
        """Exact count from /v1/messages/count_tokens; None when unavailable (callers fall back silently)."""
        keys = ("model", "messages", "system", "tools", "tool_choice", "thinking")
        params = {k: v for k, v in sdk_params(request).items() if k in keys}
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
