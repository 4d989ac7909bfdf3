"""The small-model benchmark counts what it claims: the share of compactions that asked for a summary and ended
with an accepted one. A trim made without asking (nothing old enough to summarise) is no summary's outcome."""

from __future__ import annotations

from desktop.engine.compaction.summary_maker import SummaryMaker
from tests.bench.bench_small_model import DEFAULT_TRANSCRIPT, run
from tests.corpus import require_corpus
from tests.fakeapi import FakeAnthropic


async def test_a_summariser_that_always_answers_scores_every_summary_it_was_asked_for():
    require_corpus()
    replies: list = []
    with FakeAnthropic(window=8192) as fake:
        result = await run(
            fake.base_url, DEFAULT_TRANSCRIPT, compactions=12, window=8192, salvage=False, replies=replies
        )
    asked = [r for r in replies if r["request"] == "summary"]
    assert result["total"] + result["not_asked"] == 12
    assert result["not_asked"], result  # short segments in a small window: the first compactions only trim
    assert result["total"] >= 1 and result["accepted"] == result["total"] == result["as_written"], result
    assert len(asked) >= result["total"]  # every counted compaction asked (a long one in parts)
    assert SummaryMaker.salvage_sections  # put back: the next test's engine salvages again
