"""Build the translations: ``.ts`` (Qt Linguist sources, in the repository) -> ``.qm`` (loaded by the window).

    python packaging/build_translations.py            # lrelease every desktop/i18n/*.ts into its .qm
    python packaging/build_translations.py --update   # first lupdate: collect the strings of desktop/ into the .ts

lupdate reads ``self.tr``, ``QCoreApplication.translate`` and ``QT_TRANSLATE_NOOP`` (the engine's own, Qt-free
one in ``desktop/engine/messages.py`` included). The .ts files carry no source locations, so moving code never
changes them. Run by ``packaging/dev.sh`` at install and by the tests when a .qm is missing or older.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from desktop.i18n import TRANSLATED, qm_file, ts_file  # noqa: E402


def tool(name: str) -> str:
    """pyside6-<name> from this interpreter's environment (PySide6 ships lupdate and lrelease)."""
    here = Path(sys.executable).parent / f"pyside6-{name}"
    if here.exists():
        return str(here)
    found = shutil.which(f"pyside6-{name}")
    if found:
        return found
    import PySide6

    binary = Path(PySide6.__file__).parent / name
    if binary.exists():
        return str(binary)
    raise SystemExit(f"build_translations: pyside6-{name} not found (install PySide6-Essentials)")


def sources() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "desktop").rglob("*.py"))


def update() -> None:
    for language in TRANSLATED:
        subprocess.run(
            [
                tool("lupdate"),
                "-locations",
                "none",
                "-no-obsolete",
                *sources(),
                "-ts",
                str(ts_file(language).relative_to(ROOT)),
            ],
            cwd=ROOT,
            check=True,
        )


def tool_env() -> dict[str, str]:
    """The environment for pyside6-<tool>: without the path overrides of pip's isolated build environment,
    which would hide from the tool's script the PySide6 it belongs to."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME")}


def release(*, quiet: bool = False) -> list[Path]:
    built = []
    for language in TRANSLATED:
        ts, qm = ts_file(language), qm_file(language)
        subprocess.run(
            [tool("lrelease"), *(["-silent"] if quiet else []), str(ts), "-qm", str(qm)],
            check=True,
            stdout=subprocess.DEVNULL if quiet else None,
            env=tool_env(),
        )
        built.append(qm)
    return built


def stale() -> bool:
    """A .qm is missing or older than its .ts."""
    return any(
        not qm_file(lang).exists() or qm_file(lang).stat().st_mtime < ts_file(lang).stat().st_mtime
        for lang in TRANSLATED
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="run lupdate over desktop/ first")
    parser.add_argument("--if-stale", action="store_true", help="only when a .qm is missing or older")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if args.update:
        update()
    if args.update or not args.if_stale or stale():
        release(quiet=args.quiet)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
