from desktop.engine.compaction.snip import snip_to_fit
from desktop.engine.metering.tokens import estimate_message
from desktop.engine.types import StoredMessage


def _m(mid, role, content):
    return StoredMessage(id=mid, session_id=1, role=role, content=content)


def history():
    msgs, mid = [], 1
    for g in range(10):
        msgs.append(_m(mid, "user", [{"type": "text", "text": f"q{g} " + "q" * 4_000}]))
        msgs.append(
            _m(mid + 1, "assistant", [{"type": "tool_use", "id": f"t{g}", "name": "Read", "input": {}}])
        )
        msgs.append(
            _m(mid + 2, "user", [{"type": "tool_result", "tool_use_id": f"t{g}", "content": "r" * 4_000}])
        )
        msgs.append(_m(mid + 3, "assistant", [{"type": "text", "text": "done"}]))
        mid += 4
    return msgs


def est(msgs):
    return 500 + sum(estimate_message(m.content) for m in msgs)  # fixed system/tools cost included


def test_snip_drops_fewest_oldest_groups():
    msgs = history()
    kept, dropped = snip_to_fit(msgs, 6_000, est)
    assert dropped + kept == msgs
    assert est(kept) <= 6_000 and est(msgs[len(dropped) - 4 :]) > 6_000  # one group fewer would not fit
    assert len(dropped) % 4 == 0 and kept[0].role == "user" and kept[0].content[0]["type"] == "text"
    assert dropped[-1].id == kept[0].id - 1  # covers_through for the snip record


def test_snip_fits_already():
    msgs = history()
    assert snip_to_fit(msgs, 10**9, est) == (msgs, [])


def test_snip_keeps_last_group_even_if_too_big():
    msgs = history()
    kept, dropped = snip_to_fit(msgs, 10, est)
    assert [m.id for m in kept] == [37, 38, 39, 40]
    assert len(dropped) == 36


def test_single_group_is_never_dropped():
    msgs = history()[:4]
    assert snip_to_fit(msgs, 1, est) == (msgs, [])


def long_turn(rounds=30, prompt=True):
    """One prompt, then ``rounds`` tool round trips of ~1K tokens each, ending on the last result."""
    msgs = [_m(1, "user", [{"type": "text", "text": "fix the build"}])] if prompt else []
    for r in range(rounds):
        mid = len(msgs) + 1
        msgs.append(_m(mid, "assistant", [{"type": "tool_use", "id": f"t{r}", "name": "Bash", "input": {}}]))
        msgs.append(
            _m(mid + 1, "user", [{"type": "tool_result", "tool_use_id": f"t{r}", "content": "r" * 4_000}])
        )
    return msgs


def test_snip_drops_the_oldest_rounds_of_one_long_turn():
    msgs = long_turn()
    kept, dropped = snip_to_fit(msgs, 6_000, est)
    assert dropped + kept == msgs and dropped
    assert est(kept) <= 6_000 and est(msgs[len(dropped) - 2 :]) > 6_000  # one round fewer would not fit
    assert kept[0].role == "assistant" and dropped[-1].role == "user"  # the snip note goes first, then a call
    assert kept[-1] is msgs[-1]
    # API dicts (a request that must stand alone) keep the old rule unless asked.
    dicts = [{"role": m.role, "content": m.content} for m in msgs]
    assert snip_to_fit(dicts, 6_000, est_dicts) == (dicts, [])
    kept_d, dropped_d = snip_to_fit(dicts, 6_000, est_dicts, in_turn=True)
    assert len(kept_d) == len(kept)
    assert snip_to_fit(msgs, 6_000, est, in_turn=False) == (msgs, [])


def test_snip_in_turn_after_dropping_whole_groups():
    msgs = history()[:8] + [_m(100 + m.id, m.role, m.content) for m in long_turn()]
    kept, dropped = snip_to_fit(msgs, 6_000, est)
    assert est(kept) <= 6_000 and len(dropped) > 8 and kept[0].role == "assistant"


def test_snip_in_turn_only_when_it_fits():
    msgs = long_turn()
    assert snip_to_fit(msgs, 1_000, est) == (msgs, [])  # even the newest round is over: nothing dropped


def est_dicts(msgs):
    return 500 + sum(estimate_message(m["content"]) for m in msgs)
