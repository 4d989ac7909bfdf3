"""Precis as a user installs it: the wheel built from this tree, installed into a clean venv (dependencies from
the package index). Used by tests/test_install.py and packaging/shot_desktop_launch.py."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

BIN = "Scripts" if sys.platform == "win32" else "bin"


# Left out of the copy that is built: a stale build/ would put files that no longer exist into the wheel.
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".flatpak-builder"
)


def build_wheel(source: Path, out: Path) -> Path:
    """``pip wheel`` of a fresh copy of ``source`` with this interpreter's setuptools (no isolated build
    environment to fill from the index)."""
    tree = out / "source"
    shutil.copytree(source, tree, ignore=NOT_SOURCES, symlinks=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(tree),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return next(out.glob("precis-*.whl"))


def clean_venv(wheel: Path, where: Path) -> Path:
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(where)], check=True)
    subprocess.run(
        [
            str(where / BIN / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return where
