"""A small local model as the summariser: the share of compactions that end with an accepted summary, with and
without the section-by-section salvage (desktop/engine/compaction/salvage.py).

``python -m tests.bench.bench_small_model --server http://127.0.0.1:8099 [--compactions 8] [--window 8192]
[--salvage both|on|off]``

A real transcript of the corpus (``--transcript``, relative to the corpus folder) is written into a fresh store
in segments; after each segment the chat is compacted the automatic way (a refused summary trims, as a full chat
does), once with the salvage and once without (``SummaryMaker.salvage_sections``; ``--salvage on`` runs only the
first, whose figures also say how many summaries were accepted as first written). The summariser is the server
given, an Anthropic-compatible one such as llama.cpp's ``llama-server -m model.gguf --port 8099 -c 8192``. The
breaker is reset before each compaction so every one asks for a summary. Without ``--server`` nothing is run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

DEFAULT_TRANSCRIPT = "entire-cli/24/ac2c6a5ad4/0/full.jsonl"  # 23 exchanges, about 14K tokens


def recording(replies: list[dict[str, Any]]) -> contextlib.AbstractContextManager[None]:
    """Every summary and section request's reply, appended to ``replies`` while the context lasts."""
    from desktop.engine.providers.provider import AnthropicProvider

    @contextlib.contextmanager
    def patched() -> Iterator[None]:
        complete = AnthropicProvider.complete

        async def record(self: AnthropicProvider, request: dict[str, Any]) -> tuple[str, Any, str | None]:
            text, usage, stop = await complete(self, request)
            asked = re.search(
                r"the section “([^”]+)”", json.dumps(request["messages"][-1], ensure_ascii=False)
            )
            replies.append(
                {
                    "request": f"section {asked.group(1)}" if asked else "summary",
                    "max_tokens": request.get("max_tokens"),
                    "output_tokens": usage.output_tokens,
                    "stop": stop,
                    "reply": text,
                }
            )
            return text, usage, stop

        AnthropicProvider.complete = record  # type: ignore[method-assign]
        try:
            yield
        finally:
            AnthropicProvider.complete = complete  # type: ignore[method-assign]

    return patched()


class _SalvageLog(logging.Handler):
    """Why each salvage failed, as the summary maker logs it, counted by the section problems it names."""

    def __init__(self, counts: Counter[str]) -> None:
        super().__init__(logging.INFO)
        self.counts = counts

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("summary not salvaged: "):
            reasons = re.findall(r"([A-Z][\w ]+?): ([a-z][^;)]*)", message) or [("summary", message[22:100])]
            self.counts.update(f"{title}: {problem}" for title, problem in reasons)


async def run(
    server: str,
    transcript: str,
    compactions: int,
    window: int,
    salvage: bool,
    replies: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """{"accepted": n, "total": n, "as_written": n, "sources": Counter of section sources, "errors": Counter of
    why a compaction ended without a summary, "seconds": [each compaction's], "not_asked": compactions that
    asked for no summary}. Every compaction that asked for a summary counts in ``total``, also
    one that ended with nothing written (a summary not smaller than what it replaced)."""
    from desktop.engine.compaction.summary_maker import SummaryMaker
    from tests.bench.bench_needles import compaction_runtime
    from tests.bench.bench_replay import load_scenario
    from tests.corpus import corpus_dir

    scenario = load_scenario(corpus_dir() / transcript)
    per = max(1, len(scenario.steps) // compactions)
    out: dict[str, Any] = {
        "accepted": 0,
        "total": 0,
        "not_asked": 0,
        "as_written": 0,
        "sources": Counter(),
        "errors": Counter(),
        "seconds": [],
        "unsalvaged": Counter(),
    }
    replies = replies if replies is not None else []
    was, SummaryMaker.salvage_sections = SummaryMaker.salvage_sections, salvage
    why, logger = _SalvageLog(out["unsalvaged"]), logging.getLogger("desktop.engine.compaction.summary_maker")
    level = logger.level
    logger.addHandler(why)
    logger.setLevel(logging.INFO)
    try:
        with recording(replies):
            async with compaction_runtime(server, window) as runtime:
                await _compactions(runtime.engine, scenario, per, compactions, out, replies)
    finally:  # put back for whatever runs next in this process
        SummaryMaker.salvage_sections = was
        logger.removeHandler(why)
        logger.setLevel(level)
    return out


async def _compactions(
    engine: Any, scenario: Any, per: int, compactions: int, out: dict[str, Any], replies: list[dict[str, Any]]
) -> None:
    """Write the transcript in ``compactions`` segments, compacting after each; the figures go to ``out``."""
    sid = (await engine.store.create_session("small model", "claude-sonnet-4-6")).id
    for k in range(compactions):
        for step in scenario.steps[k * per : (k + 1) * per]:
            await engine.store.add_message(sid, "user", step.user)
            await engine.store.add_message(sid, "assistant", step.reply)
        await engine.store.update_state(sid, {"breaker_failures": 0, "breaker_trims": 0})
        engine.view(sid).invalidate()
        known, asked_before = {c.id for c in await engine.store.compactions(sid)}, len(replies)
        half = (await engine.measure(sid)).used // 2
        started = time.monotonic()
        outcome = await engine.compact(sid, "auto", target=half)
        out["seconds"].append(round(time.monotonic() - started))
        made = [c for c in await engine.store.compactions(sid) if c.id not in known]
        summary = next((c for c in made if c.trigger != "snip"), None)
        if not any(r["request"] == "summary" for r in replies[asked_before:]):
            # Trimmed (or nothing done) without asking for a summary, nothing being old enough to summarise: no
            # summary's outcome.
            out["not_asked"] += 1
            print(
                f"  compaction {k + 1}: no summary request ({outcome.message})", file=sys.stderr, flush=True
            )
            continue
        out["total"] += 1
        if summary is not None:  # a snip after it (to meet the target) does not undo it
            out["accepted"] += 1
            sources = summary.stats.get("section_sources") or {}
            out["as_written"] += not sources
            out["sources"].update(sources.values())
        else:
            why = made[0].stats.get("summary_error") if made else ""
            out["errors"][str(why or outcome.message)[:80]] += 1
        print(
            f"  compaction {k + 1}: {'summary' if summary else 'trimmed' if made else 'nothing written'}"
            f" in {out['seconds'][-1]} s",
            file=sys.stderr,
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_small_model")
    parser.add_argument(
        "--server", default="", help="an Anthropic-compatible server's base URL (llama-server)"
    )
    parser.add_argument("--transcript", default=DEFAULT_TRANSCRIPT, help="relative to the corpus folder")
    parser.add_argument("--compactions", type=int, default=8)
    parser.add_argument("--window", type=int, default=8192)
    parser.add_argument(
        "--salvage",
        choices=("both", "on", "off"),
        default="both",
        help="the passes to run: without the salvage, with it, or both (the default)",
    )
    parser.add_argument(
        "--record", default="", help="write every summary and section request's reply here (JSON)"
    )
    args = parser.parse_args(argv)
    if not args.server:
        print("bench_small_model: no --server given, nothing run")
        return 0
    replies: dict[str, list[dict[str, Any]]] = {}
    for salvage in {"both": (False, True), "on": (True,), "off": (False,)}[args.salvage]:
        mine = replies.setdefault("salvage on" if salvage else "salvage off", [])
        result = asyncio.run(run(args.server, args.transcript, args.compactions, args.window, salvage, mine))
        if args.record:
            with open(args.record, "w", encoding="utf-8") as fh:
                json.dump(replies, fh, ensure_ascii=False, indent=1)
        share = result["accepted"] / result["total"] if result["total"] else 0.0
        print(
            f"salvage {'on ' if salvage else 'off'}: {result['accepted']} of {result['total']} compactions "
            f"ended with an accepted summary ({100 * share:.0f} %), {result['as_written']} of them as first "
            f"written; sections: {dict(result['sources'])}; refusals: {dict(result['errors'])}; "
            f"seconds per compaction: {result['seconds']}; trimmed without asking: {result['not_asked']}; "
            f"sections the salvage could not get: {dict(result['unsalvaged'])}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
