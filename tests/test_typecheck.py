"""packaging/typecheck.py: the mypy baseline only shrinks."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "packaging" / "typecheck.py"


@pytest.fixture(scope="module")
def tc():
    spec = importlib.util.spec_from_file_location("typecheck", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_errors(counts: dict[str, int]) -> dict[str, list[str]]:
    return {f: [f"{f}:{i + 1}: error: bad thing  [misc]" for i in range(n)] for f, n in counts.items()}


@pytest.fixture
def run(tc, monkeypatch, tmp_path):
    """Run main() against a baseline in tmp_path with mypy's findings replaced by ``counts``."""
    baseline = tmp_path / "baseline.json"

    def go(counts: dict[str, int], *args: str) -> int:
        monkeypatch.setattr(tc, "run_mypy", lambda targets: (fake_errors(counts), ""))
        return tc.main(["--baseline", str(baseline), *args])

    go.baseline = baseline
    return go


def test_compare_reports_growth_new_files_and_drops(tc):
    grown, dropped = tc.compare({"a.py": 3, "b.py": 1, "new.py": 2}, {"a.py": 2, "b.py": 4, "gone.py": 5})
    assert grown == {"a.py": (3, 2), "new.py": (2, 0)}
    assert dropped == 3 + 5


def test_more_errors_than_the_baseline_fail_and_list_them(run, capsys):
    run.baseline.write_text(json.dumps({"a.py": 1}))
    assert run({"a.py": 2}) == 1
    err = capsys.readouterr().err
    assert "a.py: 2 errors, baseline 1" in err and "a.py:2: error: bad thing" in err and "FAILED" in err


def test_errors_in_a_file_missing_from_the_baseline_fail(run, capsys):
    run.baseline.write_text(json.dumps({"a.py": 1}))
    assert run({"a.py": 1, "b.py": 1}) == 1
    assert "b.py: 1 error, not in the baseline" in capsys.readouterr().err


def test_fewer_errors_pass_with_a_hint(run, capsys):
    run.baseline.write_text(json.dumps({"a.py": 3, "b.py": 1}))
    assert run({"a.py": 2}) == 0
    out = capsys.readouterr().out
    assert "2 errors fewer than the baseline" in out and "run with --update to shrink the baseline" in out
    assert json.loads(run.baseline.read_text()) == {"a.py": 3, "b.py": 1}  # a check never writes


def test_equal_counts_pass_without_a_hint(run, capsys):
    run.baseline.write_text(json.dumps({"a.py": 2}))
    assert run({"a.py": 2}) == 0
    assert "--update" not in capsys.readouterr().out


def test_update_shrinks_and_drops_clean_files(run):
    run.baseline.write_text(json.dumps({"a.py": 3, "b.py": 1}))
    assert run({"a.py": 2}, "--update") == 0
    assert json.loads(run.baseline.read_text()) == {"a.py": 2}


def test_update_refuses_to_grow_unless_allowed(run, capsys):
    run.baseline.write_text(json.dumps({"a.py": 1}))
    assert run({"a.py": 2}, "--update") == 1
    assert "refusing to grow" in capsys.readouterr().err
    assert json.loads(run.baseline.read_text()) == {"a.py": 1}
    assert run({"a.py": 2, "c.py": 1}, "--update", "--allow-growth") == 0
    assert json.loads(run.baseline.read_text()) == {"a.py": 2, "c.py": 1}


def test_allow_growth_needs_update(run):
    with pytest.raises(SystemExit):
        run({}, "--allow-growth")


def test_real_mypy_run_counts_a_new_error(tmp_path):
    """End to end with mypy itself: one type error in a file the baseline does not know fails the check."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f() -> int:\n    return 'text'\n\n\ndef g() -> None:\n    x: int = 1\n    print(x)\n")
    baseline = tmp_path / "baseline.json"
    baseline.write_text("{}")
    cmd = [sys.executable, str(SCRIPT), "--baseline", str(baseline), str(bad)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "bad.py: 1 error, not in the baseline" in res.stderr
    assert "Incompatible return value type" in res.stderr

    res = subprocess.run(
        [*cmd[:-1], "--update", "--allow-growth", str(bad)], capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert list(json.loads(baseline.read_text()).values()) == [1]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and "ok, 1 error" in res.stdout


def test_the_engine_and_the_tools_allow_no_untyped_function():
    """pyproject.toml holds desktop/engine and desktop/tools to disallow_untyped_defs: an unannotated function
    there is a mypy error, which the baseline (that only shrinks) does not allow."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    strict = {
        m
        for o in config["tool"]["mypy"]["overrides"]
        if o.get("disallow_untyped_defs")
        for m in (o["module"] if isinstance(o["module"], list) else [o["module"]])
    }
    assert {"desktop.engine", "desktop.engine.*", "desktop.tools", "desktop.tools.*"} <= strict
