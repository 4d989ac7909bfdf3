"""The Messages request body as the bytes the SDK would send, encoded message by message.

The SDK copies and JSON-encodes the whole body on every call; in a tool loop that is most of the per-round cost
and it grows with the live context. The request's messages are the session's kept canonical copies (the same
objects from call to call, never changed in place; a breakpoint mark is a new object), so each message's JSON
is kept and the body is joined from them: only new or re-marked messages are encoded.

The bytes equal the SDK's (same key order, same encoder settings); a request with a key this module does not
know is left to the SDK (``encode`` returns None).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# The SDK's body order for messages.stream (omitted keys are dropped); "stream" last.
ORDER = (
    "max_tokens",
    "messages",
    "model",
    "cache_control",
    "diagnostics",
    "inference_geo",
    "metadata",
    "output_config",
    "container",
    "service_tier",
    "speed",
    "stop_sequences",
    "system",
    "tools",
    "thinking",
    "tool_choice",
)
_KNOWN = frozenset(ORDER)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _dumps(value: Any) -> bytes:
    return _ENCODER.encode(value).encode()


class BodyEncoder:
    def __init__(self) -> None:
        # id(message) -> (message, its JSON); the message is held so its id cannot be reused meanwhile. Only
        # the last request's messages are kept.
        self._kept: dict[int, tuple[Mapping[str, Any], bytes]] = {}

    def _message(self, message: Mapping[str, Any], keep: dict[int, tuple[Mapping[str, Any], bytes]]) -> bytes:
        hit = self._kept.get(id(message))
        data = hit[1] if hit is not None and hit[0] is message else _dumps(message)
        keep[id(message)] = (message, data)
        return data

    def encode(self, request: Mapping[str, Any]) -> bytes | None:
        """The streaming request's body, or None when it holds something only the SDK should encode."""
        if not _KNOWN.issuperset(request) or not isinstance(request.get("messages"), list):
            return None
        keep: dict[int, tuple[Mapping[str, Any], bytes]] = {}
        parts = []
        try:
            for key in ORDER:
                if key not in request:
                    continue
                value = request[key]
                if key == "messages":
                    data = b"[" + b",".join(self._message(m, keep) for m in value) + b"]"
                else:
                    data = _dumps(value)
                parts.append(_dumps(key) + b":" + data)
        except (TypeError, ValueError):  # not plain JSON (e.g. an SDK object): the SDK knows how
            return None
        self._kept = keep
        parts.append(b'"stream":true')
        return b"{" + b",".join(parts) + b"}"
