"""The window's entry (``python -m desktop``, ``precis``, ``precis-gui``)."""

from __future__ import annotations

from desktop.ui import gc_pause


def main() -> int:
    gc_pause.pause()  # until the first paint (desktop/ui/gc_pause.py)
    from desktop.ui.app import run_app

    return run_app()
