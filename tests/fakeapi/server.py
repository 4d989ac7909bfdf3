"""The loopback Anthropic-compatible HTTP server (see the package docstring for usage)."""

from __future__ import annotations

import contextlib
import copy
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakeapi.cache import CacheResult, CacheStats, PromptCache, TooManyBreakpoints
from tests.fakeapi.counting import Block, TokenCounter, Unit
from tests.fakeapi.faults import REDIRECT_LOOP, Fault, redirect
from tests.fakeapi.records import Failed, RecordedRequest, usage_json
from tests.fakeapi.replies import Reply, Summariser, echo_reply, truncate_to
from tests.fakeapi.sse import StreamingMixin

DEFAULT_MODELS = ("claude-sonnet-4-6", "claude-haiku-4-5", "claude-opus-4-8", "claude-test")


@dataclass
class Refusal:
    """An error answer to a messages request: the status and error, or the scripted status fault."""

    status: int
    error_type: str
    message: str
    fault: Fault | None = None


@dataclass
class Prepared:
    """A messages request accepted: the reply to deliver, where it came from, its cache accounting and fault."""

    reply: Reply
    source: deque[Reply] | None
    result: CacheResult
    output_tokens: int
    fault: Fault | None


class FakeAnthropic:
    """In-process fake of the Anthropic Messages API on 127.0.0.1. Thread-safe; start()/stop() or ``with``."""

    def __init__(
        self,
        window: int = 200_000,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str | None = "test-key",
        accepts: str = "either",  # the header the key must come in: x-api-key | bearer | either
        counter: TokenCounter | None = None,
        clock: Callable[[], float] | None = None,
        min_cache_tokens: int = 1024,
        report_cache: bool = True,
        max_media: int = 100,
        media_wording: str = "too_much_media",  # or "too_many"
        max_output_tokens: int = 64_000,
        reply_text: str | None = None,
        default_reply_tokens: int = 0,
        summary_fraction: float = 0.10,
        summary_min_tokens: int = 50,
        chunk_chars: int = 20,
        ping_every: int = 0,
        models: Iterable[str] = DEFAULT_MODELS,
        verbose: bool = False,
    ) -> None:
        self.window = window
        self.host, self.port = host, port
        self.api_key = api_key
        self.accepts = accepts
        self.counter = counter or TokenCounter()
        self.clock: Callable[[], float] = clock or time.monotonic
        self.cache = PromptCache(clock=self.clock, min_tokens=min_cache_tokens)
        self.stats = CacheStats()
        self.report_cache = report_cache
        self.max_media = max_media
        self.media_wording = media_wording
        self.max_output_tokens = max_output_tokens
        self.reply_text = reply_text
        self.default_reply_tokens = default_reply_tokens
        self.summariser = Summariser(summary_fraction, summary_min_tokens)
        self.chunk_chars = max(1, chunk_chars)
        self.ping_every = ping_every
        self.models = list(models)
        self.verbose = verbose
        self._replies: deque[Reply] = deque()
        self._summary_replies: deque[Reply] = deque()
        self._replay: deque[Reply] = deque()
        self._faults: deque[Fault] = deque()
        self._log: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._sockets: set[socket.socket] = set()
        self._held: list[Fault] = []  # hold faults in use, released on stop()
        # Set to hold every model look-up (GET /v1/models/ID) until it is set again (released on stop()).
        self.model_lookups_open = threading.Event()
        self.model_lookups_open.set()
        self._ids = 0

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> str:
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer((self.host, self.port), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="fakeapi", daemon=True
        )
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        if self._httpd is None:
            return
        with self._lock:
            sockets = list(self._sockets)
            for fault in self._held:
                fault.release.set()
            self.model_lookups_open.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        for sock in sockets:  # keep-alive connections would otherwise linger in their threads
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._httpd = None

    def __enter__(self) -> FakeAnthropic:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # -- scripting --------------------------------------------------------------------------------

    def queue_reply(self, *replies: Reply | str) -> None:
        with self._lock:
            self._replies.extend(Reply.text(r) if isinstance(r, str) else r for r in replies)

    def queue_summary(self, *replies: Reply | str) -> None:
        """Script the answers to summary requests (otherwise the deterministic summariser answers)."""
        with self._lock:
            self._summary_replies.extend(Reply.text(r) if isinstance(r, str) else r for r in replies)

    def queue_text(self, text: str, stop_reason: str | None = None) -> None:
        self.queue_reply(Reply.text(text, stop_reason))

    def queue_tool_use(
        self, name: str, input: dict[str, Any], *, text: str | None = None, id: str | None = None
    ) -> None:
        self.queue_reply(Reply.tool_use(name, input, text=text, id=id))

    def queue_thinking(self, thinking: str, text: str) -> None:
        self.queue_reply(Reply.thinking(thinking, text))

    def set_replay(self, turns: Iterable[list[Block]]) -> None:
        """Replay mode: these assistant content lists answer the following requests in order
        (after any queued scripted reply; summary requests do not consume them)."""
        with self._lock:
            self._replay = deque(Reply(copy.deepcopy(list(t))) for t in turns)

    @property
    def replay_remaining(self) -> int:
        with self._lock:
            return len(self._replay)

    @property
    def pending_replies(self) -> int:
        with self._lock:
            return len(self._replies)

    def queue_fault(self, *faults: Fault) -> None:
        with self._lock:
            self._faults.extend(faults)

    @property
    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    # -- inspection -------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._log)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._log)

    def message_requests(self) -> list[RecordedRequest]:
        """POST /v1/messages requests only (not count_tokens or models)."""
        return [r for r in self.requests if r.method == "POST" and r.path == "/v1/messages"]

    @property
    def last_request(self) -> RecordedRequest | None:
        with self._lock:
            return self._log[-1] if self._log else None

    def clear_log(self) -> None:
        with self._lock:
            self._log.clear()

    def count_request_tokens(self, body: dict[str, Any]) -> int:
        return self.counter.count_request(body)

    # -- internals used by the handler ------------------------------------------------------------

    def _record(self, method: str, path: str, headers: dict[str, str], body: Any) -> RecordedRequest:
        with self._lock:
            seq = len(self._log) + 1
            rec = RecordedRequest(seq, method, path, headers, body, f"req_fake_{seq:06d}")
            self._log.append(rec)
            return rec

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}_fake_{self._ids:06d}"

    def _pop_fault(self) -> Fault | None:
        with self._lock:
            fault = self._faults.popleft() if self._faults else None
            if fault is not None and fault.kind in ("hold", "wire"):
                self._held.append(fault)
            return fault

    def _choose_reply(self, body: dict[str, Any], prompt_tokens: int) -> tuple[Reply, deque[Reply] | None]:
        """The reply and the queue it came from (so a failed delivery can put it back)."""
        with self._lock:
            # Summary requests never take the chat replies a test queued (a compaction before a turn would
            # otherwise swallow that turn's scripted answer); queue_summary() scripts them explicitly.
            if self.summariser.wants_summary(body):
                if self._summary_replies:
                    return self._summary_replies.popleft(), self._summary_replies
                return Reply.text(self.summariser.summarise(body, prompt_tokens, self.counter)), None
            if self._replies:
                return self._replies.popleft(), self._replies
            if self._replay:
                return self._replay.popleft(), self._replay
        if self.reply_text is not None:
            return Reply.text(self.reply_text), None
        return echo_reply(body, self.counter, self.default_reply_tokens), None

    def _give_back(self, reply: Reply, source: deque[Reply] | None) -> None:
        if source is not None:
            with self._lock:
                source.appendleft(reply)

    def prepare_message(self, rec: RecordedRequest, body: dict[str, Any]) -> Prepared | Refusal:
        """Everything about a POST /v1/messages short of sending it: the checks, the fault due, the count, the
        cache, the reply (cut to fit) and its usage, recorded on ``rec``. The HTTP handler and the in-process
        provider of the engine tests (tests/scripted_provider.py) both answer from here."""
        for name in ("model", "max_tokens", "messages"):
            if name not in body:
                return Refusal(400, "invalid_request_error", f"{name}: Field required")
        if not body["messages"]:
            return Refusal(400, "invalid_request_error", "messages: at least one message is required")
        rec.stream = bool(body.get("stream"))
        fault = self._pop_fault()
        if fault is not None:
            rec.fault = fault.kind
            if fault.kind == "status":
                return Refusal(fault.status, fault.error_type, fault.message, fault)
        units = list(self.counter.units(body))
        total = sum(u.tokens for u in units)
        rec.prompt_tokens = total
        media = self._media_error(units)
        if media:
            return Refusal(400, "invalid_request_error", media)
        if total > self.window:
            return Refusal(
                400, "invalid_request_error", f"prompt is too long: {total} tokens > {self.window} maximum"
            )
        try:
            result = self.cache.account(body, units) if self.report_cache else CacheResult(total, 0, 0)
        except TooManyBreakpoints as exc:
            return Refusal(400, "invalid_request_error", str(exc))
        reply, source = self._choose_reply(body, total)
        reply = self._finalise(reply, body, total)
        output_tokens = reply.output_tokens or self.counter.count_output(reply.content)
        rec.usage = usage_json(result, output_tokens, self.report_cache)
        rec.reply = reply.content
        with self._lock:
            self.stats.add(result, output_tokens, body.get("model"))
        return Prepared(reply, source, result, output_tokens, fault)

    def _finalise(self, reply: Reply, body: dict[str, Any], prompt_tokens: int) -> Reply:
        """Fill tool_use ids, then cut the reply at max_tokens or at the context window."""
        content = [dict(b) for b in reply.content]
        for block in content:
            if block.get("type") == "tool_use" and not block.get("id"):
                block["id"] = self._next_id("toolu")
        reply = Reply(content, reply.stop_reason, reply.output_tokens)
        max_tokens = int(body.get("max_tokens") or 0)
        room = self.window - prompt_tokens
        if self.counter.count_output(content) > min(max_tokens, room):
            reason = "max_tokens" if max_tokens <= room else "model_context_window_exceeded"
            reply = truncate_to(reply, min(max_tokens, room), self.counter, reason)
        return reply

    def _media_error(self, units: list[Unit]) -> str | None:
        images = pages = 0
        for unit in units:
            for block in _with_nested(unit.block):
                if block.get("type") == "image":
                    images += 1
                elif block.get("type") == "document":
                    pages += self.counter.pdf_pages(block)
        if images + pages <= self.max_media:
            return None
        if self.media_wording == "too_many":
            return f"too many images and documents: {images} + {pages} > {self.max_media}"
        return f"Too much media: {pages} document pages + {images} images > {self.max_media}"


def _with_nested(block: Block) -> Iterable[Block]:
    yield block
    content = block.get("content")
    if block.get("type") == "tool_result" and isinstance(content, list):
        yield from (b for b in content if isinstance(b, dict))


class _Handler(StreamingMixin, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeAnthropic  # bound by FakeAnthropic.start()

    # -- plumbing ---------------------------------------------------------------------------------

    def setup(self) -> None:
        super().setup()
        with self.fake._lock:
            self.fake._sockets.add(self.connection)

    def handle(self) -> None:
        with contextlib.suppress(ConnectionResetError, BrokenPipeError, TimeoutError):
            super().handle()

    def finish(self) -> None:
        with self.fake._lock:
            self.fake._sockets.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        if self.fake.verbose:
            super().log_message(format, *args)

    def _send_json(
        self, status: int, payload: Any, rec: RecordedRequest | None, headers: dict[str, str] | None = None
    ) -> None:
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if rec is not None:
            self.send_header("request-id", rec.request_id)
            rec.status = status
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_error(
        self,
        rec: RecordedRequest,
        status: int,
        error_type: str,
        message: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        rec.outcome = "error"
        payload = {
            "type": "error",
            "error": {"type": error_type, "message": message},
            "request_id": rec.request_id,
        }
        self._send_json(status, payload, rec, headers)

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _authorised(self) -> bool:
        key = self.fake.api_key
        if key is None:
            return True
        auth = self.headers.get("Authorization", "")
        bearer = auth[7:].strip() if auth.lower().startswith("bearer ") else None
        # A provider that expects one header refuses the key in the other, as compatible providers do.
        by_header = self.headers.get("x-api-key") == key and self.fake.accepts in ("x-api-key", "either")
        by_bearer = bearer == key and self.fake.accepts in ("bearer", "either")
        return by_header or by_bearer

    def _begin(self, method: str) -> tuple[RecordedRequest, Any] | None:
        raw = self._read_body() if method == "POST" else b""
        body: Any = None
        bad_json = False
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                bad_json = True
        headers = {k.lower(): v for k, v in self.headers.items()}
        rec = self.fake._record(method, self.path.split("?")[0], headers, body)
        if not self._authorised():
            self._send_error(rec, 401, "authentication_error", "invalid x-api-key")
            return None
        if bad_json or (method == "POST" and not isinstance(body, dict)):
            self._send_error(
                rec, 400, "invalid_request_error", "There was an error parsing the body of your request"
            )
            return None
        return rec, body

    # -- routes -----------------------------------------------------------------------------------

    def do_GET(self) -> None:
        begun = self._begin("GET")
        if begun is None:
            return
        rec, _ = begun
        if rec.path == "/v1/models":
            data = [self._model_info(m) for m in self.fake.models]
            self._send_json(
                200,
                {
                    "data": data,
                    "has_more": False,
                    "first_id": data[0]["id"] if data else None,
                    "last_id": data[-1]["id"] if data else None,
                },
                rec,
            )
        elif rec.path.startswith("/v1/models/"):
            model_id = rec.path.rsplit("/", 1)[1]
            self.fake.model_lookups_open.wait(60)
            if model_id not in self.fake.models:  # like a real provider: unknown ids are 404
                self._send_error(rec, 404, "not_found_error", f"model: {model_id}")
                return
            self._send_json(200, self._model_info(model_id), rec)
        else:
            self._send_error(rec, 404, "not_found_error", f"Not found: {rec.path}")
            return
        rec.outcome = "ok"

    def _model_info(self, model_id: str) -> dict[str, Any]:
        return {
            "id": model_id,
            "type": "model",
            "display_name": model_id.replace("-", " ").title(),
            "created_at": "2025-09-29T00:00:00Z",
            "lifecycle": "active",
            "max_input_tokens": self.fake.window,
            "max_tokens": self.fake.max_output_tokens,
        }

    def do_POST(self) -> None:
        if self.path.startswith(REDIRECT_LOOP):  # a redirect loop (Fault.redirect_loop): round and round
            self._read_body()
            self.wfile.write(redirect(REDIRECT_LOOP))
            self.wfile.flush()
            return
        try:
            begun = self._begin("POST")
            if begun is None:
                return
            rec, body = begun
            if rec.path == "/v1/messages/count_tokens":
                rec.prompt_tokens = self.fake.count_request_tokens(body)
                self._send_json(200, {"input_tokens": rec.prompt_tokens}, rec)
                rec.outcome = "ok"
            elif rec.path == "/v1/messages":
                self._messages(rec, body)
            else:
                self._send_error(rec, 404, "not_found_error", f"Not found: {rec.path}")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _messages(self, rec: RecordedRequest, body: dict[str, Any]) -> None:
        fake = self.fake
        prepared = fake.prepare_message(rec, body)
        if isinstance(prepared, Refusal):
            if prepared.fault is not None:
                self._status_fault(rec, prepared.fault)
            else:
                self._send_error(rec, prepared.status, prepared.error_type, prepared.message)
            return
        reply, source, result, output_tokens, fault = (
            prepared.reply,
            prepared.source,
            prepared.result,
            prepared.output_tokens,
            prepared.fault,
        )
        # A failed delivery puts the reply back, before the client can see the failure: a retry that races the
        # hang-up must still get the same reply.
        self._owed = (reply, source)
        try:
            if fault is not None and fault.kind == "wire":
                self._wire(rec, fault)
            elif rec.stream:
                self._stream(rec, body, reply, result, output_tokens, fault)
            else:
                self._whole(rec, body, reply, fault)
        except Failed:
            self._return_reply()
        except (BrokenPipeError, ConnectionResetError):
            rec.outcome = "client_gone"
            self._return_reply()
            self.close_connection = True
        self._owed = None

    def _return_reply(self) -> None:
        owed, self._owed = getattr(self, "_owed", None), None
        if owed is not None:
            self.fake._give_back(*owed)

    def _status_fault(self, rec: RecordedRequest, fault: Fault) -> None:
        if fault.body is not None:
            rec.outcome = "error"
            self._send_json(fault.status, fault.body, rec, fault.headers)
        else:
            self._send_error(rec, fault.status, fault.error_type, fault.message, fault.headers)

    def _message_json(
        self, body: dict[str, Any], content: list[Block], stop_reason: str | None, usage: dict[str, Any]
    ) -> dict[str, Any]:
        return {
            "id": self.fake._next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }

    def _whole(self, rec: RecordedRequest, body: dict[str, Any], reply: Reply, fault: Fault | None) -> None:
        if fault is not None and fault.kind == "drop":
            rec.outcome = "dropped"
            self._hangup()
            raise Failed
        if fault is not None and fault.kind == "sse_error":
            self._return_reply()
            self._send_error(rec, 529, "overloaded_error", fault.message)
            raise Failed
        if fault is not None and fault.kind == "slow":
            time.sleep(fault.delay)
        if fault is not None and fault.kind == "hold":
            fault.reached.set()
            fault.release.wait(fault.hold_timeout)
        message = self._message_json(body, reply.content, reply.resolved_stop_reason(), rec.usage or {})
        if fault is not None and fault.kind == "malformed":
            text = json.dumps(message)
            rec.outcome = "dropped"
            self._return_reply()
            self._send_json(200, text[: len(text) // 2], rec)
            raise Failed
        rec.outcome = "ok"
        self._send_json(200, message, rec)

    def _hangup(self) -> None:
        self._return_reply()
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
