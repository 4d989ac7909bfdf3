"""The degenerate summaries a small local model wrote are failures, never the chat's working memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.engine.compaction.salvage import MAX_ASKS
from tests.test_compaction_engine import converse

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process

# What a small local model (llama-server, 2,048-token window) answered to Précis's summary requests, and what
# Précis committed as the working memory of the chat.
DEGENERATE = (
    "Your summary is incomplete and lacks detail. Please provide the relevant information so that I can "
    "write a complete summary of the conversation for you.",
    "This is a summary of a task and the user requests the user to provide the user with a summary of the "
    "task, and the summary of the task is a summary the user requests.",
)

# Every summary request a small local model answered in the needle benchmark (llama-server, gemma-3-270m base,
# Q4_K_M; ``tests/bench/bench_needles.py --server ... --record``: its words as Précis kept them, up to 4,000
# characters), each with why a person who read it found it no summary a chat could go on from.
# A refused summary is salvaged section by section (compaction/salvage.py): queued this many times, the model's
# reply also answers every section request, so the compaction still ends in a trim.
UNUSABLE = 1 + MAX_ASKS

RECORDED = json.loads(
    (Path(__file__).parent / "data" / "local_model_summaries.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("reply", DEGENERATE)
async def test_degenerate_summaries_are_rejected_and_snipped_with_the_reason(small_engine, fake_api, reply):
    sid = (await small_engine.store.create_session("d", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    fake_api.queue_summary(*[reply] * UNUSABLE)  # the summary and every section asked for alone
    outcome = await small_engine.compact(sid, "auto", target=1_500)
    record = await small_engine.store.active_compaction(sid)
    # Never the working memory of the chat: the summary failed, the breaker counts it, a snip keeps going.
    assert record is None or reply not in record.summary
    assert (await small_engine.store.get_state(sid))["breaker_failures"] == 1
    assert outcome.ok and record is not None and record.trigger == "snip"
    assert record.stats["summary_error"]  # the reason travels with the row the card shows
    assert reply in record.stats["rejected_summary"]  # ... and what the model wrote, for the user to read
    assert any("Summary failed" in text for text, _level in outcome.notices)


@pytest.mark.parametrize("case", RECORDED, ids=lambda case: case["id"])
async def test_a_small_local_models_recorded_summaries_are_refused_and_kept_for_the_card(
    small_engine, fake_api, case
):
    sid = (await small_engine.store.create_session("r", "claude-test")).id
    await converse(small_engine, fake_api, sid, 6)
    fake_api.queue_summary(*[case["reply"]] * UNUSABLE)
    await small_engine.compact(sid, "auto", target=1_500)
    record = await small_engine.store.active_compaction(sid)
    assert record is not None and record.trigger == "snip", case["why"]
    assert case["reply"][:500] not in record.summary  # never the chat's working memory
    kept = record.stats["rejected_summary"]  # what the server sent (its reply cap may cut it), for the card
    assert (
        record.stats["summary_error"]
        and len(kept) >= min(150, len(case["reply"]))
        and case["reply"].startswith(kept)
    )


async def test_trims_in_a_row_leave_one_note_counting_them_all(small_engine, fake_api):
    sid = (await small_engine.store.create_session("t", "claude-test")).id
    small_engine.settings.auto_compact_ratio = 0.95  # only this test's compactions
    await converse(small_engine, fake_api, sid, 6)
    fake_api.queue_summary(*[DEGENERATE[0]] * UNUSABLE)
    await small_engine.compact(sid, "auto", target=2_500)
    first = await small_engine.store.active_compaction(sid)
    await converse(small_engine, fake_api, sid, 4, start=6)
    fake_api.queue_summary(*[DEGENERATE[1]] * UNUSABLE)
    await small_engine.compact(sid, "auto", target=2_500)
    second = await small_engine.store.active_compaction(sid)
    assert first.trigger == second.trigger == "snip" and second.id != first.id
    # One note, its count the messages both trims dropped: a run of notes only reads as noise to the model.
    assert second.summary.count("earlier messages were removed") == 1
    assert f"[{first.stats['messages'] + second.stats['messages']} earlier messages" in second.summary
