"""What a session's next request would be, built by the engine's own session view (no model call)."""

from __future__ import annotations

from typing import Any


async def request_of(engine: Any, session_id: int) -> dict[str, Any]:
    view = engine.view(session_id)
    return view.request(await view.gather())
