"""Text from a model, a provider, a tool or the database made safe to write to a terminal: shown, never obeyed.

A terminal obeys control characters: an escape sequence in a reply can set the clipboard (OSC 52), the window
title (OSC 0), clear the screen (CSI 2J), and a carriage return can overwrite what a line said. Every one starts
with a control character: ESC (CSI, OSC, DCS, APC, PM, SOS, a lone ESC), a C1 control (U+0080-U+009F: the
8-bit CSI U+009B, OSC U+009D, ST U+009C, ...), BEL (the end of an OSC) or another C0 control. So each control
character is replaced by its caret notation, the form ``cat -v`` and terminals use when they echo one: ESC is
``^[``, BEL ``^G``, CR ``^M``, DEL ``^?``, and a C1 control is ``M-`` and its 7-bit partner's caret (U+009B is
``M-^[``). What follows the control (``]52;c;...``) is printable and now inert, and stays: nothing is dropped.
Newline and tab stay (they cannot overwrite text), and so does a carriage return right before a newline (a
Windows line end goes on to the next line; it overwrites nothing).

Streamed text needs no parsing either: as each control character is replaced on its own, a sequence cut
between two deltas is made inert in both halves. The one thing a stream carries over (``Neutraliser``) is a
carriage return at the end of a chunk, until the next one says whether a newline follows.

Pure: no I/O, no terminal state. ``desktop.cli.common`` wraps a stream with it.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Every control character but newline and tab; a carriage return only when no newline follows it.
_CONTROL = re.compile("\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# In JSON text: control characters json.dumps leaves raw (DEL and C1 with ensure_ascii=False), and any C0 one
# (but the newline, tab and carriage return of its layout, which are never inside a string).
_JSON_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def caret(char: str) -> str:
    """How one control character is shown: ``^[`` for ESC, ``^?`` for DEL, ``M-^[`` for U+009B."""
    code = ord(char)
    if code == 0x7F:
        return "^?"
    if 0x80 <= code <= 0x9F:
        return "M-" + caret(chr(code - 0x80))
    return "^" + chr(code + 0x40)


def _shown(match: re.Match[str]) -> str:
    return caret(match.group())


def neutralise(text: str) -> str:
    """``text`` with every control character that could drive a terminal shown instead (see the module)."""
    return _CONTROL.sub(_shown, text)


class Neutraliser:
    """``neutralise`` for a stream of chunks: ``feed`` each, then ``finish``; the pieces joined are
    ``neutralise`` of the chunks joined, wherever the chunks were cut."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = ""  # a carriage return that ended the last chunk: shown or kept once the next one comes

    def feed(self, chunk: str) -> str:
        text = self._held + chunk
        self._held = "\r" if text.endswith("\r") else ""
        return neutralise(text[: len(text) - len(self._held)])

    def finish(self) -> str:
        """What is still held, shown (the stream ended after a carriage return); the stream may go on after."""
        held, self._held = self._held, ""
        return neutralise(held)


def json_safe(text: str) -> str:
    """JSON text with the control characters ``json.dumps(..., ensure_ascii=False)`` leaves raw (DEL, C1) written
    as ``\\u`` escapes: the same data, every character kept, nothing a terminal obeys."""
    return _JSON_CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dumps(value: Any, *, indent: int | None = None) -> str:
    """``json.dumps`` as the CLI writes JSON (readable Unicode) and safe for a terminal (``json_safe``)."""
    return json_safe(json.dumps(value, ensure_ascii=False, indent=indent))
