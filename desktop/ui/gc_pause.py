"""The cyclic collector waits for the first paint.

A start imports ~350 modules and makes their classes, functions and PySide6's enums: objects that live as long as
the app. Python's collector ran ~30 times over them before the first paint (~25 ms of a ~450 ms start) and found
next to nothing to free. The window's entry point (``launch``) turns it off before importing the app; once the
window has painted its first chat, ``gc.freeze`` puts everything made so far out of its reach (later collections
skip it too) and it runs as usual.
"""

from __future__ import annotations

import gc

_off_at: int | None = None  # collections run before the collector was turned off (None: it was not)
collected_while_off: int | None = None  # for the start-up report: collections between off and on again


def _collections() -> int:
    return sum(generation["collections"] for generation in gc.get_stats())


def pause() -> None:
    global _off_at
    gc.disable()
    _off_at = _collections()


def resume() -> None:
    """The first paint is done: what the start made stays out of later collections, which run from now on."""
    global collected_while_off
    if _off_at is not None:
        collected_while_off = _collections() - _off_at
    gc.freeze()
    gc.enable()
