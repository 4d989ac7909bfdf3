"""Build hook: the translations' .qm files are built from their .ts sources before the package is copied.

Everything else is in pyproject.toml. packaging/build_translations.py (lrelease from PySide6) does the work when
it exists; without PySide6 in the build environment the .qm files already in desktop/i18n/ are used.
"""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
HOOK = HERE / "packaging" / "build_translations.py"


def build_translations() -> None:
    if not HOOK.exists():
        return
    spec = importlib.util.spec_from_file_location("build_translations", HOOK)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        module.main(["--if-stale", "--quiet"])
    # No lrelease here, or one that cannot run in this build environment (pip's build isolation hides the
    # environment's PySide6 from the lrelease script it finds): ship the committed .qm files.
    except (SystemExit, ImportError, OSError, subprocess.CalledProcessError) as exc:
        if any(HERE.glob("desktop/i18n/*.ts")) and not any(HERE.glob("desktop/i18n/*.qm")):
            raise RuntimeError(f"translations cannot be built ({exc}) and no .qm file is present") from exc


class BuildPy(build_py):
    def run(self) -> None:
        build_translations()
        super().run()


setup(cmdclass={"build_py": BuildPy})
