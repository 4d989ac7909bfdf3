"""The user's own instructions, kept verbatim next to a summary (summaries paraphrase; rules must not drift)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from desktop.engine.compaction._shared import (
    Message,
    content_of,
    has_tool_result,
    head_tail,
    meta_of,
    role_of,
)
from desktop.engine.metering.tokens import estimate_text

BUDGET = 20_000
HEADER = "User instructions so far (verbatim):"
# A text worth keeping in part when it straddles the budget; below this, stop instead.
_MIN_PARTIAL_TOKENS = 200

_SLASH = re.compile(r"^/[A-Za-z][\w-]*(\s|$)")
# Meta flags marking rows the user did not type here (imports, synthetic continuations, command echoes).
_NOT_TYPED = ("imported", "synthetic", "command", "slash_command")


def user_text(msg: Message) -> str | None:
    """The text the user typed in ``msg``, or None when it is not a pinnable user instruction."""
    if role_of(msg) != "user" or has_tool_result(msg):
        return None
    meta = meta_of(msg)
    if any(meta.get(flag) for flag in _NOT_TYPED):
        return None
    text = "\n\n".join(str(b.get("text", "")) for b in content_of(msg) if b.get("type") == "text").strip()
    if not text or _SLASH.match(text):
        return None
    return text


def pinned_instructions(messages: Sequence[Message], budget: int = BUDGET) -> list[str]:
    """Verbatim user texts, newest first, deduplicated, within ``budget`` tokens.

    The text that straddles the budget is cut (head and tail kept, marked) when a useful part fits.
    """
    out: list[str] = []
    seen: set[str] = set()
    used = 0
    for msg in reversed(messages):
        text = user_text(msg)
        if text is None or text in seen:
            continue
        seen.add(text)
        cost = estimate_text(text)
        if used + cost <= budget:
            out.append(text)
            used += cost
            continue
        room = budget - used
        if room >= _MIN_PARTIAL_TOKENS:
            out.append(_fit(text, room))
        break
    return out


def _fit(text: str, tokens: int) -> str:
    """Cut ``text`` to about ``tokens`` tokens keeping its start and end (estimate-driven, so it shrinks until it fits)."""
    chars = len(text)
    while chars > 0:
        chars = int(chars * 0.8)
        cut = head_tail(text, chars)
        if estimate_text(cut) <= tokens:
            return cut
    return ""


def render_pins(texts: Sequence[str]) -> str:
    """One block for the model: chronological order (``texts`` is newest first), each message separated."""
    if not texts:
        return ""
    parts = [f"[{n}]\n{text}" for n, text in enumerate(reversed(texts), start=1)]
    return HEADER + "\n\n" + "\n\n".join(parts)
