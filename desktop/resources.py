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
