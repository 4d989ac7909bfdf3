"""The engine's typed messages in the user's language.

The engine hands the views English sentences that remember their template and arguments (its ``Message``,
``Joined`` and ``Lines``); here they are worded again through Qt Linguist, context ``Engine``. Duck-typed on purpose:
widgets never import the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QCoreApplication

CONTEXT = "Engine"


def word(text: Any) -> str:
    """``text`` translated: an engine message with its arguments worded too, a marked engine term, or ``text``
    itself (a provider's own words, a name, a path) when it has no translation."""
    if text is None:
        return ""
    template = getattr(text, "template", None)
    params = getattr(text, "params", None)
    if isinstance(template, str) and isinstance(params, Mapping):
        args = {k: v if isinstance(v, int | float) else word(v) for k, v in params.items()}
        translated = QCoreApplication.translate(CONTEXT, template)
        try:
            return translated.format(**args)
        except (KeyError, IndexError, ValueError):  # a broken translation never hides the message
            return template.format(**args)
    lines = getattr(text, "lines", None)
    if isinstance(lines, tuple):
        return "\n".join(word(line) for line in lines)
    parts = getattr(text, "parts", None)
    if isinstance(parts, tuple):
        worded = [word(p) for p in parts]
        # Sentences in Chinese follow each other without a space.
        return "".join(w if w.endswith(("。", "！", "？")) else w + " " for w in worded).rstrip()
    text = str(text)
    return QCoreApplication.translate(CONTEXT, text) if text else text


def word_error(exc: BaseException) -> str:
    """An exception the engine raised with a message (``str(exc)`` would drop its template)."""
    first = exc.args[0] if len(exc.args) == 1 else None
    return word(first) if isinstance(first, str) else str(exc)
