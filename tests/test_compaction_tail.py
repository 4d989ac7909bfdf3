from desktop.engine.compaction.tail import split_tail
from desktop.engine.tokens import estimate_message
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
        msgs.append(_m(2 + 2 * i, "assistant", [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {}}]))
        msgs.append(_m(3 + 2 * i, "user", [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}]))
    msgs += chat(3, chars=10)
    for m in msgs[-6:]:
        m.id += 100
    head, tail = split_tail(msgs, 200_000, min_tokens=0, min_text_messages=5)
    # The tool loop has no text messages; the cut must land on a plain user message (never a tool_result).
    assert tail[0].role == "user" and not any(b["type"] == "tool_result" for b in tail[0].content)
    assert sum(1 for m in tail if any(b["type"] == "text" for b in m.content)) >= 5


def test_never_splits_tool_pairs_even_over_the_cap():
    msgs = [_m(1, "user", [{"type": "text", "text": "old"}]), _m(2, "assistant", [{"type": "text", "text": "ok"}]),
            _m(3, "user", [{"type": "text", "text": "do it"}])]
    for i in range(40):
        msgs.append(_m(4 + 2 * i, "assistant", [{"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {}}]))
        msgs.append(_m(5 + 2 * i, "user", [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "z" * 8_000}]))
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
    msgs = [_m(1, "assistant", [{"type": "text", "text": big}]), _m(2, "user", [{"type": "text", "text": "y"}])]
    head, tail = split_tail(msgs, 200_000, min_tokens=100)
    assert [m.id for m in head] == [1] and [m.id for m in tail] == [2]
    head, tail = split_tail(msgs[:1], 200_000, min_tokens=100)
    assert head == [] and len(tail) == 1
