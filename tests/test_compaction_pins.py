from desktop.engine.compaction.pins import HEADER, pinned_instructions, render_pins
from desktop.engine.metering.tokens import estimate_text
from desktop.engine.types import StoredMessage


def _m(mid, role, content, **meta):
    return StoredMessage(id=mid, session_id=1, role=role, content=content, meta=meta)


def _u(mid, text, **meta):
    return _m(mid, "user", [{"type": "text", "text": text}], **meta)


def test_pins_pick_user_instructions_only_newest_first_deduplicated():
    msgs = [
        _u(1, "Always answer in British English."),
        _m(2, "assistant", [{"type": "text", "text": "Noted."}]),
        _u(3, "/compact keep the API notes"),
        _m(
            4,
            "user",
            [
                {"type": "tool_result", "tool_use_id": "t", "content": "file"},
                {"type": "text", "text": "reminder from the harness"},
            ],
        ),
        _u(5, "Imported from elsewhere", imported=True),
        _u(6, "Never touch the migrations folder."),
        _u(7, "Always answer in British English."),
        _m(8, "user", [{"type": "image", "source": {}}, {"type": "text", "text": "  what is this?  "}]),
    ]
    pins = pinned_instructions(msgs)
    assert pins == [
        "what is this?",
        "Always answer in British English.",
        "Never touch the migrations folder.",
    ]
    rendered = render_pins(pins)
    assert rendered.startswith(HEADER)
    assert rendered.index("Never touch") < rendered.index("British") < rendered.index("what is this?")


def test_budget_is_respected_and_straddler_is_cut():
    msgs = [_u(i, f"rule {i} " + "w" * 4_000) for i in range(1, 30)]
    one = estimate_text(msgs[-1].content[0]["text"])
    budget = int(one * 4.6)  # four whole texts and most of a fifth
    pins = pinned_instructions(msgs, budget=budget)
    assert len(pins) == 5
    assert sum(estimate_text(p) for p in pins) <= budget
    assert pins[0].startswith("rule 29 ")
    assert "characters omitted" in pins[-1]
    assert all("characters omitted" not in p for p in pins[:-1])


def test_empty():
    assert pinned_instructions([]) == []
    assert render_pins([]) == ""
