"""Context policies replayed by bench_replay: three peer policies and the real Précis engine.

Every policy answers the same question: given the conversation so far and the next user turn (typed text or
tool results), what request goes to the server? The server answers with the transcript's recorded reply, so
the conversations stay identical and only the requests (and hence the bill) differ.

* ``none``       everything, every time, no cache_control (a naive client);
* ``codepilot``  CodePilot's behaviour as modelled here: bytes/4 estimate + 10 per message, summary at
                 80 % keeping the newest 50 % of the window verbatim, 5,000 / 1,000-character age truncation,
                 the 70 % fallback history budget, no cache_control, one reactive retry on overflow;
* ``claude-code`` Claude-Code-like: autocompact at window − min(max_out, 20K) − 13K by
                 the last real usage, time-based microcompact keeping the newest 5 compactable results, a
                 whole-history summary, cache_control on the system prompt and the last message;
* ``precis``     the real ChatEngine, default Settings, driven through send_content().

Peers keep tool_use / tool_result blocks structured (CodePilot's own fallback flattens them to text; see
README-replay.md) and talk to the server over plain HTTP; Précis uses its own provider (the SDK, streaming).
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import http.client
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.engine.turn import assemble
from tests.fakeapi import SUMMARY_MARKER, FakeAnthropic, FakeClock

Block = dict[str, Any]
Message = dict[str, Any]

WINDOW = 200_000
FIXED_DATE = dt.date(2026, 1, 1)  # peers' system prompt never changes (same blocks Précis sends)
PEER_MAX_TOKENS = 8_192
CC_MAX_OUTPUT = 32_000
EPHEMERAL = {"type": "ephemeral"}

# CodePilot-like policy constants
CP_TRIGGER = 0.80
CP_KEEP = 0.50
CP_FALLBACK = 0.70
CP_FALLBACK_FLOOR = 10_000
CP_RECENT_LIMIT = 5_000
CP_OLD_LIMIT = 1_000
CP_OLD_AGE = 30
CP_SUMMARY_INPUT_CHARS = 800
CP_MARKER = "\n[...truncated...]\n"

# Claude-Code-like policy constants
CC_SUMMARY_BUFFER = 20_000
CC_AUTOCOMPACT_BUFFER = 13_000
CC_KEEP_RESULTS = 5
CC_IDLE_SECONDS = 3_600
CC_CLEARED = "[Old tool result content cleared]"
CC_COMPACTABLE = {"Read", "Bash", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write"}
CC_SUMMARY_PROMPT = (
    "Your task is to create a detailed summary of the conversation so far. Sections: 1. Primary Request and "
    "Intent 2. Key Technical Concepts 3. Files and Code Sections 4. Errors and fixes 5. Problem Solving "
    "6. All user messages 7. Pending Tasks 8. Current Work 9. Optional Next Step."
)


@dataclass(slots=True)
class Step:
    """One request of the recording: the user turn sent and the reply the server gives back."""

    user: list[Block]
    reply: list[Block]
    gap: float  # seconds since the previous request (the FakeClock advances by this first)


@dataclass(slots=True)
class TurnOutcome:
    ok: bool  # the reply reached the user
    summaries: int = 0


def peer_system() -> list[Block]:
    return assemble.system_blocks(FIXED_DATE)


def block_text(block: Block) -> str:
    """The text a policy would measure for one block (tool_use input as JSON)."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return json.dumps(block.get("input", {}), ensure_ascii=False)
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))
    return ""


def bytes4(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / 4) if text else 0


def message_bytes4(msg: Message) -> int:
    return sum(bytes4(block_text(b)) for b in msg["content"])


class Wire:
    """Plain-HTTP client for the peers: one POST /v1/messages, non-streaming, no retries, keep-alive."""

    def __init__(self, srv: FakeAnthropic):
        self.conn = http.client.HTTPConnection(srv.host, srv.port, timeout=120.0)
        self.headers = {
            "x-api-key": "test-key",
            "anthropic-version": "2023-06-01",
            "content-type": "application/json",
        }

    def post(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.conn.request("POST", "/v1/messages", json.dumps(body).encode(), self.headers)
        resp = self.conn.getresponse()
        return resp.status, json.loads(resp.read())

    def close(self) -> None:
        self.conn.close()


def is_overflow(status: int, payload: dict[str, Any]) -> bool:
    return status == 400 and "too long" in str(payload.get("error", {}).get("message", ""))


def fix_start(rows: list[Message]) -> list[Message]:
    """Rows after a cut: start with a user message; tool results whose call was cut become text."""
    i = 0
    while i < len(rows) and rows[i]["role"] != "user":
        i += 1
    rows = rows[i:]
    if not rows:
        return rows
    calls = {b.get("id") for m in rows for b in m["content"] if b.get("type") == "tool_use"}
    first = rows[0]
    content = [
        b
        if b.get("type") != "tool_result" or b.get("tool_use_id") in calls
        else {"type": "text", "text": f"[earlier tool result]\n{block_text(b)}"}
        for b in first["content"]
    ]
    return [{"role": "user", "content": content}, *rows[1:]]


def merged(messages: list[Message]) -> list[Message]:
    """Consecutive same-role messages joined (the API wants alternation)."""
    out: list[Message] = []
    for m in messages:
        if out and out[-1]["role"] == m["role"]:
            out[-1] = {"role": m["role"], "content": [*out[-1]["content"], *m["content"]]}
        else:
            out.append({"role": m["role"], "content": list(m["content"])})
    return out


# --------------------------------------------------------------------------------------------- policies


class Policy:
    name = "base"

    async def start(self, srv: FakeAnthropic, model: str, title: str) -> None:
        raise NotImplementedError

    async def turn(self, step: Step) -> TurnOutcome:
        raise NotImplementedError

    async def pause(self, clock: FakeClock, seconds: float) -> None:
        """The user's pause before the next turn."""
        clock.advance(seconds)

    async def lost(self, step: Step) -> None:
        """The turn failed for the user; the recording goes on, so its reply joins the history anyway."""
        raise NotImplementedError

    async def settle(self) -> None:
        """Between turns (the user reads the reply): let background work finish, for determinism."""

    async def close(self) -> None:
        pass

    def compaction_report(self) -> list[dict[str, Any]]:
        return []


class PeerPolicy(Policy):
    """Shared bookkeeping for the HTTP peers: rows after the boundary, the summary, the wire."""

    max_tokens = PEER_MAX_TOKENS

    def __init__(self) -> None:
        self.rows: list[Message] = []
        self.summary: str | None = None
        self.model = ""
        self.wire: Wire | None = None
        self.system = peer_system()
        self.window = WINDOW

    async def start(self, srv: FakeAnthropic, model: str, title: str) -> None:
        self.wire = Wire(srv)
        self.model = model
        self.window = srv.window

    async def close(self) -> None:
        if self.wire is not None:
            self.wire.close()

    def post(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        assert self.wire is not None
        return self.wire.post(body)

    def commit(self, step: Step, reply: list[Block]) -> None:
        self.rows.append({"role": "user", "content": copy.deepcopy(step.user)})
        self.rows.append({"role": "assistant", "content": reply})

    async def lost(self, step: Step) -> None:
        self.commit(step, copy.deepcopy(step.reply))


class NonePolicy(PeerPolicy):
    name = "none"

    async def turn(self, step: Step) -> TurnOutcome:
        messages = merged([*self.rows, {"role": "user", "content": step.user}])
        status, payload = self.post(
            {"model": self.model, "max_tokens": self.max_tokens, "system": self.system, "messages": messages}
        )
        if status != 200:
            return TurnOutcome(False)
        self.commit(step, payload["content"])
        return TurnOutcome(True)


def head_tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = int(limit * 0.7)
    tail = limit - head - 20
    return text[:head] + CP_MARKER + text[-tail:]


def cp_truncate(msg: Message, age: int) -> Message:
    """CodePilot-like age truncation of one message (older messages cut harder), applied block by block."""
    limit = CP_OLD_LIMIT if age > CP_OLD_AGE else CP_RECENT_LIMIT
    out: list[Block] = []
    for b in msg["content"]:
        kind = b.get("type")
        if kind == "text" and len(b.get("text", "")) > limit:
            b = {**b, "text": head_tail(b["text"], limit)}
        elif kind == "tool_result" and len(block_text(b)) > limit:
            b = {**b, "content": head_tail(block_text(b), limit)}
        elif kind == "tool_use":
            raw = json.dumps(b.get("input", {}), ensure_ascii=False)
            if len(raw) > limit:
                b = {**b, "input": {"truncated_input": head_tail(raw, limit)}}
        out.append(b)
    return {"role": msg["role"], "content": out}


class CodePilotPolicy(PeerPolicy):
    name = "codepilot"

    def __init__(self) -> None:
        super().__init__()
        self.summaries = 0
        self.failures = 0

    def normalized(self) -> list[Message]:
        n = len(self.rows)
        return [cp_truncate(m, n - 1 - i) for i, m in enumerate(self.rows)]

    def summarise(self, rows: list[Message]) -> bool:
        """compressConversation: 800-char lines, the previous summary folded in; billed like any request."""
        lines = [
            ("User: " if m["role"] == "user" else "Assistant: ")
            + head_tail(" ".join(block_text(b) for b in m["content"]), 10**9)[:CP_SUMMARY_INPUT_CHARS]
            for m in rows
        ]
        prompt = "Summarise the following excerpt (max 500 words).\n\n"
        if self.summary:
            prompt += f"Previous summary of even earlier conversation:\n{self.summary}\n\n"
        prompt += "\n\n".join(lines) + "\n\nSummary:"
        body = {
            "model": self.model,
            "max_tokens": 1500,
            "system": f"{SUMMARY_MARKER} You are a conversation summariser. Keep decisions, file paths, open "
            "tasks and user preferences.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
        }
        status, payload = self.post(body)
        self.summaries += 1
        text = "".join(b.get("text", "") for b in payload.get("content", [])) if status == 200 else ""
        if len(text.strip()) < 10:
            self.failures += 1
            return False
        self.failures = 0
        self.summary = text
        return True

    def compress(self, budget: int) -> bool:
        """Keep the newest rows within ``budget`` (estimate units, break at the first that does not fit)."""
        normalized = self.normalized()
        used, cut = 0, len(self.rows)
        for i in range(len(normalized) - 1, -1, -1):
            cost = message_bytes4(normalized[i]) + 10
            if used + cost > budget:
                break
            used += cost
            cut = i
        if cut == 0 or not self.summarise(self.rows[:cut]):
            return False
        self.rows = fix_start(self.rows[cut:])
        return True

    def request(self, step: Step) -> dict[str, Any]:
        """buildFallbackContext: history within 70 % of the window less system, summary and prompt."""
        normalized = self.normalized()
        fixed = (
            sum(bytes4(b["text"]) for b in self.system)
            + bytes4(self.summary or "")
            + message_bytes4({"content": step.user})
        )
        budget = max(int(self.window * CP_FALLBACK - fixed), CP_FALLBACK_FLOOR)
        used, start = 0, len(normalized)
        for i in range(len(normalized) - 1, -1, -1):
            cost = message_bytes4(normalized[i]) + 10
            if used + cost > budget:
                break
            used += cost
            start = i
        history = fix_start(normalized[start:])
        user = list(step.user)
        if self.summary:
            head = {"type": "text", "text": f"<session-summary>\n{self.summary}\n</session-summary>"}
            if history:
                history[0] = {"role": "user", "content": [head, *history[0]["content"]]}
            else:
                user = [head, *user]
        messages = merged([*history, {"role": "user", "content": user}])
        return {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": self.system,
            "messages": messages,
        }

    async def turn(self, step: Step) -> TurnOutcome:
        before = self.summaries
        estimate = (
            sum(bytes4(b["text"]) for b in self.system)
            + bytes4(self.summary or "")
            + sum(message_bytes4(m) + 10 for m in self.normalized())
            + message_bytes4({"content": step.user})
        )
        if estimate >= CP_TRIGGER * self.window and self.failures < 3:
            self.compress(int(self.window * CP_KEEP))
        status, payload = self.post(self.request(step))
        if is_overflow(status, payload) and len(self.rows) > 4:
            fixed = (
                sum(bytes4(b["text"]) for b in self.system)
                + bytes4(self.summary or "")
                + message_bytes4({"content": step.user})
            )
            self.compress(max(10_000, int(self.window * 0.5 - fixed)))
            status, payload = self.post(self.request(step))
        if status != 200:
            return TurnOutcome(False, self.summaries - before)
        self.commit(step, payload["content"])
        return TurnOutcome(True, self.summaries - before)


class ClaudeCodePolicy(PeerPolicy):
    name = "claude-code"
    max_tokens = CC_MAX_OUTPUT

    def __init__(self) -> None:
        super().__init__()
        self.last_total: int | None = None  # input + cache + output of the last response
        self.since: list[Message] = []  # messages added after that response
        self.tool_names: dict[str, str] = {}
        self.summaries = 0

    @property
    def threshold(self) -> int:
        return self.window - min(CC_MAX_OUTPUT, CC_SUMMARY_BUFFER) - CC_AUTOCOMPACT_BUFFER

    def body(self, messages: list[Message], max_tokens: int | None = None) -> dict[str, Any]:
        system = [dict(b) for b in self.system]
        system[-1]["cache_control"] = EPHEMERAL
        messages = merged(messages)
        last = messages[-1]
        last["content"] = [*last["content"][:-1], {**last["content"][-1], "cache_control": EPHEMERAL}]
        return {
            "model": self.model,
            "max_tokens": max_tokens or self.max_tokens,
            "system": system,
            "messages": messages,
        }

    def microcompact(self) -> None:
        """Time-based: all but the newest 5 compactable tool results become a marker."""
        found = [
            (mi, bi)
            for mi, m in enumerate(self.rows)
            for bi, b in enumerate(m["content"])
            if b.get("type") == "tool_result"
            and self.tool_names.get(b.get("tool_use_id", "")) in CC_COMPACTABLE
            and block_text(b) != CC_CLEARED
        ]
        for mi, bi in found[:-CC_KEEP_RESULTS] if len(found) > CC_KEEP_RESULTS else []:
            self.rows[mi]["content"][bi] = {**self.rows[mi]["content"][bi], "content": CC_CLEARED}

    def estimate(self, step: Step) -> int:
        pending = [*self.since, {"content": step.user}]
        if self.last_total is None:
            return sum(bytes4(b["text"]) for b in self.system) + sum(
                message_bytes4(m) for m in [*self.rows, *pending]
            )
        return self.last_total + sum(message_bytes4(m) for m in pending)

    def compact(self, step: Step) -> bool:
        """The whole history becomes one summary (made by the same model, reading the cached prefix)."""
        if not self.rows:
            return False
        ask = {
            "role": "user",
            "content": [{"type": "text", "text": f"{SUMMARY_MARKER}\n{CC_SUMMARY_PROMPT}"}],
        }
        status, payload = self.post(self.body([*self.rows, ask], max_tokens=CC_SUMMARY_BUFFER))
        self.summaries += 1
        if status != 200:
            return False
        summary = "".join(b.get("text", "") for b in payload.get("content", []))
        head = {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "This session is being continued from a "
                    "previous conversation. Summary:\n" + summary,
                }
            ],
        }
        # The new turn stays verbatim; if it answers tool calls, the call message stays too (pairing).
        needs_call = (
            any(b.get("type") == "tool_result" for b in step.user) and self.rows[-1]["role"] == "assistant"
        )
        self.rows = [head, self.rows[-1]] if needs_call else [head]
        self.last_total, self.since = None, list(self.rows)
        return True

    async def turn(self, step: Step) -> TurnOutcome:
        before = self.summaries
        if step.gap > CC_IDLE_SECONDS:
            self.microcompact()
        if self.estimate(step) >= self.threshold:
            self.compact(step)
        status, payload = self.post(self.body([*self.rows, {"role": "user", "content": step.user}]))
        if is_overflow(status, payload) and self.compact(step):  # reactive, once per turn
            status, payload = self.post(self.body([*self.rows, {"role": "user", "content": step.user}]))
        if status != 200:
            return TurnOutcome(False, self.summaries - before)
        usage = payload.get("usage", {})
        self.last_total = sum(
            int(usage.get(k) or 0)
            for k in (
                "input_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
                "output_tokens",
            )
        )
        self.since = []
        self.commit(step, payload["content"])
        return TurnOutcome(True, self.summaries - before)

    def commit(self, step: Step, reply: list[Block]) -> None:
        super().commit(step, reply)
        for b in reply:
            if b.get("type") == "tool_use":
                self.tool_names[b.get("id", "")] = b.get("name", "")

    async def lost(self, step: Step) -> None:
        self.commit(step, copy.deepcopy(step.reply))
        self.since.extend(self.rows[-2:])


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    """Set environment variables for one replay and restore them afterwards (pytest's own values too)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@dataclass(eq=False)
class Timer:
    at: float
    fire: Callable[[], None]
    timers: ClockTimers

    def cancel(self) -> None:
        if self in self.timers.pending:
            self.timers.pending.remove(self)


class ClockTimers:
    """The engine's timers on the replay's clock: the policy fires each one as the pause passes its time."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.pending: list[Timer] = []

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        timer = Timer(self.clock.now + delay, callback, self)
        self.pending.append(timer)
        return timer

    def next_due(self, until: float) -> Timer | None:
        """The earliest timer due by ``until``, taken off the list (None: none is)."""
        due = min(self.pending, key=lambda t: t.at, default=None)
        if due is None or due.at > until:
            return None
        self.pending.remove(due)
        return due


@dataclass
class PrecisPolicy(Policy):
    """The real engine: its own store in a temporary PRECIS_HOME, its own summaries, its own provider."""

    name = "precis"
    engine: Any = None
    store: Any = None
    sid: int = 0
    _tmp: Any = None
    _env: Any = None
    timers: ClockTimers | None = None
    failed: list[Any] = field(default_factory=list)

    async def start(self, srv: FakeAnthropic, model: str, title: str) -> None:
        from desktop.engine.config.secrets import Credentials
        from desktop.engine.config.settings import Paths, Settings
        from desktop.engine.events import TurnError
        from desktop.engine.turn.chat import ChatEngine
        from desktop.store import Store

        self._tmp = tempfile.TemporaryDirectory(prefix="precis-replay-")
        self._env = environment(
            PRECIS_HOME=str(Path(self._tmp.name) / "home"),
            PRECIS_CONTEXT_WINDOW=str(srv.window),
            ANTHROPIC_BASE_URL=srv.base_url,
            ANTHROPIC_API_KEY="test-key",
        )
        self._env.__enter__()
        paths = Paths.resolve().ensure()
        settings = Settings.load(paths)
        self.store = await Store.open(paths.database)
        self.engine = ChatEngine(self.store, paths, settings, Credentials(api_key="test-key", source="env"))
        self.engine.clock = srv.clock  # the engine sees the same (replayed) time as the server's cache
        self.timers = ClockTimers(srv.clock)
        self.engine.idle_timers.scheduler = self.timers
        self.engine.subscribe(lambda e: self.failed.append(e) if isinstance(e, TurnError) else None)
        self.sid = (await self.store.create_session(title or "replay", model)).id

    async def turn(self, step: Step) -> TurnOutcome:
        before = len(await self.store.compactions(self.sid))
        errors = len(self.failed)
        reply = await self.engine.send_content(self.sid, copy.deepcopy(step.user))
        after = len(await self.store.compactions(self.sid))
        # A reply cut at the output cap (one recorded reply is longer than the default 8,192) reached the user
        # with no error: it is not counted as one.
        ok = reply is not None and len(self.failed) == errors and reply.status in ("complete", "cut")
        return TurnOutcome(ok, after - before)

    async def pause(self, clock: FakeClock, seconds: float) -> None:
        """The window stays open while the user pauses, as a desktop app's does: the engine's timers (the idle
        summary made shortly before the prompt cache lapses) fire when the pause reaches them."""
        end, timers = clock.now + seconds, self.timers
        while timers is not None and (due := timers.next_due(end)) is not None:
            clock.now = max(clock.now, due.at)
            due.fire()
            await self.engine.tasks.wait(self.sid, "prepare")
        clock.now = end

    async def lost(self, step: Step) -> None:
        await self.store.add_message(self.sid, "assistant", copy.deepcopy(step.reply))

    async def settle(self) -> None:
        await self.engine.tasks.wait(self.sid, "prepare")

    async def close(self) -> None:
        if self.engine is not None:
            await self.engine.close()
            await self.store.close()
        if self._env is not None:
            self._env.__exit__(None, None, None)
        if self._tmp is not None:
            self._tmp.cleanup()

    async def compactions(self) -> list[Any]:
        return list(await self.store.compactions(self.sid))


POLICIES: dict[str, type[Policy]] = {
    "none": NonePolicy,
    "codepilot": CodePilotPolicy,
    "claude-code": ClaudeCodePolicy,
    "precis": PrecisPolicy,
}
