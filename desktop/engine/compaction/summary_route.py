"""How a summary is asked for, by estimated cost: the chat's own cached request with a summarise instruction
appended (its prefix is a cache read while the cache is warm), or the transcript re-serialised for the summary
model (cheaper when that model is much cheaper, or the cache is cold). A request that re-serialises history
writes all of it again; appending to the real request reads it at the chat model's cache-read price (a tenth of
the input price on most models, less on some). Both are priced by ``ModelInfo.cost``, price cliffs included.
"""

from __future__ import annotations

from typing import Literal

from msgspec import Struct

from desktop.engine.compaction.citations import RULE as CITE_RULE
from desktop.engine.compaction.summary_prompt import MARKER, SECTION_RULES, UPDATE_RULES, length
from desktop.engine.config.catalog import ModelInfo
from desktop.engine.types import MessagesRequest, Usage

Route = Literal["cached", "transcript"]
INSTRUCTION_TOKENS = 600  # the appended instruction, about
TRANSCRIPT_PROMPT_TOKENS = 1_000  # the summary system prompt and instructions around a transcript


class Choice(Struct):
    route: Route
    model: str
    estimates: dict[str, float]  # USD per route (relative units when a price is unknown)
    most: float = 0.0  # the chosen route with every request it may add: a section request for each section


def cached_cost(chat: ModelInfo, prefix_tokens: int, output_tokens: int, warm: bool) -> float:
    """The chat's request with the instruction appended: its prefix read from the cache (or written again when
    cold), the instruction and the reply. Unknown prices count as 1 and 5 per million so routes still compare."""
    usage = Usage(
        input_tokens=INSTRUCTION_TOKENS,
        output_tokens=output_tokens,
        cache_read_input_tokens=prefix_tokens if warm else 0,
        cache_creation_input_tokens=0 if warm else prefix_tokens,
    )
    return chat.priced().cost(usage) or 0.0


def transcript_cost(small: ModelInfo, transcript_tokens: int, output_tokens: int) -> float:
    usage = Usage(input_tokens=transcript_tokens + TRANSCRIPT_PROMPT_TOKENS, output_tokens=output_tokens)
    return small.priced().cost(usage) or 0.0


FIRST_SUMMARY_TOKENS = 1_024  # a first summary's reply, about


def expected_output(previous_tokens: int, cap: int) -> int:
    """Tokens the summary reply will take: an update restates the previous summary section by section and adds
    the new part, so it is longer than the summary it updates."""
    return min(cap, FIRST_SUMMARY_TOKENS + max(0, previous_tokens))


def salvage_cost(info: ModelInfo, route: Route, prompt_tokens: int) -> float:
    """What the section requests of a refused summary may add at most: each re-reads the chat's cached prefix
    (the cached route) or the transcript, written to the cache by the first and read by the others, and each
    replies with at most SECTION_MAX_TOKENS."""
    from desktop.engine.compaction.salvage import (  # with the summary, not the gauge
        MAX_ASKS,
        SECTION_MAX_TOKENS,
    )

    priced = info.priced()
    if route == "cached":
        one = Usage(
            input_tokens=INSTRUCTION_TOKENS,
            output_tokens=SECTION_MAX_TOKENS,
            cache_read_input_tokens=prompt_tokens,
        )
        return MAX_ASKS * (priced.cost(one) or 0.0)
    first = Usage(
        input_tokens=INSTRUCTION_TOKENS,
        output_tokens=SECTION_MAX_TOKENS,
        cache_creation_input_tokens=prompt_tokens,
    )
    rest = Usage(
        input_tokens=INSTRUCTION_TOKENS,
        output_tokens=SECTION_MAX_TOKENS,
        cache_read_input_tokens=prompt_tokens,
    )
    return (priced.cost(first) or 0.0) + (MAX_ASKS - 1) * (priced.cost(rest) or 0.0)


def choose(
    chat: ModelInfo,
    small: ModelInfo,
    *,
    prefix_tokens: int,
    transcript_tokens: int,
    output_tokens: int,
    warm: bool,
    cached_fits: bool,
) -> Choice:
    """The cheaper way to the summary by the estimate; the cached route only when it fits the chat window. Its
    ``most``: what it costs with every section request a refused reply may add (the card says it)."""
    estimates = {"transcript": round(transcript_cost(small, transcript_tokens, output_tokens), 6)}
    if cached_fits:
        estimates["cached"] = round(cached_cost(chat, prefix_tokens, output_tokens, warm), 6)
    if cached_fits and estimates["cached"] <= estimates["transcript"]:
        most = estimates["cached"] + salvage_cost(chat, "cached", prefix_tokens)
        return Choice("cached", chat.model, estimates, round(most, 6))
    most = estimates["transcript"] + salvage_cost(
        small, "transcript", transcript_tokens + TRANSCRIPT_PROMPT_TOKENS
    )
    return Choice("transcript", small.model, estimates, round(most, 6))


def cached_request(
    request: MessagesRequest,
    *,
    tail_start: str | None,
    previous: bool,
    focus: str | None,
    max_tokens: int,
    index: str = "",
) -> MessagesRequest:
    """The chat's request as it is (same system, tools and message prefix with its breakpoints), with the
    summarise instruction as one more text block at the end: everything before it is a cache read."""
    parts = [
        MARKER,
        "Stop the conversation here and write its working memory instead of a reply. Do not call "
        "tools and do not answer the last message; answer only with the summary.",
    ]
    if tail_start:
        parts.append(
            "Summarise the conversation above up to, not including, the message that begins: «"
            + " ".join(tail_start.split())[:160]
            + "». That message and the ones after it stay verbatim."
        )
    if previous:
        parts.append(
            "The conversation opens with the summary of its earliest part (<conversation-summary>). "
            + UPDATE_RULES
        )
    parts.append(SECTION_RULES)
    if index:  # the messages above cannot carry their ids (they are the cached prefix): listed here instead
        parts.append(index + "\n\n" + CITE_RULE)
    if focus and focus.strip():
        parts.append("The user asked the summary to focus on: " + focus.strip())
    parts.append(length(max_tokens))
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
    cost = info.cost(usage)
    return None if cost is None else round(cost, 6)
