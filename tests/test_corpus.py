"""tests/corpus.py: where the corpus is found, and that a missing corpus skips normally but fails under CI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import corpus

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import pytest
from tests.corpus import corpus_params, corpus_required, needs_corpus, relative_id, require_corpus  # noqa: F401

@needs_corpus
def test_marked():
    pass

@needs_corpus
@pytest.mark.parametrize("path", corpus_params(), ids=relative_id)
def test_every_file(path):
    assert path.is_file()

def test_named_file():
    require_corpus("one.jsonl")
"""


def run_probe(tmp_path: Path, corpus_dir: Path, *, ci: bool) -> subprocess.CompletedProcess[str]:
    """pytest, in a fresh process, on three corpus tests, with PRECIS_CORPUS at ``corpus_dir``."""
    probe = tmp_path / "probe"
    probe.mkdir(exist_ok=True)
    (probe / "pytest.ini").write_text("[pytest]\n")  # keeps the repository's settings and conftest out
    (probe / "test_probe.py").write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env.update(PRECIS_CORPUS=str(corpus_dir), PYTHONPATH=str(ROOT))
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", str(probe)],
        cwd=probe,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_default_location_is_beside_the_repository(monkeypatch):
    monkeypatch.delenv("PRECIS_CORPUS", raising=False)
    assert corpus.repository_root() == ROOT and (ROOT / "pyproject.toml").is_file()
    assert corpus.corpus_dir() == (ROOT.parent / "shared" / "corpus").resolve()


def test_environment_variable_overrides_the_location(monkeypatch, tmp_path):
    monkeypatch.setenv("PRECIS_CORPUS", str(tmp_path / "elsewhere"))
    assert corpus.corpus_dir() == (tmp_path / "elsewhere").resolve()


def test_ci_flag(monkeypatch):
    for value, expected in (("true", True), ("1", True), ("false", False), ("", False)):
        monkeypatch.setenv("CI", value)
        assert corpus.in_ci() is expected
    monkeypatch.delenv("CI")
    assert corpus.in_ci() is False


def test_a_missing_corpus_skips_with_the_reason_outside_ci(tmp_path):
    res = run_probe(tmp_path, tmp_path / "missing", ci=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "3 skipped" in res.stdout and "passed" not in res.stdout
    assert f"corpus not found at {(tmp_path / 'missing').resolve()}" in res.stdout


def test_an_empty_corpus_fails_under_ci(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "README.md").write_text("no transcripts here")
    res = run_probe(tmp_path, empty, ci=True)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "skipped" not in res.stdout and "passed" not in res.stdout
    assert res.stdout.count("under CI=true a missing corpus is a failure") >= 3
    assert "no *.jsonl transcripts under" in res.stdout


def test_a_present_corpus_runs_and_a_missing_named_file_fails_under_ci(tmp_path):
    present = tmp_path / "present"
    (present / "sub").mkdir(parents=True)
    (present / "sub" / "two.jsonl").write_text("{}\n")
    res = run_probe(tmp_path, present, ci=True)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "2 passed" in res.stdout and "1 failed" in res.stdout  # test_named_file: one.jsonl is absent
    assert "test_every_file[sub/two.jsonl]" in res.stdout
    assert "lacks one.jsonl" in res.stdout

    (present / "one.jsonl").write_text("{}\n")
    res = run_probe(tmp_path, present, ci=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "4 passed" in res.stdout


@pytest.mark.parametrize("ci", [False, True])
def test_corpus_or_exit_for_benchmarks(monkeypatch, tmp_path, ci):
    monkeypatch.setattr(corpus, "CORPUS", tmp_path / "missing")
    if ci:
        monkeypatch.setenv("CI", "true")
    with pytest.raises(SystemExit, match="corpus not found"):
        corpus.corpus_or_exit()
