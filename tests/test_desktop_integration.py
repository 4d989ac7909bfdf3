"""Desktop integration: the shipped entry, icons and AppStream metainfo, and ``precis install-desktop`` /
``uninstall-desktop`` writing and removing them under the XDG data folder (a temporary one here)."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from desktop import APP_ID, APP_NAME, __version__, integration, resources
from desktop.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
HICOLOR = ("scalable", "16x16", "32x32", "48x48", "64x64", "128x128", "256x256", "512x512")


def entry_keys(text: str) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read_string(text)
    return parser["Desktop Entry"]


def installed_files(home: Path) -> set[Path]:
    return {p for p in home.rglob("*") if p.is_file()}


def test_install_desktop_writes_entry_icons_and_metainfo_under_xdg_data_home(tmp_path, monkeypatch, capsys):
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    assert main(["install-desktop"]) == 0
    entry = entry_keys((home / "applications" / f"{APP_ID}.desktop").read_text("utf-8"))
    assert entry["Exec"] == integration.exec_line(integration.launcher())
    assert entry["Icon"] == APP_ID and entry["StartupWMClass"] == APP_NAME and entry["Type"] == "Application"
    for folder in HICOLOR:
        suffix = "svg" if folder == "scalable" else "png"
        icon = home / "icons" / "hicolor" / folder / "apps" / f"{APP_ID}.{suffix}"
        assert icon.is_file() and icon.stat().st_size > 0, icon
    assert (home / "metainfo" / f"{APP_ID}.metainfo.xml").read_text("utf-8") == resources.metainfo()
    printed = capsys.readouterr().out.split()
    assert len(printed) == 1 + len(HICOLOR) + 1  # one line per file written


def test_uninstall_removes_only_what_install_wrote(tmp_path):
    home = tmp_path / "xdg"
    other = home / "applications" / "someone.else.desktop"
    other.parent.mkdir(parents=True)
    other.write_text("[Desktop Entry]\n")
    before = installed_files(home)
    written = integration.install(home, [str(tmp_path / "venv" / "bin" / "precis-gui")])
    assert set(written) <= installed_files(home) and other.exists()
    assert main(["uninstall-desktop", "--data-home", str(home)]) == 0
    left = {p for p in installed_files(home) if p.name != "icon-theme.cache" and p.name != "mimeinfo.cache"}
    assert left == before  # the other app's entry stays; nothing of ours is left
    assert (
        main(["uninstall-desktop", "--data-home", str(home)]) == 0
    )  # a second time: nothing to do, no error


def test_data_home_follows_the_xdg_rules(tmp_path):
    assert integration.data_home({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path
    fallback = Path.home() / ".local" / "share"
    assert integration.data_home({"XDG_DATA_HOME": "relative/dir"}) == fallback  # the spec: ignore relative
    assert integration.data_home({}) == fallback


def test_exec_line_quotes_as_the_desktop_entry_spec_says(tmp_path):
    plain = str(tmp_path / "bin" / "precis-gui")
    spaced = str(tmp_path / "a b" / "venv" / "bin" / "precis-gui")
    assert " " not in plain and integration.exec_line([plain]) == plain
    assert integration.exec_line([spaced]) == f'"{spaced}"'
    assert integration.exec_line(['x/"$q`\\', "50%"]) == '"x/\\"\\$q\\`\\\\" 50%%'
    entry = entry_keys(integration.entry_text([spaced]))
    assert entry["Exec"] == f'"{spaced}"' and entry["TryExec"] == spaced


def test_launcher_is_the_gui_script_beside_this_interpreter():
    command = integration.launcher()
    assert Path(command[0]).name in ("precis-gui", "precis-gui.exe") or command[1:] == [
        "-m",
        "desktop",
        "gui",
    ]


def test_launcher_in_a_bundle_is_its_window_executable(tmp_path, monkeypatch):
    cli, gui = tmp_path / "precis", tmp_path / integration.GUI_SCRIPT
    cli.write_bytes(b"")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(cli))
    monkeypatch.setattr(sys, "platform", "linux")
    assert integration.launcher() == [str(cli)]  # a bundle with one executable: that one
    gui.write_bytes(b"")
    assert integration.launcher() == [str(gui)]  # `precis install-desktop` from the bundle names precis-gui


def test_shipped_entry_is_valid():
    entry = entry_keys(resources.desktop_entry())
    for key in ("Type", "Name", "Exec", "Icon", "Categories"):
        assert entry.get(key), key
    assert entry["Exec"] == entry["TryExec"] == integration.GUI_SCRIPT
    assert entry["Categories"].endswith(";") and entry["Version"] == "1.4"
    validator = shutil.which("desktop-file-validate")
    if validator:
        res = subprocess.run(
            [validator, str(resources.root() / resources.DESKTOP_ENTRY)], capture_output=True, text=True
        )
        assert res.returncode == 0 and "error" not in res.stdout.lower(), res.stdout


def test_metainfo_names_the_app_and_its_entry():
    path = ROOT / "packaging" / f"{APP_ID}.metainfo.xml"  # the path the Flatpak manifest and stores use
    assert path.read_text("utf-8") == resources.metainfo()
    root = ET.fromstring(resources.metainfo())
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    for tag in ("metadata_license", "project_license", "name", "summary", "description", "content_rating"):
        assert root.find(tag) is not None, tag
    assert root.findtext("launchable") == f"{APP_ID}.desktop"
    assert {b.text for b in root.iterfind("provides/binary")} == {"precis", "precis-gui"}
    assert [r.get("version") for r in root.iterfind("releases/release")][0] == __version__


@pytest.mark.skipif(not shutil.which("appstreamcli"), reason="appstreamcli is not installed")
def test_metainfo_passes_appstreamcli():
    res = subprocess.run(
        ["appstreamcli", "validate", "--no-net", str(ROOT / "packaging" / f"{APP_ID}.metainfo.xml")],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_window_icon_carries_every_size(qapp):
    # The desktop file name is checked on a real launch of the installed app (tests/test_install.py).
    from PySide6.QtCore import QSize

    from desktop.ui.app import app_icon

    icon = app_icon()
    assert {s.width() for s in icon.availableSizes()} >= {16, 32, 48, 64, 128, 256, 512}
    assert not icon.pixmap(QSize(48, 48)).isNull()


def test_only_desktop_resources_knows_where_the_assets_live():
    # Paths computed from a module's own location break in a zip or a bundle; importlib.resources does not.
    literal = re.compile(r"""["'](?:assets|resources)["'/]""")
    offenders = [
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "desktop").rglob("*.py")
        if p.name != "resources.py" and literal.search(p.read_text("utf-8"))
    ]
    assert offenders == []
    assert literal.search((ROOT / "desktop" / "resources.py").read_text("utf-8"))  # the pattern does find it
