"""The gauge shows the newest measurement: one begun before a turn (the chat's window question still waiting on
the provider) and finished after it must not replace the turn's figure from the API. The window's two send tests
failed that way in a full run: the SDK, loaded by the send, asked the opened chat's window while the turn ran,
and its older figure ("estimated") landed last."""

from __future__ import annotations

import asyncio

from desktop.engine.events import ContextChanged
from tests.test_engine import new_session


async def test_a_measurement_begun_before_a_turn_does_not_replace_the_turns_figure(engine, fake_api):
    sid = await new_session(engine)
    measured: list[ContextChanged] = []
    engine.subscribe(
        lambda e: measured.append(e) if isinstance(e, ContextChanged) and e.session_id == sid else None
    )
    fake_api.model_lookups_open.clear()
    early = asyncio.ensure_future(engine.publish_context(sid))  # reads the chat, then waits on the provider
    for _ in range(500):
        if any(r.path.startswith("/v1/models/") for r in fake_api.requests):
            break
        await asyncio.sleep(0.01)
    fake_api.queue_text("Hi there")
    await engine.send(sid, "Hello")
    assert measured and measured[-1].snapshot.source == "api"
    fake_api.model_lookups_open.set()
    await early
    assert measured[-1].snapshot.source == "api", [e.snapshot.source for e in measured]
