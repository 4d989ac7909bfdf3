"""What the commands share: the one-line error that ends a command, how a command opens the runtime, and the
standard streams that show control characters instead of obeying them.

A leaf of the cli package: ``main`` and the command modules it dispatches to import it, it imports none of them
(only ``terminal_text``, a leaf too)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from typing import Any, Literal, TextIO

from desktop.cli.terminal_text import Neutraliser, neutralise


class CliError(Exception):
    """A one-line reason for a non-zero exit."""


def open_for_command(model: str | None = None, toolbox: Any = None, *, readonly: bool = False) -> Any:
    from desktop.runtime import open_runtime

    # A process about to exit prepares nothing in the background: it would be aborted, unused. A command that
    # only reads opens the database without writing (works on a locked database and on read-only media).
    return open_runtime(
        model=model, background=False, toolbox=toolbox, readonly=readonly, lock_notice=_say_lock_wait
    )


def _say_lock_wait(text: str) -> None:
    """Another program holds the database: said on stderr while the command waits (shown inert)."""
    print(f"precis: {neutralise(text)}", file=sys.stderr, flush=True)


class NeutralisedStream:
    """A text stream that writes through ``terminal_text.Neutraliser``: whatever is printed to it, its control
    characters reach the terminal shown (``^[``), never obeyed. Everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._neutraliser = Neutraliser()

    def write(self, text: str) -> int:
        self._stream.write(self._neutraliser.feed(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._stream.flush()

    def finish(self) -> None:
        """Write what the neutraliser still holds (a carriage return that ended the last write)."""
        if tail := self._neutraliser.finish():
            self._stream.write(tail)
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, ...
        return getattr(self._stream, name)


@contextlib.contextmanager
def neutralised(name: Literal["stdout", "stderr"]) -> Iterator[None]:
    """``sys.stdout`` or ``sys.stderr`` neutralised while the block runs, whichever module prints to it."""
    original = getattr(sys, name)
    if original is None:  # no such stream (pythonw): nothing is written anyway
        yield
        return
    stream = NeutralisedStream(original)
    setattr(sys, name, stream)
    try:
        yield
    finally:
        if getattr(sys, name) is stream:
            setattr(sys, name, original)
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing more can be shown
            stream.finish()
