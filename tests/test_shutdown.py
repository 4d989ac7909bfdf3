"""Closing never hangs: work that will not stop is waited for a bounded time, named in the log with where it is
stuck, and left behind, so the window and the app always close (everything committed stays committed)."""

from __future__ import annotations

import asyncio
import logging

from desktop.engine.turn import shutdown


async def test_work_that_ignores_cancellation_is_named_and_left_behind(caplog):
    release = asyncio.Event()

    async def stubborn() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await release.wait()  # catches the cancel and waits for something that never comes

    task = asyncio.ensure_future(stubborn())
    await asyncio.sleep(0)
    task.cancel()
    with caplog.at_level(logging.WARNING):
        finished = await shutdown.bounded(
            "the test's work", asyncio.gather(task, return_exceptions=True), seconds=0.2
        )
    assert finished is False
    assert "the test's work did not finish" in caplog.text
    assert "stubborn" in caplog.text  # where it is stuck, for whoever reads the log
    release.set()
    await asyncio.gather(task, return_exceptions=True)


async def test_work_that_finishes_is_simply_awaited():
    async def quick() -> int:
        await asyncio.sleep(0)
        return 7

    assert await shutdown.bounded("quick work", quick(), seconds=5) is True


async def test_the_window_side_closes_even_when_its_work_will_not_stop(engine, qtbot, monkeypatch, caplog):
    from desktop.ui.bridge import Bridge

    monkeypatch.setattr(shutdown, "CLOSE_WAIT", 0.2)
    bridge = Bridge(engine)
    release = asyncio.Event()

    async def stuck_refresh() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await release.wait()

    bridge.spawn(stuck_refresh())
    await asyncio.sleep(0)
    with caplog.at_level(logging.WARNING):
        await bridge.close()  # returned: before, it waited for the stuck task for ever
    assert "the window's tasks did not finish" in caplog.text and "stuck_refresh" in caplog.text
    release.set()
