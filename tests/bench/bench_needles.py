"""Needles through compaction: what survives one, two and three summaries, and where it is in the next request.

``python -m tests.bench.bench_needles [--seeds 3] [--segment 24] [--window 200000]``
``python -m tests.bench.bench_needles --server http://127.0.0.1:8080 --window 32768 --scale 0.1 --cold --record out.json``

Each seeded conversation carries 20 needles of six kinds in its first part: constraints, user preferences and
TODOs the user typed, decisions with their reason in the assistant's words, file paths read or written by tools
and exact error strings from failed tool calls. Filler exchanges follow; the conversation is compacted after the
needles and after each later filler segment (1x, 2x, 3x). After each compaction the next request is built by
the engine itself and every needle is looked for, verbatim, in the pinned instructions, the artifact ledger,
the summary and the verbatim tail. The summariser is the test server's deterministic one, or with ``--server``
a real Anthropic-compatible server (llama.cpp's llama-server with a local model): its summaries may be refused,
so there the compactions go the automatic way, which trims when a summary fails, as a full chat would.
``--scale`` shrinks the filler for a small model's window; ``--record`` writes what every summary request gave.
``--refuse``: the test server refuses every summary (the automatic way trims instead), like a model too weak to
summarise.

A needle not present in the next request is looked for with recall (the model's tool: the chat's own messages,
bm25) in the top 5, with a query written from the needle's question, not its text; the message found must hold
the needle verbatim.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import tempfile
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

KINDS = ("constraint", "preference", "todo", "decision", "path", "error")
USER_KINDS = ("constraint", "preference", "todo")  # the user's instructions
LEDGER_KINDS = ("path", "error")
PLACES = ("pins", "ledger", "summary", "tail")
RECALL_TOP = 5
REFUSAL = "I'm sorry, but I can't help with summarising this conversation."
WORDS = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
)


@dataclass(frozen=True, slots=True)
class Needle:
    kind: str
    text: str  # looked for verbatim
    question: str = ""  # what a model would ask recall to find it (not the needle's words)


def needles(rng: random.Random) -> list[Needle]:
    """20 needles, every string unique to its seed (a number no filler contains)."""
    n = rng.randrange(1000, 9999)
    out = [
        Needle(
            "constraint",
            f"Never add a dependency on requests-{n}{i}; only httpx is allowed.",
            f"May I depend on the package requests {n}{i}?",
        )
        for i in range(4)
    ]
    out += [
        Needle(
            "preference",
            f"I prefer British spelling in comments, style {n}{i}.",
            f"How should comments be spelt under style {n}{i}?",
        )
        for i in range(3)
    ]
    out += [
        Needle(
            "todo",
            f"TODO {n}{i}: add a --json flag to precis sessions later.",
            f"What is left to do for item {n}{i}?",
        )
        for i in range(3)
    ]
    out += [
        Needle(
            "decision",
            f"We decided on WAL mode {n}{i} because the CLI reads while the app writes.",
            f"What did we decide about the journal mode for {n}{i}, and why?",
        )
        for i in range(3)
    ]
    out += [
        Needle(
            "path", f"desktop/engine/needle_{n}_{i}.py", f"Which python file of needle {n} {i} was opened?"
        )
        for i in range(4)
    ]
    out += [
        Needle(
            "error",
            f"FileNotFoundError: conf/needle_{n}_{i}.toml is missing",
            f"What went wrong loading the config of needle {n} {i}?",
        )
        for i in range(3)
    ]
    return out


SCALE = [1.0]  # filler length multiplier (``--scale``)


def filler(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(max(1, int(words * SCALE[0]))))


async def plant(store: Any, sid: int, planted: list[Needle], rng: random.Random) -> None:
    """The needles in a realistic order: user turns, replies, tool rounds, with filler around them."""
    call = 0
    for needle in planted:
        if needle.kind in USER_KINDS:
            await store.add_message(
                sid, "user", [{"type": "text", "text": f"{filler(rng, 30)}. {needle.text}"}]
            )
            await store.add_message(
                sid, "assistant", [{"type": "text", "text": "Noted. " + filler(rng, 200)}]
            )
        elif needle.kind == "decision":
            await store.add_message(
                sid, "user", [{"type": "text", "text": "Which journal mode? " + filler(rng, 20)}]
            )
            await store.add_message(
                sid, "assistant", [{"type": "text", "text": f"{needle.text} {filler(rng, 200)}"}]
            )
        else:
            call += 1
            failed = needle.kind == "error"
            path = needle.text if not failed else needle.text.split()[1]
            use = {"type": "tool_use", "id": f"toolu_{call:04d}", "name": "read", "input": {"path": path}}
            result = {
                "type": "tool_result",
                "tool_use_id": use["id"],
                "content": needle.text if failed else filler(rng, 300),
                "is_error": failed,
            }
            await store.add_message(
                sid, "user", [{"type": "text", "text": "Look at the file. " + filler(rng, 20)}]
            )
            await store.add_message(sid, "assistant", [{"type": "text", "text": "Reading it."}, use])
            await store.add_message(sid, "user", [result])
            await store.add_message(sid, "assistant", [{"type": "text", "text": filler(rng, 150)}])


async def pad(store: Any, sid: int, rng: random.Random, exchanges: int) -> None:
    for _ in range(exchanges):
        await store.add_message(sid, "user", [{"type": "text", "text": "And then? " + filler(rng, 25)}])
        await store.add_message(sid, "assistant", [{"type": "text", "text": filler(rng, 2000)}])


def places(needle: Needle, request: dict[str, Any], record: Any) -> list[str]:
    """Where the needle is in the request: the summary block splits into summary, pins and ledger."""
    found = []
    stats = record.stats if record is not None else {}
    pins_text = str(stats.get("pins_text") or "")
    ledger_at = pins_text.find("<artifact-ledger>")
    pins, ledger = (pins_text[:ledger_at], pins_text[ledger_at:]) if ledger_at >= 0 else (pins_text, "")
    messages = request["messages"]
    head = str(messages[0]) if record is not None and messages else ""
    tail = str(messages[1:] if record is not None else messages)
    if needle.text in pins and needle.text in head:
        found.append("pins")
    if needle.text in ledger and needle.text in head:
        found.append("ledger")
    if record is not None and needle.text in record.summary and needle.text in head:
        found.append("summary")
    if needle.text in tail:
        found.append("tail")
    return found


Costs = list[dict[str, Any]]


async def recalled(store: Any, sid: int, needle: Needle) -> bool:
    """Whether recall, asked the needle's question, returns a message holding the needle in its top 5."""
    from desktop.tools.recall import message_text

    hits = await store.recall(sid, needle.question, RECALL_TOP)
    found = await store.recall_read(sid, [h.message_id for h in hits])
    return any(needle.text in message_text(m) for m in found)


@contextlib.asynccontextmanager
async def compaction_runtime(base_url: str, window: int) -> AsyncIterator[Any]:
    """A runtime in a fresh home against ``base_url`` with a ``window``-token window that compacts only when the
    benchmark asks; the environment it sets is put back afterwards."""
    from desktop.engine.config.secrets import Credentials
    from desktop.runtime import open_runtime

    with tempfile.TemporaryDirectory() as home:
        saved = {
            k: os.environ.get(k)
            for k in ("PRECIS_HOME", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "PRECIS_CONTEXT_WINDOW")
        }
        os.environ.update(
            PRECIS_HOME=home,
            ANTHROPIC_BASE_URL=base_url,
            ANTHROPIC_API_KEY="test-key",
            PRECIS_CONTEXT_WINDOW=str(window),
        )
        try:

            def adjust(settings: Any) -> None:
                settings.auto_compact_ratio = 0.95  # only the benchmark's own compactions

            async with open_runtime(
                credentials=Credentials(api_key="test-key", source="env"), background=False, adjust=adjust
            ) as runtime:
                yield runtime
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


async def run(
    seeds: int,
    segment: int,
    window: int,
    costs: Costs | None = None,
    warm: bool = True,
    server: str = "",
    refuse: bool = False,
) -> dict[tuple[str, int], dict[str, int]]:
    """{(kind, compactions): {"present": n, "recalled": n, "either": n, "recall": n, "total": n, place: n}} over
    every seed ("recall": found by recall; "recalled": found so and not present); each compaction's route and cost go to ``costs``. One chat turn
    before each compaction warms the cache, as a live session has it (``warm=False``: none, so the summary
    re-serialises the transcript). ``server``: a real server's base URL instead of the test server. ``refuse``:
    the test server refuses every summary."""
    from tests.fakeapi import FakeAnthropic
    from tests.fakeapi.replies import Summariser

    class Refusing(Summariser):
        def summarise(self, body: dict[str, Any], prompt_tokens: int, counter: Any) -> str:
            return REFUSAL

    table: dict[tuple[str, int], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    fake = None if server else FakeAnthropic(window=window)
    if fake is not None and refuse:
        fake.summariser = Refusing()
    with fake or contextlib.nullcontext():
        async with compaction_runtime(fake.base_url if fake else server, window) as runtime:
            engine = runtime.engine
            for seed in range(seeds):
                rng = random.Random(seed)
                planted = needles(rng)
                rng.shuffle(planted)
                sid = (await engine.store.create_session(f"needles {seed}", "claude-sonnet-4-6")).id
                await plant(engine.store, sid, planted, rng)
                for k in (1, 2, 3):
                    await pad(engine.store, sid, rng, segment)
                    engine.view(sid).invalidate()
                    made = len(await engine.store.compactions(sid))
                    if warm:
                        if fake is not None:
                            fake.queue_text("Understood. " + filler(rng, 40))
                        await engine.send(sid, "Go on with the plan.")
                    # In a small window the warming turn can pass the threshold: its automatic compaction is
                    # then this round's, and a manual one right after would find nothing new to summarise.
                    compactions = await engine.store.compactions(sid)
                    record = compactions[-1] if len(compactions) > made else None
                    if record is None:
                        if fake is not None and not refuse:
                            outcome = await engine.compact(sid, "manual")
                        else:  # a real model's summary may be refused: trim to half then, as a full chat does
                            half = (await engine.measure(sid)).used // 2
                            outcome = await engine.compact(sid, "auto", target=half)
                        if not outcome.ok or outcome.record is None:
                            raise RuntimeError(f"compaction {k} of seed {seed}: {outcome.message}")
                        record = outcome.record
                    stats = record.stats
                    if costs is not None:
                        costs.append(
                            {
                                "seed": seed,
                                "k": k,
                                "route": stats.get("summary_route") or "trimmed",
                                "summary": record.summary,
                                "error": stats.get("summary_error"),
                                "rejected": stats.get("rejected_summary"),
                                "before": stats.get("tokens_before"),
                                "saved": stats.get("tokens_saved"),
                                "cost": stats.get("summary_cost"),
                                "estimates": stats.get("route_estimates"),
                                "saving": stats.get("saving_per_turn"),
                                "read": (stats.get("summary_usage") or {}).get("cache_read_input_tokens"),
                            }
                        )
                    view = engine.view(sid)
                    g = await view.gather()
                    request = view.request(g)
                    for needle in planted:
                        row = table[(needle.kind, k)]
                        where = places(needle, request, g.compaction)
                        row["total"] += 1
                        row["present"] += bool(where)
                        found = await recalled(engine.store, sid, needle)  # asked even when present
                        row["recall"] += found
                        row["recalled"] += found and not where
                        row["either"] += bool(where) or found
                        for place in where:
                            row[place] += 1
    return table


def render(table: dict[tuple[str, int], dict[str, int]]) -> str:
    lines = [
        "| needle kind | compactions | present | else recalled (top 5) | present or recallable | recall alone "
        "(top 5) | pins | ledger | summary | tail |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for kind in KINDS:
        for k in (1, 2, 3):
            row = table[(kind, k)]
            total = row["total"] or 1
            cells = [f"{100 * row[c] / total:.0f} %" for c in ("present", "recalled", "either", "recall")] + [
                f"{100 * row[p] / total:.0f} %" for p in PLACES
            ]
            lines.append(f"| {kind} | {k} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_needles")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--segment", type=int, default=24, help="filler exchanges between compactions")
    parser.add_argument("--window", type=int, default=200_000)
    parser.add_argument("--cold", action="store_true", help="no chat turn before a compaction: a cold cache")
    parser.add_argument("--server", default="", help="a real Anthropic-compatible server's base URL")
    parser.add_argument("--scale", type=float, default=1.0, help="filler length multiplier (small windows)")
    parser.add_argument(
        "--record", default="", help="write every compaction's summary or refusal here (JSON)"
    )
    parser.add_argument("--refuse", action="store_true", help="the test server refuses every summary")
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    SCALE[0] = args.scale
    costs: Costs = []
    table = asyncio.run(
        run(
            args.seeds,
            args.segment,
            args.window,
            costs,
            warm=not args.cold,
            server=args.server,
            refuse=args.refuse,
        )
    )
    if args.record:
        with open(args.record, "w", encoding="utf-8") as fh:
            json.dump(costs, fh, ensure_ascii=False, indent=1)
    print(render(table))
    print()
    print(
        "| seed | compaction | route | tokens before | saved | cache read | summary cost | estimates (cached,"
        " transcript) | saving per turn |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for c in costs:
        other = c["estimates"] or {}
        print(
            f"| {c['seed']} | {c['k']} | {c['route']} | {c['before'] or 0:,} | {c['saved'] or 0:,} | {c['read'] or 0:,} | "
            f"${c['cost'] or 0:.4f} | "
            + ", ".join(f"${other[k]:.4f}" for k in ("cached", "transcript") if k in other)
            + f" | ${c['saving'] or 0:.4f} |"
        )
    for c in costs:
        if c["error"]:
            print(
                f"seed {c['seed']}, compaction {c['k']}: the summary was refused ({c['error']}); trimmed instead"
            )
    missed = [
        (kind, k, row["either"], row["total"])
        for (kind, k), row in sorted(table.items())
        if row["either"] < row["total"]
    ]
    if missed:
        print("targets missed (kind, compactions, present or recallable, total):", missed)
        return 1
    print("targets met: every kind 100 % present or recallable after 1, 2 and 3 compactions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
