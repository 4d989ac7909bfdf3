"""The in-process provider of the engine tests answers as the SDK provider does against the loopback server: the
same stream parts, usage, counts, model facts and errors for the same script."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.engine.config.secrets import Credentials
from desktop.engine.config.settings import Settings
from desktop.engine.providers.errors import classify
from desktop.engine.providers.provider import AnthropicProvider, Provider
from tests.fakeapi import SUMMARY_MARKER, FakeAnthropic, Fault, Reply
from tests.scripted_provider import ScriptedAnthropic


def _request(text: str, max_tokens: int = 1024, system: str | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": "claude-test",
        "max_tokens": max_tokens,
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
    }
    if system:
        request["system"] = system
    return request


def _script(server: FakeAnthropic) -> None:
    server.queue_text("Hello there, this is a reply long enough to come in several deltas.")
    server.queue_tool_use("read", {"file_path": "src/config.py"}, text="Let me look.")
    server.queue_reply(Reply.thinking("First the premise, then the conclusion.", "The answer."))
    server.queue_text("word " * 400)  # cut at max_tokens


async def _run(provider: Provider) -> list[Any]:
    seen: list[Any] = []
    for text, max_tokens in (("hi", 1024), ("read it", 1024), ("think", 1024), ("long", 50)):
        seen.append([part async for part in provider.stream(_request(text, max_tokens))])
    seen.append(await provider.complete(_request("summarise", system=f"{SUMMARY_MARKER} please")))
    seen.append(await provider.count_tokens(_request("count me " * 30)))
    seen.append(await provider.model_window("claude-test"))
    seen.append(await provider.model_window("not-listed"))
    seen.append(await provider.models())
    await provider.close()
    return seen


async def test_the_scripted_provider_answers_like_the_sdk_against_the_server():
    with FakeAnthropic() as server:
        _script(server)
        over_http = await _run(
            AnthropicProvider(Settings(base_url=server.base_url), Credentials(api_key="test-key"))
        )
    script = ScriptedAnthropic()
    _script(script)
    in_process = await _run(script.provider(Settings(), Credentials()))
    assert in_process == over_http
    assert [(r.method, r.path, r.body, r.usage) for r in script.requests] == [
        (r.method, r.path, r.body, r.usage) for r in server.requests
    ]


@pytest.mark.parametrize(
    "fault",
    [
        Fault.custom(401, "authentication_error", "invalid x-api-key"),
        Fault.custom(400, "invalid_request_error", "prompt is too long: 300000 tokens > 200000 maximum"),
        Fault.custom(400, "invalid_request_error", "Too much media: 0 document pages + 30 images > 20"),
    ],
)
async def test_a_refusal_is_the_same_error_in_process_and_over_http(fault: Fault):
    async def error_of(server: FakeAnthropic, provider: Provider) -> tuple[str, type, int | None]:
        server.queue_fault(fault)
        with pytest.raises(Exception) as caught:
            _ = [part async for part in provider.stream(_request("hello"))]
        await provider.close()
        error = classify(caught.value)
        return error.kind, type(caught.value), error.status

    with FakeAnthropic() as server:
        over_http = await error_of(
            server,
            AnthropicProvider(
                Settings(base_url=server.base_url, max_retries=0), Credentials(api_key="test-key")
            ),
        )
    script = ScriptedAnthropic()
    assert await error_of(script, script.provider(Settings(), Credentials())) == over_http
