"""The session view's kept rows and request cache equal a from-scratch build after any sequence of changes.

The view shapes and estimates each row once, repairs only the open end of the request and keeps each message's
canonical copy; these tests drive a real store and a real view through random appends (texts, tool rounds with
huge and image results, thinking, live streaming rows), edits, deletes, horizon moves and compactions, and
compare every derived figure with the list-based functions run on the whole history.
"""

from __future__ import annotations

import asyncio
import base64
import io
import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec import structs
from PIL import Image

from desktop.engine import compaction as cp
from desktop.engine.compaction.cache_breakpoints import (
    EPHEMERAL,
    MAX_BREAKPOINTS,
    STRIDE,
    _is_summary,
    _sorted_without_cache_control,
    cacheable,
)
from desktop.engine.config.secrets import Credentials
from desktop.engine.metering import tokens
from desktop.engine.metering.measure import Ledger, row_estimate
from desktop.engine.turn import assemble
from desktop.engine.turn.session import SessionView, _rhythm
from desktop.runtime import open_runtime

SIGNATURE = "A" * 80


def _png() -> str:
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), (200, 10, 10)).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


PNG = _png()


def reference_breakpoints(
    system: list[Any], tools: list[Any], messages: list[Any], *, summary_present: bool, long_ttl: bool
) -> tuple[list[Any], list[Any], list[Any]]:
    """The breakpoint placement as it was written before the view kept canonical copies: a whole copy, then
    marks placed by walking every block (the oracle for ``mark_breakpoints``)."""
    mark = dict(EPHEMERAL)
    long_mark = {**mark, "ttl": "1h"} if long_ttl else mark
    system_out = _sorted_without_cache_control(list(system))
    tools_out = _sorted_without_cache_control(list(tools))
    messages_out = _sorted_without_cache_control(list(messages))
    budget = MAX_BREAKPOINTS
    static = next((b for b in system_out if cacheable(b)), None)
    if static is not None:
        static["cache_control"] = dict(long_mark)
        budget -= 1
    elif tools_out:
        tools_out[-1]["cache_control"] = dict(long_mark)
        budget -= 1
    flat = [
        (mi, bi)
        for mi, m in enumerate(messages_out)
        for bi in range(len(m.get("content") or []))
        if isinstance(m.get("content"), list)
    ]
    chosen: list[int] = []

    def block_at(g: int) -> Any:
        mi, bi = flat[g]
        return messages_out[mi]["content"][bi]

    def eligible(g: int, floor: int) -> int | None:
        while g > floor:
            if cacheable(block_at(g)):
                return g
            g -= 1
        return None

    end = eligible(len(flat) - 1, -1)
    if end is not None and budget > 0:
        chosen.append(end)
        budget -= 1
    floor, summary_pick = -1, None
    if summary_present and budget > 0 and messages_out:
        first = [g for g, (mi, _) in enumerate(flat) if mi == 0]
        marked = [g for g in first if _is_summary(block_at(g))]
        pick = marked[-1] if marked else eligible(first[-1], -1) if first else None
        if pick is not None and pick not in chosen:
            chosen.append(pick)
            summary_pick = pick
            budget -= 1
        floor = pick if pick is not None else -1
    anchor = ((end if end is not None else 0) // STRIDE) * STRIDE - 1
    while budget > 0 and anchor > floor:
        g = eligible(anchor, floor)
        if g is not None and g not in chosen and (end is None or g < end):
            chosen.append(g)
            budget -= 1
        anchor -= STRIDE
    intermediate = [g for g in chosen if g != end and g != summary_pick]
    stable = {summary_pick, min(intermediate)} if intermediate else {summary_pick}
    for g in chosen:
        block_at(g)["cache_control"] = dict(long_mark if g in stable else mark)
    return system_out, tools_out, messages_out


def reference_shape(
    view: SessionView, history: list[Any], horizons: dict[str, int], limit: int
) -> tuple[list[Any], set[tuple[int, int]]]:
    """Shaping as the list-based stages do it over the whole history."""
    spill = view.shared.paths.spill_dir(view.session_id)
    rows, changed = [], set()
    for m in history:
        if not m.sendable:
            continue
        capped = cp.cap_content(m.content, key=f"m{m.id}", spill_dir=spill, limit=limit, texts=False)
        marks = [i for i, (a, b) in enumerate(zip(capped, m.content, strict=True)) if a is not b]
        changed.update((m.id, i) for i in marks)
        rows.append(structs.replace(m, content=capped) if marks else m)
    cleared, c1 = cp.apply_clear(rows, horizons.get("clear", 0))
    shaped, c2 = cp.apply_truncate(cleared, horizons.get("old", 0), recent_horizon=horizons.get("recent", 0))
    return shaped, changed | c1 | c2


def check(view: SessionView, g: Any) -> None:
    """Every figure the view derived incrementally equals the same figure computed from scratch."""
    horizons = g.horizons
    rows, changed = reference_shape(view, g.history, horizons, view.ingest_limit(g.model))
    assert g.sendable == rows
    assert g.changed == changed
    family = view.shared.catalog.info(g.model).family
    fresh = Ledger.of(g.sendable, family)
    ledger = g.ledger
    assert (ledger.count, ledger.tokens, ledger.results, ledger.media, ledger.reply) == (
        fresh.count,
        fresh.tokens,
        fresh.results,
        fresh.media,
        fresh.reply,
    )
    assert list(ledger.ids) == [m.id for m in g.sendable]
    if g.cuts is not None:
        assert g.cuts == cp.cut_points(g.sendable)
    assert g.row_tokens == [tokens.estimate_message(m.content) for m in g.sendable]
    pause, last = False, None
    for m in g.history:
        pause, last = _rhythm(m, pause, last)
    assert g.pause_seen == pause

    # The request: the cached build, the view's from-scratch build, and the oracle's breakpoints agree.
    request = view.request(g)
    assert request == view.build_request(g)
    valid = cp.repair(assemble.with_summary(assemble.history_to_api(g.sendable), g.compaction))
    capped, _ = cp.cap_media(valid, limit=view.shared.catalog.info(g.model).media_limit, on_error="omit")
    system, _tools, messages = reference_breakpoints(
        g.system,
        g.tools,
        capped,
        summary_present=g.compaction is not None,
        long_ttl=view.shared.settings.long_cache_ttl and pause,
    )
    assert request["messages"] == messages and request["system"] == system
    assert not g.sendable and g.compaction is None or cp.problems(request["messages"]) == []

    # The meter and the split read the kept sums and cuts; without them they compute the same.
    scratch = structs.replace(g, ledger=None, cuts=None, row_tokens=None, pause_seen=None, memo={})
    assert view.used(g) == view.used(scratch)
    assert view.facts(g) == view.facts(scratch)
    assert view.snapshot(g) == view.snapshot(scratch)
    for m in g.sendable:
        est = row_estimate(m.content, family)
        assert est.tokens == tokens.estimate_message(m.content, family=family)


def text(n: int, seed: int) -> str:
    words = ("alpha", "beta", "gamma", "delta", "{json: 1}", "x = f(y)", "résumé", "数据")
    return " ".join(words[(seed + i) % len(words)] for i in range(n))


op = st.one_of(
    st.tuples(st.just("user"), st.sampled_from([3, 40, 2_000, 30_000]), st.booleans()),
    st.tuples(st.just("assistant"), st.sampled_from([3, 400, 3_000]), st.booleans()),
    st.tuples(st.just("tools"), st.integers(1, 3), st.sampled_from([5, 500, 30_000]), st.booleans()),
    st.tuples(st.just("live"), st.booleans()),
    st.tuples(st.just("horizons"), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1)),
    st.tuples(st.just("compact"), st.floats(0.1, 0.9)),
    st.tuples(st.just("edit"), st.floats(0, 1)),
    st.tuples(st.just("delete"), st.floats(0, 1)),
)


async def run(ops: list[tuple[Any, ...]]) -> None:
    async with open_runtime(credentials=Credentials(api_key="test-key", source="env")) as runtime:
        engine, store = runtime.engine, runtime.store
        sid = (await store.create_session("cache", "claude-sonnet-4-6")).id
        view = engine.view(sid)
        await view.gather()
        counter = itertools.count()
        pending: list[str] = []
        live: Any = None

        async def add(role: str, content: list[Any], **kw: Any) -> Any:
            row = await store.add_message(sid, role, content, **kw)
            view.remember(row)
            return row

        for step in ops:
            kind, n = step[0], next(counter)
            history = (await view.gather()).history
            if kind == "user":
                content: list[Any] = [{"type": "text", "text": text(step[1], n)}]
                if step[2]:
                    content.insert(
                        0,
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                        },
                    )
                await add("user", content)
            elif kind == "assistant":
                content = [{"type": "text", "text": text(step[1], n)}]
                if step[2]:
                    content.insert(0, {"type": "thinking", "thinking": text(20, n), "signature": SIGNATURE})
                from desktop.engine.types import Usage

                await add(
                    "assistant",
                    content,
                    model="claude-sonnet-4-6",
                    usage=Usage(10 + n, 5, 0, 100 * n),
                    meta={"sent_at": 1000.0 + 400 * n},
                )
            elif kind == "tools":
                calls = [
                    {
                        "type": "tool_use",
                        "id": f"t{n}_{i}",
                        "name": "Read",
                        "input": {"file_path": f"/src/f{n}_{i}.py"},
                    }
                    for i in range(step[1])
                ]
                await add("assistant", calls, model="claude-sonnet-4-6", meta={"stop_reason": "tool_use"})
                results: list[Any] = []
                for c in calls:
                    body: Any = text(step[2], n)
                    if step[3]:
                        body = [
                            {"type": "text", "text": body},
                            {
                                "type": "image",
                                "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                            },
                        ]
                    results.append({"type": "tool_result", "tool_use_id": c["id"], "content": body})
                pending = [c["id"] for c in calls]
                await add("user", results)
            elif kind == "live":
                if live is None:
                    live = await add("assistant", [], status="streaming", model="claude-sonnet-4-6")
                else:
                    await store.update_message(
                        live.id,
                        content=[{"type": "text", "text": text(9, n)}],
                        status="complete" if step[1] else "interrupted",
                    )
                    view.remember(await store.get_message(live.id))
                    live = None
            elif kind == "horizons" and history:
                ids = [m.id for m in history]
                pick = [ids[int(f * (len(ids) - 1))] for f in step[1:]]
                g = await view.gather()
                new = {
                    k: max(v, g.horizons.get(k, 0))
                    for k, v in zip(("clear", "old", "recent"), pick, strict=True)
                }
                view.state_changed(await store.update_state(sid, {"horizons": new}))
            elif kind == "compact" and len(history) > 2 and live is None:
                g = await view.gather()
                through = history[int(step[1] * (len(history) - 1))].id
                record = await store.add_compaction(
                    sid,
                    f"summary {n}",
                    through,
                    "manual",
                    {"pins_text": "User instructions so far (verbatim):\n- hi"},
                    expected_active=g.boundary,
                )
                view.compacted(record)
            elif kind == "edit" and history:
                target = history[int(step[1] * (len(history) - 1))]
                if target.status == "streaming":
                    continue
                content = (
                    [*target.content, {"type": "text", "text": f"edited {n}"}]
                    if target.role == "user"
                    else [{"type": "text", "text": f"edited {n}"}]
                )
                await store.update_message(target.id, content=content)
                view.remember(await store.get_message(target.id))
            elif kind == "delete" and history:
                target = history[int(step[1] * (len(history) - 1))]
                if target.status == "streaming":
                    continue
                await store.delete_message(target.id)
                view.forget(target.id)
            del pending[:]
            check(view, await view.gather())
        # A view opened afresh on the same rows builds the same request.
        g = await view.gather()
        other = SessionView(sid, engine.shared)
        assert view.request(g) == other.request(await other.gather())


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(op, min_size=1, max_size=30))
def test_kept_rows_and_cached_request_equal_a_build_from_scratch(ops):
    asyncio.run(run(ops))
