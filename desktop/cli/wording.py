"""The CLI's human-readable lines in the user's language, without Qt: the same .ts the window uses.

The language is the Settings choice, else the POSIX locale (LC_ALL, LC_MESSAGES, LANG); JSON output never
goes through here (its keys and values stay English). Strings are marked for lupdate with the engine's
Qt-free ``QT_TRANSLATE_NOOP`` (context ``Cli``).
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from desktop.i18n.catalog import Catalog


@functools.cache
def _catalog() -> Catalog:
    from desktop import i18n
    from desktop.i18n import catalog

    setting = ""
    try:
        from desktop.engine.config.settings import Paths, Settings

        setting = Settings.load(Paths.resolve(), env={}).language
    except Exception:  # noqa: BLE001 - a settings file that cannot be read: the locale decides
        setting = ""
    return catalog.load(i18n.choose(setting, i18n.system_language(os.environ)))


def word(text: Any) -> str:
    """An engine message (or its report, or an exception carrying one), worded in the CLI's language."""
    if isinstance(text, BaseException):
        first = text.args[0] if len(text.args) == 1 else None
        return _catalog().word(first) if isinstance(first, str) else str(text)
    return _catalog().word(text)


def cli(template: str, /, **params: Any) -> str:
    """One of the CLI's own lines (``template`` marked with QT_TRANSLATE_NOOP("Cli", …))."""
    translated = _catalog().translate("Cli", template)
    args = {k: v if isinstance(v, int | float) else word(v) for k, v in params.items()}
    try:
        return translated.format(**args)
    except (KeyError, IndexError, ValueError):
        return template.format(**args)


def reset() -> None:
    """Forget the chosen language (tests change the environment)."""
    _catalog.cache_clear()
