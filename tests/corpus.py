"""Where the transcript corpus is, for tests and benchmarks, and what a test does when it is not there.

The corpus (real Claude Code transcripts, read-only) lives beside the repository, in ``../shared/corpus``
relative to the folder that holds pyproject.toml. ``PRECIS_CORPUS`` points elsewhere.

A test that needs it is marked ``@needs_corpus`` (the module must import the ``corpus_required`` fixture too)
or calls ``require_corpus()``. Without the corpus such a test is skipped, with the reason; under ``CI=true``
it fails instead, so a CI run can never pass by silently skipping the tests that read real transcripts.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def repository_root() -> Path:
    """The nearest folder above this file that holds pyproject.toml."""
    here = Path(__file__).resolve()
    for folder in here.parents:
        if (folder / "pyproject.toml").is_file():
            return folder
    raise RuntimeError(f"no pyproject.toml above {here}")


def corpus_dir() -> Path:
    """``$PRECIS_CORPUS`` if set, else ``<repository root>/../shared/corpus``."""
    override = os.environ.get("PRECIS_CORPUS")
    if override:
        return Path(override).expanduser().resolve()
    return (repository_root().parent / "shared" / "corpus").resolve()


CORPUS: Path = corpus_dir()


def corpus_files(root: Path | None = None) -> list[Path]:
    """Every ``*.jsonl`` transcript under the corpus (subagent files included), sorted; [] when it is absent."""
    root = CORPUS if root is None else root
    return sorted(root.rglob("*.jsonl")) if root.is_dir() else []


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def missing(*relative: str | Path) -> str | None:
    """Why the corpus (or one of the named files in it) cannot be used; None when it can."""
    if not CORPUS.is_dir():
        return f"corpus not found at {CORPUS} (set PRECIS_CORPUS to its folder)"
    if not corpus_files():
        return f"no *.jsonl transcripts under {CORPUS}"
    absent = [str(r) for r in relative if not (CORPUS / r).is_file()]
    if absent:
        return f"corpus at {CORPUS} lacks {', '.join(absent)}"
    return None


def require_corpus(*relative: str | Path) -> None:
    """Skip the calling test when the corpus (or a named file in it) is missing; fail instead under CI=true."""
    reason = missing(*relative)
    if reason is None:
        return
    if in_ci():
        pytest.fail(f"{reason}; under CI=true a missing corpus is a failure, not a skip", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def corpus_required() -> Path:
    """The corpus folder, after require_corpus()."""
    require_corpus()
    return CORPUS


needs_corpus = pytest.mark.usefixtures("corpus_required")


def corpus_or_exit() -> list[Path]:
    """For benchmarks and scripts: the corpus files, or exit with the reason when there are none."""
    reason = missing()
    if reason:
        raise SystemExit(reason)
    return corpus_files()


def corpus_params(files: list[Path] | None = None) -> list[Path]:
    """Values for ``parametrize`` over corpus files. When there are none, one placeholder stands in, so the
    test still runs (and its ``needs_corpus`` skips or fails it) rather than pytest skipping an empty set."""
    files = corpus_files() if files is None else files
    return files or [CORPUS / "(no transcripts)"]


def relative_id(path: Path) -> str:
    """A parametrize id: the path inside the corpus."""
    return str(path.relative_to(CORPUS)) if path.is_relative_to(CORPUS) else path.name
