"""What an installed window actually loaded, written as JSON when ``PRECIS_STARTUP_REPORT`` names a file: the
install checks (tests/test_install.py, packaging/smoke_bundle.py) read it instead of trusting the package."""

from __future__ import annotations

import gc
import json
import os
import sys
from pathlib import Path

from msgspec import Struct
from PySide6.QtCore import QSize
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import QApplication, QWidget

from desktop.ui import gc_pause


class Shipped(Struct, frozen=True):
    """What the package ships, for comparison (desktop.ui.app reads it from desktop.resources)."""

    folder: Path
    svg: Path
    stylesheet: str


def facts(app: QApplication, window: QWidget, shipped: Shipped) -> dict[str, object]:
    icon = window.windowIcon()
    svg = QIcon(str(shipped.svg))  # the scalable one alone: renders only if Qt's SVG plugin loaded
    return {
        "platform": QGuiApplication.platformName(),
        "desktop_file_name": QGuiApplication.desktopFileName(),
        "application_name": app.applicationName(),
        "window_title": window.windowTitle(),
        "icon_sizes": sorted(s.width() for s in icon.availableSizes()),
        "icon_renders": not icon.pixmap(QSize(64, 64)).isNull(),
        "svg_renders": not svg.pixmap(QSize(96, 96)).isNull(),
        "stylesheet_chars": len(app.styleSheet()),
        "stylesheet_is_shipped": bool(app.styleSheet()) and app.styleSheet() == shipped.stylesheet,
        "assets_folder": str(shipped.folder),
        # What the window had to import to show itself (the start-up test checks the heavy stacks wait).
        "packages": sorted({name.partition(".")[0] for name in list(sys.modules)}),
        "desktop_modules": sorted(name for name in list(sys.modules) if name.partition(".")[0] == "desktop"),
        # PySide6 makes a class (and its enums) when it is first read from its module: the ones made so far.
        "qt_classes": qt_classes(),
        # Dialogs are imported where they are opened: none of the app's own should be defined before then.
        "dialog_classes": dialog_classes(),
        # The cyclic collector until the first paint (off from the entry point on; ui/gc_pause.py).
        "gc": {
            "collected_while_off": gc_pause.collected_while_off,
            "frozen": gc.get_freeze_count(),
            "enabled": gc.isenabled(),
        },
        # Last: reading the style makes QStyle's class (and its enums) in Python, which the start itself avoids. The
        # style sheet's style wraps the style in use, its child.
        "styles": [style.metaObject().className() for style in (app.style(), *app.style().children())],
    }


def dialog_classes() -> list[str]:
    """The app's own QDialog subclasses defined so far (module.Class)."""
    from PySide6.QtWidgets import QDialog

    return sorted(
        f"{name}.{attr}"
        for name in list(sys.modules)
        if name.partition(".")[0] == "desktop"
        for attr, value in vars(sys.modules[name]).items()
        if isinstance(value, type) and issubclass(value, QDialog) and value.__module__ == name
    )


def qt_classes() -> list[str]:
    """The PySide6 classes made so far (a module's namespace holds a class once it has been read)."""
    return sorted(
        f"{module.rpartition('.')[2]}.{name}"
        for module in list(sys.modules)
        if module.startswith("PySide6.Qt")
        for name, value in vars(sys.modules[module]).items()
        if isinstance(value, type)
    )


def write(path: str, app: QApplication, window: QWidget, shipped: Shipped) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # private, like every file Précis writes
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(facts(app, window, shipped), indent=1))
