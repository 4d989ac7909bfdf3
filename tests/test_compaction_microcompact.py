import copy

from desktop.engine.compaction.cache_breakpoints import canonical
from desktop.engine.compaction.microcompact import (
    apply_clear,
    apply_truncate,
    clear_target,
    min_clear_for,
    plan_clear,
    plan_truncate,
)
from desktop.engine.types import StoredMessage


def _m(mid, role, content):
    return StoredMessage(id=mid, session_id=1, role=role, content=content)


def tool_history(n_calls: int, result_chars: int = 4_000) -> list[StoredMessage]:
    msgs = [_m(1, "user", [{"type": "text", "text": "start"}])]
    mid = 2
    for i in range(n_calls):
        msgs.append(
            _m(
                mid,
                "assistant",
                [{"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {"file_path": f"src/f{i}.py"}}],
            )
        )
        msgs.append(
            _m(
                mid + 1,
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"t{i}",
                        "content": f"result {i} " + "x" * result_chars,
                        "is_error": i == 0,
                    }
                ],
            )
        )
        mid += 2
    return msgs


def test_clear_keeps_newest_k_and_every_pair():
    msgs = tool_history(12)
    before = copy.deepcopy(msgs)
    target = clear_target(msgs, keep_recent=8)
    assert target == msgs[8].id  # 4 oldest results (messages 2,4,6,8 → index 2..8) are clearable
    out, changed = apply_clear(msgs, target)
    assert msgs == before  # input untouched
    results = [b for m in out for b in m.content if b["type"] == "tool_result"]
    assert len(results) == 12
    cleared = [b for b in results if b["content"].startswith("[Old tool result cleared")]
    assert len(cleared) == 4
    assert changed == {(m.id, 0) for m in msgs[2:9:2]}
    assert cleared[0]["is_error"] is True
    assert cleared[0]["content"].startswith(
        "[Old tool result cleared: Read src/f0.py — first 200 of 4,009 characters…] result 0 "
    )
    assert set(cleared[1]) == {"type", "tool_use_id", "content", "is_error"}  # no private marker keys
    assert all(len(b["content"]) > 4000 for b in results[4:])


def test_plan_clear_hysteresis_moves_forward_in_batches():
    msgs = tool_history(12)  # ~1,000 tokens per result
    assert plan_clear(msgs, 0, keep_recent=8, min_clear_tokens=10_000) == 0  # 4 results: not worth it yet
    assert plan_clear(msgs, 0, keep_recent=8, min_clear_tokens=3_000) == msgs[8].id  # jumps the whole way
    longer = tool_history(20)
    horizon = plan_clear(longer, 0, keep_recent=8, min_clear_tokens=10_000)
    assert horizon == longer[24].id
    # One more turn: the target moves by one result, too little to move again.
    more = tool_history(21)
    assert plan_clear(more, horizon, keep_recent=8, min_clear_tokens=10_000) == horizon
    assert plan_clear(more, 10_000, keep_recent=8, min_clear_tokens=0) == 10_000  # never backwards


def test_apply_clear_is_byte_stable_for_same_horizon():
    msgs = tool_history(12)
    horizon = clear_target(msgs, 8)
    a, _ = apply_clear(msgs, horizon)
    b, _ = apply_clear(msgs + tool_history(14)[len(msgs) :], horizon)
    assert canonical([m.content for m in a]) == canonical([m.content for m in b[: len(a)]])


def test_short_results_are_left_alone():
    msgs = tool_history(10, result_chars=10)
    out, changed = apply_clear(msgs, 10_000)
    assert changed == set() and out == msgs


def test_tool_result_with_image_is_cleared_and_media_removed():
    msgs = [
        _m(1, "assistant", [{"type": "tool_use", "id": "s", "name": "Screenshot", "input": {}}]),
        _m(
            2,
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "s",
                    "content": [
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": "AA"},
                        }
                    ],
                }
            ],
        ),
    ]
    out, changed = apply_clear(msgs, 2)
    assert changed == {(2, 0)}
    assert (
        out[1].content[0]["content"]
        == "[Old tool result cleared: Screenshot — first 0 of 0 characters…] [media removed]"
    )


def test_min_clear_for_window():
    assert min_clear_for(200_000) == 4_000
    assert min_clear_for(1_000_000) == 20_000
    assert min_clear_for(None) == 20_000


def _texts(n: int, size: int) -> list[StoredMessage]:
    return [
        _m(i + 1, "user" if i % 2 == 0 else "assistant", [{"type": "text", "text": f"{i}:" + "y" * size}])
        for i in range(n)
    ]


def test_truncate_tiers_and_head_tail_shape():
    msgs = _texts(50, 8_000)
    old = plan_truncate(msgs, 0, after=30, limit=1_000, min_gain_tokens=1)
    recent = plan_truncate(msgs, 0, after=10, limit=5_000, min_gain_tokens=1)
    assert old == msgs[-31].id and recent == msgs[-11].id
    out, changed = apply_truncate(msgs, old, recent_horizon=recent)
    lengths = [len(m.content[0]["text"]) for m in out]
    marker_len = len("\n[… 7,002 characters omitted …]\n")
    assert lengths[:20] == [1_000 + marker_len] * 20
    assert all(5_000 < n < 5_100 for n in lengths[20:40])
    assert lengths[40:] == [8_003] * 10  # "40:" … "49:" + 8,000
    assert len(changed) == 40
    text = out[0].content[0]["text"]
    assert text.startswith("0:" + "y" * 698) and "[… 7,002 characters omitted …]" in text
    assert text.endswith("y" * 300)


def test_truncate_never_touches_tool_blocks():
    msgs = [
        _m(
            1,
            "assistant",
            [{"type": "tool_use", "id": "a", "name": "Write", "input": {"content": "z" * 9_000}}],
        ),
        _m(2, "user", [{"type": "tool_result", "tool_use_id": "a", "content": "z" * 9_000}]),
    ]
    out, changed = apply_truncate(msgs, 2, recent_horizon=2)
    assert out == msgs and changed == set()


def test_plan_truncate_waits_for_enough_gain():
    msgs = _texts(40, 1_500)  # 500 chars over the limit per message: ~100 tokens each
    assert plan_truncate(msgs, 0, after=30, limit=1_000, min_gain_tokens=5_000) == 0
    assert plan_truncate(msgs, 0, after=30, limit=1_000, min_gain_tokens=500) == msgs[-31].id


def test_truncate_never_lengthens_a_text_just_over_the_limit():
    # 1,001 characters "cut" to 1,000 plus a ~35-character marker would be longer than the original.
    msgs = [_m(1, "user", [{"type": "text", "text": "a" * 1_001}]), _m(2, "assistant", [_t("b" * 1_200)])]
    out, changed = apply_truncate(msgs, horizon=2, old_limit=1_000)
    assert out[0] is msgs[0] and (1, 0) not in changed
    assert len(out[1].content[0]["text"]) < 1_200 and changed == {(2, 0)}


def test_text_none_fields_do_not_raise():
    msgs = [_m(1, "user", [{"type": "text", "text": None}]), _m(2, "assistant", [{"type": "text"}])]
    assert apply_truncate(msgs, horizon=2, old_limit=0) == (msgs, set())
    assert plan_truncate(msgs, 0, after=0, limit=0, min_gain_tokens=0) == 2


def _t(text):
    return {"type": "text", "text": text}
