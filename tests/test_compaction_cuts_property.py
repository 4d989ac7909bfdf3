"""Cuts inside long agentic turns: for histories made of a few prompts and many tool rounds (some results huge),
every split (at every level) and every snip to an achievable target gives a request that the project's own
assembly makes valid without breaking a tool pair, and that fits its target."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.engine.compaction._shared import cut_points, group_starts, is_plain_user
from desktop.engine.compaction.request_shape import MISSING_RESULT, problems, repair
from desktop.engine.compaction.snip import snip_to_fit
from desktop.engine.compaction.tail import split_tail
from desktop.engine.metering.tokens import estimate_message
from desktop.engine.turn import assemble
from desktop.engine.types import CompactionRecord, StoredMessage

LINE = "def handler(event):\n    return event.value  # frame dropped at t=0.016s\n"
FIXED = 700  # system prompt and tools: counted by the snip estimate like the compactor does
NOTE = CompactionRecord(
    id=1,
    session_id=1,
    summary="## Primary goal\nFix the spotter.",
    covers_through_message_id=0,
    trigger="auto",
    stats={"pins_text": "<pinned>keep the tests green</pinned>"},
    created_at=0.0,
)


def _text(chars: int) -> str:
    return (LINE * (chars // len(LINE) + 1))[: max(1, chars)].strip() or "ok"


def _rounds(rng, n: int) -> list[tuple[int, list[int], bool, bool]]:
    """``n`` tool rounds: (parallel calls, result sizes in characters, a text preface, the call stored as a second
    assistant row). One result in 50 is huge (up to ~20K tokens of text)."""
    out = []
    for _ in range(n):
        sizes = [
            rng.randint(20_000, 80_000) if rng.random() < 0.02 else rng.randint(0, 1_500) for _ in range(2)
        ]
        out.append((rng.choice([1, 1, 1, 2]), sizes, rng.random() < 0.3, rng.random() < 0.1))
    return out


rounds = st.tuples(st.randoms(use_true_random=False), st.integers(0, 150)).map(lambda rn: _rounds(*rn))
turn = st.tuples(
    st.just("turn"), st.integers(1, 2_000), rounds, st.sampled_from(["answer", "open", "interject"])
)
plain = st.tuples(st.just("plain"), st.integers(1, 4_000), st.integers(1, 4_000))
segments = st.tuples(st.lists(turn, min_size=1, max_size=3), st.lists(plain, max_size=3)).flatmap(
    lambda tp: st.permutations(tp[0] + tp[1])
)


def build(specs) -> list[StoredMessage]:
    out: list[StoredMessage] = []

    def add(role, content):
        out.append(StoredMessage(id=len(out) + 1, session_id=1, role=role, content=content))

    calls = 0
    for spec in specs:
        if spec[0] == "plain":
            add("user", [{"type": "text", "text": "question " + _text(spec[1])}])
            add("assistant", [{"type": "text", "text": "answer " + _text(spec[2])}])
            continue
        _, prompt, rounds, ending = spec
        add("user", [{"type": "text", "text": "task " + _text(prompt)}])
        for n, (parallel, sizes, preface, split_row) in enumerate(rounds):
            ids = [f"toolu_{calls + k}" for k in range(parallel)]
            calls += parallel
            uses = [
                {"type": "tool_use", "id": i, "name": "Bash", "input": {"command": f"step {n}"}} for i in ids
            ]
            text = [{"type": "text", "text": f"Step {n}."}] if preface or split_row else []
            if split_row:
                add("assistant", text)
                add("assistant", uses)
            else:
                add("assistant", text + uses)
            add(
                "user",
                [
                    {"type": "tool_result", "tool_use_id": i, "content": _text(c)}
                    for i, c in zip(ids, sizes, strict=False)
                ],
            )
            if ending == "interject" and n == len(rounds) // 2:
                add("user", [{"type": "text", "text": "also keep the old API working"}])
        if ending != "open" or not rounds:
            add("assistant", [{"type": "text", "text": "Done: " + _text(300)}])
    if out[-1].role == "assistant":
        add("user", [{"type": "text", "text": "next, please"}])
    return out


_SIZES: dict[int, tuple[object, int]] = {}


def tokens(msgs) -> int:
    """The estimate ``split_tail`` uses, per message memoised (by identity) to keep the test fast."""
    total = 0
    for m in msgs:
        hit = _SIZES.get(id(m))
        if hit is None or hit[0] is not m:
            hit = _SIZES[id(m)] = (m, estimate_message(m.content))
        total += hit[1]
    return total


def est(msgs) -> int:
    return FIXED + tokens(msgs)


def alternating(msgs) -> bool:
    return all(a.role != b.role for a, b in zip(msgs, msgs[1:], strict=False))


def check_request(kept: list[StoredMessage]) -> None:
    """Summary + kept, assembled as ``ChatEngine.request_from`` does: valid, and no tool pair broken by repair."""
    request = assemble.with_summary(assemble.history_to_api(kept), NOTE)
    fixed = repair(request)
    assert problems(fixed) == []
    if alternating(kept):
        assert problems(request) == []  # valid as assembled: repair has nothing to fix
    assert fixed[0]["content"][0]["text"].startswith("<conversation-summary>")

    def pairs(msgs, role_key):
        return (
            [b["id"] for m in msgs for b in m[role_key] if b.get("type") == "tool_use"],
            [b["tool_use_id"] for m in msgs for b in m[role_key] if b.get("type") == "tool_result"],
        )

    wanted = pairs([{"c": m.content} for m in kept], "c")
    assert pairs(fixed, "content") == wanted  # no result lost as an orphan, no call dropped
    assert sorted(wanted[0]) == sorted(wanted[1])
    assert not any(b.get("content") == MISSING_RESULT for m in fixed for b in m["content"])


def compactor_args(window: int) -> dict[str, float]:
    budget = window - min(8192, window // 4)
    room = int(budget * 0.5) - int(window * 0.1) - 1024
    cap = max(500, min(40_000, int(window * 0.3), room))
    return {
        "min_tokens": min(10_000, cap // 2),
        "max_tokens": cap,
        "min_text_messages": 5 if cap >= 20_000 else 2,
        "max_fraction": 0.3,
    }


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(
    specs=segments,
    window=st.sampled_from([32_000, 50_000, 200_000]),
    compactor=st.booleans(),
    extra=st.integers(0, 30_000),
)
def test_every_split_and_snip_is_a_valid_request_that_fits(specs, window, compactor, extra):
    _SIZES.clear()
    msgs = build(specs)
    cuts = cut_points(msgs)
    kwargs = compactor_args(window) if compactor else {}
    cap = min(int(kwargs.get("max_tokens", 40_000)), int(window * kwargs.get("max_fraction", 0.5)))
    clean_max = max(cap, int(window * kwargs.get("max_fraction", 0.5)))
    smallest = tokens(msgs[cuts[-1] :]) if cuts else tokens(msgs)  # the newest round (or all, without a cut)

    previous_head = previous_tail = None
    for level in range(7):
        head, tail = split_tail(msgs, window, level=level, **kwargs)
        assert head + tail == msgs and tail
        size = tokens(tail)
        if head:
            assert len(head) in cuts
            check_request(tail)
        if level == 0:
            if not head:  # nothing to compact only when there is no cut or everything fits the tail
                assert not cuts or tokens(msgs) <= cap
            if smallest <= cap:
                assert size <= clean_max
                if head and not is_plain_user(tail[0]):
                    assert size <= cap  # an in-turn cut stays within the cap
        else:
            assert len(head) >= previous_head
            later = [c for c in cuts if c > previous_head]
            if later:
                assert len(head) > previous_head  # strictly deeper while a deeper cut exists
                assert size <= max(min(cap, previous_tail) // 2, smallest)
            else:
                assert len(head) == previous_head
        previous_head, previous_tail = len(head), size

    starts = group_starts(msgs)
    for target in {FIXED + smallest, FIXED + smallest + extra, est(msgs) - 1}:
        kept, dropped = snip_to_fit(msgs, target, est)
        assert dropped + kept == msgs
        if not cuts or starts[-1] > cuts[-1]:
            continue  # the newest group start is no cut: not a history this generator makes
        assert est(kept) <= target  # the newest round fits: the target is achievable, and met
        if dropped:
            check_request(kept)
            options = [s for s in starts[1:] if est(msgs[s:]) <= target]
            if options:  # whole groups first, the fewest of them
                assert len(dropped) == options[0]
            else:  # then the oldest rounds of the newest turn, the fewest of them
                assert len(dropped) == next(c for c in cuts if c > starts[-1] and est(msgs[c:]) <= target)


def test_generator_makes_the_shapes_it_claims():
    msgs = build(
        [("turn", 100, [(1, [80_000, 100], False, False)] * 3 + [(2, [10, 10], True, True)], "open")]
    )
    assert [m.role for m in msgs[:3]] == ["user", "assistant", "user"]
    assert tokens(msgs[2:3]) > 18_000  # a result of ~20K tokens
    assert msgs[-1].role == "user" and msgs[-1].content[0]["type"] == "tool_result"
    assert cut_points(msgs) == [1, 3, 5, 7]  # after the prompt, after each result; not inside the split row
    check_request(msgs[7:])
