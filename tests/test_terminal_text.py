"""The CLI's neutraliser: control characters from a model, a provider, a tool or the database are shown in caret
notation, never obeyed, whole or streamed in pieces cut anywhere (issue 35). The pty test runs the real CLI."""

from __future__ import annotations

import io
import json
import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop.cli.common import NeutralisedStream, neutralised
from desktop.cli.terminal_text import Neutraliser, caret, dumps, json_safe, neutralise

# What a terminal obeys; a carriage return is checked apart (it is harmless right before a newline).
UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

SEQUENCES = {
    "OSC 52, BEL": ("\x1b]52;c;UFdORUQ=\x07", "^[]52;c;UFdORUQ=^G"),
    "OSC 0, ST": ("\x1b]0;title\x1b\\", "^[]0;title^[\\"),
    "CSI erase screen": ("\x1b[2J", "^[[2J"),
    "CR, erase line": ("\r\x1b[2K", "^M^[[2K"),
    "DCS": ("\x1bP1$qm\x1b\\", "^[P1$qm^[\\"),
    "APC": ("\x1b_payload\x1b\\", "^[_payload^[\\"),
    "PM": ("\x1b^payload\x1b\\", "^[^payload^[\\"),
    "SOS": ("\x1bXpayload\x1b\\", "^[Xpayload^[\\"),
    "lone ESC": ("a\x1bb", "a^[b"),
    "C1 CSI": ("\x9b31m", "M-^[31m"),
    "C1 OSC, C1 ST": ("\x9d0;t\x9c", "M-^]0;tM-^\\"),
    "NEL, DEL": ("\x85\x7f", "M-^E^?"),
    "BS, NUL, FF, VT": ("\x08\x00\x0c\x0b", "^H^@^L^K"),
}


@pytest.mark.parametrize("name", SEQUENCES)
def test_each_kind_of_sequence_is_shown_in_caret_notation(name):
    raw, shown = SEQUENCES[name]
    assert neutralise(f"before {raw} after") == f"before {shown} after"


def test_caret_notation_is_the_cat_v_one():
    assert [caret(c) for c in "\x00\x07\x0d\x1b\x1f\x7f\x80\x9b\x9f"] == [
        "^@",
        "^G",
        "^M",
        "^[",
        "^_",
        "^?",
        "M-^@",
        "M-^[",
        "M-^_",
    ]


def test_newline_tab_and_a_line_end_stay_and_plain_text_is_untouched():
    text = "a\tb\nc\r\nd é 日本 — «ok» \u2028 ^[ literal"
    assert neutralise(text) == text
    assert neutralise("end\r") == "end^M" and neutralise("\r\r\n") == "^M\r\n"


def test_a_sequence_cut_anywhere_between_chunks_is_inert_in_both_halves():
    text = "".join(raw for raw, _shown in SEQUENCES.values()) + "\r\n\rx\r"
    whole = neutralise(text)
    for cut in range(len(text) + 1):
        for second in range(cut, len(text) + 1):
            stream = Neutraliser()
            pieces = [stream.feed(text[:cut]), stream.feed(text[cut:second]), stream.feed(text[second:])]
            out = "".join(pieces) + stream.finish()
            assert out == whole, (cut, second)
            assert not any(UNSAFE.search(p) for p in pieces)


def test_a_carriage_return_ending_a_chunk_waits_for_the_next():
    stream = Neutraliser()
    assert stream.feed("line\r") == "line"
    assert stream.feed("\nnext\r") == "\r\nnext"
    assert stream.feed("over") == "^Mover"
    assert stream.feed("\r") == "" and stream.finish() == "^M" and stream.finish() == ""


# -- properties -------------------------------------------------------------------------------------------------

# Text rich in what matters: controls, the characters sequences are made of, and any other character.
texty = st.text(
    st.one_of(
        st.sampled_from("\x1b\x07\x9b\x9c\x9d\x90\r\n\t[]P\\;^M-"),
        st.characters(min_codepoint=0, max_codepoint=0xA0),
        st.characters(),
    ),
    max_size=60,
)


def _reveal(shown: str) -> str:
    """The inverse of ``neutralise`` for text that had no ``^`` of its own."""
    return re.sub(
        r"M-\^(.)|\^(.)",
        lambda m: chr(0x80 + _code(m.group(1))) if m.group(1) else chr(_code(m.group(2))),
        shown,
    )


def _code(char: str) -> int:
    return 0x7F if char == "?" else ord(char) - 0x40


def _safe(shown: str) -> bool:
    return not UNSAFE.search(shown) and "\r" not in shown.replace("\r\n", "")


@given(texty, st.lists(st.integers(0, 60), max_size=6))
def test_streamed_in_any_pieces_it_writes_what_the_whole_would(text, cuts):
    bounds = [0, *sorted(min(c, len(text)) for c in cuts), len(text)]
    stream = Neutraliser()
    pieces = [stream.feed(text[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    assert "".join(pieces) + stream.finish() == neutralise(text)
    assert all(_safe(p) for p in pieces)


@given(texty)
def test_nothing_a_terminal_obeys_is_left_and_nothing_is_dropped(text):
    shown = neutralise(text)
    assert _safe(shown)
    assert neutralise(shown) == shown  # shown text is already safe: neutralising twice changes nothing
    if "^" not in text:
        assert _reveal(shown) == text  # every character is there, in order


@given(
    st.recursive(st.none() | st.booleans() | st.integers() | texty, lambda kids: st.lists(kids, max_size=3))
)
def test_json_keeps_every_character_as_an_escape(value):
    for indent in (None, 2):
        out = dumps({"value": value}, indent=indent)
        assert not UNSAFE.search(out) and "\r" not in out
        assert json.loads(out) == {"value": value}


def test_json_safe_escapes_what_json_dumps_leaves_raw():
    text = json.dumps({"title": "a\x9b1m\x7f\x1b"}, ensure_ascii=False)
    assert "\x9b" in text
    assert json_safe(text) == '{"title": "a\\u009b1m\\u007f\\u001b"}'


# -- the standard streams ---------------------------------------------------------------------------------------


def test_a_neutralised_stream_shows_whatever_is_printed_to_it():
    target = io.StringIO()
    stream = NeutralisedStream(target)
    print("tool \x1b]0;x\x07 says\r", file=stream)  # type: ignore[arg-type]
    stream.write("held\r")
    stream.writelines(["\x9b2J", "\n"])
    stream.write("last\r")
    stream.finish()
    # The carriage return before print's newline is a line end; the one before the C1 CSI is shown.
    assert target.getvalue() == "tool ^[]0;x^G says\r\nheld^MM-^[2J\nlast^M"
    assert stream.isatty() is False and stream.getvalue() == target.getvalue()


def test_neutralised_swaps_the_stream_for_the_block_only(capsys):
    before = sys.stderr
    with neutralised("stderr"):
        assert sys.stderr is not before
        print("error: \x1b[2J\r", file=sys.stderr, end="")
    assert sys.stderr is before
    assert capsys.readouterr().err == "error: ^[[2J^M"


def test_search_snippets_keep_their_own_bold_only():
    from desktop.cli.search_cli import _snippet
    from desktop.engine.history.search import MARK_END, MARK_START, SearchHit

    hit = SearchHit(
        "message",
        1,
        "t",
        2,
        None,
        "assistant",
        f"a {MARK_START}zebra{MARK_END} \x1b]52;c;QQ==\x07\r\nb\n",
        0.0,
    )
    assert _snippet(hit, "\x1b[1m", "\x1b[0m") == "a \x1b[1mzebra\x1b[0m ^[]52;c;QQ==^G b "


# -- the window ------------------------------------------------------------------------------------------------


def test_a_title_with_control_characters_shows_none_in_the_sidebar_or_the_header(qtbot):
    from PySide6.QtWidgets import QLabel

    from desktop.engine.types import SessionInfo
    from desktop.ui.sidebar.sidebar import Sidebar
    from desktop.ui.window.status_line import StatusLine

    title = "zebra \x1b]0;evil\x07 \x9b1m end"
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    sidebar.set_sessions([SessionInfo(1, title, None, 0.0, 0.0, message_count=2)])
    header = StatusLine()
    qtbot.addWidget(header)
    header.setText(title)
    shown = [sidebar.list.item(0).text(), sidebar.list.item(0).toolTip(), QLabel.text(header)]
    assert all("zebra" in s for s in shown)
    assert not [s for s in shown if UNSAFE.search(s)], shown
