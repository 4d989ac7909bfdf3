"""An in-process provider for engine tests that are not about HTTP, SSE or the SDK.

``ScriptedAnthropic`` is the loopback server's script and records without the server: the same queues
(``queue_text``, ``queue_summary``, ``queue_tool_use``, ``set_replay``, status faults), the same token counting,
prompt cache, summariser, echo, window and media refusals, all answered by ``FakeAnthropic.prepare_message``, and
the same ``requests`` / ``message_requests()`` records (without headers). ``ScriptedProvider`` answers the engine
from it, as ``StreamPart``s like the SDK provider yields, and raises the SDK's own error for a refusal (the SDK's
retries are not replayed: a test about them keeps the loopback server).

A test module opts in with ``pytestmark = pytest.mark.in_process``: its ``fake_api`` (and the engines built on it)
are then this, with no socket at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from desktop.engine.config.secrets import Credentials
from desktop.engine.config.settings import Settings
from desktop.engine.providers.provider import PartKind, Provider, StreamPart
from desktop.engine.types import Usage
from tests.fakeapi import FakeAnthropic
from tests.fakeapi.counting import Block
from tests.fakeapi.faults import Fault
from tests.fakeapi.records import RecordedRequest, usage_json
from tests.fakeapi.server import Prepared, Refusal

if TYPE_CHECKING:
    from desktop.engine.turn.chat import ChatEngine

# Where the SDK would have gone: nothing listens there (a request that slips past the scripted provider fails).
NOWHERE = "http://127.0.0.1:9"
COUNT_KEYS = ("model", "messages", "system", "tools", "tool_choice", "thinking")


class ScriptedAnthropic(FakeAnthropic):
    """The fake server's script, counting and records, answered in-process (never started)."""

    @property
    def base_url(self) -> str:
        return NOWHERE

    def provider(self, settings: Settings, credentials: Credentials) -> Provider:
        """A ``ProviderFactory`` for ``ChatEngine``: every profile's requests come here."""
        return ScriptedProvider(self)

    def start(self) -> str:
        raise RuntimeError("a scripted server answers in-process; it never listens")


_ACTIVE: list[ScriptedAnthropic] = []  # the running test's script (fake_api of an in_process test), if any


@contextlib.contextmanager
def active(script: ScriptedAnthropic) -> Iterator[ScriptedAnthropic]:
    """While the test runs, engines the test helpers open answer from ``script``."""
    _ACTIVE.append(script)
    try:
        yield script
    finally:
        _ACTIVE.remove(script)


def attach(engine: ChatEngine) -> None:
    """Give an engine a test helper opened the active script's provider (nothing when the test uses HTTP)."""
    if _ACTIVE:
        engine.provider_factory = _ACTIVE[-1].provider


def _usage(data: dict[str, int]) -> Usage:
    return Usage(
        input_tokens=data.get("input_tokens", 0),
        output_tokens=data.get("output_tokens", 0),
        cache_creation_input_tokens=data.get("cache_creation_input_tokens", 0),
        cache_read_input_tokens=data.get("cache_read_input_tokens", 0),
    )


def _shell(block: Block) -> Block:
    """A block as its content_block_start carries it (what the SDK provider yields for block_start)."""
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": ""}
    if kind == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block["id"], "name": block.get("name", ""), "input": {}}
    return dict(block)


def _whole(block: Block) -> Block:
    """A finished block as the SDK provider yields it (its block_to_dict shape)."""
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": block.get("text", "")}
    if kind == "tool_use":
        return {
            "type": "tool_use",
            "id": block["id"],
            "name": block["name"],
            "input": block.get("input") or {},
        }
    if kind == "thinking":
        return {
            "type": "thinking",
            "thinking": block.get("thinking", ""),
            "signature": block.get("signature", ""),
        }
    return dict(block)


def _status_error(refusal: Refusal, rec: RecordedRequest) -> Exception:
    """The SDK's exception for this error answer, made the way the SDK makes it from a response."""
    import anthropic
    import httpx2

    fault = refusal.fault
    payload: Any = (
        fault.body
        if fault is not None and fault.body is not None
        else {
            "type": "error",
            "error": {"type": refusal.error_type, "message": refusal.message},
            "request_id": rec.request_id,
        }
    )
    text = payload if isinstance(payload, str) else json.dumps(payload)
    headers = {
        "content-type": "application/json",
        "request-id": rec.request_id,
        **(fault.headers if fault is not None and fault.headers else {}),
    }
    response = httpx2.Response(
        refusal.status,
        headers=headers,
        content=text.encode(),
        request=httpx2.Request("POST", f"{NOWHERE}{rec.path}"),
    )
    client = anthropic.AsyncAnthropic(api_key="scripted", base_url=NOWHERE)
    return client._make_status_error_from_response(response)


def prepared_usage(prepared: Prepared, script: FakeAnthropic) -> dict[str, int]:
    return usage_json(prepared.result, prepared.output_tokens, script.report_cache)


async def _wait(fault: Fault) -> None:
    """A slow or held reply, without blocking the loop (a stop cancels the wait, as it would the request)."""
    if fault.kind == "slow":
        await asyncio.sleep(fault.delay)
        return
    fault.reached.set()
    loop = asyncio.get_running_loop()
    until = loop.time() + fault.hold_timeout  # the server's bound too: a forgotten release never hangs a test
    while not fault.release.is_set() and loop.time() < until:
        await asyncio.sleep(0.005)


class ScriptedProvider:
    """A ``Provider`` answering from a ``ScriptedAnthropic``."""

    def __init__(self, script: ScriptedAnthropic):
        self.script = script

    def _record(self, method: str, path: str, body: Any) -> RecordedRequest:
        # The body as the server would parse it (what the SDK would have sent, JSON all the way).
        return self.script._record(
            method, path, {}, json.loads(json.dumps(body)) if body is not None else None
        )

    def _answer(self, request: dict[str, Any], stream: bool) -> tuple[Prepared, Fault | None]:
        rec = self._record("POST", "/v1/messages", {**request, **({"stream": True} if stream else {})})
        prepared = self.script.prepare_message(rec, rec.body)
        if isinstance(prepared, Refusal):
            rec.outcome, rec.status = "error", prepared.status
            raise _status_error(prepared, rec)
        fault = prepared.fault
        if fault is not None and fault.kind not in ("hold", "slow"):
            raise NotImplementedError(f"the {fault.kind!r} fault needs the loopback server (HTTP/SSE)")
        self.script._next_id(
            "msg"
        )  # the message's id, as the server numbers it (tool_use ids share the count)
        rec.outcome, rec.status = "ok", 200
        return prepared, fault

    async def stream(self, request: dict[str, Any]) -> AsyncIterator[StreamPart]:
        prepared, fault = self._answer(request, stream=True)
        content, stop_reason = prepared.reply.content, prepared.reply.resolved_stop_reason()
        usage = prepared_usage(prepared, self.script)
        deltas = 0

        async def checkpoint(final: bool = False) -> None:
            """A held reply waits here once it has sent ``after`` deltas (or at its end), as the server's does."""
            nonlocal fault
            if fault is not None and (deltas >= fault.after or final):
                await _wait(fault)
                fault = None

        yield StreamPart(
            PartKind.USAGE, usage=_usage({**usage, "output_tokens": 1})
        )  # as message_start says it
        await checkpoint()
        size = self.script.chunk_chars
        for index, block in enumerate(content):
            yield StreamPart(PartKind.BLOCK_START, index=index, block=_shell(block))
            kind = block.get("type")
            field = "text" if kind == "text" else "thinking" if kind == "thinking" else None
            text = block.get(field, "") if field else ""
            for i in range(0, len(text), size):
                await asyncio.sleep(0)  # a delta at a time, as a stream gives the loop a turn between them
                yield StreamPart(PartKind(kind), text=text[i : i + size])
                deltas += 1
                await checkpoint()
            yield StreamPart(PartKind.BLOCK_STOP, index=index, block=_whole(block))
        await checkpoint(final=True)
        yield StreamPart(PartKind.USAGE, usage=_usage(usage), stop_reason=stop_reason)
        yield StreamPart(PartKind.STOP, usage=_usage(usage), stop_reason=stop_reason)

    async def complete(self, request: dict[str, Any]) -> tuple[str, Usage, str | None]:
        prepared, fault = self._answer(request, stream=True)
        if fault is not None:
            await _wait(fault)
        text = "".join(b.get("text", "") for b in prepared.reply.content if b.get("type") == "text")
        return text, _usage(prepared_usage(prepared, self.script)), prepared.reply.resolved_stop_reason()

    async def count_tokens(self, request: dict[str, Any], timeout: float = 3.0) -> int | None:
        params = {k: v for k, v in request.items() if k in COUNT_KEYS}
        rec = self._record("POST", "/v1/messages/count_tokens", params)
        rec.prompt_tokens = self.script.count_request_tokens(rec.body)
        rec.outcome, rec.status = "ok", 200
        return rec.prompt_tokens

    async def model_window(self, model: str, timeout: float = 3.0) -> tuple[int | None, int | None]:
        rec = self._record("GET", f"/v1/models/{model}", None)
        if model not in self.script.models:
            rec.outcome, rec.status = "error", 404
            return None, None
        rec.outcome, rec.status = "ok", 200
        return self.script.window, self.script.max_output_tokens

    async def models(self, timeout: float = 5.0) -> list[dict[str, Any]]:
        rec = self._record("GET", "/v1/models", None)
        rec.outcome, rec.status = "ok", 200
        return [{"id": m, "window": self.script.window} for m in self.script.models]

    async def close(self) -> None:
        return None
