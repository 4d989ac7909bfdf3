"""PySide6's look at every module imported after it, made cheap.

PySide6 asks, for each newly imported module, whether its source names "PySide6" (its ``__feature__`` switches
apply to those modules only). It reads the source with ``inspect.getsource``, which tokenises the file into
``linecache`` and keeps it there: ~300 modules before the window's first paint, a few percent of a start, and every
module's text held in memory afterwards. The same question is answered here from the file's bytes; a module
without a readable ``.py`` file goes to PySide6's own check, so the answers are the same.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType

FEATURE_MODULE = "shibokensupport.feature"  # where PySide6 keeps the check (loaded with PySide6 itself)


def install() -> bool:
    """Put the byte check in place of PySide6's; False when this PySide6 has no such check (nothing changed)."""
    feature = sys.modules.get(FEATURE_MODULE)
    upstream: Callable[[ModuleType], bool] | None = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or upstream is None or getattr(upstream, "reads_bytes", False):
        return False

    def uses_pyside(module: ModuleType) -> bool:
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):
            try:
                with open(path, "rb") as fh:
                    return b"PySide6" in fh.read()
            except OSError:
                pass
        return upstream(module)

    uses_pyside.reads_bytes = True  # type: ignore[attr-defined]
    setattr(feature, "_mod_uses_pyside", uses_pyside)  # noqa: B010 (a private name of PySide6, checked above)
    return True
