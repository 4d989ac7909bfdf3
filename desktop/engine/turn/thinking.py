"""Extended thinking: which models take it, and the ``thinking`` parameter a chat's requests carry.

A chat turns thinking on in its own state (``{"thinking": true}``); the budget is a setting. The API wants the
budget at least 1,024 tokens and below ``max_tokens``, so it is fitted inside the output limit rather than
growing it (the context gauge reserves ``max_output_tokens`` for the reply either way). Thinking blocks come
back with their signatures and are stored and sent back unchanged (``compaction.request_shape`` keeps only
signed ones, as the API requires).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MIN_BUDGET = 1_024
# Claude 3.7 Sonnet and every Claude 4 model (Opus, Sonnet, Haiku), under Anthropic's ids and the dotted ids
# of routers ("anthropic/claude-sonnet-4.5").
_THINKING_MODELS = re.compile(r"claude-(?:3[-.]7-sonnet|(?:opus|sonnet|haiku)-[4-9])", re.IGNORECASE)


def supports_thinking(model: str) -> bool:
    return bool(_THINKING_MODELS.search(model or ""))


def thinking_enabled(state: Mapping[str, Any]) -> bool:
    return state.get("thinking") is True


def thinking_param(
    state: Mapping[str, Any], model: str, budget: int, max_tokens: int
) -> dict[str, Any] | None:
    """The request's ``thinking`` value, or None when the chat has it off, the model lacks it, or the output
    limit leaves no room for the minimum budget beside a reply."""
    if not thinking_enabled(state) or not supports_thinking(model):
        return None
    fitted = min(max(budget, MIN_BUDGET), max_tokens - MIN_BUDGET)
    if fitted < MIN_BUDGET:
        return None
    return {"type": "enabled", "budget_tokens": fitted}
