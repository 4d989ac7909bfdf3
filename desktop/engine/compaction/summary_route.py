"""How a summary is asked for, by estimated cost: the chat's own cached request with a summarise instruction
appended (its prefix is a cache read while the cache is warm), or the transcript re-serialised for the summary
model (cheaper when that model is much cheaper, or the cache is cold). A request that re-serialises history
writes all of it again; appending to the real request reads it at a tenth of the price.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from desktop.engine.catalog import CACHE_READ_MULTIPLIER, CACHE_WRITE_MULTIPLIER, ModelInfo
from desktop.engine.compaction.citations import RULE as CITE_RULE
from desktop.engine.compaction.summary_prompt import MARKER, SECTION_RULES, UPDATE_RULES
from desktop.engine.types import Usage

Route = Literal["cached", "transcript"]
INSTRUCTION_TOKENS = 600  # the appended instruction, about
TRANSCRIPT_PROMPT_TOKENS = 1_000  # the summary system prompt and instructions around a transcript
MILLION = 1_000_000


@dataclass(slots=True)
class Choice:
    route: Route
    model: str
    estimates: dict[str, float]  # USD per route (relative units when a price is unknown)


def _prices(info: ModelInfo) -> tuple[float, float]:
    """(input, output) USD per million tokens; unknown prices count as 1 and 5 so routes still compare."""
    return (info.input_price if info.input_price is not None else 1.0,
            info.output_price if info.output_price is not None else 5.0)


def cached_cost(chat: ModelInfo, prefix_tokens: int, output_tokens: int, warm: bool) -> float:
    price_in, price_out = _prices(chat)
    prefix = CACHE_READ_MULTIPLIER if warm else CACHE_WRITE_MULTIPLIER
    return (prefix_tokens * prefix * price_in + INSTRUCTION_TOKENS * price_in + output_tokens * price_out) / MILLION


def transcript_cost(small: ModelInfo, transcript_tokens: int, output_tokens: int) -> float:
    price_in, price_out = _prices(small)
    return ((transcript_tokens + TRANSCRIPT_PROMPT_TOKENS) * price_in + output_tokens * price_out) / MILLION


FIRST_SUMMARY_TOKENS = 1_024  # a first summary's reply, about


def expected_output(previous_tokens: int, cap: int) -> int:
    """Tokens the summary reply will take: an update restates the previous summary section by section and adds
    the new part, so it is longer than the summary it updates."""
    return min(cap, FIRST_SUMMARY_TOKENS + max(0, previous_tokens))


def choose(chat: ModelInfo, small: ModelInfo, *, prefix_tokens: int, transcript_tokens: int, output_tokens: int,
           warm: bool, cached_fits: bool) -> Choice:
    """The cheaper way to the summary by the estimate; the cached route only when it fits the chat window."""
    estimates = {"transcript": round(transcript_cost(small, transcript_tokens, output_tokens), 6)}
    if cached_fits:
        estimates["cached"] = round(cached_cost(chat, prefix_tokens, output_tokens, warm), 6)
    if cached_fits and estimates["cached"] <= estimates["transcript"]:
        return Choice("cached", chat.model, estimates)
    return Choice("transcript", small.model, estimates)


def cached_request(request: dict[str, Any], *, tail_start: str | None, previous: bool, focus: str | None,
                   max_tokens: int, index: str = "") -> dict[str, Any]:
    """The chat's request as it is (same system, tools and message prefix with its breakpoints), with the
    summarise instruction as one more text block at the end: everything before it is a cache read."""
    parts = [MARKER, "Stop the conversation here and write its working memory instead of a reply. Do not call "
             "tools and do not answer the last message; answer only with the summary."]
    if tail_start:
        parts.append("Summarise the conversation above up to, not including, the message that begins: «"
                     + " ".join(tail_start.split())[:160] + "». That message and the ones after it stay verbatim.")
    if previous:
        parts.append("The conversation opens with the summary of its earliest part (<conversation-summary>). "
                     + UPDATE_RULES)
    parts.append(SECTION_RULES)
    if index:  # the messages above cannot carry their ids (they are the cached prefix): listed here instead
        parts.append(index + "\n\n" + CITE_RULE)
    if focus and focus.strip():
        parts.append("The user asked the summary to focus on: " + focus.strip())
    parts.append("Write the summary in the language the user writes in.")
    instruction = {"type": "text", "text": "\n\n".join(parts)}
    messages = list(request["messages"])
    last = messages[-1] if messages else None
    if last is not None and last.get("role") == "user":
        content = last.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        messages[-1] = {**last, "content": [*blocks, instruction]}
    else:
        messages.append({"role": "user", "content": [instruction]})
    return {**request, "messages": messages, "max_tokens": max_tokens}


def cost_of(info: ModelInfo, usage: Usage) -> float | None:
    """USD a call cost by its usage (None: the model's price is unknown)."""
    if info.input_price is None or info.output_price is None:
        return None
    price_in = info.input_price
    return round((usage.input_tokens * price_in + usage.cache_read_input_tokens * price_in * CACHE_READ_MULTIPLIER
                  + usage.cache_creation_input_tokens * price_in * CACHE_WRITE_MULTIPLIER
                  + usage.output_tokens * info.output_price) / MILLION, 6)
