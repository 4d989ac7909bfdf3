"""Choose what a summary replaces: everything before a verbatim tail of recent messages."""

from __future__ import annotations

from collections.abc import Sequence

from desktop.engine.compaction._shared import Message, content_of, has_real_text, is_plain_user
from desktop.engine.tokens import estimate_message


def split_tail(messages: Sequence[Message], window: int | None, *, min_tokens: int = 10_000,
               min_text_messages: int = 5, max_tokens: int = 40_000,
               max_fraction: float = 0.5) -> tuple[list[Message], list[Message]]:
    """Split post-boundary ``messages`` into (head to summarise, verbatim tail).

    The tail grows from the newest message until it holds ``min_tokens`` and ``min_text_messages`` messages with
    real text, but stops before exceeding min(``max_tokens``, ``max_fraction`` × window). It then moves earlier to
    a clean cut: a user message with no tool_result blocks, so no tool_use is separated from its result. That
    move may take the tail over the cap (one long agentic turn cannot be split); an empty head means there is
    nothing to compact.
    """
    if not messages:
        return [], []
    cap = max_tokens if not window else min(max_tokens, int(window * max_fraction))
    tokens = texts = 0
    start = len(messages)
    for i in range(len(messages) - 1, -1, -1):  # only the tail is estimated: O(tail), not O(history)
        size = estimate_message(content_of(messages[i]))
        if start < len(messages) and tokens + size > cap:
            break
        tokens += size
        texts += has_real_text(messages[i])
        start = i
        if tokens >= min_tokens and texts >= min_text_messages:
            break
    cut = next((j for j in range(start, -1, -1) if is_plain_user(messages[j])), 0)
    return list(messages[:cut]), list(messages[cut:])
