"""A scripted 200-round tool session: Précis against a Claude-Code-like policy and no context management.

``python -m tests.bench.bench_tools [--rounds 200] [--window 200000]``

The session is one prompt followed by ``--rounds`` tool rounds (read, grep, run in turn), each tool output sized
like a real one: its length is drawn (seeded) from the tool_result sizes of the same tool in the corpus. Every
policy faces the same requests and the same scripted replies on the test server (prompt-cache accounting like
the API). Figures: billed input equivalents (input + cache writes and reads at the model's own multipliers,
e.g. 1.25 x and 0.1 x) as a ratio to the Claude-Code-like policy, cache-read share, peak request, errors reaching the user. Then the loop's own overhead
per tool round: one real multi-step turn (the engine's loop and a tool runner answering instantly) timed with
the server's own time taken out.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Mapping
from typing import Any

from tests.bench.bench_replay import Scenario, load_scenario, run_policy
from tests.bench.bench_turn_scale import TimedFake
from tests.bench.replay_policies import Step
from tests.corpus import CORPUS, corpus_or_exit

TOOLS = ("Read", "Grep", "Bash")  # the corpus's names (the Claude-Code-like policy clears these)
FALLBACK = {"Read": [6_000], "Grep": [1_500], "Bash": [2_000]}


def corpus_sizes(limit_files: int = 40) -> dict[str, list[int]]:
    """tool_result lengths (characters) per tool name, from the corpus's transcripts."""
    sizes: dict[str, list[int]] = {t: [] for t in TOOLS}
    files = sorted(corpus_or_exit(), key=lambda f: f.stat().st_size)[-limit_files:]
    for path in files:
        names: dict[str, str] = {}
        for step in load_scenario(path).steps:
            for b in step.user:
                if b.get("type") == "tool_result" and names.get(b.get("tool_use_id", "")) in sizes:
                    content = b.get("content")
                    text = content if isinstance(content, str) else json.dumps(content)
                    sizes[names[b["tool_use_id"]]].append(len(text))
            for b in step.reply:
                if b.get("type") == "tool_use":
                    names[b.get("id", "")] = b.get("name", "")
    return {k: v or FALLBACK[k] for k, v in sizes.items()}


def _output(n: int, size: int) -> str:
    words = ["src/app.py", "def", "return", "config", "value", "error", "line", "import", "test", "path"]
    line = [f"{n:04d}"]
    out, length = [], 0
    i = 0
    while length < size:
        word = words[(i * 7 + n) % len(words)]
        line.append(word)
        i += 1
        if len(line) > 12:
            text = " ".join(line)
            out.append(text)
            length += len(text) + 1
            line = [f"{n:04d}"]
    return "\n".join(out)[:size]


def scenario(rounds: int, seed: int = 7) -> Scenario:
    sizes = corpus_sizes()
    rng = random.Random(seed)
    steps: list[Step] = []
    user: list[dict[str, Any]] = [
        {
            "type": "text",
            "text": "Find every caller of parse_config and make it read "
            "UTF-8; run the tests after each change.",
        }
    ]
    for n in range(rounds):
        tool = TOOLS[n % 3]
        use_id = f"toolu_{n:04d}"
        arg = {
            "Read": {"file_path": f"src/module_{n % 17}.py"},
            "Grep": {"pattern": f"parse_config_{n % 11}"},
            "Bash": {"command": f"pytest -q tests/test_{n % 13}.py"},
        }[tool]
        reply = [
            {"type": "text", "text": f"Step {n}: checking."},
            {"type": "tool_use", "id": use_id, "name": tool, "input": arg},
        ]
        steps.append(Step(user, reply, 5.0))
        user = [
            {"type": "tool_result", "tool_use_id": use_id, "content": _output(n, rng.choice(sizes[tool]))}
        ]
    steps.append(Step(user, [{"type": "text", "text": "All callers now read UTF-8."}], 5.0))
    return Scenario("tools-200", "claude-sonnet-4-6", "tool session", steps)


# ---------------------------------------------------------------------------------------------- the loop


class ScriptedTools:
    """A tool runner that answers each call at once with the scenario's output (so only the loop is timed)."""

    def __init__(self, outputs: dict[str, Any]):
        self.outputs = outputs
        self.seconds = 0.0
        self.cpu_marks: list[
            float
        ] = []  # the loop thread's CPU time at each round (steady under machine load)

    def definitions(
        self, session_id: int, state: Mapping[str, Any], window: int | None = None
    ) -> list[dict[str, Any]]:
        from desktop.tools.builtin import DEFINITIONS

        return [dict(d) for d in DEFINITIONS]

    async def run(self, session_id: int, calls: list[dict[str, Any]], events: Any) -> list[dict[str, Any]]:
        self.cpu_marks.append(time.thread_time())
        started = time.perf_counter()
        results = [
            {"type": "tool_result", "tool_use_id": c["id"], "content": self.outputs[c["id"]]} for c in calls
        ]
        self.seconds += time.perf_counter() - started
        return results


async def loop_overhead(sc: Scenario, window: int, *, sdk_body: bool = False) -> dict[str, Any]:
    """``sdk_body``: the baseline, with the SDK copying and encoding every request body itself (as before
    wire.py)."""
    from desktop.engine.providers import wire

    encode = wire.BodyEncoder.encode
    if sdk_body:
        wire.BodyEncoder.encode = lambda _self, _request: None  # type: ignore[method-assign,assignment]
    try:
        return await _loop_overhead(sc, window)
    finally:
        wire.BodyEncoder.encode = encode  # type: ignore[method-assign]


async def _loop_overhead(sc: Scenario, window: int) -> dict[str, Any]:
    from desktop.engine.config.secrets import Credentials
    from desktop.runtime import open_runtime

    outputs = {
        b["tool_use_id"]: b["content"] for s in sc.steps for b in s.user if b.get("type") == "tool_result"
    }
    tools = ScriptedTools(outputs)
    srv = TimedFake(window=window)
    srv.start()
    os.environ.update(
        ANTHROPIC_BASE_URL=srv.base_url,
        ANTHROPIC_API_KEY="test-key",
        PRECIS_HOME=tempfile.mkdtemp(prefix="precis-bench-tools-"),
    )
    srv.set_replay([s.reply for s in sc.steps])

    def adjust(settings: Any) -> None:
        settings.max_model_calls = len(sc.steps) + 5

    try:
        async with open_runtime(
            credentials=Credentials(api_key="test-key", source="env"),
            tools=tools,
            adjust=adjust,
            background=False,
        ) as rt:
            sid = await rt.engine.new_session(sc.model)
            started = time.perf_counter()
            await rt.engine.send_content(sid, sc.steps[0].user)
            wall = time.perf_counter() - started
            calls = len(srv.message_requests())
    finally:
        srv.stop()
    rounds = len(sc.steps) - 1
    engine = wall - srv.served - tools.seconds
    return {
        "rounds": rounds,
        "model_calls": calls,
        "wall_s": wall,
        "server_s": srv.served,
        "overhead_ms_per_round": 1000 * engine / rounds,
        "overhead_share": engine / wall if wall else 0.0,
        "overhead_vs_server": engine / srv.served if srv.served else 0.0,
        **by_context(srv, tools.cpu_marks),
    }


def by_context(srv: Any, cpu_marks: list[float], buckets: int = 4) -> dict[str, Any]:
    """The loop's time per round against the size of the live context, in quarters of the session with their mean
    request size: the gap between one response's end and the next request (the engine handling the reply, running
    the tools, building the request; wall time), and the engine thread's CPU time per round (the SDK's work
    included, the server's and the database thread's not; steady when the machine is busy). Growth: the last
    quarter's CPU per round as a ratio to the first's."""
    pairs = [
        (r, span)
        for r, span in zip(srv.message_requests(), srv.spans, strict=False)
        if not srv.summariser.wants_summary(r.body)
    ]
    requests, spans = [r for r, _ in pairs], [s for _, s in pairs]
    gaps = [
        (spans[i + 1][0] - spans[i][1], len(json.dumps(requests[i + 1].body))) for i in range(len(spans) - 1)
    ]
    if len(gaps) < buckets:
        return {}
    size = len(gaps) // buckets
    parts = [gaps[i * size : (i + 1) * size] for i in range(buckets)]
    cpu = [b - a for a, b in itertools.pairwise(cpu_marks)]
    rows = [
        {
            "gap_ms": 1000 * sum(g for g, _ in p) / len(p),
            "request_kb": sum(b for _, b in p) / len(p) / 1000,
            "cpu_ms": 1000
            * sum(cpu[i * size : (i + 1) * size])
            / max(1, len(cpu[i * size : (i + 1) * size])),
        }
        for i, p in enumerate(parts)
    ]
    return {
        "by_context": rows,
        "growth": rows[-1]["cpu_ms"] / rows[0]["cpu_ms"] if rows[0]["cpu_ms"] else 0.0,
    }


def definitions_estimate(tools: int = 100, repeat: int = 50) -> dict[str, float]:
    """The cost of estimating MCP tool definitions for one request build (the deferral check and the gauge's
    "tools"), each definition estimated anew (the baseline: specs without a digest, fresh dicts) and cached."""
    from desktop.engine.metering import tokens
    from desktop.tools import deferral
    from desktop.tools.types import ToolSpec, definition_digest

    defs = [
        {
            "name": f"mcp__srv__tool_{i}",
            "description": "Reads, searches and summarises project files. " * 8,
            "input_schema": {
                "type": "object",
                "required": ["p0"],
                "properties": {
                    f"p{j}": {"type": "string", "description": "a parameter of the tool " * 3}
                    for j in range(6)
                },
            },
        }
        for i in range(tools)
    ]
    plain = [ToolSpec(d["name"], "srv", d["name"], d) for d in defs]
    hashed = [ToolSpec(d["name"], "srv", d["name"], d, digest=definition_digest(d)) for d in defs]

    def timed(build: Any) -> float:
        started = time.perf_counter()
        for _ in range(repeat):
            build()
        return 1000 * (time.perf_counter() - started) / repeat

    base = timed(lambda: (deferral.definitions_cost(plain), tokens.estimate_tools([dict(d) for d in defs])))
    cached = timed(lambda: (deferral.definitions_cost(hashed), tokens.estimate_tools(defs)))
    return {
        "tools": tools,
        "kb": len(json.dumps(defs)) / 1000,
        "base_ms": base,
        "cached_ms": cached,
        "ratio": cached / base if base else 0.0,
    }


# ---------------------------------------------------------------------------------------------- report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--window", type=int, default=200_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not CORPUS.exists():
        print("corpus not found; tool output sizes fall back to fixed values", file=sys.stderr)
    sc = scenario(args.rounds)
    rows = []
    for policy in ("none", "claude-code", "precis"):
        r = asyncio.run(run_policy(policy, sc, args.window))
        rows.append(
            {
                "policy": policy,
                "billed": r.billed,
                "read_share": r.read_share,
                "largest": r.largest,
                "errors": r.errors,
                "summaries": r.summaries,
            }
        )
    base = next(r["billed"] for r in rows if r["policy"] == "claude-code")
    baseline = asyncio.run(loop_overhead(sc, args.window, sdk_body=True))
    overhead = asyncio.run(loop_overhead(sc, args.window))
    defs = definitions_estimate()
    if args.json:
        print(
            json.dumps(
                {"policies": rows, "loop": overhead, "loop_sdk_body": baseline, "definitions": defs}, indent=1
            )
        )
        return 0
    chars = sum(len(json.dumps(b)) for s in sc.steps for b in s.user)
    print(f"{args.rounds} tool rounds, {chars:,} characters of tool output, window {args.window:,}")
    print(
        "| policy | billed input-eq | × Claude-Code-like | cache-read share | largest request | errors | summaries |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['policy']} | {r['billed'] / 1e6:.2f}M | {r['billed'] / base:.3f} | {100 * r['read_share']:.1f} % "
            f"| {r['largest']:,} | {r['errors']} | {r['summaries']} |"
        )
    print(
        f"\nloop: {overhead['model_calls']} model calls in one turn, {overhead['wall_s']:.1f} s wall, server "
        f"{overhead['server_s']:.1f} s; engine overhead {overhead['overhead_ms_per_round']:.1f} ms per tool round "
        f"({100 * overhead['overhead_share']:.0f} % of the turn's wall time, {overhead['overhead_vs_server']:.2f}× "
        "the server's time)"
    )
    print(
        "  by context size (engine-thread CPU per round; the wall gap between a response and the next request), "
        "the SDK encoding each body / Précis encoding it message by message:"
    )
    for i, (old, new) in enumerate(
        zip(baseline.get("by_context", []), overhead.get("by_context", []), strict=False)
    ):
        print(
            f"  quarter {i + 1}: requests of {new['request_kb']:.0f} KB on average: CPU {old['cpu_ms']:.1f} / "
            f"{new['cpu_ms']:.1f} ms; gap {old['gap_ms']:.1f} / {new['gap_ms']:.1f} ms"
        )
    if overhead.get("growth") and baseline.get("growth"):
        print(
            f"  last quarter / first quarter: {baseline['growth']:.2f}× / {overhead['growth']:.2f}×; per round "
            f"{baseline['overhead_ms_per_round']:.1f} ms / {overhead['overhead_ms_per_round']:.1f} ms "
            f"({overhead['overhead_ms_per_round'] / baseline['overhead_ms_per_round']:.2f}×)"
        )
    print(
        f"MCP definitions ({defs['tools']} tools, {defs['kb']:.0f} KB) estimated per request build: "
        f"{defs['base_ms']:.2f} ms each time / {defs['cached_ms']:.3f} ms cached ({defs['ratio']:.3f}×)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
