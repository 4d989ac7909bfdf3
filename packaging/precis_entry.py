"""Entry script of the one-folder bundle (packaging/precis.spec): ``precis`` and ``precis-gui`` both run it."""

import os
import sys

# qasync looks for the binding through importlib, which the bundle's import analysis cannot see; Précis imports
# PySide6 itself, so only the choice needs making.
os.environ.setdefault("QT_API", "pyside6")

from desktop.cli.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
