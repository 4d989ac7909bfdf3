"""What one streaming update of a long reply costs to render, three ways, in one process.

Run: ``.venv/bin/python -m tests.bench.bench_stream_render`` (``--chars N``, ``--step N``, ``--json``).

A reply of ``--chars`` characters of mixed Markdown (headings, paragraphs, lists, tables, fenced Python code,
quotes, dollar math) grows by ``--step`` characters per update; each update builds the row's document the way
the chat does (render, ``setHtml`` on a fresh SafeTextDocument, layout at 600 px):

* md4c          Qt's own Markdown parser over the whole text: what the chat did while streaming before (a
                different renderer from the finished reply's, so the reply restyled when it ended);
* whole         markdown-it + Pygments over the whole text on every update (one renderer, no reuse);
* incremental   ``render_streaming``: the settled prefix from the cache, only the open last block rendered
                (what the chat does now).

Figures are medians per update over the last quarter of the stream (the longest texts), and ratios against
md4c measured in the same run. The exit status is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

PIECE = (
    "## Step {n}\n\nThe function below handles **case {n}** with `reverse()`; see the table for timings.\n\n"
    "| input | ms | note |\n|---|---|---|\n| small | {n} | fine |\n| large | {m} | *slower* |\n\n"
    "```python\ndef step_{n}(items: list[int]) -> list[int]:\n    # keep the order stable\n"
    "    return sorted(items, key=lambda x: (x % {n}, x))\n```\n\n"
    "- first point about {n}\n- second point, with a [link](https://example.com/{n})\n\n"
    "> A quoted remark about step {n}.\n\nThe cost grows like $O(n \\log n)$ for $n = {m}$.\n\n"
)


def reply_text(chars: int) -> str:
    parts, n = [], 1
    while sum(map(len, parts)) < chars:
        parts.append(PIECE.format(n=n, m=n * 17))
        n += 1
    return "".join(parts)[:chars]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chars", type=int, default=14_000)
    parser.add_argument("--step", type=int, default=60)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from PySide6.QtGui import QTextDocument
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from desktop.ui.transcript.markdown_render import SafeTextDocument, render_markdown
    from desktop.ui.transcript.markdown_stream import render_streaming

    features = QTextDocument.MarkdownFeature(
        QTextDocument.MarkdownFeature.MarkdownDialectGitHub.value
        | QTextDocument.MarkdownFeature.MarkdownNoHTML.value
    )
    text = reply_text(args.chars)
    render_markdown(text)  # typesets the formulas once (matplotlib's import is not a streaming cost)
    render_markdown.cache_clear()
    hint = 0

    def md4c(t: str) -> None:
        doc = SafeTextDocument()
        doc.setMarkdown(t, features)
        doc.setTextWidth(600)
        doc.size()

    def whole(t: str) -> None:
        doc = SafeTextDocument()
        doc.setHtml(render_markdown.__wrapped__(t, False, False, 0))
        doc.setTextWidth(600)
        doc.size()

    def incremental(t: str) -> None:
        nonlocal hint
        out, hint = render_streaming(t, hint=hint)
        doc = SafeTextDocument()
        doc.setHtml(out)
        doc.setTextWidth(600)
        doc.size()

    results: dict[str, float] = {}
    render_only: dict[str, float] = {}
    cuts = list(range(args.step, len(text) + 1, args.step))
    tail = cuts[len(cuts) * 3 // 4 :]
    for name, fn in (("md4c", md4c), ("whole", whole), ("incremental", incremental)):
        hint = 0
        times = []
        for n in cuts:
            start = time.perf_counter()
            fn(text[:n])
            if n in tail:
                times.append(time.perf_counter() - start)
        results[name] = statistics.median(times) * 1000
    hint = 0
    for name, render in (
        ("whole", lambda t: render_markdown.__wrapped__(t, False, False, 0)),
        ("incremental", lambda t: render_streaming(t, hint=hint)),  # noqa: B023
    ):
        times = []
        for n in cuts:
            start = time.perf_counter()
            out = render(text[:n])
            if name == "incremental":
                hint = out[1]
            if n in tail:
                times.append(time.perf_counter() - start)
        render_only[name] = statistics.median(times) * 1000
    del app
    if args.json:
        print(json.dumps({"per_update_ms": results, "render_only_ms": render_only, "chars": len(text)}))
        return
    print(
        f"Streaming a {len(text):,}-character reply, {args.step} characters per update "
        f"(medians of the last quarter, {len(tail)} updates):"
    )
    print("| way | per update (render + setHtml + layout) | × md4c | Markdown render alone |")
    print("|---|---:|---:|---:|")
    for name in ("md4c", "whole", "incremental"):
        alone = f"{render_only[name]:.2f} ms" if name in render_only else "(inside Qt)"
        print(f"| {name} | {results[name]:.2f} ms | {results[name] / results['md4c']:.2f} | {alone} |")


if __name__ == "__main__":
    main()
