"""Rendering a reply while it streams, with the same renderer as the finished reply, re-rendering only its end.

A streamed reply only grows, and every top-level Markdown block but the last is closed by the block after it:
nothing appended can change it. So the text splits at the start of its last top-level block; the part before
(the settled prefix) renders once through the cached ``render_markdown`` and stays cached while the last block
grows, and only the open tail is parsed and rendered again per update. Concatenating the two renders gives the
same HTML as rendering the whole text, except where a block refers to another (reference-style link
definitions, footnotes): a text with those is rendered whole.
"""

from __future__ import annotations

import re

from desktop.ui.transcript.markdown_render import extract_code_blocks, parse_blocks, render_markdown

# "[label]: url" definitions and "[^note]" footnotes tie blocks to each other: such a text is rendered whole.
_CROSS_REFERENCE = re.compile(r"^ {0,3}\[[^\]\n]+\]:|\[\^", re.MULTILINE)


def cross_referenced(text: str) -> bool:
    """The text has link definitions or footnotes: its blocks cannot be rendered apart."""
    return _CROSS_REFERENCE.search(text) is not None


def open_tail_start(text: str, hint: int = 0) -> int:
    """Offset where the last top-level block of ``text`` starts; ``hint`` is a block start found earlier (for a
    text that only grew since), so only the text from there on is parsed."""
    if hint < 0 or hint > len(text) or (hint and text[hint - 1] != "\n"):
        hint = 0
    tail = text[hint:]
    last_line = 0
    for token in parse_blocks(tail):
        if token.level == 0 and token.nesting >= 0 and token.map:
            last_line = token.map[0]
    if last_line == 0:
        return hint
    offset = 0
    for _ in range(last_line):
        offset = tail.index("\n", offset) + 1
    return hint + offset


def render_streaming(
    text: str, dark: bool = False, breaks: bool = False, code_start: int = 0, hint: int = 0
) -> tuple[str, int]:
    """(HTML, split): the HTML ``render_markdown(text, ...)`` gives, computed from the cached render of the
    settled prefix plus a fresh render of the open tail. Pass the returned split back as ``hint`` next time."""
    if cross_referenced(text):
        return render_markdown(text, dark, breaks, code_start), 0
    split = open_tail_start(text, hint)
    if split == 0:
        return _render_uncached(text, dark, breaks, code_start), 0
    prefix, tail = text[:split], text[split:]
    head = render_markdown(prefix, dark, breaks, code_start)
    return head + _render_uncached(tail, dark, breaks, code_start + len(extract_code_blocks(prefix))), split


def _render_uncached(text: str, dark: bool, breaks: bool, code_start: int) -> str:
    # The open tail changes on every update: keeping each version in render_markdown's LRU would only evict the
    # finished messages it is there for.
    return render_markdown.__wrapped__(text, dark, breaks, code_start)
