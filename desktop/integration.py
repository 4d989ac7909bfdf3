"""Desktop integration for an installed Précis: the desktop entry, the hicolor icons and the AppStream metainfo
under the user's XDG data folder (``$XDG_DATA_HOME``, else ``~/.local/share``), and their removal.

One id everywhere (``io.github.precis.Precis``): the entry's file name, its ``Icon=``, the window's
``setDesktopFileName`` and the metainfo's ``<id>``, so the shell matches the running window to its entry."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from desktop import APP_ID, resources

GUI_SCRIPT = "precis-gui"


def data_home(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME`` when set to an absolute path (the spec says to ignore a relative one), else
    ``~/.local/share``."""
    value = (os.environ if env is None else env).get("XDG_DATA_HOME", "")
    return Path(value) if value and os.path.isabs(value) else Path.home() / ".local" / "share"


def launcher() -> list[str]:
    """The command the desktop entry runs: the bundle's own executable when frozen, else the ``precis-gui``
    script installed beside this interpreter (a venv, pipx), else the one on PATH, else ``python -m desktop``."""
    suffix = ".exe" if sys.platform == "win32" else ""
    if getattr(sys, "frozen", False):  # the bundle: its window executable sits beside its CLI one
        window = Path(sys.executable).with_name(f"{GUI_SCRIPT}{suffix}")
        return [str(window if window.exists() else Path(sys.executable))]
    beside = Path(sys.executable).parent / f"{GUI_SCRIPT}{suffix}"
    if beside.exists():
        return [str(beside.absolute())]
    on_path = shutil.which(GUI_SCRIPT)
    if on_path:
        return [on_path]
    return [sys.executable, "-m", "desktop", "gui"]


def exec_line(command: list[str]) -> str:
    """``command`` quoted as the Desktop Entry spec wants: arguments with reserved characters in double quotes
    with ``"`` `` ` `` ``$`` ``\\`` escaped, and ``%`` doubled (it starts a field code)."""

    def quote(arg: str) -> str:
        arg = arg.replace("%", "%%")
        if not any(ch in arg for ch in " \t\n\"'\\><~|&;$*?#()`"):
            return arg
        escaped = "".join("\\" + ch if ch in '"`$\\' else ch for ch in arg)
        return f'"{escaped}"'

    return " ".join(quote(arg) for arg in command)


def entry_text(command: list[str]) -> str:
    """The shipped desktop entry with ``Exec=`` (and ``TryExec=``) naming ``command``."""
    lines = []
    for line in resources.desktop_entry().splitlines():
        if line.startswith("Exec="):
            line = f"Exec={exec_line(command)}"
        elif line.startswith("TryExec="):
            line = f"TryExec={command[0]}"  # a path, not a command line: never quoted
        lines.append(line)
    return "\n".join(lines) + "\n"


def targets(home: Path) -> dict[Path, Path | None]:
    """Every file ``install`` writes under ``home`` -> the shipped file it copies (None: the generated entry)."""
    out: dict[Path, Path | None] = {home / "applications" / resources.DESKTOP_ENTRY: None}
    hicolor = home / "icons" / "hicolor"
    for size, source in resources.icon_files().items():
        folder = hicolor / ("scalable" if size is None else f"{size}x{size}") / "apps"
        out[folder / f"{APP_ID}{source.suffix}"] = source
    out[home / "metainfo" / resources.METAINFO] = resources.root() / resources.METAINFO
    return out


def install(home: Path | None = None, command: list[str] | None = None) -> list[Path]:
    """Write the entry, icons and metainfo under ``home``; returns the files written (existing ones replaced)."""
    home = home or data_home()
    written = []
    for target, source in targets(home).items():
        target.parent.mkdir(parents=True, exist_ok=True)
        if source is None:
            target.write_text(entry_text(command or launcher()), "utf-8")
        else:
            shutil.copyfile(source, target)
        written.append(target)
    _refresh_caches(home)
    return written


def uninstall(home: Path | None = None) -> list[Path]:
    """Remove what ``install`` wrote (and nothing else); returns the files removed."""
    home = home or data_home()
    removed = []
    for target in targets(home):
        if target.exists():
            target.unlink()
            removed.append(target)
    _refresh_caches(home)
    return removed


def _refresh_caches(home: Path) -> None:
    # Shells read the caches, not the folders; the tools are optional, and a stale cache only delays the entry.
    for tool, args in (
        ("update-desktop-database", ["-q", str(home / "applications")]),
        ("gtk-update-icon-cache", ["-q", "-t", "-f", str(home / "icons" / "hicolor")]),
    ):
        found = shutil.which(tool)
        if found and Path(args[-1]).exists():
            subprocess.run([found, *args], check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
