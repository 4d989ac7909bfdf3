"""Loopback Anthropic-compatible test server ("fake API") for Précis tests and benchmarks.

In tests::

    from tests.fakeapi import FakeAnthropic, Fault, Reply

    with FakeAnthropic(window=200_000) as srv:          # random free port on 127.0.0.1
        client = AsyncAnthropic(base_url=srv.base_url, api_key="test-key")
        srv.queue_text("hello")                         # or queue_tool_use / queue_thinking / queue_reply(Reply)
        srv.queue_fault(Fault.overloaded())             # next request gets a 529
        ...
        srv.message_requests()[-1].body                 # what the client sent; .usage = what it was told

By hand::

    python -m tests.fakeapi --port 8787 --window 200000 [--reply TEXT] [--script FILE.json]
                            [--api-key KEY] [--min-cache-tokens N] [--no-cache-fields] [--verbose]

then point a client at ``http://127.0.0.1:8787`` with API key ``test-key``. ``--script`` takes a
JSON list of replies (``"text"``, ``{"text": ...}``, ``{"tool_use": {"name", "input"}}``,
``{"thinking": ..., "text": ...}``, ``{"content": [blocks]}``, each optionally with ``"stop_reason"``),
or an object ``{"replies": [...], "replay": [[blocks], ...]}``.

Endpoints: POST /v1/messages (stream true/false), POST /v1/messages/count_tokens,
GET /v1/models, GET /v1/models/{id}. Reply order for /v1/messages: a summary request (marker
``<precis-summary-request>`` in the system prompt or last user message) gets a ``queue_summary`` reply or
else the deterministic summariser, never a chat reply; other requests get queued scripted replies, then
replay turns, then ``--reply`` text, then an echo of the last user text.
Token counting: see :mod:`tests.fakeapi.counting`; prompt caching: :mod:`tests.fakeapi.cache`;
faults: :mod:`tests.fakeapi.faults`.
"""

from tests.fakeapi.cache import CacheResult, CacheStats, FakeClock, PromptCache
from tests.fakeapi.counting import TokenCounter, count_request_tokens
from tests.fakeapi.faults import Fault
from tests.fakeapi.replies import SUMMARY_MARKER, Reply
from tests.fakeapi.server import FakeAnthropic, RecordedRequest

__all__ = [
    "SUMMARY_MARKER",
    "CacheResult",
    "CacheStats",
    "FakeAnthropic",
    "FakeClock",
    "Fault",
    "PromptCache",
    "RecordedRequest",
    "Reply",
    "TokenCounter",
    "count_request_tokens",
]
