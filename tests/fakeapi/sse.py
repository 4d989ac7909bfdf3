"""Faithful SSE streaming for /v1/messages: chunked transfer, ping, per-block deltas, cumulative usage,
and the mid-stream faults (drop, error event, malformed data, slow, hold, a cut end, odd usage numbers), and the
raw bytes of a wire fault."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tests.fakeapi.cache import CacheResult
from tests.fakeapi.counting import Block, compact_json
from tests.fakeapi.faults import Fault
from tests.fakeapi.records import Failed, RecordedRequest, usage_json
from tests.fakeapi.replies import Reply

if TYPE_CHECKING:
    from tests.fakeapi.server import FakeAnthropic


class StreamingMixin:
    """Mixed into the request handler (a BaseHTTPRequestHandler); uses its wfile and send_* methods."""

    fake: FakeAnthropic
    wfile: Any
    send_response: Callable[..., None]
    send_header: Callable[[str, str], None]
    end_headers: Callable[[], None]
    _message_json: Callable[..., dict[str, Any]]
    _hangup: Callable[[], None]
    _return_reply: Callable[[], None]

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _event(self, name: str, payload: dict[str, Any]) -> None:
        self._chunk(f"event: {name}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n".encode())

    def _stream(
        self,
        rec: RecordedRequest,
        body: dict[str, Any],
        reply: Reply,
        result: CacheResult,
        output_tokens: int,
        fault: Fault | None,
    ) -> None:
        fake = self.fake
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", rec.request_id)
        self.end_headers()
        rec.status = 200

        state = {"deltas": 0, "fired": False}

        def checkpoint(final: bool = False) -> None:
            if fault is None or state["fired"] or fault.kind in ("slow", "cut", "usage"):
                return
            if state["deltas"] < fault.after and not final:
                return
            state["fired"] = True
            if fault.kind == "hold":
                fault.reached.set()
                fault.release.wait(fault.hold_timeout)
                return
            if fault.kind == "sse_error":
                rec.outcome = "error"
                self._event(
                    "error",
                    {
                        "type": "error",
                        "error": {"type": fault.error_type, "message": fault.message},
                        "request_id": rec.request_id,
                    },
                )
                self._return_reply()  # before the client sees the end of the body
                self._chunk(b"")  # a clean end of body: the error event is the last thing the client sees
                raise Failed
            if fault.kind == "malformed":
                rec.outcome = "dropped"
                self._chunk(b'event: content_block_delta\ndata: {"type": "content_block_delta", garbage\n\n')
            else:
                rec.outcome = "dropped"
            self._hangup()
            raise Failed

        def delta(index: int, payload: dict[str, Any]) -> None:
            if fault is not None and fault.kind == "slow" and fault.delay > 0:
                time.sleep(fault.delay)
            self._event(
                "content_block_delta", {"type": "content_block_delta", "index": index, "delta": payload}
            )
            state["deltas"] += 1
            if fake.ping_every and state["deltas"] % fake.ping_every == 0:
                self._event("ping", {"type": "ping"})
            checkpoint()

        odd = fault.usage if fault is not None and fault.kind == "usage" else {}
        start_usage = {**usage_json(result, 1, fake.report_cache), **odd}
        message = self._message_json(body, [], None, start_usage)
        self._event("message_start", {"type": "message_start", "message": message})
        self._event("ping", {"type": "ping"})
        checkpoint()
        for index, block in enumerate(reply.content):
            self._stream_block(index, block, delta)
        checkpoint(final=True)
        if fault is not None and fault.kind == "cut":  # a clean end: no message_delta, no message_stop
            rec.outcome = "cut"
            self._return_reply()
            self._chunk(b"")
            raise Failed
        final_usage = {**usage_json(result, output_tokens, fake.report_cache), **odd}
        self._event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.resolved_stop_reason(), "stop_sequence": None},
                "usage": final_usage,
            },
        )
        rec.outcome = "ok"
        self._event("message_stop", {"type": "message_stop"})
        self._chunk(b"")

    def _wire(self, rec: RecordedRequest, fault: Fault) -> None:
        """A wire fault: its bytes as they are, then a close, a silence or one part again and again."""
        rec.outcome = "wire"
        self._return_reply()  # whatever the client makes of it, the reply was not delivered
        self.close_connection = True
        self._write_parts(fault.script, fault)
        fault.reached.set()
        if fault.end == "hang":
            fault.release.wait(fault.hold_timeout)
        elif fault.end == "repeat":
            deadline = time.monotonic() + fault.hold_timeout
            while not fault.release.is_set() and time.monotonic() < deadline:
                self._write_parts(fault.repeat, fault)
        self._hangup()
        raise Failed

    def _write_parts(self, parts: list[bytes | float], fault: Fault) -> None:
        for part in parts:
            if isinstance(part, bytes):
                self.wfile.write(part)
                self.wfile.flush()
            elif fault.release.wait(part):  # a pause, cut short by a release (or the server's stop)
                return

    def _stream_block(self, index: int, block: Block, delta: Callable[[int, dict[str, Any]], None]) -> None:
        kind = block.get("type")
        n = self.fake.chunk_chars
        if kind == "text":
            self._event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            for piece in _pieces(block.get("text", ""), n):
                delta(index, {"type": "text_delta", "text": piece})
        elif kind == "thinking":
            self._event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                },
            )
            for piece in _pieces(block.get("thinking", ""), n):
                delta(index, {"type": "thinking_delta", "thinking": piece})
            delta(index, {"type": "signature_delta", "signature": block.get("signature", "")})
        elif kind == "tool_use":
            shell = {"type": "tool_use", "id": block["id"], "name": block.get("name", ""), "input": {}}
            self._event(
                "content_block_start", {"type": "content_block_start", "index": index, "content_block": shell}
            )
            text = compact_json(block.get("input", {}))
            delta(index, {"type": "input_json_delta", "partial_json": ""})
            for piece in _pieces(text, min(n, max(1, -(-len(text) // 3)))):
                delta(index, {"type": "input_json_delta", "partial_json": piece})
        else:  # redacted_thinking and others arrive whole in content_block_start
            self._event(
                "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}
            )
        self._event("content_block_stop", {"type": "content_block_stop", "index": index})


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]
