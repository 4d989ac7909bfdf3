"""Deferred MCP tools: when their definitions would take more than DEFER_SHARE of the window, requests offer two
small tools instead, one to search the deferred tools and one to call any of them by name.

The request's tool list stays the same for the whole session (tools come first in the cached prefix: loading
definitions one by one would re-write the whole cache each time), and the permission prompt, the audit log and
the result are those of the real tool the proxy names.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from desktop.engine.metering.tokens import estimate_text
from desktop.tools.types import ToolSpec

DEFER_SHARE = 0.10
SEARCH = "tool_search"
CALL = "tool_call"
MAX_MATCHES = 5

SEARCH_DEFINITION: dict[str, Any] = {
    "name": SEARCH,
    "description": (
        "Search the tools of this chat's MCP servers, which are not listed here to save room. Give "
        "keywords; the answer lists the matching tools with their descriptions and input schemas. "
        f"Call one with {CALL}."
    ),
    "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
}
CALL_DEFINITION: dict[str, Any] = {
    "name": CALL,
    "description": f"Call an MCP tool found with {SEARCH}: its name and its arguments as its input schema says.",
    "input_schema": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
        "required": ["name"],
    },
}


_COSTS: dict[
    str, int
] = {}  # definition digest -> tokens: a server's definitions are estimated once, not per request
_COSTS_MAX = 4096


def _cost(spec: ToolSpec) -> int:
    cost = _COSTS.get(spec.digest) if spec.digest else None
    if cost is None:
        cost = estimate_text(json.dumps(spec.definition, ensure_ascii=False))
        if spec.digest:
            if len(_COSTS) >= _COSTS_MAX:
                _COSTS.clear()
            _COSTS[spec.digest] = cost
    return cost


def definitions_cost(specs: Sequence[ToolSpec]) -> int:
    return sum(_cost(s) for s in specs)


def should_defer(mcp: Sequence[ToolSpec], window: int | None) -> bool:
    return bool(window) and bool(mcp) and definitions_cost(mcp) > DEFER_SHARE * (window or 0)


def search(mcp: Sequence[ToolSpec], query: str) -> str:
    """The best matches for ``query`` (words found in the name and description), as the model reads them."""
    words = [w for w in query.lower().replace("_", " ").split() if w]
    scored = []
    for spec in mcp:
        haystack = f"{spec.name} {spec.definition.get('description', '')}".lower().replace("_", " ")
        score = sum(1 for w in words if w in haystack)
        if score or not words:
            scored.append((-score, spec.name, spec))
    matches = [spec for _score, _name, spec in sorted(scored)[:MAX_MATCHES]]
    if not matches:
        names = ", ".join(s.name for s in mcp[:20])
        return f"No tool matches {query!r}. Tools available: {names}"
    return "\n\n".join(
        json.dumps(
            {
                "name": s.name,
                "description": s.definition.get("description", ""),
                "input_schema": s.definition.get("input_schema", {}),
            },
            ensure_ascii=False,
        )
        for s in matches
    )
