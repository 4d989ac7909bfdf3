"""Estimator benchmarks: accuracy on real Claude Code transcripts, and per-turn speed.

Run: ``.venv/bin/python -m tests.bench.bench_estimator`` (``--json`` for machine-readable output).

Accuracy. For every request k > 1 of every session in the corpus (see tests/corpus.py), predict its prompt size
(input + cache_read + cache_creation) from request k-1's real prompt size plus an estimate of what
was added in between (k-1's assistant blocks, then the user / tool_result messages after it). System
prompt and tool schemas are not in the transcripts, which is why anchoring matters. Three methods:

* ``precis``    ContextMeter's formula (measure.anchored_used) with the family of the model, thinking the API drops at a new
                user turn removed, corrected by the per-model calibration (factor on the estimated
                part, plus the additive bias) learned online from past requests only;
* ``naive``     previous prompt + UTF-8 bytes/4 of the added text;
* ``codepilot`` re-estimate the whole visible transcript at bytes/4 + 10 per message, no anchor.

Speed. Per-turn cost of the whole-transcript estimate at 1,000 and 10,000 stored messages built from
corpus content, one new message per turn: MessageEstimateCache versus recomputing every message.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.engine.config.catalog import ModelCatalog
from desktop.engine.metering.calibration import Calibration
from desktop.engine.metering.measure import anchored_used
from desktop.engine.metering.tokens import MessageEstimateCache, estimate_block, estimate_message
from tests.corpus import corpus_files, corpus_or_exit

_CONVERSATION = ("user", "assistant")
Content = list[dict[str, Any]] | str


# --------------------------------------------------------------------------------- transcript reader


@dataclass(slots=True)
class Request:
    """One real API call: its model, real prompt size, and the messages added since the previous call."""

    model: str
    prompt: int
    added: list[tuple[str, Content]] = field(default_factory=list)


def _records(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if line:
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    continue


def read_requests(path: Path) -> list[Request]:
    """Main-chain requests of one transcript, up to its first compaction (after it the prompt is a summary
    plus the newest messages, so it no longer grows from the previous request by what was added).

    * one API response spans several lines sharing ``message.id``: the first line starts the request,
      the last line's usage is kept (input side is identical on all lines);
    * subagent files are all ``isSidechain``: there the sidechain *is* the main chain;
    * ``progress``, bookkeeping and ``isMeta`` records are skipped; so are ``<synthetic>`` replies
      (client-made, usage all zero), whose text is dropped as well;
    * reading stops at ``compact_boundary`` / ``isCompactSummary``.
    """
    records = list(_records(path))
    has_main = any(r.get("type") in _CONVERSATION and not r.get("isSidechain") for r in records)
    requests: list[Request] = []
    by_id: dict[str, Request] = {}
    pending: list[tuple[str, Content]] = []
    for r in records:
        kind = r.get("type")
        if (kind == "system" and r.get("subtype") == "compact_boundary") or r.get("isCompactSummary"):
            break
        if kind not in _CONVERSATION or r.get("isMeta") or (has_main and r.get("isSidechain")):
            continue
        msg = r.get("message") or {}
        content = msg.get("content")
        if content is None:
            continue
        if kind == "user":
            pending.append(("user", content))
            continue
        if msg.get("model") == "<synthetic>":
            continue
        usage = msg.get("usage") or {}
        prompt = sum(
            int(usage.get(k) or 0)
            for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        )
        mid = msg.get("id") or r.get("uuid")
        req = by_id.get(mid)
        if req is None:
            req = by_id[mid] = Request(model=msg.get("model") or "", prompt=prompt, added=pending)
            requests.append(req)
            pending = []
        req.prompt = prompt or req.prompt
        pending.append(("assistant", content))
    for req in requests:
        req.added = _merge_roles(req.added)
    return [r for r in requests if r.prompt > 0]


def _merge_roles(messages: list[tuple[str, Content]]) -> list[tuple[str, Content]]:
    """One message per role run, as sent: a response's lines join, consecutive tool results join."""
    out: list[tuple[str, Content]] = []
    for role, content in messages:
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        if out and out[-1][0] == role:
            out[-1][1].extend(blocks)  # type: ignore[union-attr]
        else:
            out.append((role, blocks))
    return out


# ------------------------------------------------------------------------------------------ methods


def _payload_bytes(content: Content) -> int:
    """UTF-8 bytes of the text a naive client would count (text, thinking, tool input, tool output)."""
    if isinstance(content, str):
        return len(content.encode())
    n = 0
    for b in content:
        kind = b.get("type")
        if kind == "text":
            n += len((b.get("text") or "").encode())
        elif kind == "thinking":
            n += len((b.get("thinking") or "").encode())
        elif kind == "tool_use":
            n += len(json.dumps(b.get("input"), ensure_ascii=False).encode())
        elif kind == "tool_result":
            c = b.get("content")
            n += _payload_bytes(c) if isinstance(c, list) else len(str(c or "").encode())
        else:
            n += len(json.dumps(b, ensure_ascii=False).encode())
    return n


def _is_human_turn(role: str, content: Content) -> bool:
    """A user message that is not only tool results starts a new turn."""
    if role != "user":
        return False
    if isinstance(content, str):
        return True
    return any(b.get("type") != "tool_result" for b in content)


def _without_thinking(content: Content) -> Content:
    if isinstance(content, str):
        return content
    return [b for b in content if b.get("type") not in ("thinking", "redacted_thinking")]


@dataclass(slots=True)
class _Errors:
    rel: list[float] = field(default_factory=list)

    def add(self, predicted: float, real: int) -> None:
        self.rel.append(abs(predicted - real) / real)

    def summary(self) -> dict[str, float]:
        xs = sorted(self.rel)
        if not xs:
            return {"n": 0, "median": float("nan"), "p95": float("nan"), "mean": float("nan")}
        p95 = xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]
        return {"n": len(xs), "median": statistics.median(xs), "p95": p95, "mean": statistics.fmean(xs)}


def accuracy(files: list[Path] | None = None, calibrate: bool = True) -> dict[str, dict[str, float]]:
    """Relative error of the three methods over every request k > 1 of every transcript."""
    catalog = ModelCatalog()
    calibration = Calibration()
    factor_only = Calibration()  # ablation: the factor learned as before, no bias
    errors = {
        "precis": _Errors(),
        "precis_factor_only": _Errors(),
        "precis_uncalibrated": _Errors(),
        "naive": _Errors(),
        "codepilot": _Errors(),
        "precis_no_resets": _Errors(),
    }
    for path in files or corpus_files():
        requests = read_requests(path)
        visible: list[Content] = []
        turn_thinking: list[dict[str, Any]] = []  # thinking blocks the previous prompt carried this turn
        for k, req in enumerate(requests):
            info = catalog.info(req.model)
            added: list[Content] = []
            removed: list[dict[str, Any]] = []
            for role, content in req.added:
                visible.append(content)
                if not info.keeps_thinking and _is_human_turn(role, content):
                    # Earlier turns' thinking leaves the context: what the anchor carried, and the
                    # reply just added, whose thinking never reaches the next prompt.
                    removed.extend(turn_thinking)
                    turn_thinking = []
                    added = [_without_thinking(c) for c in added]
                added.append(content)
            for c in added:
                if not isinstance(c, str):
                    turn_thinking.extend(b for b in c if b.get("type") in ("thinking", "redacted_thinking"))
            if k == 0:
                continue
            prev = requests[k - 1].prompt
            factor = calibration.factor(req.model) if calibrate else 1.0
            bias = calibration.bias(req.model) if calibrate else 0
            delta = sum(estimate_message(c, family=info.family) for c in added) - sum(
                estimate_block(b, family=info.family) for b in removed
            )
            predicted = anchored_used(prev, delta, factor=factor, bias=bias)  # ContextMeter's own formula
            errors["precis"].add(predicted, req.prompt)
            if req.prompt >= prev:  # the context did not shrink behind the transcript's back
                errors["precis_no_resets"].add(predicted, req.prompt)
            errors["precis_factor_only"].add(
                anchored_used(prev, delta, factor=factor_only.factor(req.model)), req.prompt
            )
            errors["precis_uncalibrated"].add(anchored_used(prev, delta), req.prompt)
            errors["naive"].add(prev + sum(_payload_bytes(c) for _, c in req.added) / 4, req.prompt)
            codepilot = sum(_payload_bytes(c) / 4 + 10 for c in visible)
            errors["codepilot"].add(codepilot, req.prompt)
            # Learn only now that the real count is known: the next request uses it, this one did not.
            calibration.observe_anchored(
                req.model, prev, delta, req.prompt, anchor_model=requests[k - 1].model
            )
            factor_only.observe(req.model, delta, req.prompt - prev)
    out = {name: e.summary() for name, e in errors.items()}
    out["calibration"] = {m: calibration.factor(m) for m in calibration.models()}  # type: ignore[assignment]
    out["bias"] = {m: calibration.bias(m) for m in calibration.models()}  # type: ignore[assignment]
    return out


# -------------------------------------------------------------------------------------------- speed


def _corpus_contents(limit: int = 4000) -> list[Content]:
    out: list[Content] = []
    for path in corpus_files():
        for req in read_requests(path):
            out.extend(c for _, c in req.added)
            if len(out) >= limit:
                return out
    return out


def speed(sizes: tuple[int, ...] = (1_000, 10_000), turns: int = 20) -> dict[int, dict[str, float]]:
    """Per-turn ms of estimating the whole transcript after appending one message."""
    pool = _corpus_contents()
    results: dict[int, dict[str, float]] = {}
    for size in sizes:
        messages = [(i, pool[i % len(pool)]) for i in range(size)]
        cache = MessageEstimateCache()
        cache.total(messages)  # warm: the app builds the cache once when a session opens
        cached_ms: list[float] = []
        full_ms: list[float] = []
        for t in range(turns):
            messages.append((size + t, pool[(size + t) % len(pool)]))
            start = time.perf_counter()
            cached = cache.total(messages)
            cached_ms.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            full = sum(estimate_message(c) for _, c in messages)
            full_ms.append((time.perf_counter() - start) * 1000)
            if cached != full:
                raise AssertionError(f"cache total {cached} != recomputed {full}")
        c, f = statistics.median(cached_ms), statistics.median(full_ms)
        results[size] = {"cached_ms": c, "full_ms": f, "speedup": f / c if c else float("inf")}
    return results


# --------------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args(argv)
    corpus_or_exit()
    acc = accuracy()
    spd = speed(turns=args.turns)
    if args.json:
        print(json.dumps({"accuracy": acc, "speed": spd}, indent=2))
        return 0
    base = acc["naive"]
    print("Accuracy: next-request prompt size, relative error over requests k>1")
    print(f"{'method':<22}{'n':>6}{'median':>10}{'p95':>10}{'mean':>10}{'median/naive':>14}{'p95/naive':>11}")
    for name in (
        "precis",
        "precis_factor_only",
        "precis_uncalibrated",
        "naive",
        "codepilot",
        "precis_no_resets",
    ):
        s = acc[name]
        print(
            f"{name:<22}{s['n']:>6}{s['median']:>10.3%}{s['p95']:>10.3%}{s['mean']:>10.3%}"
            f"{s['median'] / base['median']:>14.2f}{s['p95'] / base['p95']:>11.2f}"
        )
    print("calibration factors learned:", {m: round(f, 3) for m, f in acc["calibration"].items()})
    print("bias learned (tokens):", acc["bias"])
    print()
    print("Speed: whole-transcript estimate per turn (one new message), median of", args.turns, "turns")
    print(f"{'messages':>9}{'cached ms':>12}{'recompute ms':>15}{'speedup':>10}")
    for size, s in spd.items():
        print(f"{size:>9}{s['cached_ms']:>12.3f}{s['full_ms']:>15.2f}{s['speedup']:>9.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
