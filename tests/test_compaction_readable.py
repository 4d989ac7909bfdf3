"""Compaction the user can read: a failed summary leaves a card (why, what the model wrote, Retry); the threshold
shows one figure everywhere; undo after an edit says what it restored; the Current state lists stay lists;
counts are worded through Qt's %n; a hand-off chat is titled "… (continued)"."""

from __future__ import annotations

import pytest

from desktop.engine.metering.context import context_report
from desktop.engine.types import CompactionRecord
from desktop.ui.sidebar.sidebar import ID_ROLE
from tests.conftest import engine_of
from tests.test_summary_degenerate import RECORDED
from tests.test_window import cards, compact_now, compacted, long_chat, until

STATE = """## Goal
Ship the parser.

## Current state
Done:
- the tokenizer
- the error messages
In progress:
- the AST
Blocked: none

## Next step
Write the AST tests."""


def record(summary: str = STATE, **stats) -> CompactionRecord:
    return CompactionRecord(1, 1, summary, 10, "manual", {"messages": 1, "tokens_saved": 900, **stats}, 0.0)


@pytest.mark.qt
async def test_a_failed_summary_leaves_a_card_with_why_what_the_model_wrote_and_retry(
    window, fake_api, qtbot
):
    from desktop.ui.transcript.chat_delegate import card_actions

    sid = await long_chat(window, engine_of(window).store)
    # A real small model's looping filler: refused, and so is its answer to the first section asked for alone
    # (with no previous summary to carry from, that ends the asking); Retry then gets the fake's own summary.
    fake_api.queue_summary(RECORDED[0]["reply"], RECORDED[0]["reply"])
    await compact_now(window)
    await until(lambda: any(c.detail.get("failure") for c in cards(window)))
    card = next(c for c in cards(window) if c.detail.get("failure"))
    body = "".join(segment.text for segment in card.segments)
    assert "Summary failed" in card.title and "nothing was compacted" in card.title
    assert "Why:" in body and "User: Which journal mode?" in body  # why, and what the model wrote
    assert card.detail.get("expanded")  # shown without a click: it is what the card is for
    assert ("retry_summary", "Retry") in card_actions(card.detail)
    assert await engine_of(window).store.active_compaction(sid) is None
    # Retry: the deterministic summariser answers this time; the failure card gives way to the summary's.
    window.chat.card_action.emit(str(card.key), "retry_summary")
    await until(lambda: cards(window) and not any(c.detail.get("failure") for c in cards(window)))
    assert await engine_of(window).store.active_compaction(sid) is not None
    assert "Context compacted" in cards(window)[0].title


@pytest.mark.qt
async def test_a_summary_that_failed_during_a_turn_offers_retry_on_its_trimmed_card(window, fake_api, qtbot):
    from desktop.ui.transcript.chat_delegate import card_actions

    sid = await long_chat(window, engine_of(window).store)
    fake_api.queue_summary(RECORDED[0]["reply"], RECORDED[0]["reply"])  # the summary, then its first section
    await engine_of(window).compact(sid, "auto", target=6_000)
    await until(lambda: len(cards(window)) == 1)
    assert "retry_summary" in [a for a, _label in card_actions(cards(window)[0].detail)]


@pytest.mark.qt
async def test_the_threshold_shows_the_same_percent_in_the_hover_card_the_report_and_settings(
    small_engine, qtbot
):
    from desktop.ui.gauge.cache_rows import values
    from desktop.ui.settings.threshold_settings import ThresholdFields

    sid = (await small_engine.store.create_session("t", "claude-test")).id
    snap = await small_engine.measure(sid)
    assert snap.compact_at_tokens and snap.window == 8_000
    settings = ThresholdFields(small_engine.settings.auto_compact_ratio)
    qtbot.addWidget(settings)
    assert "50 %" in settings.percent.specialValueText()
    assert values(snap)["compact_at"].endswith("(50 %)")  # main said 38 %: the tokens over the whole window
    assert "(50%" in next(
        line for line in context_report(snap).splitlines() if line.startswith("Compacts at")
    )
    assert "input room" in settings.percent.toolTip()  # the rule, said where the figure is set


@pytest.mark.qt
async def test_undo_after_an_edited_summary_says_the_previous_summary_is_back(window, fake_api, qtbot):
    sid = await compacted(window, engine_of(window).store)
    store = engine_of(window).store
    original = (await store.active_compaction(sid)).summary
    await window.bridge.engine.edit_summary(sid, original + "\n- the user's own note")
    await until(lambda: cards(window) and "edited" in cards(window)[0].title)
    window.chat.card_action.emit(str(cards(window)[0].key), "undo")
    await until(
        lambda: window.toast.isVisible() and "previous summary is in use again" in window.toast.text()
    )
    assert "Compaction undone" not in window.toast.text()
    assert (await store.active_compaction(sid)).summary == original


@pytest.mark.qt
def test_the_current_state_lists_stay_lists_on_the_card(qtbot):
    from desktop.ui.transcript.compaction_card import card_body
    from desktop.ui.transcript.markdown_render import render_markdown

    html = render_markdown(card_body(record()))
    assert html.count("<li") == 3
    items = [chunk.split("</li>")[0] for chunk in html.split("<li")[1:]]
    assert not any("In progress" in item or "Blocked" in item for item in items)  # not merged into an item
    assert "Blocked: none" in html


@pytest.mark.qt
def test_counts_on_the_card_are_worded_through_qts_plural(qtbot):
    from desktop.ui.transcript.compaction_card import card_title

    assert "1 message summarised" in card_title(record(messages=1))  # British, as the menus (Summarise)
    assert "2 messages summarised" in card_title(record(messages=2))
    trimmed = card_title(record(messages=1, snipped=True))
    assert "1 oldest message dropped" in trimmed


@pytest.mark.qt
async def test_a_hand_off_chat_is_titled_continued_in_the_window(window, fake_api, qtbot):
    store = engine_of(window).store
    sid = await compacted(window, store)
    await window.bridge.engine.library.rename(sid, "Parser work")
    window.chat.card_action.emit(str(cards(window)[0].key), "handoff")
    await until(lambda: window.session_id != sid)
    assert window.title_label.text() == "Parser work (continued)"
    assert (await store.get_session(window.session_id)).title == "Parser work (continued)"
    # A hand-off of a hand-off counts on rather than stacking the word.
    await window.bridge.engine.library.rename(sid, "Parser work (continued)")
    second, _text = await engine_of(window).handoff(sid)
    assert (await store.get_session(second)).title == "Parser work (continued 2)"


@pytest.mark.qt
async def test_the_sidebar_shows_a_hand_off_chats_whole_title_and_its_count_in_words(window, fake_api, qtbot):
    store = engine_of(window).store
    long_title = "Port every exporter to the new schema and keep the CSV quoting"
    sid = await compacted(window, store)
    await window.bridge.engine.library.rename(sid, long_title)
    window.chat.card_action.emit(str(cards(window)[0].key), "handoff")
    await until(lambda: window.session_id != sid)
    await window.bridge.refresh_sessions()
    items = {
        window.sidebar.list.item(i).data(ID_ROLE): window.sidebar.list.item(i)
        for i in range(window.sidebar.list.count())
    }
    # The list cuts a long title on the right, "(continued)" with it: the tooltip says the whole title.
    assert items[window.session_id].toolTip() == f"{long_title} (continued)\n0 messages"
    await store.add_message(window.session_id, "user", [{"type": "text", "text": "go on"}])
    await window.bridge.refresh_sessions()
    items = {
        window.sidebar.list.item(i).data(ID_ROLE): window.sidebar.list.item(i)
        for i in range(window.sidebar.list.count())
    }
    assert items[window.session_id].toolTip().endswith("\n1 message")  # not "1 messages"


@pytest.mark.qt
def test_the_summarys_sections_are_headed_at_the_cards_scale(qtbot):
    """On main each "## Goal" of a summary was a page-sized heading inside the card (half again the text's size):
    the card read as a document pasted into the chat. Its sections are bold lines at the text's own size."""
    from PySide6.QtGui import QTextDocument

    from desktop.ui.transcript.compaction_card import card_body
    from desktop.ui.transcript.markdown_render import render_markdown

    doc = QTextDocument()
    doc.setHtml(render_markdown(card_body(record())))
    body = doc.defaultFont().pointSizeF()
    block = doc.begin()
    headings = []
    while block.isValid():
        if block.text() in ("Goal", "Current state", "Next step"):
            fragment = block.begin().fragment()
            headings.append(
                (block.text(), fragment.charFormat().font().pointSizeF(), fragment.charFormat().fontWeight())
            )
        block = block.next()
    assert [h[0] for h in headings] == ["Goal", "Current state", "Next step"]
    for text, size, weight in headings:
        assert size <= body * 1.15 and weight >= 600, (text, size, body, weight)
