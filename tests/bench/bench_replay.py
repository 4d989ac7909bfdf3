"""Replay benchmark: real Claude Code transcripts through four context policies against the fake API.

Run: ``.venv/bin/python -m tests.bench.bench_replay [--quick] [--json] [--policies none,precis] [--jobs 2]``.

For every transcript in the corpus (found by tests/corpus.py; subagent files included; fewer than 2 API calls
skipped) the main chain becomes a list of steps: the user turn (typed text or tool results) and the assistant
reply recorded for it. Each policy gets a fresh FakeAnthropic (window 200,000, its own prompt cache and counters, a FakeClock
advanced by the real gap between the recorded replies, 20 s when unknown) in replay mode, so the server answers
every chat request with the recorded reply and every policy faces the same conversation. Summary requests go
to the same server and are billed like any other request. See README-replay.md for the table and notes.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from desktop.engine.config.catalog import ModelCatalog
from desktop.engine.history.claude_code import api_messages as to_api
from desktop.engine.history.claude_code import read_transcript
from desktop.engine.types import Usage
from tests.bench.replay_policies import POLICIES, WINDOW, Block, Step, block_text
from tests.corpus import CORPUS, corpus_or_exit, relative_id
from tests.fakeapi import FakeAnthropic, FakeClock, TokenCounter

DEFAULT_GAP = 20.0
USER_TEXT_BUDGET = 20_000  # tokens of the user's newest typed texts expected verbatim in the final request
LAST_PAIRS = 10
BASELINES = ("codepilot", "claude-code")
# User texts that are client output or notices, not something the user typed.
_NOT_TYPED = (
    "<local-command",
    "<bash-",
    "<task-notification",
    "Caveat:",
    "[Request interrupted",
    "<command-",
    "[tool result ",
    "[Imported conversation]",
)
QUICK = (
    "spotter/tool_heavy.jsonl",
    "spotter/short.jsonl",
    "entire-cli/24/ac2c6a5ad4/0/full.jsonl",
    "entire-cli/84/6dc1c1b06e/0/full.jsonl",
    "spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
)


# ----------------------------------------------------------------------------------------- scenario


@dataclass(slots=True)
class Scenario:
    name: str
    model: str
    title: str
    steps: list[Step]


def _timestamp(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _key(block: Block) -> str | None:
    if block.get("type") == "tool_use":
        return "u:" + str(block.get("id"))
    if block.get("type") == "text":
        return "t:" + str(block.get("text", ""))[:200]
    return None


def load_scenario(path: Path) -> Scenario:
    """Main-chain steps of one transcript. Claude Code's own compact summaries are left out (every policy
    compacts its own way); thinking is dropped (signatures are redacted and the API drops old thinking);
    a final user turn without a recorded reply is not replayed."""
    t = read_transcript(path)
    msgs = [m for m in t.messages if not m.is_compact_summary]
    when: dict[str, float] = {}
    for m in msgs:
        ts = _timestamp(m.timestamp)
        if m.role == "assistant" and ts is not None:
            for b in m.content:
                k = _key(b)
                if k is not None:
                    when.setdefault(k, ts)
    api = to_api(msgs, keep_thinking=False)
    steps: list[Step] = []
    previous: float | None = None
    for i in range(0, len(api) - 1, 2):
        user, reply = api[i], api[i + 1]
        assert user["role"] == "user" and reply["role"] == "assistant"
        ts = next((when[k] for b in reply["content"] if (k := _key(b)) in when), None)
        gap = ts - previous if ts is not None and previous is not None else DEFAULT_GAP
        previous = ts if ts is not None else previous
        steps.append(Step(user["content"], reply["content"], max(0.0, gap)))
    return Scenario(relative_id(path), t.models[0] if t.models else "claude-sonnet-4-5", t.title, steps)


def typed_texts(step: Step) -> list[str]:
    if any(b.get("type") == "tool_result" for b in step.user):
        return []
    return [
        b["text"]
        for b in step.user
        if b.get("type") == "text" and b["text"].strip() and not b["text"].lstrip().startswith(_NOT_TYPED)
    ]


# ----------------------------------------------------------------------------------------- one run


@dataclass
class PolicyResult:
    policy: str
    transcript: str
    steps: int
    stats: dict[str, Any]
    errors: int = 0  # overflow (or other) errors that reached the user
    summaries: int = 0  # summary requests sent
    largest: int = 0  # largest request sent (tokens), rejected ones included
    user_text_share: float = 1.0
    user_texts_expected: int = 0
    tool_pair_share: float = 1.0
    tool_pairs_expected: int = 0
    # The same pairs in the first chat request after every summary (or trim): what the model was just doing,
    # right after its context was cut (the final request alone cannot tell, later calls refill the tail).
    pairs_after_kept: int = 0
    pairs_after_wanted: int = 0
    sent_turns: list[list[str]] = field(default_factory=list)
    delivered: int = 0
    replies_from_recording: int = 0
    chat_replies: int = 0
    breakdown: dict[str, float] = field(default_factory=dict)
    top: list[dict[str, Any]] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    summary_replies: float = 0.0  # the summaries' output, input-equivalent (not in ``billed``: see _replied)
    seconds: float = 0.0

    @property
    def billed(self) -> float:
        return float(self.stats["billed_input_equivalent"])

    @property
    def read_share(self) -> float:
        s = self.stats
        total = s["input_tokens"] + s["cache_creation_input_tokens"] + s["cache_read_input_tokens"]
        return s["cache_read_input_tokens"] / total if total else 0.0


def _billed(usage: dict[str, int], model: str | None = None) -> float:
    """One request's prompt in base-input-token units, by the model's own cache multipliers (``ModelInfo``:
    the app's one price formula; a model without a price counts at the standard multipliers)."""
    info = ModelCatalog({}).info(model).priced()
    prompt = Usage(
        input_tokens=usage.get("input_tokens", 0),
        cache_creation_input_tokens=usage.get("cache_creation_input_tokens", 0),
        cache_read_input_tokens=usage.get("cache_read_input_tokens", 0),
    )
    assert info.input_price
    return (info.cost(prompt) or 0.0) * 1_000_000 / info.input_price


def _replied(usage: dict[str, int], model: str | None = None) -> float:
    """A reply's output in base-input-token units (the model's output price over its input price). The chat
    replies are the recording's, the same under every policy, so only a summary's reply is a cost a policy
    chooses: it is reported beside the prompt bill, not in it."""
    info = ModelCatalog({}).info(model).priced()
    assert info.input_price and info.output_price
    return usage.get("output_tokens", 0) * info.output_price / info.input_price


def _all_text(body: dict[str, Any]) -> str:
    parts = [b.get("text", "") for b in body.get("system") or [] if isinstance(b, dict)]
    for m in body.get("messages") or []:
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        parts.extend(block_text(b) for b in blocks)
    return "\n".join(parts)


def _last_user(body: dict[str, Any]) -> list[Block]:
    m = next((m for m in reversed(body.get("messages") or []) if m.get("role") == "user"), None)
    content = m.get("content") if m else []
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def turn_signature(step: Step, body: dict[str, Any] | None) -> list[str]:
    """What of this step's turn the request actually carried: result ids and typed texts, in step order."""
    if body is None:
        return []
    last = _last_user(body)
    ids = {b.get("tool_use_id") for b in last if b.get("type") == "tool_result"}
    text = "\n".join(block_text(b) for b in last)
    out = []
    for b in step.user:
        if b.get("type") == "tool_result" and b.get("tool_use_id") in ids:
            out.append("r:" + b["tool_use_id"])
        elif b.get("type") == "text" and b["text"].strip() and b["text"].strip() in text:
            out.append("t:" + b["text"].strip()[:80])
    return out


def expected_signature(step: Step) -> list[str]:
    return [
        ("r:" + b["tool_use_id"]) if b.get("type") == "tool_result" else "t:" + b["text"].strip()[:80]
        for b in step.user
        if b.get("type") == "tool_result" or (b.get("type") == "text" and b["text"].strip())
    ]


def fidelity(steps: list[Step], body: dict[str, Any], counter: TokenCounter) -> tuple[float, int, float, int]:
    """(user-text share, expected count, last-10 tool pair share, expected count) on the final request."""
    everything = _all_text(body)
    expected: list[str] = []
    used = 0
    for step in reversed(steps):
        for text in reversed(typed_texts(step)):
            cost = counter.count_text(text)
            if used + cost > USER_TEXT_BUDGET:
                break
            used += cost
            expected.append(text.strip())
        else:
            continue
        break
    texts = sum(1 for t in expected if t in everything) / len(expected) if expected else 1.0
    ok, wanted = tool_pairs(steps, body)
    return texts, len(expected), ok / wanted if wanted else 1.0, wanted


def tool_pairs(steps: list[Step], body: dict[str, Any]) -> tuple[int, int]:
    """(kept, wanted): of the newest LAST_PAIRS tool calls of ``steps``' earlier replies whose results were sent,
    how many ``body`` holds with their results verbatim."""
    results: dict[str, str] = {}
    for step in steps:
        for b in step.user:
            if b.get("type") == "tool_result":
                results[b["tool_use_id"]] = block_text(b)
    calls = [
        b["id"]
        for step in steps[:-1]
        for b in step.reply
        if b.get("type") == "tool_use" and b["id"] in results
    ]
    wanted = calls[-LAST_PAIRS:]
    uses: set[str] = set()
    sent: dict[str, str] = {}
    for m in body.get("messages") or []:
        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            if b.get("type") == "tool_use":
                uses.add(b.get("id"))
            elif b.get("type") == "tool_result":
                sent[b.get("tool_use_id")] = block_text(b)
    return sum(1 for i in wanted if i in uses and sent.get(i) == results[i]), len(wanted)


async def run_policy(name: str, scenario: Scenario, window: int = WINDOW) -> PolicyResult:
    started = time.perf_counter()
    clock = FakeClock()
    min_cache = ModelCatalog({}).info(scenario.model).min_cache_tokens or 1024
    srv = FakeAnthropic(window=window, clock=clock, min_cache_tokens=min_cache)
    srv.start()
    replies = [s.reply for s in scenario.steps]
    srv.set_replay(copy.deepcopy(replies))
    policy = POLICIES[name]()
    result = PolicyResult(name, scenario.name, len(scenario.steps), {})
    last_chat: dict[str, Any] | None = None
    requests: list[dict[str, Any]] = []
    committed: list[int] = []  # step of every compaction the policy reported (Précis: rows written)
    try:
        await policy.start(srv, scenario.model, scenario.title)
        for i, step in enumerate(scenario.steps):
            if i:
                await policy.pause(clock, step.gap)
            outcome = await policy.turn(step)
            await policy.settle()
            committed.extend([i] * outcome.summaries)
            if not outcome.ok:
                result.errors += 1
                await policy.lost(step)
            if srv.replay_remaining != len(replies) - i - 1:  # a lost turn never consumed its reply
                srv.set_replay(copy.deepcopy(replies[i + 1 :]))
            step_chat: dict[str, Any] | None = None
            cut = outcome.summaries > 0  # a compaction was written this step (Précis: prepared ones too)
            for rec in srv.message_requests():
                summary = srv.summariser.wants_summary(rec.body)
                result.largest = max(result.largest, rec.prompt_tokens or 0)
                if rec.usage:
                    requests.append(
                        {
                            "step": i,
                            "summary": summary,
                            "prompt": rec.prompt_tokens,
                            "gap": step.gap,
                            "usage": rec.usage,
                            "billed": _billed(rec.usage, rec.body.get("model")),
                        }
                    )
                if summary:
                    result.summaries += 1
                    result.summary_replies += _replied(rec.usage or {}, rec.body.get("model"))
                    cut = True
                    continue
                if cut:
                    kept, wanted = tool_pairs(scenario.steps[: i + 1], rec.body)
                    result.pairs_after_kept += kept
                    result.pairs_after_wanted += wanted
                    cut = False
                step_chat = rec.body
                if rec.status == 200:
                    result.chat_replies += 1
                    result.replies_from_recording += rec.reply == step.reply
            srv.clear_log()
            sig = turn_signature(step, step_chat)
            result.sent_turns.append(sig)
            result.delivered += sig == expected_signature(step)
            last_chat = step_chat or last_chat
        if isinstance(policy, POLICIES["precis"]):
            result.compactions = await _compaction_rows(policy, requests, committed)
    finally:
        await policy.close()
        srv.stop()
    result.stats = srv.stats.as_dict()
    if last_chat is not None:
        t, te, p, pe = fidelity(scenario.steps, last_chat, srv.counter)
        result.user_text_share, result.user_texts_expected = t, te
        result.tool_pair_share, result.tool_pairs_expected = p, pe
    result.breakdown, result.top = _analyse(requests, set(committed))
    result.seconds = time.perf_counter() - started
    return result


async def _compaction_rows(
    policy: Any, requests: list[dict[str, Any]], steps: list[int]
) -> list[dict[str, Any]]:
    """Précis Compaction rows: tokens_before (the engine's measure when it compacted) and the server-measured
    size of the chat request that followed in the same step (the first one, before any reactive retry)."""
    rows = []
    for c, step in zip(await policy.compactions(), steps, strict=False):
        chat = next((r for r in requests if r["step"] == step and not r["summary"]), None)
        before = c.stats.get("tokens_before")
        after = chat["prompt"] if chat else None
        rows.append(
            {
                "id": c.id,
                "trigger": c.trigger,
                "step": step,
                "messages": c.stats.get("messages"),
                "summary_tokens": c.stats.get("summary_tokens"),
                "pins": c.stats.get("pins"),
                "tokens_before": before,
                "size_after": after,
                "saved": before - after if before and after else None,
            }
        )
    return rows


def _analyse(
    requests: list[dict[str, Any]], committed: set[int] | None = None
) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """Where the bill goes: summaries, warm chat requests, and chat requests that missed the cache.
    ``committed``: the steps at which Précis wrote a compaction; a miss there is the re-write after a summary
    even when the summary was asked for at an earlier step (prepared in the background)."""
    out = {"summary": 0.0, "warm": 0.0, "miss_ttl": 0.0, "miss_after_summary": 0.0, "miss_other": 0.0}
    summary_step = -1
    for r in requests:
        if r["summary"]:
            out["summary"] += r["billed"]
            summary_step = r["step"]
            continue
        u = r["usage"]
        read = u.get("cache_read_input_tokens", 0)
        if read >= 0.5 * r["prompt"]:
            r["kind"] = "warm"
        elif r["step"] == summary_step or r["step"] in (committed or ()):
            r["kind"] = "miss_after_summary"
        elif r["gap"] > 300:
            r["kind"] = "miss_ttl"
        else:
            r["kind"] = "miss_other"
        out[r["kind"]] += r["billed"]
    top = sorted(requests, key=lambda r: -r["billed"])[:5]
    return out, [{k: r.get(k) for k in ("step", "summary", "prompt", "billed", "kind", "gap")} for r in top]


def run_transcript(
    path: str, policies: list[str], window: int = WINDOW, model: str = ""
) -> list[dict[str, Any]]:
    """``model``: replay every policy as that model (its prices, cache minimum); "" keeps the recorded one."""
    scenario = load_scenario(Path(path))
    if model:
        scenario.model = model

    async def go() -> list[PolicyResult]:
        return [await run_policy(p, scenario, window) for p in policies]

    out = []
    for r in asyncio.run(go()):
        d = asdict(r)
        d.pop("sent_turns")
        d["billed"], d["read_share"] = r.billed, r.read_share
        out.append(d)
    return out


# ----------------------------------------------------------------------------------------- report


def _table(rows: list[dict[str, Any]], title: str) -> str:
    by = {r["policy"]: r for r in rows}
    head = (
        f"\n{title}\n| policy | billed input-eq | × codepilot | × claude-code | summary replies | "
        "× claude-code, replies billed | cache-read share | errors | summaries | largest req | user texts | "
        "last-10 tool pairs | last-10 pairs after cuts |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    cc = by.get("claude-code")
    yardstick = cc["billed"] + cc["summary_replies"] if cc else 0.0
    for r in rows:
        ratios = []
        for base in BASELINES:
            b = by.get(base)
            ratios.append(f"{r['billed'] / b['billed']:.3f}" if b and b["billed"] else "–")
        with_replies = r["billed"] + r["summary_replies"]
        lines.append(
            f"| {r['policy']} | {r['billed']:,.0f} | {ratios[0]} | {ratios[1]} | {r['summary_replies']:,.0f} | "
            f"{f'{with_replies / yardstick:.3f}' if yardstick else '–'} | {100 * r['read_share']:.1f} % | "
            f"{r['errors']} | {r['summaries']} | {r['largest']:,} | {100 * r['user_text_share']:.0f} % "
            f"({r['user_texts_expected']}) | {100 * r['tool_pair_share']:.0f} % ({r['tool_pairs_expected']}) | "
            f"{_share(r['pairs_after_kept'], r['pairs_after_wanted'])} |"
        )
    return "\n".join(lines)


def _share(kept: int, wanted: int) -> str:
    return f"{100 * kept / wanted:.0f} % ({wanted})" if wanted else "–"


def totals(results: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Sums over transcripts; fidelity shares are means over transcripts with something expected."""
    merged: dict[str, dict[str, Any]] = {}
    for per in results:
        for r in per:
            t = merged.setdefault(
                r["policy"],
                {
                    "policy": r["policy"],
                    "billed": 0.0,
                    "summary_replies": 0.0,
                    "errors": 0,
                    "summaries": 0,
                    "largest": 0,
                    "_in": 0,
                    "_read": 0,
                    "_t": [],
                    "_p": [],
                    "user_texts_expected": 0,
                    "tool_pairs_expected": 0,
                    "pairs_after_kept": 0,
                    "pairs_after_wanted": 0,
                },
            )
            s = r["stats"]
            t["billed"] += r["billed"]
            t["summary_replies"] += r["summary_replies"]
            t["errors"] += r["errors"]
            t["summaries"] += r["summaries"]
            t["largest"] = max(t["largest"], r["largest"])
            t["pairs_after_kept"] += r["pairs_after_kept"]
            t["pairs_after_wanted"] += r["pairs_after_wanted"]
            t["_in"] += s["input_tokens"] + s["cache_creation_input_tokens"] + s["cache_read_input_tokens"]
            t["_read"] += s["cache_read_input_tokens"]
            if r["user_texts_expected"]:
                t["_t"].append(r["user_text_share"])
                t["user_texts_expected"] += r["user_texts_expected"]
            if r["tool_pairs_expected"]:
                t["_p"].append(r["tool_pair_share"])
                t["tool_pairs_expected"] += r["tool_pairs_expected"]
    out = []
    for t in merged.values():
        t["read_share"] = t["_read"] / t["_in"] if t["_in"] else 0.0
        t["user_text_share"] = sum(t["_t"]) / len(t["_t"]) if t["_t"] else 1.0
        t["tool_pair_share"] = sum(t["_p"]) / len(t["_p"]) if t["_p"] else 1.0
        out.append({k: v for k, v in t.items() if not k.startswith("_")})
    return out


def yardstick_report(results: list[list[dict[str, Any]]], window: int) -> str:
    """The yardstick's failures, and the totals over the transcripts where it completes (no turn lost).

    Its trigger is window − min(32K, 20K) − 13K of context: 167K at 200K but −1K at 32K, where it summarises
    before every request and still loses turns; a ratio against its bill there compares with a policy that
    did not do the work, so the comparison is also made on the transcripts it completes."""
    failed = [
        (per[0]["transcript"], r["errors"], r["billed"] + r["summary_replies"])
        for per in results
        for r in per
        if r["policy"] == "claude-code" and r["errors"]
    ]
    if not failed:
        return ""
    trigger = window - min(32_000, 20_000) - 13_000
    lines = [
        f"\nThe Claude-Code-like policy's trigger at this window: {trigger:,} tokens of context"
        + (" (below zero: it summarises before every request)" if trigger <= 0 else "")
    ]
    lines += [
        f"  it lost {n} turn(s) of {name} (its whole bill there {bill:,.0f})" for name, n, bill in failed
    ]
    complete = [per for per in results if all(r["errors"] == 0 for r in per if r["policy"] == "claude-code")]
    lines.append(
        _table(
            totals(complete),
            f"TOTAL where the Claude-Code-like policy completes ({len(complete)} of {len(results)} transcripts)",
        )
    )
    return "\n".join(lines)


def selected(quick: bool, only: list[str] | None) -> list[Path]:
    files = corpus_or_exit()
    if only:
        files = [f for f in files if any(o in str(f) for o in only)]
    elif quick:
        files = [f for f in files if str(f.relative_to(CORPUS)) in QUICK]
    keep = []
    for f in files:
        steps = load_scenario(f).steps
        if len(steps) >= 2 or only:
            keep.append(f)
    return keep


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a small subset of the corpus")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--files", default="", help="comma-separated substrings of corpus paths")
    ap.add_argument("--window", type=int, default=WINDOW, help="context window of every policy (tokens)")
    ap.add_argument("--jobs", type=int, default=2, help="transcripts replayed in parallel (processes)")
    ap.add_argument(
        "--model",
        default="",
        help="replay every transcript as this model (its catalog prices and "
        "cache minimum), e.g. claude-opus-5-5; default: each transcript's recorded model",
    )
    args = ap.parse_args(argv)
    policies = [p for p in args.policies.split(",") if p]
    files = selected(args.quick, [s for s in args.files.split(",") if s] or None)
    started = time.perf_counter()
    # Biggest first so the slowest transcript does not start last.
    files.sort(key=lambda f: -f.stat().st_size)
    if args.jobs > 1 and len(files) > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            results = list(
                pool.map(
                    run_transcript,
                    [str(f) for f in files],
                    [policies] * len(files),
                    [args.window] * len(files),
                    [args.model] * len(files),
                )
            )
    else:
        results = [run_transcript(str(f), policies, args.window, args.model) for f in files]
    total = totals(results)
    elapsed = time.perf_counter() - started
    if args.json:
        json.dump(
            {"transcripts": results, "total": total, "seconds": elapsed}, sys.stdout, indent=1, default=str
        )
        print()
        return 0
    for per in results:
        print(_table(per, f"{per[0]['transcript']}  ({per[0]['steps']} requests)"))
    print(_table(total, "TOTAL (fidelity: mean over transcripts)"))
    print(yardstick_report(results, args.window))
    for per in results:
        for r in per:
            if r["policy"] == "precis":
                b = r["breakdown"]
                print(
                    f"\nprécis bill by kind, {r['transcript']}: "
                    + ", ".join(f"{k} {v:,.0f}" for k, v in b.items())
                )
                for c in r["compactions"]:
                    print(f"  compaction {c}")
    kinds: dict[str, dict[str, float]] = {}
    for per in results:
        for r in per:
            into = kinds.setdefault(r["policy"], {})
            for k, v in r["breakdown"].items():
                into[k] = into.get(k, 0.0) + v
    for name, b in kinds.items():
        print(f"\nbill by kind, total, {name}: " + ", ".join(f"{k} {v:,.0f}" for k, v in b.items()))
    print(f"\n{len(files)} transcripts, {elapsed:.1f} s" + (f", as {args.model}" if args.model else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
