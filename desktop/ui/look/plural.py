"""English plurals for Qt's %n strings: a translation picks its own numerus forms; where none applies (English,
or a string not translated yet) Qt returns the source with "(s)" and this picks the English form."""

from __future__ import annotations

import re

_MARK = re.compile(r"\((e?s)\)")


def numerus(translated: str, n: int) -> str:
    """``translated`` (a %n string Qt already filled in) with "message(s)" as "message" for 1, else "messages"."""
    return _MARK.sub("" if n == 1 else r"\1", translated)
