"""The scale benchmarks measure what they say: the window benchmark's peak RSS is the child's own, and the
turn-scale benchmark runs its cases without a compaction and reports every figure (tests/bench)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

import pytest

from tests.bench import bench_turn_scale, bench_window

CHILD = """
import json, sys
block = bytearray(40 * 1024 * 1024)  # 40 MB, touched
for i in range(0, len(block), 4096):
    block[i] = 1
hwm = next(int(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("VmHWM:"))
json.dump({"hwm_mb": hwm}, open(sys.argv[1], "w"))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB and /proc are Linux's")
def test_window_benchmark_peak_rss_is_the_childs_own(tmp_path):
    ballast = bytearray(300 * 1024 * 1024)  # this process's peak is now far above the child's
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    report = tmp_path / "report.json"
    launcher = bench_window.Launcher(tmp_path)
    try:
        out = bench_window.run_once(launcher, [sys.executable, "-c", CHILD, str(report)], {}, report)
    finally:
        launcher.close()
    del ballast
    own = json.loads(report.read_text())["hwm_mb"]
    assert 40 <= out["rss_mb"] < 120  # not the 300 MB of this process
    assert abs(out["rss_mb"] - own) < 10
    assert launcher.hwm_mb < 40


def test_turn_scale_rows_are_a_conversation_with_usage():
    rows = bench_turn_scale.make_rows(40, seed=1, cut=20)
    assert [r["role"] for r in rows[:4]] == ["user", "assistant", "user", "assistant"]
    replies = [r for r in rows if r["role"] == "assistant"]
    assert all(r["usage"].prompt_tokens > 0 and r["model"] for r in replies)
    before, after = replies[8]["usage"].prompt_tokens, replies[10]["usage"].prompt_tokens  # rows 17 and 21
    assert after < before  # the summary replaced the rows before the cut


def test_turn_scale_benchmark_runs_small_cases_with_a_profile(capsys):
    args = argparse.Namespace(
        sizes=[300, 600], turns=1, warmup=1, profile=True, profile_turns=1, json=False, strict=False
    )
    result = asyncio.run(bench_turn_scale.measure(args))
    cases = {(c["n"], c["variant"]): c for c in result["cases"]}
    assert set(cases) == {(n, v) for n in (300, 600) for v in bench_turn_scale.VARIANTS}
    for c in cases.values():
        assert c["no_compaction"], c
        assert c["engine_ms"] > 0 and c["server_ms"] > 0 and c["round_trips"] > 0
        assert c["used_source"] == "api"
    assert cases[(600, "compacted")]["sent_rows"] < cases[(600, "uncompacted")]["sent_rows"]
    assert cases[(300, "compacted")]["x_smallest"] == 1.0
    assert [p["variant"] for p in result["profiles"]] == list(bench_turn_scale.VARIANTS)
    assert all(
        any("desktop/engine/turn/conversation.py" in row["function"] for row in ph["cumulative"])
        for p in result["profiles"]
        for ph in p["phases"]
    )
    bench_turn_scale.print_table(result)
    out = capsys.readouterr().out
    assert "Profile: 600 compacted" in out and "MISSED" not in out  # no 100k case: no target to miss


def test_turn_scale_flags_a_case_that_is_not_what_its_name_says(monkeypatch):
    """A case whose history the engine compacts during the run is flagged, not reported as uncompacted: under too
    small a window the 'uncompacted' case summarises (as the 100k case did under the old 20M window)."""
    monkeypatch.setattr(bench_turn_scale, "WINDOW", 30_000)  # this process's server and engine read it
    args = argparse.Namespace(
        sizes=[600],
        turns=1,
        warmup=1,
        profile=False,
        profile_turns=1,
        json=False,
        strict=False,
        in_process=True,
    )
    result = asyncio.run(bench_turn_scale.measure(args))
    flagged = {c["variant"]: c["no_compaction"] for c in result["cases"]}
    assert flagged["uncompacted"] is False
    assert any(not t["ok"] and "uncompacted" in t["what"] for t in result["targets"])


def test_turn_scale_window_keeps_its_largest_case_whole():
    """The largest case's history (about 50 tokens a row at 100k rows) stays far below the share of the window
    past which a chat is summarised even without a threshold (a quarter of the budget)."""
    from desktop.engine.compaction.policy import EARLY_FLOOR, MICRO_RATIO

    rows = bench_turn_scale.make_rows(2_000, seed=3)
    per_row = sum(bench_turn_scale._tokens(r["content"][0]["text"]) for r in rows) / len(rows)
    largest = per_row * max(bench_turn_scale.SIZES)
    assert largest < bench_turn_scale.WINDOW * min(EARLY_FLOOR, MICRO_RATIO) / 2


def test_window_benchmark_starts_the_home_on_its_start_chat(tmp_path):
    """'Cold start with the N session in the home' opens the start chat: the window reopens the chat it showed
    last (window.ini), and a run that opened the N session had left that one there."""
    home_path = tmp_path / "home"
    repo = bench_window.Repo(home_path / "data" / "precis.db")
    try:
        ids = [repo.create_session(name).id for name in ("big", "small", "start")]
    finally:
        repo.close()
    ini = home_path / "config" / "window.ini"
    ini.parent.mkdir(parents=True)
    ini.write_text("[chats]\nlast=1\nplaces={}\n", encoding="utf-8")
    home = bench_window.Home(home_path, ids[0], ids[1], ids[2], 0, 0.0)
    bench_window.make_newest(home, home.start_id)
    assert "last=3" in ini.read_text(encoding="utf-8").splitlines()
    repo = bench_window.Repo(home_path / "data" / "precis.db")
    try:
        assert repo.list_sessions()[0].id == home.start_id
    finally:
        repo.close()


# --- per-turn work that no longer reads the whole history ------------------------------------------------------


def test_the_estimate_cache_reuses_what_it_checked_while_nothing_changed():
    """The cached total takes the part the previous call checked as it was when the list starts with it
    unchanged, and checks again whatever changed: an appended message, a replaced one, one estimated anew or
    forgotten in between (the bench's 'cached estimate' figure)."""
    from desktop.engine.metering.tokens import MessageEstimateCache, estimate_message

    def truth(messages):  # noqa: ANN001, ANN202
        return sum(estimate_message(c) for _i, c in messages)

    messages = [(i, [{"type": "text", "text": f"message {i} " * (i % 7 + 1)}]) for i in range(300)]
    cache = MessageEstimateCache(verify_tail=4)
    assert cache.total(messages) == truth(messages)
    misses = cache.misses
    messages.append((300, [{"type": "text", "text": "one more"}]))
    assert cache.total(messages) == truth(messages) and cache.misses == misses + 1
    messages[10] = (10, [{"type": "text", "text": "replaced by a longer text " * 9}])
    assert cache.total(messages) == truth(messages)
    messages[20] = (20, [dict(messages[20][1][0])])  # replaced by an equal copy: nothing to estimate
    misses = cache.misses
    assert cache.total(messages) == truth(messages) and cache.misses == misses
    cache.estimate(30, [{"type": "text", "text": "estimated elsewhere"}])  # its number changed in between
    changed = messages[:30] + [(30, [{"type": "text", "text": "estimated elsewhere"}])] + messages[31:]
    assert cache.total(changed) == truth(changed)
    cache.forget([40])
    assert cache.total(changed) == truth(changed)
    assert cache.total(changed[:100]) == truth(changed[:100])  # shorter than what was checked
    assert cache.total(changed) == truth(changed)


def test_turn_bills_read_only_the_newest_replies():
    """The per-turn bills (the gauge's itemised turns) are the last LAST_TURNS replies with their cold reasons,
    the reply before the oldest one read for its reason, whatever the length of the history before them."""
    from desktop.engine.config.catalog import ModelCatalog
    from desktop.engine.metering.bill import LAST_TURNS, cold_reason, is_cold, split, turn_bills
    from desktop.engine.types import StoredMessage, Usage

    catalog = ModelCatalog()
    rows = []
    for i in range(300):
        rows.append(StoredMessage(id=2 * i, session_id=1, role="user", content=[]))
        usage = Usage(3, 10, 900 if i % 5 == 0 else 10, 10 if i % 5 == 0 else 800)
        meta = {"sent_at": 1000.0 + 400 * i * (i % 3 == 0)}
        model = "claude-sonnet-4-6" if i % 7 else "claude-haiku-4-5"
        rows.append(
            StoredMessage(
                id=2 * i + 1, session_id=1, role="assistant", content=[], usage=usage, model=model, meta=meta
            )
        )
    replies = [r for r in rows if r.role == "assistant"]
    bills = turn_bills(rows, catalog, "claude-sonnet-4-6", compacted=False, lifetime=300.0)
    assert [b.message_id for b in bills] == [r.id for r in replies[-LAST_TURNS:]]
    for bill, (previous, row) in zip(
        bills, zip(replies[-LAST_TURNS - 1 : -1], replies[-LAST_TURNS:], strict=True), strict=True
    ):
        expected = (
            cold_reason(row, previous, compacted=False, lifetime=300.0)
            if is_cold(row.usage)
            else (None, None)
        )
        assert (bill.cold, bill.idle_minutes) == expected
        assert bill.bill == split(catalog.info(row.model), row.usage)
    few = turn_bills(rows[:10], catalog, "claude-sonnet-4-6", compacted=True, lifetime=300.0)
    assert [b.message_id for b in few] == [1, 3, 5, 7, 9] and few[0].cold is not None
