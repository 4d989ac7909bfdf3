"""The translations Précis ships (Qt Linguist ``.ts`` sources, ``.qm`` built from them) and which one applies.

Pure Python: the window loads the ``.qm`` through QTranslator (``desktop.ui.app``); the CLI reads the ``.ts``
through ``desktop.i18n.catalog``. ``packaging/build_translations.py`` runs lupdate and lrelease.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
DOMAIN = "precis"
ENGLISH = "en"
CHINESE = "zh_CN"
# The Settings choice ("" follows the system) -> the name shown for it, in its own language.
LANGUAGES: dict[str, str] = {"": "System", ENGLISH: "English", CHINESE: "简体中文"}
TRANSLATED = (CHINESE,)  # languages with a .ts file; English is the source text


def ts_file(language: str) -> Path:
    return FOLDER / f"{DOMAIN}_{language}.ts"


def qm_file(language: str) -> Path:
    return FOLDER / f"{DOMAIN}_{language}.qm"


def choose(setting: str, system: str) -> str:
    """The language to show: the Settings choice, else the system's (``zh_CN``, ``zh-Hans``, ``zh_SG.UTF-8``
    -> Simplified Chinese); English for anything without a translation."""
    wanted = setting if setting in LANGUAGES and setting else system
    norm = wanted.replace("-", "_").split(".")[0].split("@")[0]
    if norm in (ENGLISH, CHINESE):
        return norm
    lang, _, rest = norm.partition("_")
    if lang.lower() == "zh" and rest.upper() not in (
        "TW",
        "HK",
        "MO",
        "HANT",
    ):  # Traditional is not translated
        return CHINESE
    return ENGLISH


def system_language(env: Mapping[str, str]) -> str:
    """The POSIX locale the CLI runs under (LC_ALL, LC_MESSAGES, LANG, LANGUAGE's first entry)."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if value := env.get(name):
            return value
    return (env.get("LANGUAGE") or "").split(":")[0]
