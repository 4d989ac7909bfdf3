"""The window's language: Qt's own translations (standard buttons and dialogs) and Précis's, and the locale
numbers and dates follow. Chosen once at start (the Settings choice applies at the next start)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

from desktop.ui.look import format

_installed: list[QTranslator] = []


class FallbackTranslator(QTranslator):
    """Précis's strings from a lookup (the .ts read directly) when no .qm has been built."""

    def __init__(self, lookup: Callable[[str, str], str], parent: QCoreApplication) -> None:
        super().__init__(parent)
        self._lookup = lookup

    def translate(self, context: str, source: str, disambiguation: str | None = None, n: int = -1) -> str:
        found = self._lookup(context, source)
        return found if found != source else None  # type: ignore[return-value]  # null: Qt asks the next one

    def isEmpty(self) -> bool:  # noqa: N802 - Qt override
        return False


def install(
    app: QCoreApplication, language: str, qm: Path | None, fallback: Callable[[str, str], str] | None = None
) -> list[QTranslator]:
    """Apply ``language`` ("en", "zh_CN"): the default locale, qtbase's translation and ours (``qm``, else
    ``fallback``). Translators installed before are removed first. Returns what was installed."""
    for old in _installed:
        app.removeTranslator(old)
    _installed.clear()
    locale = (
        QLocale(QLocale.Language.English, QLocale.Country.UnitedStates)
        if language == "en"
        else QLocale(language)
    )
    QLocale.setDefault(locale)
    format.use_locale(locale.groupSeparator(), locale.decimalPoint(), locale.percent())
    if language == "en":
        return []
    qt = QTranslator(app)
    if qt.load(locale, "qtbase", "_", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        _installed.append(qt)
    ours = QTranslator(app)
    if qm is not None and qm.exists() and ours.load(str(qm)):
        _installed.append(ours)
    elif fallback is not None:
        _installed.append(FallbackTranslator(fallback, app))
    for translator in _installed:
        app.installTranslator(translator)
    return list(_installed)


def system_language() -> str:
    """The system's UI language as Qt sees it ("zh_CN", "en_US", …)."""
    languages = QLocale.system().uiLanguages()
    return languages[0] if languages else QLocale.system().name()
