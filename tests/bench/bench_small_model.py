"""A small local model as the summariser: the share of compactions that end with an accepted summary, with and
without the section-by-section salvage (desktop/engine/compaction/salvage.py).

``python -m tests.bench.bench_small_model --server http://127.0.0.1:8099 [--compactions 8] [--window 8192]``

A real transcript of the corpus (``--transcript``, relative to the corpus folder) is written into a fresh store
in segments; after each segment the chat is compacted the automatic way (a refused summary trims, as a full chat
does), once with the salvage and once without (``Compactor.salvage_sections``). The summariser is the server
given, an Anthropic-compatible one such as llama.cpp's ``llama-server -m model.gguf --port 8099 -c 8192``. The
breaker is reset before each compaction so every one asks for a summary. Without ``--server`` nothing is run.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from typing import Any

DEFAULT_TRANSCRIPT = "entire-cli/24/ac2c6a5ad4/0/full.jsonl"  # 23 exchanges, about 14K tokens


async def run(server: str, transcript: str, compactions: int, window: int, salvage: bool) -> dict[str, Any]:
    """{"accepted": n, "total": n, "sources": Counter of section sources, "requests": summary requests made}."""
    from desktop.engine.compactor import Compactor
    from tests.bench.bench_needles import compaction_runtime
    from tests.bench.bench_replay import load_scenario
    from tests.corpus import corpus_dir

    scenario = load_scenario(corpus_dir() / transcript)
    per = max(1, len(scenario.steps) // compactions)
    out: dict[str, Any] = {"accepted": 0, "total": 0, "sources": Counter(), "errors": Counter()}
    Compactor.salvage_sections = salvage
    async with compaction_runtime(server, window) as runtime:
        engine = runtime.engine
        sid = (await engine.store.create_session("small model", "claude-sonnet-4-6")).id
        for k in range(compactions):
            for step in scenario.steps[k * per:(k + 1) * per]:
                await engine.store.add_message(sid, "user", step.user)
                await engine.store.add_message(sid, "assistant", step.reply)
            await engine.store.update_state(sid, {"breaker_failures": 0, "breaker_trims": 0})
            engine.view(sid).invalidate()
            known = {c.id for c in await engine.store.compactions(sid)}
            half = (await engine.measure(sid)).used // 2
            outcome = await engine.compact(sid, "auto", target=half)
            made = [c for c in await engine.store.compactions(sid) if c.id not in known]
            if not made:
                out["errors"][outcome.message[:80]] += 1
                continue
            out["total"] += 1
            summary = next((c for c in made if c.trigger != "snip"), None)
            if summary is not None:  # a snip after it (to meet the target) does not undo it
                out["accepted"] += 1
                out["sources"].update((summary.stats.get("section_sources") or {}).values())
            else:
                out["errors"][str(made[0].stats.get("summary_error") or outcome.message)[:80]] += 1
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_small_model")
    parser.add_argument("--server", default="", help="an Anthropic-compatible server's base URL (llama-server)")
    parser.add_argument("--transcript", default=DEFAULT_TRANSCRIPT, help="relative to the corpus folder")
    parser.add_argument("--compactions", type=int, default=8)
    parser.add_argument("--window", type=int, default=8192)
    args = parser.parse_args(argv)
    if not args.server:
        print("bench_small_model: no --server given, nothing run")
        return 0
    for salvage in (False, True):
        result = asyncio.run(run(args.server, args.transcript, args.compactions, args.window, salvage))
        share = result["accepted"] / result["total"] if result["total"] else 0.0
        print(f"salvage {'on ' if salvage else 'off'}: {result['accepted']} of {result['total']} compactions "
              f"ended with an accepted summary ({100 * share:.0f} %); sections: {dict(result['sources'])}; "
              f"refusals: {dict(result['errors'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
