"""A long agentic turn (one prompt, 150 tool rounds, one huge result) in small windows: nothing reaches the user
as an error, and a retry after "prompt is too long" never resends a request that already failed."""

from __future__ import annotations

import json

import pytest

from desktop.engine.events import TurnError
from tests.test_compaction_engine import is_summary_request


def words(n: int, seed: int) -> str:
    vocab = ["grep", "file", "match", "line", "error", "build", "test", "module", "path", "value"]
    return " ".join(vocab[(i * 3 + seed) % len(vocab)] for i in range(n))


@pytest.mark.parametrize("window", [50_000, 32_000])
async def test_one_prompt_and_150_tool_rounds_never_reach_the_user_as_errors(window, fake_api, monkeypatch):
    from tests.conftest import _open_engine

    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", str(window))
    fake_api.window = window
    async with _open_engine({"max_output_tokens": 2048}) as engine:
        sid = (await engine.store.create_session("spotter", "claude-test")).id
        fake_api.queue_tool_use("grep", {"pattern": "x"}, id="toolu_000")
        await engine.send(sid, "Find every caller of parse_config and fix them. " + words(200, 1))
        for n in range(1, 151):
            # Results below the 50,000-character ingest cap, so only microcompaction and cuts can help; one
            # large result near the end.
            size = 7_000 if n == 140 else 1_200
            result = f"round {n}: " + words(size, n)
            fake_api.queue_tool_use("grep", {"pattern": f"p{n}"}, id=f"toolu_{n:03d}")
            await engine.send_content(
                sid, [{"type": "tool_result", "tool_use_id": f"toolu_{n - 1:03d}", "content": result}]
            )
        errors = [e for e in engine.events if isinstance(e, TurnError)]
        assert errors == []
    chats = [
        r for r in fake_api.message_requests() if isinstance(r.body, dict) and not is_summary_request(r.body)
    ]
    failed = [r for r in chats if r.status == 400]
    bodies = [json.dumps(r.body["messages"], sort_keys=True) for r in chats]
    for bad in failed:  # the request after a failure is never the same request again
        i = chats.index(bad)
        assert i + 1 < len(chats) and bodies[i + 1] != bodies[i]
    assert all(r.prompt_tokens <= window for r in chats if r.status == 200)
