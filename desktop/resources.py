"""The files Précis ships inside its package (``desktop/assets/``): icons, the style sheet, the desktop entry and
the AppStream metainfo. Found through importlib.resources, so a wheel, pipx, an editable install and a frozen
bundle all read the same files; nothing else in the code knows where they live."""

from __future__ import annotations

import atexit
import contextlib
import re
from importlib import resources
from pathlib import Path

from desktop import APP_ID

ICON_SIZES = (16, 32, 48, 64, 128, 256, 512)
DESKTOP_ENTRY = f"{APP_ID}.desktop"
METAINFO = f"{APP_ID}.metainfo.xml"

_files = contextlib.ExitStack()
atexit.register(_files.close)
_root: Path | None = None


def root() -> Path:
    """The assets folder as a real path (Qt opens files by name). Installed packages and bundles keep it on disk,
    so this is the folder itself; a zipped install would get a temporary copy, removed at exit."""
    global _root
    if _root is None:
        _root = _files.enter_context(resources.as_file(resources.files("desktop") / "assets"))
    return _root


def icon_path(size: int | None = None) -> Path:
    """The PNG rendered at ``size`` pixels when there is one, else the scalable SVG."""
    if size:
        png = root() / "icons" / f"precis-{size}.png"
        if png.exists():
            return png
    return root() / "icons" / "precis.svg"


def icon_files() -> dict[int | None, Path]:
    """Every icon shipped: pixel size -> PNG, and None -> the SVG."""
    found: dict[int | None, Path] = {size: icon_path(size) for size in ICON_SIZES}
    found[None] = icon_path()
    return {size: path for size, path in found.items() if path.exists()}


def stylesheet() -> str:
    """The application style sheet (shapes only; colours come from the palette). Its images are named beside it
    and given to Qt as whole paths (Qt would look for them from the working directory)."""
    folder = root() / "styles"
    return re.sub(
        r"url\((\w[\w.-]*)\)",
        lambda m: f'url("{(folder / m.group(1)).as_posix()}")',
        (folder / "precis.qss").read_text("utf-8"),
    )


def ui_icon_svg(name: str) -> str:
    """The SVG text of an interface icon (assets/icons/ui/NAME.svg); '' when it is missing."""
    path = root() / "icons" / "ui" / f"{name}.svg"
    return path.read_text("utf-8") if path.exists() else ""


def ui_icon_names() -> list[str]:
    """Every bundled interface icon's name."""
    return sorted(p.stem for p in (root() / "icons" / "ui").glob("*.svg"))


def desktop_entry() -> str:
    """The freedesktop.org desktop entry, as shipped (``Exec=precis-gui``)."""
    return (root() / DESKTOP_ENTRY).read_text("utf-8")


def metainfo() -> str:
    """The AppStream metainfo."""
    return (root() / METAINFO).read_text("utf-8")
