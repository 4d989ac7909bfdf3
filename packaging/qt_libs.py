"""Which shared libraries Qt's platform plugins cannot find, named as Debian/Ubuntu packages.

Importing PySide6.QtWidgets loads no platform plugin, so it proves nothing about whether the window can open:
the xcb plugin (a desktop), the offscreen one (tests) and libQt6Gui are only loaded when a QApplication is
built. This asks ``ldd`` about exactly those files and, when DISPLAY is set, builds a QApplication on xcb in
a child process and reads Qt's own plugin-loading report.

Run it with the Python that has PySide6 (packaging/dev.sh uses .venv's):

    python packaging/qt_libs.py [--no-display]

stdout: the missing Debian package names on one line, space separated (empty when nothing is missing).
stderr: missing libraries that map to no known package, and why the check could not run.
Exit status: 0 nothing missing (or not Linux), 1 something is missing, 2 the check could not run.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# Soname -> Debian 12 package (Ubuntu 22.04+ uses the same names; the 64-bit-time renames of Debian 13 and
# Ubuntu 24.04, e.g. libglib2.0-0t64, provide these names, so apt-get still resolves them).
SONAME_PACKAGES: dict[str, str] = {
    # The xcb platform plugin (libqxcb.so and libQt6XcbQpa).
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxcb-glx.so.0": "libxcb-glx0",
    "libxcb-dri2.so.0": "libxcb-dri2-0",
    "libxcb-dri3.so.0": "libxcb-dri3-0",
    "libxcb-present.so.0": "libxcb-present0",
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libXau.so.6": "libxau6",
    "libXdmcp.so.6": "libxdmcp6",
    "libXext.so.6": "libxext6",
    "libXrender.so.1": "libxrender1",
    "libXi.so.6": "libxi6",
    "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    # Wayland.
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
    "libwayland-egl.so.1": "libwayland-egl1",
    # libQt6Gui and what every platform needs.
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libGLX.so.0": "libglx0",
    "libOpenGL.so.0": "libopengl0",
    "libGLdispatch.so.0": "libglvnd0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libpng16.so.16": "libpng16-16",
    "libharfbuzz.so.0": "libharfbuzz0b",
    "libbrotlicommon.so.1": "libbrotli1",
    "libbrotlidec.so.1": "libbrotli1",
    "libexpat.so.1": "libexpat1",
    "libdbus-1.so.3": "libdbus-1-3",
    "libsystemd.so.0": "libsystemd0",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libgobject-2.0.so.0": "libglib2.0-0",
    "libgio-2.0.so.0": "libglib2.0-0",
    "libpcre2-8.so.0": "libpcre2-8-0",
    "libffi.so.8": "libffi8",
    "libbsd.so.0": "libbsd0",
    "libmd.so.0": "libmd0",
    "libcap.so.2": "libcap2",
    "libgcrypt.so.20": "libgcrypt20",
    "libgpg-error.so.0": "libgpg-error0",
    "liblz4.so.1": "liblz4-1",
    "liblzma.so.5": "liblzma5",
    "libzstd.so.1": "libzstd1",
    "libz.so.1": "zlib1g",
    "libstdc++.so.6": "libstdc++6",
    "libgcc_s.so.1": "libgcc-s1",
    "libc.so.6": "libc6",
    "libm.so.6": "libc6",
    "libdl.so.2": "libc6",
    "libpthread.so.0": "libc6",
}

# `ldd` prints "\tlibxcb-icccm.so.4 => not found" for each library it cannot resolve.
_LDD_NOT_FOUND = re.compile(r"^\s*(\S+)\s*=>\s*not found\s*$", re.MULTILINE)
# Qt (with QT_DEBUG_PLUGINS=1) and the dynamic loader: "libxcb-icccm.so.4: cannot open shared object file".
_DLOPEN_MISSING = re.compile(r"([\w.+-]+\.so(?:\.\d+)*): cannot open shared object file")
PLUGIN_FAILURE = "Could not load the Qt platform plugin"


@dataclass(slots=True)
class Report:
    sonames: list[str] = field(default_factory=list)  # libraries nothing on the system provides
    packages: list[str] = field(default_factory=list)  # Debian packages that provide them
    unmapped: list[str] = field(default_factory=list)  # missing libraries no known package provides
    errors: list[str] = field(default_factory=list)  # why (part of) the check could not run
    checked: bool = True  # False: PySide6 or its plugins were not found, nothing was checked

    @property
    def ok(self) -> bool:
        return not self.sonames


def parse_ldd(text: str) -> list[str]:
    """The sonames an ``ldd`` report marks "not found", in order, without repeats."""
    return _unique(_LDD_NOT_FOUND.findall(text))


def parse_dlopen_errors(text: str) -> list[str]:
    """The sonames that a loader error message (Qt's plugin debug output) says it could not open."""
    return _unique(_DLOPEN_MISSING.findall(text))


def packages_for(sonames: Iterable[str]) -> tuple[list[str], list[str]]:
    """(Debian packages providing ``sonames``, sonames no known package provides), each without repeats."""
    packages: list[str] = []
    unmapped: list[str] = []
    for soname in sonames:
        package = SONAME_PACKAGES.get(soname)
        if package is None:
            unmapped.append(soname)
        elif package not in packages:
            packages.append(package)
    return packages, _unique(unmapped)


def qt_dir() -> Path | None:
    """PySide6's bundled Qt folder, found without importing PySide6 (which would load Qt itself)."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "Qt"
        if candidate.is_dir():
            return candidate
    return None


def plugin_files(qt: Path, *, wayland: bool = False) -> list[Path]:
    """The files a window loads: the xcb and offscreen platform plugins, libQt6Gui and libQt6Widgets."""
    names = [
        qt / "plugins" / "platforms" / "libqxcb.so",
        qt / "plugins" / "platforms" / "libqoffscreen.so",
        qt / "lib" / "libQt6Gui.so.6",
        qt / "lib" / "libQt6Widgets.so.6",
    ]
    if wayland:
        names.append(qt / "plugins" / "platforms" / "libqwayland.so")
    return [p for p in names if p.exists()]


def ldd_missing(files: Sequence[Path], errors: list[str] | None = None) -> list[str]:
    """Sonames ``ldd`` cannot resolve for any of ``files``."""
    ldd = shutil.which("ldd")
    if ldd is None:
        if errors is not None:
            errors.append("ldd is not installed, so the Qt plugins' libraries were not checked")
        return []
    found: list[str] = []
    for path in files:
        res = subprocess.run([ldd, str(path)], capture_output=True, text=True, timeout=60, check=False)
        found.extend(parse_ldd(res.stdout + res.stderr))
    return _unique(found)


_XCB_PROBE = (
    "import sys\n"
    "from PySide6.QtWidgets import QApplication\n"
    "app = QApplication([sys.argv[0], '-platform', 'xcb'])\n"
    "print('qt-platform:', app.platformName())\n"
)


def xcb_missing(
    python: str = sys.executable, timeout: float = 30.0, errors: list[str] | None = None
) -> list[str]:
    """Build a QApplication on xcb in a child process (DISPLAY must be set); the sonames Qt could not open.

    A display that does not answer is not a missing library: it is reported in ``errors`` only.
    """
    env = dict(os.environ, QT_QPA_PLATFORM="xcb", QT_DEBUG_PLUGINS="1")
    try:
        res = subprocess.run(
            [python, "-c", _XCB_PROBE], capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        if errors is not None:
            errors.append(f"building a QApplication on xcb did not finish in {timeout:.0f}s")
        return []
    if res.returncode == 0:
        return []
    output = res.stdout + res.stderr
    found = parse_dlopen_errors(output)
    if not found and errors is not None:
        lines = [
            line for line in output.splitlines() if PLUGIN_FAILURE in line or "could not connect" in line
        ]
        errors.append(
            "Qt could not start on the xcb platform: "
            + (lines[0].strip() if lines else f"exit status {res.returncode}")
        )
    return found


def probe(*, check_display: bool = True, env: dict[str, str] | None = None) -> Report:
    """Everything the window would fail to load, on this machine, as sonames and Debian packages."""
    env = os.environ if env is None else env
    report = Report()
    if not sys.platform.startswith("linux"):
        return report
    qt = qt_dir()
    if qt is None:
        report.errors.append(f"PySide6 is not installed for {sys.executable}")
        report.checked = False
        return report
    files = plugin_files(qt, wayland=bool(env.get("WAYLAND_DISPLAY")))
    if not files:
        report.errors.append(f"no Qt platform plugins under {qt}")
        report.checked = False
        return report
    sonames = ldd_missing(files, report.errors)
    if not sonames and check_display and env.get("DISPLAY"):
        sonames = xcb_missing(errors=report.errors)
    report.sonames = sonames
    report.packages, report.unmapped = packages_for(sonames)
    return report


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--no-display",
        action="store_true",
        help="only ask ldd; do not build a QApplication on xcb even when DISPLAY is set",
    )
    args = parser.parse_args(argv)
    report = probe(check_display=not args.no_display)
    print(" ".join(report.packages))
    for soname in report.unmapped:
        print(f"qt_libs: {soname} is missing and no known Debian package provides it", file=sys.stderr)
    for error in report.errors:
        print(f"qt_libs: {error}", file=sys.stderr)
    if not report.ok:
        return 1
    return 0 if report.checked else 2


if __name__ == "__main__":
    raise SystemExit(main())
