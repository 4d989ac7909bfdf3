"""Token estimation (CONTRACT STUB: the estimator work replaces the bodies, keeps the signatures).

Public API other modules rely on:
    estimate_text(text) -> int
    estimate_block(block) -> int
    estimate_message(content) -> int            # content: list of blocks or a str; includes framing
    estimate_request(system, tools, messages) -> int
"""

from __future__ import annotations

import json
from typing import Any

from desktop.engine.types import Block

MESSAGE_OVERHEAD = 4
BLOCK_OVERHEAD = 3


def estimate_text(text: str) -> int:
    return (len(text.encode("utf-8")) + 3) // 4


def estimate_block(block: Block) -> int:
    kind = block.get("type")
    if kind == "text":
        return BLOCK_OVERHEAD + estimate_text(block.get("text", ""))
    if kind == "image":
        return 1600
    return BLOCK_OVERHEAD + estimate_text(json.dumps(block, ensure_ascii=False)) * 2


def estimate_message(content: list[Block] | str) -> int:
    if isinstance(content, str):
        return MESSAGE_OVERHEAD + estimate_text(content)
    return MESSAGE_OVERHEAD + sum(estimate_block(b) for b in content)


def estimate_request(system: str | list[Block] | None, tools: list[dict[str, Any]] | None,
                     messages: list[dict[str, Any]]) -> int:
    total = 0
    if system:
        total += estimate_message(system)
    if tools:
        total += estimate_text(json.dumps(tools, sort_keys=True)) * 2
    for m in messages:
        total += estimate_message(m["content"])
    return total
