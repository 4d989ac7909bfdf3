"""Whole-pipeline properties: any history, after repair + microcompaction + media cap + snip + breakpoints, is a
valid request; and consecutive turns keep a byte-identical prefix while the horizons stay put."""

import base64
import copy
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from desktop.engine.compaction._shared import group_starts, with_content
from desktop.engine.compaction.cache_breakpoints import (
    canonical,
    count_breakpoints,
    place_breakpoints,
    strip_cache_control,
)
from desktop.engine.compaction.ingest import cap_content
from desktop.engine.compaction.media import cap_media
from desktop.engine.compaction.microcompact import apply_clear, apply_truncate, plan_clear, plan_truncate
from desktop.engine.compaction.request_shape import problems, repair
from desktop.engine.compaction.snip import snip_to_fit
from desktop.engine.metering.tokens import estimate_message
from desktop.engine.types import StoredMessage

SYSTEM = [{"type": "text", "text": "static"}, {"type": "text", "text": "dynamic"}]
TOOLS = [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}]


def _png(w: int, h: int) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (9, 9, 9)).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode()


SMALL, WIDE = _png(3, 3), _png(2_100, 4)
IDS = ["t1", "t2", "t3", "t4", "t5", "bad id!"]


def _image(data):
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


texts = st.one_of(
    st.sampled_from(["", "  ", "\n", "hi", "/compact", "好的", "ok then"]),
    st.integers(0, 3_000).map(lambda n: "lorem ipsum\n" * (n // 12)),
)
text_block = texts.map(lambda t: {"type": "text", "text": t})
image_block = st.sampled_from([SMALL, WIDE]).map(_image)
result_content = st.one_of(texts, st.lists(st.one_of(text_block, image_block), max_size=3))
blocks = st.one_of(
    text_block,
    image_block,
    st.builds(
        lambda i, inp: {"type": "tool_use", "id": i, "name": "Read", "input": inp},
        st.sampled_from(IDS),
        st.one_of(st.just({}), st.just({"file_path": "a.py", "n": 1}), st.just('{"x": ')),
    ),
    st.builds(
        lambda i, c, e: {"type": "tool_result", "tool_use_id": i, "content": c, "is_error": e},
        st.sampled_from(IDS),
        result_content,
        st.booleans(),
    ),
    st.builds(
        lambda s: {"type": "thinking", "thinking": "hmm", **({"signature": "sig"} if s else {})},
        st.booleans(),
    ),
    st.just(
        {
            "type": "document",
            "title": "a.pdf",
            "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="},
        }
    ),
    st.just({"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}),
)
message = st.tuples(
    st.sampled_from(["user", "assistant"]),
    st.lists(blocks, max_size=4),
    st.sampled_from(["complete", "interrupted"]),
    st.booleans(),
)


def _history(specs) -> list[StoredMessage]:
    return [
        StoredMessage(
            id=i + 1,
            session_id=1,
            role=role,
            content=content,
            status=status,
            meta={"stop_reason": "end_turn", "imported": imported},
        )
        for i, (role, content, status, imported) in enumerate(specs)
    ]


def _est(msgs) -> int:
    return sum(estimate_message(m["content"]) for m in msgs)


@pytest.fixture(scope="module")
def spill_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("spill")


@settings(
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    specs=st.lists(message, min_size=1, max_size=14),
    clear_h=st.integers(0, 15),
    old_h=st.integers(0, 15),
    recent_h=st.integers(0, 15),
    media_limit=st.integers(0, 6),
    budget=st.integers(0, 4_000),
    summary=st.booleans(),
)
def test_pipeline_always_yields_a_valid_request(
    spill_dir, specs, clear_h, old_h, recent_h, media_limit, budget, summary
):
    history = _history(specs)
    frozen = copy.deepcopy(history)
    msgs, _ = apply_clear(history, clear_h)
    msgs, _ = apply_truncate(msgs, old_h, recent_horizon=recent_h, old_limit=200, recent_limit=800)
    msgs = [
        with_content(m, cap_content(m.content, key=str(m.id), spill_dir=spill_dir, limit=1_500, preview=100))
        for m in msgs
    ]
    request = repair(msgs)
    assert problems(request) == []
    request, report = cap_media(request, limit=media_limit, many_images_threshold=2, on_error="omit")
    assert report.count_before - report.omitted <= media_limit
    assert problems(request) == []
    kept, dropped = snip_to_fit(request, budget, _est)
    assert dropped + kept == request
    assert _est(kept) <= budget or group_starts(kept) == [0]
    assert problems(kept) == []
    system, tools, final = place_breakpoints(SYSTEM, TOOLS, kept, summary_present=summary)
    assert problems(final) == []
    assert count_breakpoints(system, tools, final) <= 4
    for m in final:
        for b in m["content"]:
            if "cache_control" in b:
                assert b["type"] not in ("thinking", "redacted_thinking")
                assert b["type"] != "text" or b["text"].strip()
    assert history == frozen  # nothing mutated


# --- prefix stability ---------------------------------------------------------------------------------------


def _session(turns: int) -> list[StoredMessage]:
    """A tool-heavy session: each turn a question, 3 tool calls with long results, an answer."""
    out: list[StoredMessage] = []

    def add(role, content):
        out.append(StoredMessage(id=len(out) + 1, session_id=1, role=role, content=content))

    for t in range(turns):
        add("user", [{"type": "text", "text": f"question {t}: " + "please look at the code " * 40}])
        for k in range(3):
            tid = f"toolu_{t}_{k}"
            add(
                "assistant",
                [
                    {
                        "type": "tool_use",
                        "id": tid,
                        "name": "Read",
                        "input": {"limit": 400, "file_path": f"src/m{t}_{k}.py"},
                    }
                ],
            )
            add(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": tid,
                        "content": f"# file {t}.{k}\n" + "x = 1\n" * 600,
                    }
                ],
            )
        add("assistant", [{"type": "text", "text": f"answer {t} " + "because " * 900}])
    return out


def _build(history, clear_h, old_h, recent_h, spill_dir, summary=False):
    msgs, _ = apply_clear(history, clear_h)
    msgs, _ = apply_truncate(msgs, old_h, recent_horizon=recent_h)
    msgs = [with_content(m, cap_content(m.content, key=str(m.id), spill_dir=spill_dir)) for m in msgs]
    request, _ = cap_media(repair(msgs), limit=100)
    return place_breakpoints(SYSTEM, TOOLS, request, summary_present=summary)


def _horizons(history, state):
    clear_h = plan_clear(history, state[0], keep_recent=8, min_clear_tokens=8_000)
    old_h = plan_truncate(history, state[1], after=30, limit=1_000, min_gain_tokens=5_000)
    recent_h = plan_truncate(history, state[2], after=10, limit=5_000, min_gain_tokens=5_000)
    return clear_h, old_h, recent_h


def _marks(messages) -> list[int]:
    flat = [b for m in messages for b in m["content"]]
    return [g for g, b in enumerate(flat) if "cache_control" in b]


def test_consecutive_turns_share_a_byte_identical_prefix(spill_dir):
    session = _session(12)
    state = (0, 0, 0)
    moved = stable = 0
    # Grow the conversation one message at a time; at every point where the request ends with a user message,
    # compare it with the previous such request.
    previous = None
    for n in range(2, len(session) + 1):
        history = session[:n]
        if history[-1].role != "user":
            continue
        new_state = _horizons(history, state)
        system, tools, final = _build(history, *new_state, spill_dir)
        if previous is not None:
            p_system, p_tools, p_final, p_state = previous
            same_prefix = canonical(strip_cache_control([p_tools, p_system, p_final])) == canonical(
                strip_cache_control([tools, system, final[: len(p_final)]])
            )
            if new_state == p_state:
                assert same_prefix, f"prefix changed at {n} without a horizon move"
                # Some breakpoint of this turn lies within the API's 20-block lookback after the previous
                # turn's last write, so this turn reads the prefix the previous one cached.
                p_end = max(_marks(p_final))
                assert any(p_end <= m <= p_end + 20 for m in _marks(final))
                stable += 1
            else:
                moved += 1
        previous = (system, tools, final, new_state)
        state = new_state
    assert stable >= 10 and 1 <= moved <= stable  # horizons move in batches, not every turn


def test_horizon_move_changes_prefix_only_from_the_cleared_point(spill_dir):
    history = _session(6)
    a = _build(history, 0, 0, 0, spill_dir)[2]
    h = plan_clear(history, 0, keep_recent=8, min_clear_tokens=1)
    assert h > 0
    b = _build(history, h, 0, 0, spill_dir)[2]
    first_diff = next(
        i
        for i, (x, y) in enumerate(zip(a, b, strict=True))
        if canonical(strip_cache_control(x)) != canonical(strip_cache_control(y))
    )
    assert canonical(strip_cache_control(a[:first_diff])) == canonical(strip_cache_control(b[:first_diff]))
    assert first_diff >= 1
