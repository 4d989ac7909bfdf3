"""The test harness's own promise: on the qasync loop, a callback that falls due while pytest-qt processes Qt
events between a test's phases runs with its loop running, as it always does in the app. It ran outside it: a
window task woken there failed its next store call with "no running event loop" and the window showed that as
its error toast (two window tests failed that way in CI, depending on when the set-up's loop stopped)."""

from __future__ import annotations

import asyncio
import time

import pytest

pytestmark = pytest.mark.qt


@pytest.fixture
async def test_loop():
    return asyncio.get_running_loop()


@pytest.fixture
def due_between_phases(test_loop):
    """A callback on the test's loop, scheduled once the set-up's loop stopped and due before pytest-qt's event
    processing after the set-up (where a window task's wake-up ran)."""
    seen: list[asyncio.AbstractEventLoop | None] = []
    handle = test_loop.call_later(0.01, lambda: seen.append(asyncio._get_running_loop()))
    time.sleep(0.1)
    yield seen
    handle.cancel()


async def test_a_callback_due_between_a_tests_phases_runs_in_its_loop(test_loop, due_between_phases):
    assert due_between_phases, "pytest-qt ran nothing between the set-up and the test"
    assert due_between_phases == [test_loop]
