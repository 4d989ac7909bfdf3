"""The first formula never stalls the UI thread: until matplotlib (~40 MB, about half a second to import) is
loaded in its worker thread, a formula shows as its TeX source, and the view renders it again, typeset, once the
renderer is ready."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_formula_shows_its_source_until_matplotlib_is_loaded_off_the_ui_thread():
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    res = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "math_probe.py")],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert res.returncode == 0, res.stderr
    probe = json.loads(res.stdout.strip().splitlines()[-1])
    assert not probe["typeset_at_once"] and "e^{i\\pi}+1=0" in probe["first_text"]  # the source, at once
    assert probe["thread"] and probe["thread"] != "MainThread"  # matplotlib loaded in a worker thread
    assert probe["typeset_later"]  # and the view rendered the formula again once it was ready
