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
