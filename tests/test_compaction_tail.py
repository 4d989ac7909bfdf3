import pytest

from desktop.engine.compaction._shared import cut_points
from desktop.engine.compaction.tail import split_tail
from desktop.engine.metering.tokens import estimate_message, estimate_text
from desktop.engine.types import StoredMessage


def _m(mid, role, content):
    return StoredMessage(id=mid, session_id=1, role=role, content=content)


def chat(n_exchanges: int, chars: int = 4_000) -> list[StoredMessage]:
    out = []
    for i in range(n_exchanges):
        out.append(_m(2 * i + 1, "user", [{"type": "text", "text": f"q{i} " + "a" * chars}]))
        out.append(_m(2 * i + 2, "assistant", [{"type": "text", "text": f"r{i} " + "b" * chars}]))
    return out


def _tokens(msgs):
    return sum(estimate_message(m.content) for m in msgs)


def test_tail_meets_minimums_and_starts_at_plain_user():
    msgs = chat(30)  # ~1,000 tokens per message
    head, tail = split_tail(msgs, 200_000)
    assert head + tail == msgs
    assert tail[0].role == "user"
    assert _tokens(tail) >= 10_000 and len(tail) >= 5
    assert _tokens(tail) <= 40_000
    # Minimal: dropping the first exchange of the tail would break a minimum.
    assert _tokens(tail[2:]) < 10_000


def test_short_history_has_nothing_to_compact():
    head, tail = split_tail(chat(3), 200_000)
    assert head == [] and len(tail) == 6


def test_min_text_messages_counts_only_real_text():
    msgs = [_m(1, "user", [{"type": "text", "text": "hello"}])]
    for i in range(10):
        msgs.append(
            _m(2 + 2 * i, "assistant", [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {}}])
        )
        msgs.append(_m(3 + 2 * i, "user", [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}]))
    msgs += chat(3, chars=10)
    for m in msgs[-6:]:
        m.id += 100
    head, tail = split_tail(msgs, 200_000, min_tokens=0, min_text_messages=5)
    # The tool loop has no text messages; the cut must land on a plain user message (never a tool_result).
    assert tail[0].role == "user" and not any(b["type"] == "tool_result" for b in tail[0].content)
    assert sum(1 for m in tail if any(b["type"] == "text" for b in m.content)) >= 5


def test_never_splits_tool_pairs_even_over_the_cap():
    msgs = [
        _m(1, "user", [{"type": "text", "text": "old"}]),
        _m(2, "assistant", [{"type": "text", "text": "ok"}]),
        _m(3, "user", [{"type": "text", "text": "do it"}]),
    ]
    for i in range(40):
        msgs.append(
            _m(4 + 2 * i, "assistant", [{"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {}}])
        )
        msgs.append(
            _m(5 + 2 * i, "user", [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "z" * 8_000}])
        )
    head, tail = split_tail(msgs, 200_000)
    assert [m.id for m in head] == [1, 2]
    assert tail[0].id == 3  # moved earlier to the plain user message; over the 40K cap, documented
    assert _tokens(tail) > 40_000


def test_cap_from_window_fraction():
    msgs = chat(40)
    head, tail = split_tail(msgs, 20_000, min_tokens=50_000, min_text_messages=100)
    assert _tokens(tail) <= 10_000 and tail[0].role == "user" and head


def test_no_clean_cut_means_no_head():
    big = "the quick brown fox " * 20_000  # far over the 40K cap on its own
    msgs = [
        _m(1, "assistant", [{"type": "text", "text": big}]),
        _m(2, "user", [{"type": "text", "text": "y"}]),
    ]
    head, tail = split_tail(msgs, 200_000, min_tokens=100)
    assert [m.id for m in head] == [1] and [m.id for m in tail] == [2]
    head, tail = split_tail(msgs[:1], 200_000, min_tokens=100)
    assert head == [] and len(tail) == 1


# --- cuts inside one long agentic turn ------------------------------------------------------------------------

LINE = "def handler(event):\n    return event.value\n"


def spotter(rounds: int = 150, big_at: int | None = 146, big_tokens: int = 20_000) -> list[StoredMessage]:
    """The shape that had no cut: one prompt, then only tool round trips (one result of ~20K tokens)."""
    msgs = [_m(1, "user", [{"type": "text", "text": "Find why the spotter drops frames and fix it."}])]
    for r in range(rounds):
        body = "frame 1234 dropped at t=0.016s\n" * 12  # ~170 tokens
        if r == big_at:
            body = LINE * (big_tokens * 1000 // estimate_text(LINE * 1000))
        msgs.append(
            _m(
                len(msgs) + 1,
                "assistant",
                [
                    {"type": "text", "text": f"Step {r}: reading the next log."},
                    {
                        "type": "tool_use",
                        "id": f"toolu_{r}",
                        "name": "Bash",
                        "input": {"command": f"tail -n 40 log{r}"},
                    },
                ],
            )
        )
        msgs.append(
            _m(len(msgs) + 1, "user", [{"type": "tool_result", "tool_use_id": f"toolu_{r}", "content": body}])
        )
    return msgs


def compactor_split(msgs, window, level=0):
    """``split_tail`` called as ``Compactor.split`` calls it (max_output 8192, calibration factor 1)."""
    budget = window - min(8192, window // 4)
    room = int(budget * 0.5) - int(window * 0.1) - 4096 // 4
    cap = max(500, min(40_000, int(window * 0.3), room))
    head, tail = split_tail(
        msgs,
        window,
        min_tokens=min(10_000, cap // 2),
        max_tokens=cap,
        min_text_messages=5 if cap >= 20_000 else 2,
        max_fraction=0.3,
        level=level,
    )
    return head, tail, cap, budget


def test_cut_points_inside_a_turn():
    msgs = [
        _m(1, "user", [{"type": "text", "text": "go"}]),
        _m(
            2,
            "assistant",
            [
                {"type": "tool_use", "id": "a", "name": "X", "input": {}},
                {"type": "tool_use", "id": "b", "name": "X", "input": {}},
            ],
        ),
        _m(
            3,
            "user",
            [
                {"type": "tool_result", "tool_use_id": "a", "content": "1"},
                {"type": "tool_result", "tool_use_id": "b", "content": "2"},
            ],
        ),
        _m(4, "assistant", [{"type": "text", "text": "thinking aloud"}]),  # two assistant rows in a row
        _m(5, "assistant", [{"type": "tool_use", "id": "c", "name": "X", "input": {}}]),
        _m(6, "user", [{"type": "tool_result", "tool_use_id": "c", "content": "3"}]),
        _m(7, "user", [{"type": "text", "text": "also check the docs"}]),  # a typed interjection
        _m(8, "assistant", [{"type": "text", "text": "done"}]),
        _m(9, "user", [{"type": "text", "text": "thanks"}]),
    ]
    # 1: after the prompt; 3: after the results; never 4 (between assistant rows), never 2/5 (before results).
    assert cut_points(msgs) == [1, 3, 6, 7, 8]
    # A result answering a call several messages back blocks every cut in between.
    late = [
        msgs[0],
        msgs[1],
        _m(3, "user", [{"type": "text", "text": "wait"}]),
        _m(4, "assistant", [{"type": "text", "text": "ok"}]),
        _m(
            5,
            "user",
            [
                {"type": "tool_result", "tool_use_id": "a", "content": "1"},
                {"type": "tool_result", "tool_use_id": "b", "content": "2"},
            ],
        ),
    ]
    assert cut_points(late) == [1]
    assert cut_points(msgs[:1]) == [] and cut_points([]) == []


@pytest.mark.parametrize("window", [50_000, 32_000])
def test_spotter_shape_gets_a_head_and_a_tail_that_fits(window):
    msgs = spotter()
    assert not any(
        m.role == "user" and m.content[0]["type"] == "text" for m in msgs[1:]
    )  # no clean cut at all
    head, tail, cap, budget = compactor_split(msgs, window)
    assert head and head + tail == msgs
    assert _tokens(tail) <= cap < budget
    assert tail[0].role == "assistant" and head[-1].role == "user"  # cut between two tool rounds
    assert all(
        b["type"] != "tool_result"
        or b["tool_use_id"] in {u["id"] for m in tail for u in m.content if u["type"] == "tool_use"}
        for m in tail
        for b in m.content
    )
    # The default call (no compactor numbers) cuts too.
    head, tail = split_tail(msgs, window)
    assert head and _tokens(tail) <= window // 2


@pytest.mark.parametrize("window", [50_000, 32_000])
def test_spotter_big_result_in_the_last_round_keeps_only_that_round(window):
    msgs = spotter(big_at=149)
    head, tail, cap, budget = compactor_split(msgs, window)
    assert [m.id for m in tail] == [msgs[-2].id, msgs[-1].id]  # one round over the cap cannot be split
    assert _tokens(tail) > cap and _tokens(tail) < budget


def test_levels_cut_deeper_until_no_cut_is_left():
    msgs = spotter(big_at=None)
    heads, prev = [], None
    for level in range(12):
        head, tail, cap, _budget = compactor_split(msgs, 50_000, level=level)
        assert head + tail == msgs
        if level:  # each level at least halves the tail, down to the newest round
            assert _tokens(tail) <= max(min(cap, prev) // 2, _tokens(msgs[-2:]))
        heads.append(len(head))
        prev = _tokens(tail)
    assert heads == sorted(heads) and len(set(heads)) == 5  # 62 messages kept, then 30, 14, 6, 2
    assert all(
        b > a or a == heads[-1] for a, b in zip(heads, heads[1:], strict=False)
    )  # strictly deeper while it can
    assert heads[-1] == len(msgs) - 2  # the deepest split keeps only the newest round
    # A short history has nothing to compact at level 0, but a deeper level still finds a cut.
    short = chat(3)
    assert split_tail(short, 200_000)[0] == []
    head, tail = split_tail(short, 200_000, level=1)
    assert head and head + tail == short


def test_clean_cut_preferred_when_within_its_limit():
    # A typed prompt before a long turn: the cut lands on it while the tail stays within clean_max_tokens...
    msgs = [
        _m(1, "user", [{"type": "text", "text": "old"}]),
        _m(2, "assistant", [{"type": "text", "text": "ok"}]),
        _m(3, "user", [{"type": "text", "text": "do it"}]),
    ]
    for i in range(40):
        msgs.append(
            _m(4 + 2 * i, "assistant", [{"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {}}])
        )
        msgs.append(
            _m(5 + 2 * i, "user", [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "z" * 8_000}])
        )
    assert split_tail(msgs, 200_000)[1][0].id == 3
    # ...and moves inside the turn when that tail would be over it.
    head, tail = split_tail(msgs, 200_000, clean_max_tokens=50_000)
    assert tail[0].role == "assistant" and _tokens(tail) <= 40_000 and head[-1].role == "user"
    head, tail = split_tail(msgs, 100_000)  # 0.5 × 100K = 50K: the ~80K turn is over it
    assert tail[0].role == "assistant" and _tokens(tail) <= 40_000
