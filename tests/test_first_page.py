"""Opening a long chat: a screenful of its newest page is laid out before the gauge's measurement starts, the
rest of the page after it; find, scroll-back and a restored place still see the whole page. Real window, real
store, the loopback API."""

from __future__ import annotations

import pytest

from tests.conftest import engine_of
from tests.test_window import until

pytestmark = pytest.mark.qt

COUNT = 200  # one page (bridge.PAGE_SIZE), short enough that all of it fits the first page's budget


async def page_chat(store) -> int:
    sid = (await store.create_session("long")).id
    rows = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": [{"type": "text", "text": f"message {i} marker-{i:03d} " + "lorem ipsum " * 6}],
        }
        for i in range(COUNT)
    ]
    await store.add_messages(sid, rows)
    return sid


async def test_the_gauge_is_measured_before_the_rest_of_the_first_page_is_laid_out(
    window, fake_api, qtbot, monkeypatch
):
    engine = engine_of(window)
    sid = await page_chat(engine.store)
    seen: list[int] = []
    measure = engine.publish_context

    async def spy(session_id: int, **kw):  # records what the window holds when the measurement is asked for
        seen.append(window.chat_model.rowCount())
        return await measure(session_id, **kw)

    monkeypatch.setattr(engine, "publish_context", spy)
    await window.bridge.open_session(sid)
    await until(lambda: bool(seen))
    assert seen[0] < COUNT // 2, seen  # on main: all 200 rows, each one's Markdown laid out, came first
    await until(
        lambda: window.chat_model.rowCount() == COUNT
    )  # the rest follows once the gauge has its figure
    assert window.chat.is_at_bottom()


async def test_find_right_after_an_open_searches_the_whole_first_page(window, fake_api, qtbot):
    sid = await page_chat(engine_of(window).store)
    await window.bridge.open_session(sid)
    model = window.chat_model
    bar = window.reading.find_bar
    bar.open_bar()
    bar.edit.setText("marker-050")  # the 150th newest message
    bar.search()
    assert len(bar.matches) == 1
    key = bar.matches[0][0]
    row = model.row_of(key)
    assert row >= 0 and "marker-050" in model.row_at(row).plain_text
    assert model.rowCount() == COUNT


async def test_scrolling_up_right_after_an_open_shows_the_rest_without_a_store_read(window, fake_api, qtbot):
    sid = await page_chat(engine_of(window).store)
    await window.bridge.open_session(sid)
    model = window.chat_model
    requests: list[int] = []
    window.chat.older_requested.connect(lambda: requests.append(1))
    bar = window.chat.verticalScrollBar()
    bar.setValue(0)
    assert model.rowCount() == COUNT and requests == []
