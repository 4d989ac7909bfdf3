"""Tool definitions are estimated once, not on every request build: a turn of several tool rounds with a real
MCP server estimates each definition a bounded number of times, however many rounds it runs."""

from __future__ import annotations

import pytest

from desktop.engine.metering import tokens
from desktop.tools import deferral
from tests.test_tools_mcp import server_config, write_mcp
from tests.tools_helpers import tool_runtime

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process


async def _estimates_of_definitions(fake_api, precis_home, monkeypatch, rounds: int) -> tuple[int, int]:
    seen: list[str] = []
    real = tokens.estimate_text

    def counting(text, **kw):  # a spy: it counts the estimator's calls and returns its real answer
        if '"input_schema"' in text and "mcp__calc__" in text:
            seen.append(text)
        return real(text, **kw)

    monkeypatch.setattr(tokens, "estimate_text", counting)
    monkeypatch.setattr(deferral, "estimate_text", counting)
    write_mcp(precis_home, {"calc": server_config()})
    for n in range(rounds):
        fake_api.queue_tool_use("mcp__calc__add", {"a": n, "b": 1}, id=f"t{n}")
    fake_api.queue_text("done")
    async with tool_runtime(workspace=None, settings={"auto_approve_read_only": True}) as rt:
        await rt.toolbox.start_servers()
        definitions = len(rt.toolbox.servers["calc"].specs)
        sid = await rt.engine.new_session()
        await rt.engine.send(sid, "add")
    assert len(fake_api.message_requests()) == rounds + 1
    return len(seen), definitions


async def test_each_mcp_definition_is_estimated_a_bounded_number_of_times(fake_api, precis_home, monkeypatch):
    estimates, definitions = await _estimates_of_definitions(fake_api, precis_home, monkeypatch, rounds=6)
    # Once for the deferral check and once for the gauge, per definition, for the whole turn of 7 requests.
    assert estimates <= 2 * definitions, f"{estimates} estimates of {definitions} definitions in 7 requests"
