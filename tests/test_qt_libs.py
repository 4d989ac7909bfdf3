"""The system libraries Qt's platform plugins need: packaging/qt_libs.py's probe, and the real window under Xvfb."""

from __future__ import annotations

import importlib.util
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("qt_libs", ROOT / "packaging" / "qt_libs.py")
assert _spec and _spec.loader
qt_libs = importlib.util.module_from_spec(_spec)
sys.modules["qt_libs"] = qt_libs  # dataclasses resolve annotations through sys.modules
_spec.loader.exec_module(qt_libs)

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Qt's xcb plugin is Linux-only")

# What `ldd libqxcb.so` printed on a fresh Debian 12 where `packaging/dev.sh app` aborted.
FRESH_DEBIAN_LDD = """\
\tlinux-vdso.so.1 (0x00007ffc1b5f1000)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/plugins/platforms/../../lib/libQt6XcbQpa.so.6 (0x00007f2a0e800000)
\tlibxcb-cursor.so.0 => /lib/x86_64-linux-gnu/libxcb-cursor.so.0 (0x00007f2a0e7f0000)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxkbcommon-x11.so.0 => /lib/x86_64-linux-gnu/libxkbcommon-x11.so.0 (0x00007f2a0e7e0000)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibX11-xcb.so.1 => not found
\tlibfoo-unknown.so.3 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2a0d600000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f2a0ea40000)
"""

QT_DEBUG_PLUGINS_OUTPUT = """\
qt.core.library: "/venv/PySide6/Qt/plugins/platforms/libqxcb.so" cannot load: Cannot load library \
/venv/PySide6/Qt/plugins/platforms/libqxcb.so: (libxcb-icccm.so.4: cannot open shared object file: \
No such file or directory)
qt.qpa.plugin: From 6.5.0, xcb-cursor0 or libxcb-cursor0 is needed to load the Qt xcb platform plugin.
qt.qpa.plugin: Could not load the Qt platform plugin "xcb" in "" even though it was found.
"""


def test_not_found_lines_of_ldd_become_debian_packages():
    sonames = qt_libs.parse_ldd(FRESH_DEBIAN_LDD)
    assert sonames == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libX11-xcb.so.1", "libfoo-unknown.so.3"]
    packages, unmapped = qt_libs.packages_for(sonames)
    assert packages == ["libxcb-icccm4", "libxcb-keysyms1", "libx11-xcb1"]
    assert unmapped == ["libfoo-unknown.so.3"]
    assert qt_libs.parse_ldd("\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x1)\n") == []


def test_qt_plugin_debug_output_names_the_library_it_could_not_open():
    assert qt_libs.parse_dlopen_errors(QT_DEBUG_PLUGINS_OUTPUT) == ["libxcb-icccm.so.4"]


def test_every_library_the_xcb_plugin_needs_maps_to_a_package():
    wanted = {
        "libxcb-icccm4",
        "libxcb-keysyms1",
        "libxcb-image0",
        "libxcb-render-util0",
        "libxcb-shape0",
        "libxcb-randr0",
        "libxcb-xkb1",
        "libxkbcommon-x11-0",
        "libxcb-cursor0",
        "libx11-xcb1",
    }
    assert wanted <= set(qt_libs.SONAME_PACKAGES.values())
    # dev.sh installs its own list too: it must name the same packages.
    dev_sh = (ROOT / "packaging" / "dev.sh").read_text("utf-8")
    assert all(name in dev_sh.split() for name in wanted)


@linux_only
def test_xcb_and_offscreen_plugins_find_all_their_libraries_on_this_machine():
    """packaging/dev.sh installs them; after it ran, ldd finds every library the window loads."""
    qt = qt_libs.qt_dir()
    assert qt is not None
    files = qt_libs.plugin_files(qt)
    assert {p.name for p in files} >= {"libqxcb.so", "libqoffscreen.so", "libQt6Gui.so.6"}
    for path in files:
        out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=False).stdout
        assert "not found" not in out, (
            f"{path.name}: {qt_libs.parse_ldd(out)} (run packaging/dev.sh test as root)"
        )


@linux_only
def test_the_probe_run_as_a_script_reports_nothing_missing():
    res = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "qt_libs.py"), "--no-display"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (res.returncode, res.stdout.strip()) == (0, ""), res.stderr


def _start_xvfb():
    """Xvfb on a display it picks itself (-displayfd), so parallel runs never collide; (process, ":N")."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        print("Xvfb is not installed and packaging/dev.sh could not install it (not root, or no apt-get)")
        pytest.skip("Xvfb is not installed and packaging/dev.sh could not install it")
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        [xvfb, "-displayfd", str(write_fd), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    os.close(write_fd)
    number = b""
    deadline = time.monotonic() + 30
    try:
        while not number.endswith(b"\n") and time.monotonic() < deadline:
            ready, _, _ = select.select([read_fd], [], [], 0.5)
            if ready:
                chunk = os.read(read_fd, 16)
                if not chunk:
                    break
                number += chunk
    finally:
        os.close(read_fd)
    if not number.strip():
        proc.kill()
        _, err = proc.communicate(timeout=10)
        pytest.fail(f"Xvfb did not start: {err.decode(errors='replace')[-2000:]}")
    return proc, f":{number.decode().strip()}"


@linux_only
def test_the_window_starts_and_quits_under_xvfb_on_the_xcb_platform(tmp_path):
    server, display = _start_xvfb()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("QT_", "WAYLAND_"))}
        env.update(
            DISPLAY=display,
            QT_QPA_PLATFORM="xcb",
            QT_API="pyside6",
            PRECIS_QUIT_AFTER="2",
            PRECIS_HOME=str(tmp_path / "home"),
            PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        )
        res = subprocess.run(
            [sys.executable, "-m", "desktop"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
    assert "Could not load the Qt platform plugin" not in res.stderr, res.stderr[-3000:]
    assert "running offscreen" not in res.stderr
    assert res.returncode == 0, res.stderr[-3000:]
