"""What a request must look like for the model it goes to, from the catalog's flags (``ModelInfo``).

The newest models (Opus 5.5, Sonnet 5.5, Fable 5.1+) reject forced tool use (``tool_choice`` "any" or "tool")
with an error, and stream the text they write between tool calls as thinking blocks left empty unless the
request's ``thinking`` asks for a ``display`` that returns it; their thinking is adaptive only (a budget is
rejected). Their thinking blocks are bound to the model that wrote them: ``request_shape.repair`` drops another
model's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desktop.engine.config.catalog import ModelInfo
from desktop.engine.types import MessagesRequest

FORCED = frozenset({"any", "tool"})


def tool_choice_for(choice: Any, info: ModelInfo) -> Any:
    """``choice`` as the model accepts it: a forced choice becomes "auto" on a model that rejects it (the
    tools stay offered; a parallel-use limit is kept)."""
    if info.forced_tool_choice or not isinstance(choice, Mapping) or choice.get("type") not in FORCED:
        return choice
    auto: dict[str, Any] = {"type": "auto"}
    if "disable_parallel_tool_use" in choice:
        auto["disable_parallel_tool_use"] = choice["disable_parallel_tool_use"]
    return auto


def fit_request(request: MessagesRequest, info: ModelInfo) -> MessagesRequest:
    """A copy of ``request`` the model accepts and whose progress text between tool calls is shown."""
    out = MessagesRequest(**request)
    if "tool_choice" in out:
        out["tool_choice"] = tool_choice_for(out["tool_choice"], info)
    if info.thinking_display is not None:
        # Thinking is always on there (adaptive): only what it shows is asked, whatever the chat's toggle.
        out["thinking"] = {"type": "adaptive", "display": info.thinking_display}
    return out
