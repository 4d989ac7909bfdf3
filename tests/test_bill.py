"""A bill you can read: each request's cost by kind and why a cold one re-wrote the cache (desktop/engine/metering/bill.py),
in `precis context --json` and in the gauge's hover card."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from desktop.engine.config.catalog import ModelCatalog
from desktop.engine.metering.bill import Bill, Cold, cold_reason, split, turn_bills
from desktop.engine.types import StoredMessage, Usage

MIN = 60.0
WARM = Usage(
    input_tokens=10, output_tokens=100, cache_creation_input_tokens=200, cache_read_input_tokens=9_000
)
COLD = Usage(input_tokens=10, output_tokens=100, cache_creation_input_tokens=9_200, cache_read_input_tokens=0)


def reply(
    mid: int,
    sent: float,
    usage: Usage,
    *,
    model: str = "claude-opus-5-5",
    boundary: int = 0,
    horizons: dict[str, int] | None = None,
) -> StoredMessage:
    facts = {
        "boundary": boundary,
        "last_id": mid - 1,
        "count": mid - 1,
        "estimate": 0,
        "horizons": horizons or {},
    }
    return StoredMessage(
        mid,
        1,
        "assistant",
        [{"type": "text", "text": "ok"}],
        usage=usage,
        model=model,
        created_at=sent,
        meta={"request": facts, "sent_at": sent},
    )


def user(mid: int) -> StoredMessage:
    return StoredMessage(mid, 1, "user", [{"type": "text", "text": "go on"}])


def test_each_reason_for_a_cold_turn_once() -> None:
    rows = [
        user(1),
        reply(2, 0.0, COLD),  # the first turn
        user(3),
        reply(4, 1 * MIN, WARM),  # read the cache: not cold, no reason
        user(5),
        reply(6, 2 * MIN, COLD, model="claude-sonnet-5-5"),  # the cache belongs to another model
        user(7),
        reply(8, 3 * MIN, COLD, model="claude-sonnet-5-5", boundary=9),  # a summary since
        user(10),
        reply(11, 15 * MIN + 30, COLD, model="claude-sonnet-5-5", boundary=9),  # 12.5 min idle
        user(12),
        reply(13, 16 * MIN, COLD, model="claude-sonnet-5-5", boundary=9),
    ]  # warm by time: an edit
    bills = turn_bills(rows, ModelCatalog(), "claude-opus-5-5", compacted=False, lifetime=300.0)
    assert [(b.message_id, b.cold, b.idle_minutes) for b in bills] == [
        (2, Cold.FIRST, None),
        (4, None, None),
        (6, Cold.MODEL_SWITCH, None),
        (8, Cold.COMPACTION, None),
        (11, Cold.EXPIRED, 12),
        (13, Cold.EDIT, None),
    ]


def test_old_tool_results_cleared_and_a_first_turn_after_a_summary_are_re_writes_after_a_compaction() -> None:
    before = reply(2, 0.0, WARM)
    cleared = reply(4, 1 * MIN, COLD, horizons={"tool_results": 3})
    assert cold_reason(cleared, before, compacted=False, lifetime=300.0) == (Cold.COMPACTION, None)
    assert cold_reason(reply(4, 1 * MIN, COLD), None, compacted=True, lifetime=300.0) == (
        Cold.COMPACTION,
        None,
    )


def test_a_pause_within_the_one_hour_cache_is_not_an_expiry() -> None:
    late = reply(4, 20 * MIN, COLD)
    assert cold_reason(late, reply(2, 0.0, WARM), compacted=False, lifetime=3600.0) == (Cold.EDIT, None)
    assert cold_reason(late, reply(2, 0.0, WARM), compacted=False, lifetime=300.0) == (Cold.EXPIRED, 20)


def test_an_opus_5_5_turn_by_kind_adds_up_to_its_price() -> None:
    info = ModelCatalog().info("claude-opus-5-5")
    usage = Usage(
        input_tokens=3_000,
        output_tokens=2_000,
        cache_creation_input_tokens=20_000,
        cache_read_input_tokens=150_000,
    )
    bill = split(info, usage)
    assert bill is not None
    # $4 in, $20 out, 5-minute writes $5, reads $0.20 per million tokens.
    assert (bill.cache_read, bill.cache_write, bill.input, bill.output) == pytest.approx(
        (0.03, 0.1, 0.012, 0.04)
    )
    assert bill.total == pytest.approx(info.cost(usage)) == pytest.approx(0.182)
    assert split(info, usage, "1h").cache_write == pytest.approx(0.16)  # type: ignore[union-attr] - $8 per million


def test_a_haiku_5_5_prompt_over_100k_pays_the_tier_on_every_kind() -> None:
    info = ModelCatalog().info("claude-haiku-5-5")
    usage = Usage(
        input_tokens=1_000,
        output_tokens=2_000,
        cache_creation_input_tokens=19_001,
        cache_read_input_tokens=80_000,
    )  # 100,001 prompt tokens
    bill = split(info, usage)
    assert bill is not None
    # $0.10 in, $0.50 out, writes $0.125, reads $0.01 per million; all five times over the cliff.
    assert (bill.cache_read, bill.cache_write, bill.input, bill.output) == pytest.approx(
        (80_000 * 0.05e-6, 19_001 * 0.625e-6, 1_000 * 0.5e-6, 2_000 * 2.5e-6)
    )
    under = split(
        info,
        Usage(
            input_tokens=1_000,
            output_tokens=2_000,
            cache_creation_input_tokens=19_000,
            cache_read_input_tokens=80_000,
        ),
    )
    assert under is not None and under.output == pytest.approx(2_000 * 0.5e-6)


def test_an_unknown_price_gives_no_bill() -> None:
    assert split(ModelCatalog().info("some-local-model"), WARM) is None


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_precis_context_json_shows_each_turn_by_kind_with_its_reason_and_the_session_total(
    fake_api, precis_home
):
    env = {
        **os.environ,
        "PRECIS_HOME": str(precis_home),
        "ANTHROPIC_BASE_URL": fake_api.base_url,
        "ANTHROPIC_API_KEY": "test-key",
    }
    question = "Read this through, please. " + "lorem ipsum dolor sit amet " * 600  # over the cache minimum
    for text in ("first answer", "second answer", "third answer"):
        fake_api.queue_text(text)
    assert _run(["chat", "--new", "--model", "claude-opus-5-5", question], env).returncode == 0
    assert _run(["chat", "--session", "1", "and then?"], env).returncode == 0
    switched = _run(["chat", "--session", "1", "--model", "claude-sonnet-5-5", "and now?"], env)
    assert switched.returncode == 0, switched.stderr
    done = _run(["context", "1", "--json"], env)
    assert done.returncode == 0, done.stderr
    ctx = json.loads(done.stdout)
    turns = ctx["turns"]
    assert [(t["model"], t["cold"]) for t in turns] == [
        ("claude-opus-5-5", "first_turn"),
        ("claude-opus-5-5", None),
        ("claude-sonnet-5-5", "model_switch"),
    ]
    usages = [r.usage for r in fake_api.message_requests()]
    assert [t["tokens"] for t in turns] == usages  # the bill reads what the API reported
    for turn, usage in zip(turns, usages, strict=True):
        kinds = split(ModelCatalog().info(turn["model"]), Usage.from_json(usage))  # type: ignore[arg-type]
        assert kinds is not None and turn["cost"] == pytest.approx(kinds.to_json(), abs=1e-6)
    assert (
        turns[1]["cost"]["cache_read"] > 0
        and turns[1]["cost"]["cache_write"] < turns[0]["cost"]["cache_write"]
    )
    session = ctx["session_bill"]
    for kind in ("cache_read", "cache_write", "input", "output"):
        assert session[kind] == pytest.approx(sum(t["cost"][kind] for t in turns), abs=1e-5)
    assert session["total"] == pytest.approx(ctx["cost_session"], abs=1e-5)
    text = _run(["context", "1"], env).stdout
    assert "Cold turn    a model switch" in text and "Session $    cache read $" in text


def test_the_hover_card_shows_the_last_turn_and_the_session_by_kind_and_why_it_was_cold(qtbot) -> None:
    from PySide6.QtWidgets import QWidget

    from desktop.engine.metering.bill import TurnBill
    from desktop.engine.metering.context import ContextSnapshot
    from desktop.ui.gauge.hover_card import HoverCard

    anchor = QWidget()
    qtbot.addWidget(anchor)
    card = HoverCard(anchor)
    turn = TurnBill(7, "claude-opus-5-5", COLD, Bill(0.0, 0.0575, 0.00004, 0.002), Cold.EXPIRED, 12)
    snap = ContextSnapshot(
        model="claude-opus-5-5",
        window=1_000_000,
        max_output=128_000,
        used=9_210,
        next_turn=9_310,
        source="api",
        last_usage=COLD,
        turns=(turn,),
        session_bill=Bill(0.25, 1.5, 0.01, 0.75),
    )
    card.set_snapshot(snap)
    card.show()
    assert card.value("bill_read").text() == "$0.00 / $0.25"
    assert card.value("bill_write").text() == "$0.0575 / $1.50"
    assert card.value("bill_input").text() == "<$0.0001 / $0.01"
    assert card.value("bill_output").text() == "$0.002 / $0.75"
    assert card.value("bill_cold").text() == "cache expired after 12 min"
    assert card.value("bill_cold").isVisible()
    warm = TurnBill(8, "claude-opus-5-5", WARM, Bill(0.0018, 0.001, 0.00004, 0.002))
    card.set_snapshot(
        ContextSnapshot(
            model="claude-opus-5-5",
            window=1_000_000,
            max_output=128_000,
            used=9_210,
            next_turn=9_310,
            source="api",
            last_usage=WARM,
            turns=(turn, warm),
        )
    )
    assert not card.value("bill_cold").isVisible()  # a warm turn has no reason to show
    assert card.value("bill_read").text() == "$0.0018 / —"  # the session's total is unknown


@pytest.mark.parametrize("cold", [Cold.COMPACTION, Cold.FIRST, Cold.EXPIRED])
def test_every_cold_turn_reason_shows_whole_on_the_hover_card(qtbot, cold) -> None:
    """On main "re-write after a compaction" was cut at its start on the card ("e-write after a compaction", seen
    under Xvfb's fonts): the value column of the fixed-width card had no room for it beside its label."""
    from PySide6.QtWidgets import QWidget

    from desktop.engine.metering.bill import TurnBill
    from desktop.engine.metering.context import ContextSnapshot
    from desktop.ui.gauge.hover_card import HoverCard

    anchor = QWidget()
    qtbot.addWidget(anchor)
    card = HoverCard(anchor)
    font = card.font()
    font.setPointSizeF(font.pointSizeF() * 1.25)  # a desktop with larger text (the card's width is fixed)
    card.setFont(font)
    turn = TurnBill(7, "claude-opus-5-5", COLD, Bill(0.0, 0.0575, 0.00004, 0.002), cold, 12)
    card.set_snapshot(
        ContextSnapshot(
            model="claude-opus-5-5",
            window=1_000_000,
            max_output=128_000,
            used=9_210,
            next_turn=9_310,
            source="api",
            last_usage=COLD,
            turns=(turn,),
        )
    )
    card.show()
    qtbot.waitUntil(card.isVisible)
    value = card.value("bill_cold")
    metrics = value.fontMetrics()
    lines = [metrics.horizontalAdvance(line) for line in value.text().split("\n")]
    if value.wordWrap():  # wrapped: every word fits and the label is as tall as its lines
        assert value.height() >= value.heightForWidth(value.width())
        assert max(metrics.horizontalAdvance(word) for word in value.text().split()) <= value.width()
    else:
        assert max(lines) <= value.contentsRect().width(), (value.text(), max(lines), value.width())
