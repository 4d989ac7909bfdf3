"""What the commands share: the one-line error that ends a command and how a command opens the runtime.

A leaf of the cli package: ``main`` and the command modules it dispatches to import it, it imports none of them."""

from __future__ import annotations

from typing import Any


class CliError(Exception):
    """A one-line reason for a non-zero exit."""


def open_for_command(model: str | None = None, toolbox: Any = None, *, readonly: bool = False) -> Any:
    from desktop.runtime import open_runtime

    # A process about to exit prepares nothing in the background: it would be aborted, unused. A command that
    # only reads opens the database without writing (works on a locked database and on read-only media).
    return open_runtime(model=model, background=False, toolbox=toolbox, readonly=readonly)
