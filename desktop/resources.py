"""Locate files under the repository's resources/ folder (icons, styles)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "resources"


def icon_path(size: int | None = None) -> Path:
    if size:
        png = ROOT / "icons" / f"precis-{size}.png"
        if png.exists():
            return png
    return ROOT / "icons" / "precis.svg"


def stylesheet() -> str:
    """The application style sheet (shapes only; colours come from the palette)."""
    path = ROOT / "styles" / "precis.qss"
    return path.read_text("utf-8") if path.exists() else ""


def ui_icon_svg(name: str) -> str:
    """The SVG text of an interface icon (resources/icons/ui/NAME.svg); '' when it is missing."""
    path = ROOT / "icons" / "ui" / f"{name}.svg"
    return path.read_text("utf-8") if path.exists() else ""


def ui_icon_names() -> list[str]:
    """Every bundled interface icon's name."""
    return sorted(p.stem for p in (ROOT / "icons" / "ui").glob("*.svg"))


def style_file(name: str) -> str:
    """The text of a style sheet in resources/styles ('' when missing), e.g. a theme's colours."""
    path = ROOT / "styles" / name
    return path.read_text("utf-8") if path.exists() else ""
