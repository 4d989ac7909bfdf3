"""Smoke test of the replay benchmark: two small real transcripts through all four policies.

Structural facts only (the performance targets are the benchmark's business, not a test's): every policy is
sent the same user/tool turns, the server's chat replies are the recorded ones, every policy is billed, and no
policy crashes or loses a turn on these small conversations.
"""

from __future__ import annotations

import pytest

from tests.bench.bench_replay import expected_signature, load_scenario, run_policy
from tests.bench.replay_policies import POLICIES
from tests.corpus import CORPUS, require_corpus

FILES = ("spotter/tool_heavy.jsonl", "spotter/short.jsonl")
pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module", params=FILES)
def scenario(request):
    require_corpus(request.param)
    return load_scenario(CORPUS / request.param)


def test_scenario_reads_user_turns_and_recorded_replies(scenario):
    assert scenario.steps
    assert scenario.steps[0].user and all(s.reply for s in scenario.steps)
    # Tool turns answer the calls of the reply before them.
    for prev, step in zip(scenario.steps, scenario.steps[1:], strict=False):
        calls = {b["id"] for b in prev.reply if b.get("type") == "tool_use"}
        results = {b["tool_use_id"] for b in step.user if b.get("type") == "tool_result"}
        assert results <= calls


async def test_every_policy_faces_the_same_conversation(scenario):
    results = {name: await run_policy(name, scenario) for name in POLICIES}
    expected = [expected_signature(s) for s in scenario.steps]
    for name, r in results.items():
        assert r.steps == len(scenario.steps), name
        assert r.sent_turns == expected, name  # the same user/tool turns reached the server, in order
        assert r.delivered == len(scenario.steps), name
        assert r.chat_replies == len(scenario.steps), name
        assert r.replies_from_recording == r.chat_replies, name  # replies came from the recording
        assert r.errors == 0, name
        assert r.billed > 0 and r.stats["requests"] >= len(scenario.steps), name
        assert r.largest > 0, name
        assert 0.0 <= r.read_share <= 1.0
    # Short conversations: nothing to compact, so every policy sends the same tokens.
    assert (
        len(
            {
                r.stats["input_tokens"]
                + r.stats["cache_creation_input_tokens"]
                + r.stats["cache_read_input_tokens"]
                for r in results.values()
            }
        )
        == 1
    )
    assert results["precis"].summaries == 0


async def test_fidelity_is_measured_on_the_final_request(scenario):
    r = await run_policy("claude-code", scenario)
    assert r.user_texts_expected >= 1  # both files start with a typed prompt
    assert r.user_text_share == 1.0
    if len(scenario.steps) > 1:
        assert r.tool_pairs_expected >= 1
        assert r.tool_pair_share == 1.0


def test_the_bench_bills_each_request_by_its_models_own_cache_prices():
    from tests.bench.bench_replay import _billed

    reads = {"cache_read_input_tokens": 1_000_000}
    assert _billed(reads, "claude-sonnet-4-6") == pytest.approx(100_000)  # 0.1x
    assert _billed(reads, "claude-opus-5-5") == pytest.approx(50_000)  # 0.05x
    assert _billed(reads, "claude-fable-5-1") == pytest.approx(25_000)  # 0.025x
    assert _billed({"input_tokens": 1_000, "cache_creation_input_tokens": 1_000}, "mystery") == pytest.approx(
        2_250
    )


def test_a_summarys_reply_is_billed_at_the_models_output_price_beside_the_prompts():
    from tests.bench.bench_replay import _billed, _replied

    reply = {"input_tokens": 0, "output_tokens": 1_000}
    assert _billed(reply, "claude-opus-5-5") == 0  # the prompt bill has no output in it
    assert _replied(reply, "claude-opus-5-5") == pytest.approx(5_000)  # $20 out over $4 in


async def test_the_yardsticks_summaries_are_counted_with_their_replies():
    require_corpus(FILES[0])
    r = await run_policy("claude-code", load_scenario(CORPUS / FILES[0]), window=8_000)
    assert r.summaries >= 1
    assert r.summary_replies > 0


def test_the_re_write_after_a_prepared_summary_is_counted_as_after_a_summary():
    # A summary prepared in the background is asked for at one step and committed at a later one: the miss at
    # the commit is the re-write it leaves, not an "other" miss (at 32K 0.87M of 1.06M "other misses" were).
    from tests.bench.bench_replay import _analyse

    def chat(step: int, read: int) -> dict:
        return {
            "step": step,
            "summary": False,
            "prompt": 1_000,
            "gap": 10.0,
            "billed": 1.0,
            "usage": {"cache_read_input_tokens": read},
        }

    requests = [
        chat(1, 900),
        {"step": 2, "summary": True, "prompt": 1_000, "gap": 10.0, "billed": 1.0, "usage": {}},
        chat(2, 900),
        chat(4, 0),
        chat(6, 0),
    ]
    out, _top = _analyse(requests, {4})
    assert [r.get("kind") for r in requests] == ["warm", None, "warm", "miss_after_summary", "miss_other"]
    assert out["miss_after_summary"] == 1.0 and out["miss_other"] == 1.0


async def test_precis_keeps_its_window_open_through_a_pause_so_its_idle_summary_is_made():
    # The app prepares a summary shortly before an idle chat's prompt cache lapses; the replay jumped its clock
    # over every pause, so that timer never fired and the bench billed Précis as if its window were closed.
    from tests.bench.bench_replay import Scenario
    from tests.bench.replay_policies import Step
    from tests.test_compaction_engine import prose

    steps = [
        Step(
            [{"type": "text", "text": f"Instruction {k}: keep using tabs. " + prose(1400, k + 100)}],
            [{"type": "text", "text": f"Answer {k}: " + prose(600, k)}],
            20.0,
        )
        for k in range(12)
    ]
    steps.append(
        Step([{"type": "text", "text": "I am back."}], [{"type": "text", "text": "welcome back"}], 1200.0)
    )
    r = await run_policy("precis", Scenario("idle", "claude-sonnet-4-6", "idle", steps), window=60_000)
    assert r.errors == 0
    background = [c for c in r.compactions if c["trigger"] == "background"]
    assert background and background[-1]["step"] == len(steps) - 1  # committed when the user came back


def test_tool_pairs_count_the_newest_calls_sent_with_their_results_verbatim():
    from tests.bench.bench_replay import tool_pairs
    from tests.bench.replay_policies import Step

    def call(i: int) -> dict:
        return {"type": "tool_use", "id": f"c{i}", "name": "Bash", "input": {}}

    def result(i: int, text: str = "") -> dict:
        return {"type": "tool_result", "tool_use_id": f"c{i}", "content": text or f"out {i}"}

    steps = [Step([{"type": "text", "text": "go"}], [call(0)], 1.0)]
    steps += [Step([result(i)], [call(i + 1)], 1.0) for i in range(12)]
    # The request of the last step: c12 is not answered yet, so the newest ten answered calls are c2..c11.
    body = {
        "messages": [{"role": "assistant", "content": [call(i)]} for i in range(5, 12)]
        + [{"role": "user", "content": [result(i) for i in range(5, 11)] + [result(11, "changed")]}]
    }
    assert tool_pairs(steps, body) == (6, 10)  # c5..c10 whole; c11's result differs; c2..c4 dropped


async def test_the_newest_tool_pairs_are_counted_again_right_after_every_summary():
    # The final request alone cannot tell a policy that drops what the model was just doing at every summary:
    # later calls refill the tail before the end.
    require_corpus(FILES[0])
    r = await run_policy("claude-code", load_scenario(CORPUS / FILES[0]), window=8_000)
    assert r.summaries >= 1 and r.pairs_after_wanted >= 1
    assert r.pairs_after_kept < r.pairs_after_wanted
