"""The X11-only window test (tests/test_window_defects_x11.py) run by the whole suite: under an Xvfb of its own on
the xcb platform, in a subprocess, whenever this machine has xvfb-run (`dev.sh test` installs it), so the blank
chat after a large shrink stays tested in CI and not only where someone runs it under X by hand."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.skipif(
    shutil.which("xvfb-run") is None, reason="xvfb-run is not installed (dev.sh test installs it)"
)
@pytest.mark.skipif(
    os.environ.get("QT_QPA_PLATFORM") == "xcb", reason="already on X11: the file runs by itself"
)
def test_the_x11_shrink_test_passes_under_its_own_xvfb():
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb"}
    env.pop("DISPLAY", None)
    res = subprocess.run(
        ["xvfb-run", "-a", "-s", "-screen 0 1920x1080x24", sys.executable, "-m", "pytest", "-q",
         "-p", "no:cacheprovider", "-p", "no:xdist", "tests/test_window_defects_x11.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
    )  # fmt: skip
    tail = (res.stdout + res.stderr)[-2000:]
    assert res.returncode == 0, tail
    assert "1 passed" in res.stdout and "skipped" not in res.stdout, tail
