from desktop.engine.compaction.cache_breakpoints import (
    canonical,
    count_breakpoints,
    place_breakpoints,
    strip_cache_control,
)

SYSTEM = [{"type": "text", "text": "static rules"}, {"type": "text", "text": "Today is Monday."}]
TOOLS = [
    {"name": "Read", "input_schema": {"type": "object", "properties": {"b": {}, "a": {}}}, "description": "r"}
]


def convo(n_exchanges: int, summary: bool = False) -> list[dict]:
    msgs = []
    for i in range(n_exchanges):
        msgs.append({"role": "user", "content": [{"type": "text", "text": f"q{i}"}]})
        msgs.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                    {"type": "text", "text": f"a{i}"},
                    {
                        "type": "tool_use",
                        "id": f"t{i}",
                        "name": "Read",
                        "input": {"z": 1, "a": {"y": 2, "b": 3}},
                    },
                ],
            }
        )
        msgs.append(
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}]}
        )
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": f"done {i}"}]})
    msgs.append({"role": "user", "content": [{"type": "text", "text": "next"}]})
    if summary:
        msgs[0]["content"].insert(
            0, {"type": "text", "text": "<conversation-summary>\nS\n</conversation-summary>"}
        )
    return msgs


def marked(messages):
    return [
        (mi, bi) for mi, m in enumerate(messages) for bi, b in enumerate(m["content"]) if "cache_control" in b
    ]


def test_positions_and_limit():
    msgs = convo(10)
    system, tools, out = place_breakpoints(SYSTEM, TOOLS, msgs, summary_present=False)
    assert "cache_control" in system[0] and "cache_control" not in system[1]
    assert "cache_control" not in tools[0]
    assert count_breakpoints(system, tools, out) == 4
    spots = marked(out)
    assert (len(out) - 1, 0) in spots
    for mi, bi in spots:
        block = out[mi]["content"][bi]
        assert block["type"] != "thinking"
    assert count_breakpoints(msgs) == 0  # input untouched
    call = out[1]["content"][2]
    assert list(call["input"]) == ["a", "z"] and list(call["input"]["a"]) == ["b", "y"]
    assert list(tools[0]["input_schema"]["properties"]) == ["a", "b"]


def test_intermediate_spacing_and_stable_anchor():
    msgs = convo(10)  # 10 × 6 + 1 = 61 blocks
    _, _, out = place_breakpoints(SYSTEM, TOOLS, msgs, summary_present=False)
    flat = [b for m in out for b in m["content"]]
    idx = [g for g, b in enumerate(flat) if "cache_control" in b]
    assert idx == [44, 59, 60]  # anchors at 15k-1 below the end
    assert all(b - a <= 15 for a, b in zip(idx, idx[1:], strict=False))
    # Next turn (reply + new question): the intermediate anchors below the old end stay put.
    nxt = msgs + [
        {"role": "assistant", "content": [{"type": "text", "text": "fine"}]},
        {"role": "user", "content": [{"type": "text", "text": "more"}]},
    ]
    _, _, out2 = place_breakpoints(SYSTEM, TOOLS, nxt, summary_present=False)
    idx2 = [g for g, b in enumerate(b for m in out2 for b in m["content"]) if "cache_control" in b]
    assert idx2 == [44, 59, 62]


def test_summary_block_gets_breakpoint_and_no_anchor_before_it():
    msgs = convo(1, summary=True)
    _, _, out = place_breakpoints(SYSTEM, [], msgs, summary_present=True)
    assert "cache_control" in out[0]["content"][0]
    assert marked(out) == [(0, 0), (len(out) - 1, 0)]


def test_no_system_uses_last_tool_and_never_marks_empty_or_thinking():
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "x"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "y"},
                {"type": "thinking", "thinking": "t", "signature": "s"},
            ],
        },
        {"role": "user", "content": [{"type": "text", "text": "z"}, {"type": "text", "text": "  "}]},
    ]
    system, tools, out = place_breakpoints([], TOOLS, msgs, summary_present=False)
    assert "cache_control" in tools[-1]
    assert marked(out) == [(2, 0)]


def test_idempotent_and_strips_old_markers():
    msgs = convo(3)
    once = place_breakpoints(SYSTEM, TOOLS, msgs, summary_present=False)
    twice = place_breakpoints(*once, summary_present=False)
    assert canonical(once) == canonical(twice)
    assert strip_cache_control(once[2]) == strip_cache_control(
        place_breakpoints([], [], msgs, summary_present=False)[2]
    )
