"""setuptools hook: the wheel carries the compiled translations (.qm), built from the .ts by lrelease."""

import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithTranslations(build_py):
    def run(self) -> None:
        script = Path(__file__).resolve().parent / "packaging" / "build_translations.py"
        # Without lrelease the package still works: the window reads the .ts directly (slower, same words).
        result = subprocess.run([sys.executable, str(script), "--quiet"], check=False)
        if result.returncode != 0:
            print("setup.py: translations not compiled (pyside6-lrelease missing); the .ts files are used",
                  file=sys.stderr)
        super().run()


setup(cmdclass={"build_py": BuildPyWithTranslations})
