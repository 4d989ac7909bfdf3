"""Turn-scale benchmark: engine work per turn at 1k, 10k, 50k and 100k stored messages, compacted and not.

Run: ``.venv/bin/python -m tests.bench.bench_turn_scale`` (``--sizes 1000,10000``, ``--turns N``, ``--warmup N``,
``--profile``, ``--json``, ``--strict``, ``--in-process``); ``python -m tests.bench`` runs it with the others.

Set-up, per size N and variant (each in its own throwaway PRECIS_HOME). The database is written directly with
``Repo.add_messages``: N rows alternating user / assistant, short texts drawn from a fixed vocabulary (user 3-30
words, assistant 8-80 words), every assistant row with a model, ``stop_reason`` and a usage whose prompt size
grows with the conversation, as a real reply's does.

* ``uncompacted``: nothing else; every row goes into every request.
* ``compacted``:   a compaction row (``Repo.add_compaction``, a 400-word summary) covering all but the last 200
                   rows, so requests carry the summary and those 200 rows.

The engine runs in this process through ``desktop.runtime.open_runtime`` against the loopback fake API
(``tests.fakeapi.FakeAnthropic``, timed, in a process of its own: ``ServedElsewhere``; ``--in-process`` runs it
in a thread of this one, as before, where its threads compete with the engine for the interpreter) with a
100M-token window on both sides (``PRECIS_CONTEXT_WINDOW`` and the server's), so no automatic summary,
background preparation or microcompaction ever starts. Under the 20M window of earlier runs the 100k
uncompacted case (~5M tokens) was past the share below which a chat is kept whole and summarised during its
run: its figure was not an uncompacted one. Once a case's turns and whatever they left running are done, the run
checks that it is what its name says (no compaction or clearing, and every request carried all the rows, or the
summary's tail and the new turns); a case that is not is flagged. Each case sends ``--warmup`` turns (the first
one reads the session and fills the estimate caches; its figure is reported as "first turn"), then ``--turns``
timed turns, each ``await engine.send(sid, "hi")`` answered with a fixed 28-word reply.

Engine work per turn = wall time of ``send`` minus the time the server spent on that turn's HTTP requests
(measured in the server: every ``do_POST`` / ``do_GET`` of its handler is timed; the handler sets TCP_NODELAY,
or the last SSE write would wait ~40 ms for the client's delayed ACK after the handler returned, and that
would count as engine time). That figure still holds the SDK's own work (copying and serialising the request
body, parsing the stream); "excl. SDK" subtracts instead the time spent awaiting ``Provider.stream`` (the SDK
and the server together), so it is the engine's code alone. "CPU" is this process's CPU time during ``send``
(less the server threads' with ``--in-process``; steadier than wall time on a busy machine); "store" the time
spent awaiting
``Store.call`` (the database thread), part of the engine figure. Each column is the median over the timed
turns; "x 1k" divides by the 1k figure of the same variant in this run.

Targets: <= 5 ms of engine work per turn at 100k after a compaction, and <= 2x the 1k compacted figure
(a turn after a compaction should not grow with the history before it). The uncompacted variant has no target:
its requests carry every row, so it grows with N by design; it is here to show by how much.

``--profile``: after the timed turns, the largest size's two cases are run again against the fake API in a
separate process (so the profile holds no server frames: cProfile sees every thread since Python 3.12), with
the store's calls and ``asyncio.to_thread`` run inline on the loop thread (one call stack, so cumulative times
add up). Profiled: the first turn (it reads the session, as opening it in the window does) and
``--profile-turns`` turns after the warm-up; for each, the top 15 ``desktop`` functions by cumulative time and
the top 10 functions of any code by own time, per turn.

The exit status is 0 even when a target is missed (the table says so), unless ``--strict``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import json
import os
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from tests.fakeapi import FakeAnthropic

ROOT = Path(__file__).resolve().parents[2]
SIZES = (1_000, 10_000, 50_000, 100_000)
VARIANTS = ("uncompacted", "compacted")
MODEL = "claude-sonnet-4-6"
API_KEY = "test-key"
# Tokens, client and server. 100k short messages carry ~5M tokens: under a 20M window that was past the share
# below which a chat is kept whole (a quarter of the budget), so the 100k uncompacted case summarised during its
# run. At 100M the largest case is 5 % of the window, far below every ratio (microcompaction starts at half).
WINDOW = 100_000_000
TAIL = 200  # rows a compaction leaves after its boundary
TARGET_MS = 5.0  # engine work per turn at 100k, compacted
TARGET_RATIO = 2.0  # ... and at most this multiple of the 1k compacted figure
REPLY = (
    "Sure, that makes sense. I kept the earlier notes in mind and changed only the part you asked about; "
    "tell me if you want the rest done too."
)

_WORDS = (
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "on",
    "with",
    "this",
    "we",
    "you",
    "can",
    "file",
    "function",
    "test",
    "error",
    "change",
    "value",
    "return",
    "list",
    "config",
    "build",
    "run",
    "should",
    "would",
    "could",
    "add",
    "remove",
    "fix",
    "check",
    "update",
    "before",
    "after",
    "because",
    "session",
    "message",
    "request",
    "window",
    "cache",
    "token",
    "model",
    "reply",
    "query",
    "index",
    "row",
    "please",
    "thanks",
    "maybe",
    "instead",
    "again",
    "still",
    "first",
    "then",
    "also",
    "only",
    "every",
    "parser",
    "schema",
    "migration",
    "import",
    "module",
    "class",
    "method",
    "argument",
    "default",
    "option",
)


# ------------------------------------------------------------------------------------------ the history


def _text(rng: random.Random, lo: int, hi: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(lo, hi))]
    words[0] = words[0].capitalize()
    return " ".join(words) + rng.choice((".", "?", ".", "!"))


def _tokens(text: str) -> int:
    return len(text.encode()) // 4 + 5  # roughly what the API would count for one short message


SUMMARY = "Summary of the conversation so far. " + " ".join(_WORDS[i % len(_WORDS)] for i in range(400)) + "."


def make_rows(n: int, seed: int, cut: int | None = None) -> list[dict[str, Any]]:
    """``n`` rows, user first, alternating. Assistant usage: the prompt grows by every message since the
    start, or since ``cut`` (the first row after a compaction's boundary), when the summary replaced the rest."""
    from desktop.engine.types import Usage

    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    prompt = 3_000  # system prompt and the like
    for i in range(n):
        if i == cut:
            prompt = 3_000 + _tokens(SUMMARY)
        if i % 2 == 0:
            text = _text(rng, 3, 30)
            rows.append({"role": "user", "content": [{"type": "text", "text": text}]})
            prompt += _tokens(text)
        else:
            text = _text(rng, 8, 80)
            out = _tokens(text)
            usage = Usage(
                input_tokens=3,
                output_tokens=out,
                cache_creation_input_tokens=_tokens(rows[-1]["content"][0]["text"]),
                cache_read_input_tokens=max(0, prompt - 3 - out),
            )
            rows.append(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                    "model": MODEL,
                    "usage": usage,
                    "meta": {"stop_reason": "end_turn"},
                }
            )
            prompt += out
    from desktop.engine.metering.measure import new_row_estimate

    for row in rows:  # the numbers an imported row carries (engine-written rows get theirs at the next read)
        row["estimate"] = new_row_estimate(row["content"], MODEL)
    return rows


def build_db(home: Path, n: int, variant: str) -> int:
    """The session of one case in ``home``'s database; returns its id."""
    from desktop.store.repo import Repo

    compacted = variant == "compacted" and n > TAIL
    cut = n - TAIL if compacted else None
    repo = Repo(home / "data" / "precis.db")
    try:
        session = repo.create_session(f"{n:,} messages ({variant})", MODEL)
        repo.add_messages(session.id, make_rows(n, seed=n, cut=cut))
        if compacted:
            through = repo.messages(session.id, newest=TAIL + 1)[0].id  # the last row the summary replaces
            repo.add_compaction(
                session.id, SUMMARY, through, "manual", {"messages": n - TAIL, "tokens_saved": 0}
            )
        repo.update_session(session.id)
    finally:
        repo.close()
    return session.id


# ---------------------------------------------------------------------------------------------- clocks


class TimedFake(FakeAnthropic):
    """The fake API, timing every request its handler serves (seconds, summed)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.served = 0.0  # wall seconds inside the handler
        self.served_cpu = 0.0  # CPU seconds of the handler's thread meanwhile
        self.served_requests = 0
        self.started_requests = 0
        self.timed: list[tuple[str, float, float]] = []  # (handler, start, end) perf_counter of every request
        self._served_lock = threading.Lock()

    def start(self) -> str:
        url = super().start()
        assert self._httpd is not None
        fake = self
        base = self._httpd.RequestHandlerClass

        def timed(name: str) -> Any:
            def handler(handler_self: Any) -> None:
                with fake._served_lock:
                    fake.started_requests += 1
                start, cpu = time.perf_counter(), time.thread_time()
                try:
                    getattr(base, name)(handler_self)
                finally:
                    with fake._served_lock:
                        end = time.perf_counter()
                        fake.served += end - start
                        fake.served_cpu += time.thread_time() - cpu
                        fake.served_requests += 1
                        fake.timed.append((name, start, end))

            return handler

        # ThreadingHTTPServer reads RequestHandlerClass for every connection it accepts. TCP_NODELAY: with
        # Nagle on, the last small SSE write waits for the client's delayed ACK (40 ms on Linux) after the
        # handler has returned, which would be counted as engine time.
        self._httpd.RequestHandlerClass = type(
            "_TimedHandler",
            (base,),
            {"do_POST": timed("do_POST"), "do_GET": timed("do_GET"), "disable_nagle_algorithm": True},
        )
        return url

    @property
    def spans(self) -> list[tuple[float, float]]:
        """(start, end) of each POST, in order."""
        return [(a, b) for name, a, b in self.timed if name == "do_POST"]

    async def settled(self, timeout: float = 10.0) -> None:
        """Every request begun has been counted: a handler still finishing when a turn is over is that turn's,
        never the next one's (its time was once counted in the next turn and made an engine time negative)."""
        deadline = time.perf_counter() + timeout
        while self.started_requests != self.served_requests and time.perf_counter() < deadline:
            await asyncio.sleep(0.001)

    def served_between(self, first: int, start: float, end: float) -> float:
        """Seconds the handlers of requests ``first`` onwards spent within [start, end]: the server's part of
        that wall time, never more than it."""
        return sum(max(0.0, min(b, end) - max(a, start)) for _name, a, b in self.timed[first:])


class ServedElsewhere:
    """The timed fake API in a process of its own (``--serve``), read between turns through its pipes.

    Run in this process, the server's handler threads take the interpreter from the engine while it streams a
    reply, and the engine's figure (wall time less the server's) grew by that contention: it measured the test's
    server as much as the engine. The app's server is another machine; here it is another process. The two clocks
    are the same (``perf_counter`` is the system's monotonic clock), so spans read there are comparable here."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.bench.bench_turn_scale", "--serve"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        self.base_url = self._ask({"op": "url"})["url"]
        self.timed: list[tuple[str, float, float]] = []
        self.served_cpu = 0.0  # CPU seconds of the server's handlers: another process, so none is ours

    def _ask(self, command: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the benchmark's fake API exited")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def clear_log(self) -> None:
        self._ask({"op": "clear"})

    async def settled(self, timeout: float = 10.0) -> None:
        """Every request begun has been timed (see ``TimedFake.settled``); the spans are read then."""
        deadline = time.perf_counter() + timeout
        while True:
            state = self._ask({"op": "state", "from": len(self.timed)})
            self.timed.extend((n, a, b) for n, a, b in state["timed"])
            if state["started"] == state["served"] or time.perf_counter() > deadline:
                return
            await asyncio.sleep(0.001)

    def served_between(self, first: int, start: float, end: float) -> float:
        return TimedFake.served_between(self, first, start, end)  # type: ignore[arg-type]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> ServedElsewhere:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def serve() -> int:
    """``--serve``: the timed fake API, answering ``ServedElsewhere`` on stdin/stdout (one JSON line each)."""
    with TimedFake(window=WINDOW, reply_text=REPLY) as srv:
        for line in sys.stdin:
            command = json.loads(line)
            answer: dict[str, Any] = {}
            if command["op"] == "url":
                answer = {"url": srv.base_url}
            elif command["op"] == "clear":
                srv.clear_log()
            elif command["op"] == "state":
                with srv._served_lock:
                    answer = {
                        "started": srv.started_requests,
                        "served": srv.served_requests,
                        "timed": srv.timed[command["from"] :],
                    }
            print(json.dumps(answer), flush=True)
    return 0


class StreamClock:
    """Time spent awaiting ``Provider.stream`` (the SDK's request and the server, not the engine's handling of
    each part), summed over every call while installed."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.store_seconds = 0.0  # time awaiting Store.call (the database thread), once watch_store is called

    def watch_store(self, store: Any) -> None:
        call = store.call
        clock = self

        async def timed(fn: Any, *args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await call(fn, *args, **kwargs)
            finally:
                clock.store_seconds += time.perf_counter() - start

        store.call = timed

    @contextlib.contextmanager
    def installed(self) -> Iterator[StreamClock]:
        from desktop.engine.providers.provider import AnthropicProvider as Provider

        original = Provider.stream
        clock = self

        def stream(provider: Any, request: dict[str, Any]) -> AsyncIterator[Any]:
            inner = original(provider, request)

            async def timed() -> AsyncIterator[Any]:
                try:
                    while True:
                        start = time.perf_counter()
                        try:
                            part = await inner.__anext__()
                        except StopAsyncIteration:
                            return
                        finally:
                            clock.seconds += time.perf_counter() - start
                        yield part
                finally:
                    await inner.aclose()

            return timed()

        Provider.stream = stream  # type: ignore[method-assign]
        try:
            yield self
        finally:
            Provider.stream = original  # type: ignore[method-assign]


@contextlib.contextmanager
def case_env(home: Path, base_url: str) -> Iterator[None]:
    """This process's environment for one case (the engine reads it when the runtime opens)."""
    saved = dict(os.environ)
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "PRECIS_")):
            del os.environ[name]
    os.environ.update(
        PRECIS_HOME=str(home),
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY=API_KEY,
        PRECIS_CONTEXT_WINDOW=str(WINDOW),
    )
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


# ------------------------------------------------------------------------------------------- one case


async def _turns(
    engine: Any,
    sid: int,
    count: int,
    *,
    srv: TimedFake | ServedElsewhere | None,
    clock: StreamClock,
    profiler: cProfile.Profile | None = None,
) -> list[dict[str, float]]:
    out: list[dict[str, float]] = []
    store, counts = engine.store, engine.shared.counts
    for _ in range(count):
        if srv is not None:
            srv.clear_log()  # the log keeps every request body: 100k messages each
            await srv.settled()
        served_cpu0 = srv.served_cpu if srv is not None else 0.0
        first = len(srv.timed) if srv is not None else 0
        streamed0, stored0 = clock.seconds, clock.store_seconds
        trips0, gathers0, measures0 = store.round_trips, counts["gathers"], counts["measures"]
        if profiler is not None:
            profiler.enable()
        start, cpu = time.perf_counter(), time.process_time()
        reply = await engine.send(sid, "hi")
        done = time.perf_counter()
        wall, cpu = done - start, time.process_time() - cpu
        if profiler is not None:
            profiler.disable()
        if reply is None or reply.status != "complete":
            raise RuntimeError(f"turn failed: {reply}")
        await engine.tasks.wait(sid, "prepare")  # nothing should be prepared: checked after the case
        if srv is not None:
            await srv.settled()
        served = srv.served_between(first, start, done) if srv is not None else 0.0
        served_cpu = (srv.served_cpu - served_cpu0) if srv is not None else 0.0
        streamed, stored = clock.seconds - streamed0, clock.store_seconds - stored0
        out.append(
            {
                "wall_ms": wall * 1000,
                "server_ms": served * 1000,
                "stream_ms": streamed * 1000,
                "store_ms": stored * 1000,
                "engine_ms": (wall - served) * 1000,
                "engine_excl_sdk_ms": (wall - streamed) * 1000,
                "engine_cpu_ms": (cpu - served_cpu) * 1000,
                "round_trips": store.round_trips - trips0,
                "gathers": counts["gathers"] - gathers0,
                "measures": counts["measures"] - measures0,
            }
        )
    return out


async def run_case(
    n: int, variant: str, tmp: Path, srv: TimedFake | ServedElsewhere, args: argparse.Namespace
) -> dict[str, Any]:
    from desktop.engine.config.secrets import Credentials
    from desktop.engine.events import CompactionChanged, ContextChanged
    from desktop.runtime import open_runtime

    home = tmp / f"{n}-{variant}"
    started = time.perf_counter()
    sid = build_db(home, n, variant)
    build_s = time.perf_counter() - started
    snapshots: list[Any] = []
    compactions: list[Any] = []

    def listen(event: Any) -> None:
        if isinstance(event, ContextChanged):
            snapshots.append(event.snapshot)
        elif isinstance(event, CompactionChanged):
            compactions.append(event)

    clock = StreamClock()
    with case_env(home, srv.base_url), clock.installed():
        async with open_runtime(credentials=Credentials(api_key=API_KEY, source="env")) as runtime:
            engine = runtime.engine
            engine.subscribe(listen)
            clock.watch_store(runtime.store)
            warm = await _turns(engine, sid, args.warmup, srv=srv, clock=clock)
            timed = await _turns(engine, sid, args.turns, srv=srv, clock=clock)
            for kind in ("turn", "compact", "prepare"):  # whatever the turns left running has finished
                await engine.tasks.wait(sid, kind)
            g = await engine.view(sid).gather()
            state = await runtime.store.get_state(sid)
    srv.clear_log()
    last = snapshots[-1] if snapshots else None
    compacted = variant == "compacted" and n > TAIL
    written = n + 2 * (args.warmup + args.turns)  # each turn adds the user's message and the reply
    # What the case's name says, checked once its work is done: no summary, trim, clearing or cut ran, and every
    # request carried what it should (all rows uncompacted; the summary's tail and the new turns compacted).
    quiet = (
        not compactions
        and not any((state.get("horizons") or {}).values())
        and len(g.compactions) == (1 if compacted else 0)
        and len(g.sendable) == (written - (n - TAIL) if compacted else written)
    )

    def med(key: str) -> float:
        return statistics.median(t[key] for t in timed)

    return {
        "n": n,
        "variant": variant,
        "build_db_s": round(build_s, 2),
        "view_rows": len(g.history),
        "sent_rows": len(g.sendable),
        "used_tokens": last.used if last else None,
        "used_source": last.source if last else None,
        "no_compaction": quiet,
        "first_turn_ms": warm[0]["engine_ms"] if warm else None,
        "engine_ms": med("engine_ms"),
        "engine_excl_sdk_ms": med("engine_excl_sdk_ms"),
        "engine_cpu_ms": med("engine_cpu_ms"),
        "wall_ms": med("wall_ms"),
        "server_ms": med("server_ms"),
        "stream_ms": med("stream_ms"),
        "store_ms": med("store_ms"),
        "round_trips": med("round_trips"),
        "gathers": med("gathers"),
        "measures": med("measures"),
        "engine_all_ms": [round(t["engine_ms"], 2) for t in timed],
    }


# -------------------------------------------------------------------------------------------- profile


@contextlib.contextmanager
def external_server() -> Iterator[str]:
    """The fake API in its own process, so a profile of this one holds no server frames."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakeapi", "--port", "0", "--window", str(WINDOW), "--reply", REPLY],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # "fake Anthropic API on http://127.0.0.1:PORT (window ...)"
        url = next((w for w in line.split() if w.startswith("http://")), None)
        if url is None:
            raise RuntimeError(f"fake API did not start: {line!r}")
        yield url
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=10)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def one_thread(store: Any) -> Iterator[None]:
    """Run the store's calls and ``asyncio.to_thread`` work inline on the loop thread: cProfile (on
    sys.monitoring since 3.12) sees every thread through one call stack, so interleaved threads would charge
    each other's time to whatever frame is open. Inline, the profile's cumulative times add up."""
    to_thread, call = asyncio.to_thread, store.call

    async def inline_call(fn: Any, *args: Any, **kwargs: Any) -> Any:
        store.round_trips += 1
        return fn(*args, **kwargs)  # peewee opens this thread's own connection to the same file

    async def inline_to_thread(fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    asyncio.to_thread, store.call = inline_to_thread, inline_call  # type: ignore[assignment]
    try:
        yield
    finally:
        asyncio.to_thread, store.call = to_thread, call  # type: ignore[assignment]


_WAITS = ("poll", "acquire", "select", "sleep", "wait", "recv", "accept", "_worker")


def profile_rows(stats: pstats.Stats, turns: int) -> dict[str, list[dict[str, Any]]]:
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # type: ignore[attr-defined]

    def row(key: tuple[str, int, str], value: tuple[int, int, float, float, Any]) -> dict[str, Any]:
        file, line, name = key
        where = file
        for marker in ("/desktop/", "/site-packages/", "/lib/python"):
            if marker in file:
                where = file[file.index(marker) + 1 :]
                break
        label = f"{where}:{line}({name})" if line else name
        return {
            "function": label,
            "calls": value[1] / turns,
            "own_ms": value[2] * 1000 / turns,
            "cum_ms": value[3] * 1000 / turns,
        }

    ours = [(k, v) for k, v in raw.items() if "/desktop/" in k[0]]
    ours.sort(key=lambda kv: kv[1][3], reverse=True)
    anything = [(k, v) for k, v in raw.items() if not any(w in k[2] for w in _WAITS)]
    anything.sort(key=lambda kv: kv[1][2], reverse=True)
    return {"cumulative": [row(k, v) for k, v in ours[:15]], "own": [row(k, v) for k, v in anything[:10]]}


async def profile_case(
    n: int, variant: str, tmp: Path, base_url: str, args: argparse.Namespace
) -> dict[str, Any]:
    from desktop.engine.config.secrets import Credentials
    from desktop.runtime import open_runtime

    home = tmp / f"profile-{n}-{variant}"
    sid = build_db(home, n, variant)
    clock = StreamClock()
    first, steady = cProfile.Profile(), cProfile.Profile()
    with case_env(home, base_url), clock.installed():
        async with open_runtime(credentials=Credentials(api_key=API_KEY, source="env")) as runtime:
            engine = runtime.engine
            with one_thread(runtime.store):
                opening = await _turns(engine, sid, 1, srv=None, clock=clock, profiler=first)
            await _turns(engine, sid, max(0, args.warmup - 1), srv=None, clock=clock)
            with one_thread(runtime.store):
                turns = await _turns(engine, sid, args.profile_turns, srv=None, clock=clock, profiler=steady)

    def phase(name: str, profiler: cProfile.Profile, timed: list[dict[str, float]]) -> dict[str, Any]:
        return {
            "phase": name,
            "turns": len(timed),
            "wall_ms_profiled": statistics.median(t["wall_ms"] for t in timed),
            "stream_ms_profiled": statistics.median(t["stream_ms"] for t in timed),
            **profile_rows(pstats.Stats(profiler), len(timed)),
        }

    return {
        "n": n,
        "variant": variant,
        "phases": [
            phase("turns after the warm-up", steady, turns),
            phase("first turn (reads the session)", first, opening),
        ],
    }


# ------------------------------------------------------------------------------------------------ run


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    cases: list[dict[str, Any]] = []
    profiles: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="precis-turn-scale-") as tmp:
        tmp_path = Path(tmp)
        server = (
            TimedFake(window=WINDOW, reply_text=REPLY)
            if getattr(args, "in_process", False)
            else ServedElsewhere()
        )
        with server as srv:
            for n in args.sizes:
                for variant in VARIANTS:
                    gc.collect()  # the previous case's garbage is not this one's work
                    cases.append(await run_case(n, variant, tmp_path, srv, args))
                    print(
                        f"  {n:>7,} {variant:<12} {cases[-1]['engine_ms']:8.2f} ms/turn",
                        file=sys.stderr,
                        flush=True,
                    )
        if args.profile:
            biggest = max(args.sizes)
            with external_server() as url:
                for variant in VARIANTS:
                    profiles.append(await profile_case(biggest, variant, tmp_path, url, args))
    base = {c["variant"]: c["engine_ms"] for c in cases if c["n"] == min(args.sizes)}
    for c in cases:
        c["x_smallest"] = c["engine_ms"] / base[c["variant"]] if base.get(c["variant"]) else None
    return {
        "turns": args.turns,
        "warmup": args.warmup,
        "server": "this process" if getattr(args, "in_process", False) else "its own process",
        "smallest": min(args.sizes),
        "cases": cases,
        "targets": check_targets(cases),
        "profiles": profiles,
    }


def check_targets(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    at = {c["n"]: c for c in cases if c["variant"] == "compacted"}
    if 100_000 in at:
        c = at[100_000]
        out.append(
            {
                "what": "engine work per turn, 100k compacted",
                "value": c["engine_ms"],
                "limit": TARGET_MS,
                "unit": "ms",
                "ok": c["engine_ms"] <= TARGET_MS,
            }
        )
        if c["x_smallest"] is not None and min(at) == 1_000:
            out.append(
                {
                    "what": "100k compacted / 1k compacted",
                    "value": c["x_smallest"],
                    "limit": TARGET_RATIO,
                    "unit": "x",
                    "ok": c["x_smallest"] <= TARGET_RATIO,
                }
            )
    for c in cases:
        if not c["no_compaction"]:
            out.append(
                {
                    "what": f"{c['n']:,} {c['variant']}: no compaction during the run",
                    "value": 0.0,
                    "limit": 0.0,
                    "unit": "",
                    "ok": False,
                }
            )
    return out


def print_table(r: dict[str, Any]) -> None:
    print(
        f"Engine work per turn (ms; median of {r['turns']} turns after {r['warmup']} warm-up; "
        f"engine = wall - server time; the fake API in {r.get('server', 'this process')})"
    )
    head = (
        f"{'stored':>8} {'variant':<12}{'sent':>6}{'engine':>9}{'x ' + format(r['smallest'], ','):>9}"
        f"{'excl.SDK':>10}{'CPU':>8}{'store':>7}{'wall':>9}{'server':>9}{'1st turn':>10}{'trips':>7}  target"
    )
    print(head)
    for c in r["cases"]:
        target = ""
        if c["variant"] == "compacted" and c["n"] == 100_000:
            ms_ok = c["engine_ms"] <= TARGET_MS
            ratio_ok = c["x_smallest"] is not None and c["x_smallest"] <= TARGET_RATIO
            target = (
                f"<= {TARGET_MS:g} ms: {'yes' if ms_ok else 'NO'}, "
                f"<= {TARGET_RATIO:g}x: {'yes' if ratio_ok else 'NO'}"
            )
        ratio = f"{c['x_smallest']:.2f}x" if c["x_smallest"] is not None else "-"
        print(
            f"{c['n']:>8,} {c['variant']:<12}{c['sent_rows']:>6}{c['engine_ms']:>9.2f}{ratio:>9}"
            f"{c['engine_excl_sdk_ms']:>10.2f}{c['engine_cpu_ms']:>8.2f}{c['store_ms']:>7.2f}{c['wall_ms']:>9.2f}{c['server_ms']:>9.2f}"
            f"{c['first_turn_ms'] or 0:>10.1f}{c['round_trips']:>7.0f}  {target}"
        )
    print(
        "sent: rows each request carries; excl.SDK: wall - time awaiting Provider.stream; CPU: this "
        "process's CPU time (less the server threads' when they run in it; less sensitive to a busy machine); "
        "store: time awaiting "
        "the database thread (part of engine); 1st turn: the warm-up turn "
        "(reads the session), wall - server; trips: Store round trips per turn; each column is its own median"
    )
    for c in r["cases"]:
        if not c["no_compaction"]:
            print(
                f"WARNING: {c['n']:,} {c['variant']}: a compaction or microcompaction ran, or a request did not "
                "carry what the case's name says; figures are not comparable"
            )
    for t in r["targets"]:
        print(
            f"target: {t['what']}: {t['value']:.2f}{t['unit']} (limit {t['limit']:g}{t['unit']}) "
            f"{'ok' if t['ok'] else 'MISSED'}"
        )
    for p in r["profiles"]:
        for ph in p["phases"]:
            print(
                f"\nProfile: {p['n']:,} {p['variant']}, {ph['phase']}: {ph['turns']} turn(s), figures per turn "
                f"(wall {ph['wall_ms_profiled']:.1f} ms under the profiler, of which {ph['stream_ms_profiled']:.1f} "
                "ms awaiting the stream; a coroutine's calls count its resumptions)"
            )
            print(
                f"  top desktop functions by cumulative time:\n  {'cum ms':>9}{'own ms':>9}{'calls':>9}  function"
            )
            for row in ph["cumulative"]:
                print(f"  {row['cum_ms']:>9.2f}{row['own_ms']:>9.2f}{row['calls']:>9.0f}  {row['function']}")
            print(
                f"  top functions (any code) by own time:\n  {'own ms':>9}{'cum ms':>9}{'calls':>9}  function"
            )
            for row in ph["own"]:
                print(f"  {row['own_ms']:>9.2f}{row['cum_ms']:>9.2f}{row['calls']:>9.0f}  {row['function']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default=",".join(str(s) for s in SIZES),
        help="stored messages per case, comma-separated (default: %(default)s)",
    )
    parser.add_argument("--turns", type=int, default=5, help="timed turns per case (default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed turns first (default: %(default)s)")
    parser.add_argument("--profile", action="store_true", help="profile the largest size's cases")
    parser.add_argument("--profile-turns", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run the fake API in this process (as before): its threads then compete with the engine",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # ServedElsewhere's server
    args = parser.parse_args(argv)
    if args.serve:
        return serve()
    args.sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    if args.turns < 1 or args.warmup < 1:
        parser.error("--turns and --warmup must be at least 1")
    result = asyncio.run(measure(args))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    missed = [t for t in result["targets"] if not t["ok"]]
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
