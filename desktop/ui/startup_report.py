"""What an installed window actually loaded, written as JSON when ``PRECIS_STARTUP_REPORT`` names a file: the
install checks (tests/test_install.py, packaging/smoke_bundle.py) read it instead of trusting the package."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import QApplication, QWidget

from desktop import resources


def facts(app: QApplication, window: QWidget) -> dict[str, object]:
    icon = window.windowIcon()
    svg = QIcon(str(resources.icon_path()))  # the scalable one alone: renders only if Qt's SVG plugin loaded
    return {
        "platform": QGuiApplication.platformName(),
        "desktop_file_name": QGuiApplication.desktopFileName(),
        "application_name": app.applicationName(),
        "window_title": window.windowTitle(),
        "icon_sizes": sorted(s.width() for s in icon.availableSizes()),
        "icon_renders": not icon.pixmap(QSize(64, 64)).isNull(),
        "svg_renders": not svg.pixmap(QSize(96, 96)).isNull(),
        "stylesheet_chars": len(app.styleSheet()),
        "stylesheet_is_shipped": bool(app.styleSheet()) and app.styleSheet() == resources.stylesheet(),
        "assets_folder": str(resources.root()),
    }


def write(path: str, app: QApplication, window: QWidget) -> None:
    Path(path).write_text(json.dumps(facts(app, window), indent=1), "utf-8")
