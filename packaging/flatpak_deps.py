"""Write ``packaging/flatpak/python3-deps.json``: the flatpak-builder module that pip-installs Précis's
dependencies (PySide6-Essentials and shiboken6 included) into ``/app`` from pinned wheels.

    .venv/bin/python packaging/flatpak_deps.py

pip resolves the project for this interpreter (the Flatpak runtime's Python is 3.13, as in the dev venv) with
``--dry-run --report``; each wheel becomes a ``file`` source with its sha256 and its PyPI address (the
``/packages/<python tag>/<initial>/<project>/<file>`` form, which PyPI redirects to the file). Native wheels are
x86_64 ones: that is the architecture the module builds for (``only-arches``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "packaging" / "flatpak" / "python3-deps.json"
BUILD_ONLY = ["setuptools"]  # builds Précis itself inside the sandbox (no network there)


def pypi_url(filename: str, project: str) -> str:
    python_tag = filename[:-4].split("-")[-3]
    return f"https://files.pythonhosted.org/packages/{python_tag}/{project[0]}/{project}/{filename}"


def resolve() -> list[dict[str, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--dry-run",
                "--ignore-installed",
                "--only-binary=:all:",
                "--report",
                str(report),
                str(ROOT),
                *BUILD_ONLY,
            ],
            check=True,
        )
        items = json.loads(report.read_text("utf-8"))["install"]
    wheels = []
    for item in items:
        info = item["download_info"]
        if "archive_info" not in info:  # Précis itself: the manifest's own module builds it
            continue
        filename = info["url"].rsplit("/", 1)[-1]
        wheels.append(
            {
                "project": item["metadata"]["name"],
                "filename": filename,
                "sha256": info["archive_info"]["hashes"]["sha256"],
            }
        )
    return sorted(wheels, key=lambda w: w["filename"].lower())


def module(wheels: list[dict[str, str]]) -> dict[str, object]:
    names = " ".join(w["project"] for w in wheels)
    return {
        "name": "python3-deps",
        "buildsystem": "simple",
        "only-arches": ["x86_64"],
        "build-commands": [
            f'pip3 install --verbose --exists-action=i --no-index --find-links="file://${{PWD}}" '
            f"--prefix=${{FLATPAK_DEST}} --no-build-isolation {names}"
        ],
        "sources": [
            {
                "type": "file",
                "url": pypi_url(w["filename"], w["project"]),
                "sha256": w["sha256"],
                "dest-filename": w["filename"],
            }
            for w in wheels
        ],
    }


def main() -> int:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    wheels = resolve()
    OUT.write_text(json.dumps(module(wheels), indent=2) + "\n", "utf-8")
    print(f"flatpak_deps: {len(wheels)} wheels -> {OUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
