"""The user pins any message (or a selected part of it): once a compaction covers it, requests carry it verbatim
beside the summary, whatever later summaries keep; unpinning takes it out; pins live in the session's stored
state, so they survive a restart; the breakdown counts them as pinned."""

from __future__ import annotations

import pytest

from desktop.engine.compaction import user_pins
from tests.conftest import _open_engine
from tests.test_compaction_engine import chat_requests, converse

PINNED = "The staging database lives on port 6543 and its password rotates every Tuesday at 09:00."
UNPINNED = "The build cache key is derived from the lockfile hash and the compiler version string."


async def _chat_with_a_fact(engine) -> tuple[int, int, int]:
    sid = (await engine.store.create_session("pins", "claude-test")).id
    await engine.store.add_message(sid, "user", [{"type": "text", "text": "Where is staging?"}])
    pinned = await engine.store.add_message(sid, "assistant", [{"type": "text", "text": PINNED}])
    await engine.store.add_message(sid, "user", [{"type": "text", "text": "And the cache key?"}])
    other = await engine.store.add_message(sid, "assistant", [{"type": "text", "text": UNPINNED}])
    return sid, pinned.id, other.id


def _last_body(fake_api) -> str:
    return str(chat_requests(fake_api)[-1].body["messages"])


async def test_a_pinned_assistant_message_survives_two_compactions_verbatim(small_engine, fake_api):
    sid, pinned, _other = await _chat_with_a_fact(small_engine)
    pin = await small_engine.pin_message(sid, pinned)
    assert pin.text == PINNED and [p.message_id for p in await small_engine.pins(sid)] == [pinned]
    await converse(small_engine, fake_api, sid, 4)
    first = await small_engine.compact(sid, "manual")
    assert first.ok and first.record is not None and first.record.covers_through_message_id > pinned
    await converse(small_engine, fake_api, sid, 4, start=4)
    second = await small_engine.compact(sid, "manual")
    assert second.ok, second.message
    await converse(small_engine, fake_api, sid, 1, start=8)
    body = _last_body(fake_api)
    assert PINNED in body  # verbatim, beside the summary
    assert user_pins.HEADER in body and f"[#{pinned}" in body
    assert UNPINNED not in body  # the control: what is not pinned is summarised, not carried verbatim


async def test_unpin_takes_the_message_out_of_the_next_request(small_engine, fake_api):
    sid, pinned, _other = await _chat_with_a_fact(small_engine)
    await small_engine.pin_message(sid, pinned)
    await converse(small_engine, fake_api, sid, 4)
    assert (await small_engine.compact(sid, "manual")).ok
    await converse(small_engine, fake_api, sid, 1, start=4)
    assert PINNED in _last_body(fake_api)
    assert await small_engine.unpin_message(sid, pinned)
    assert await small_engine.pins(sid) == []
    await converse(small_engine, fake_api, sid, 1, start=5)
    assert PINNED not in _last_body(fake_api)
    assert not await small_engine.unpin_message(sid, pinned)  # nothing left to remove


async def test_a_selected_part_is_pinned_alone_and_counted_in_the_breakdown(small_engine, fake_api):
    sid, pinned, _other = await _chat_with_a_fact(small_engine)
    await converse(small_engine, fake_api, sid, 4)
    assert (await small_engine.compact(sid, "manual")).ok
    before = (await small_engine.measure(sid)).breakdown["pinned"]
    pin = await small_engine.pin_message(sid, pinned, text="port 6543")
    assert pin.part and pin.text == "port 6543"
    after = await small_engine.measure(sid)
    assert after.breakdown["pinned"] > before
    await converse(small_engine, fake_api, sid, 1, start=4)
    body = _last_body(fake_api)
    assert "port 6543" in body and PINNED not in body


async def test_a_pin_that_is_not_in_the_message_or_too_long_is_refused(small_engine, fake_api):
    sid, pinned, _other = await _chat_with_a_fact(small_engine)
    with pytest.raises(ValueError, match="not part of that message"):
        await small_engine.pin_message(sid, pinned, text="port 9999")
    huge = await small_engine.store.add_message(
        sid, "assistant", [{"type": "text", "text": "word " * 40_000}]
    )
    with pytest.raises(ValueError, match="too long to pin"):
        await small_engine.pin_message(sid, huge.id)
    with pytest.raises(ValueError, match="no message"):
        await small_engine.pin_message(sid, 10**9)
    # Pins ride along with every request: together they stay within the pin budget (20,000 tokens).
    big = [
        await small_engine.store.add_message(
            sid, "assistant", [{"type": "text", "text": f"note {i} " * 3_800}]
        )
        for i in range(3)
    ]
    await small_engine.pin_message(sid, big[0].id)
    await small_engine.pin_message(sid, big[1].id)
    with pytest.raises(ValueError, match="already hold about"):
        await small_engine.pin_message(sid, big[2].id)
    assert [p.message_id for p in await small_engine.pins(sid)] == [big[0].id, big[1].id]


async def test_a_pin_survives_a_restart(fake_api, monkeypatch):
    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "8000")
    fake_api.window = 8_000
    async with _open_engine({"max_output_tokens": 1024}) as engine:
        sid, pinned, _other = await _chat_with_a_fact(engine)
        await engine.pin_message(sid, pinned)
        await converse(engine, fake_api, sid, 4)
        assert (await engine.compact(sid, "manual")).ok
    async with _open_engine(
        {"max_output_tokens": 1024}
    ) as engine:  # the same SQLite file, a new process' view
        assert [p.message_id for p in await engine.pins(sid)] == [pinned]
        await converse(engine, fake_api, sid, 1, start=4)
        assert PINNED in _last_body(fake_api)


def _cli(*args: str):
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }  # this tree's desktop package
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args], env=env, capture_output=True, text=True, timeout=120
    )


async def test_precis_pin_pins_lists_and_removes_what_the_engine_then_reads(engine, fake_api):
    sid, pinned, _other = await _chat_with_a_fact(engine)
    done = _cli("pin", str(sid), str(pinned), "--text", "port 6543")
    assert done.returncode == 0, done.stderr
    assert [(p.message_id, p.text, p.part) for p in await engine.pins(sid)] == [(pinned, "port 6543", True)]
    listed = _cli("pin", str(sid))
    assert listed.returncode == 0 and f"#{pinned}" in listed.stdout and "port 6543" in listed.stdout
    refused = _cli("pin", str(sid), str(pinned), "--text", "port 1")
    assert refused.returncode == 1 and "not part of that message" in refused.stderr
    removed = _cli("pin", str(sid), str(pinned), "--remove")
    assert removed.returncode == 0 and await engine.pins(sid) == []
    again = _cli("pin", str(sid), str(pinned), "--remove")
    assert again.returncode == 1 and "is not pinned" in again.stderr


async def test_new_chat_from_summary_carries_the_pinned_message(small_engine, fake_api):
    sid, pinned, _other = await _chat_with_a_fact(small_engine)
    await small_engine.pin_message(sid, pinned)
    await converse(small_engine, fake_api, sid, 4)
    assert (await small_engine.compact(sid, "manual")).ok
    _new, text = await small_engine.handoff(sid)
    assert PINNED in text and user_pins.HEADER in text
