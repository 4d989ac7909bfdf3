"""The installed app, as a new user gets it: the wheel built from this tree, installed into a clean venv (the
dependencies from the package index, nothing from the dev venv), started offscreen from that install; the
window must show the shipped icon and style sheet, and the installed ``precis install-desktop`` must point the
menu entry at the installed ``precis-gui``. (Before the assets moved into the package, the wheel had no icon:
"qt.svg: Cannot open file …/site-packages/resources/icons/precis.svg".)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.cli_faults import env_for
from tests.installed import BIN, NOT_SOURCES, build_wheel, clean_venv

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.timeout(400)


def launch(venv: Path, home: Path, base_url: str, report: Path) -> subprocess.CompletedProcess[str]:
    env = env_for(
        home,
        base_url,
        QT_QPA_PLATFORM="offscreen",
        PRECIS_QUIT_AFTER="0.3",
        PRECIS_STARTUP_REPORT=str(report),
        PYTHONPATH="",
    )
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [str(venv / BIN / "precis-gui")],
        env=env,
        cwd=home.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("install")
    wheel = build_wheel(ROOT, tmp / "dist")
    return wheel, clean_venv(wheel, tmp / "venv")


def test_the_wheel_carries_every_asset(installed):
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {
        p.relative_to(ROOT).as_posix() for p in (ROOT / "desktop" / "assets").rglob("*") if p.is_file()
    }
    assert shipped and shipped <= names, sorted(shipped - names)
    # Each translation source goes with its compiled .qm (setup.py builds them; none before the first .ts).
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "desktop" / "i18n").glob("*.ts")}
    assert sources <= names and {s[:-3] + ".qm" for s in sources} <= names, sorted(names)
    entry_points = zipfile.ZipFile(wheel).read("precis-0.1.0.dist-info/entry_points.txt").decode()
    assert "[gui_scripts]\nprecis-gui = desktop.ui.launch:main" in entry_points
    assert "[console_scripts]\nprecis = desktop.cli.main:main" in entry_points


def test_the_installed_window_loads_its_icon_and_style_sheet(installed, tmp_path, fake_api):
    _, venv = installed
    report = tmp_path / "startup.json"
    res = launch(venv, tmp_path / "home", fake_api.base_url, report)
    assert res.returncode == 0, res.stderr
    assert "Cannot open file" not in res.stderr and "Traceback" not in res.stderr, res.stderr
    facts = json.loads(report.read_text("utf-8"))
    assert Path(facts["assets_folder"]).is_relative_to(venv), (
        facts
    )  # read from the install, not from this checkout
    assert facts["icon_renders"] and facts["svg_renders"], facts
    assert {16, 32, 48, 64, 128, 256, 512} <= set(facts["icon_sizes"]), facts
    assert facts["stylesheet_chars"] > 100 and facts["stylesheet_is_shipped"], facts
    assert facts["desktop_file_name"] == "io.github.precis.Precis"


def test_the_installed_cli_installs_the_desktop_entry(installed, tmp_path):
    _, venv = installed
    data = tmp_path / "xdg-data"
    env = {**os.environ, "XDG_DATA_HOME": str(data), "PYTHONPATH": ""}
    res = subprocess.run(
        [str(venv / BIN / "precis"), "install-desktop"], env=env, capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0, res.stderr
    entry = (data / "applications" / "io.github.precis.Precis.desktop").read_text("utf-8")
    assert f"Exec={venv / BIN / 'precis-gui'}\n" in entry, entry
    assert (data / "icons/hicolor/256x256/apps/io.github.precis.Precis.png").is_file()
    res = subprocess.run(
        [str(venv / BIN / "precis"), "uninstall-desktop"], env=env, capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0 and not (data / "applications" / "io.github.precis.Precis.desktop").exists()


def test_pip_wheel_with_build_isolation_works_where_pyside6_is_installed(tmp_path):
    """As users run it: `pip wheel .` (build isolation on) from an environment that has PySide6, with the .ts
    newer than its .qm so the build hook runs lrelease. pip's isolated build environment hid PySide6 from the
    lrelease script and the build failed; now lrelease runs, or the committed .qm is shipped."""
    tree = tmp_path / "source"
    shutil.copytree(ROOT, tree, ignore=NOT_SOURCES, symlinks=True)
    ts = next((tree / "desktop" / "i18n").glob("*.ts"))
    os.utime(ts)  # newer than the .qm: the hook must build (or fall back)
    qm = ts.with_suffix(".qm")
    os.utime(qm, (ts.stat().st_mtime - 60, ts.stat().st_mtime - 60))
    out = tmp_path / "dist"
    res = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(tree)],
        capture_output=True,
        text=True,
        timeout=350,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    wheel = next(out.glob("precis-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        assert any(n.endswith(".qm") for n in zf.namelist())
