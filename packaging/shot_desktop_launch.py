"""Screenshot of a desktop-installed launch: the wheel built from this tree, installed into a clean venv, whose
``precis install-desktop`` writes into a scratch XDG data folder; then the
entry's own ``Exec=`` line started under a small window manager (IceWM draws the window icon in the title bar
and the task bar), with a chat against the loopback test server. Also prints the X properties the shell
matches the window by (WM_CLASS, the desktop file name, _NET_WM_ICON sizes).

    xvfb-run -a -s "-screen 0 1280x800x24" .venv/bin/python packaging/shot_desktop_launch.py OUT.png
"""

from __future__ import annotations

import configparser
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakeapi import FakeAnthropic  # noqa: E402
from tests.installed import BIN, build_wheel, clean_venv  # noqa: E402


def window_ids() -> list[str]:
    out = subprocess.run(["xprop", "-root", "_NET_CLIENT_LIST"], capture_output=True, text=True).stdout
    return [w.strip() for w in out.split("#", 1)[-1].split(",") if w.strip().startswith("0x")]


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "desktop-launch.png").resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    if not os.environ.get("DISPLAY") or not shutil.which("icewm"):
        print("shot_desktop_launch: needs DISPLAY (xvfb-run) and icewm", file=sys.stderr)
        return 2
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeAnthropic(reply_text="Installed from the wheel, started from its desktop entry.") as server,
    ):
        work = Path(tmp)
        installed = clean_venv(build_wheel(ROOT, work / "dist"), work / "venv") / BIN
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PRECIS_"))}
        env.update(
            XDG_DATA_HOME=str(work / "share"),
            PRECIS_HOME=str(work / "home"),
            QT_QPA_PLATFORM="xcb",
            ANTHROPIC_BASE_URL=server.base_url,
            ANTHROPIC_API_KEY="test-key",
            XDG_DATA_DIRS=f"{work / 'share'}:/usr/share",
        )
        subprocess.run(
            [str(installed / "precis"), "install-desktop"], env=env, check=True, stdout=subprocess.DEVNULL
        )
        subprocess.run(
            [str(installed / "precis"), "chat", "--new", "Where does this window's icon come from?"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        entry = configparser.ConfigParser(interpolation=None)
        entry.read(work / "share" / "applications" / "io.github.precis.Precis.desktop", encoding="utf-8")
        command = shlex.split(entry["Desktop Entry"]["Exec"])
        wm = subprocess.Popen(["icewm"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2)
        app = subprocess.Popen(
            command,
            env={**env, "PRECIS_QUIT_AFTER": "30"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.time() + 60
            while time.time() < deadline and not window_ids():
                time.sleep(0.5)
            time.sleep(6)  # the session list and the chat load
            for wid in window_ids():
                props = subprocess.run(
                    [
                        "xprop",
                        "-id",
                        wid,
                        "WM_CLASS",
                        "_GTK_APPLICATION_ID",
                        "_KDE_NET_WM_DESKTOP_FILE",
                        "_NET_WM_NAME",
                    ],
                    capture_output=True,
                    text=True,
                ).stdout
                icon = subprocess.run(
                    ["xprop", "-id", wid, "_NET_WM_ICON"], capture_output=True, text=True
                ).stdout
                sizes = [line.split("width")[0] for line in icon.splitlines() if "Icon (" in line]
                print(
                    f"window {wid}: {props.strip()}\n  _NET_WM_ICON: {len(sizes)} images {' '.join(s.strip() for s in sizes)}"
                )
            print(f"Exec={entry['Desktop Entry']['Exec']}")
            subprocess.run(["import", "-window", "root", str(out)], check=True)
            # The title bar's corner, enlarged: the icon the window manager took from the window.
            subprocess.run(
                [
                    "/usr/bin/convert",
                    str(out),
                    "-crop",
                    "360x40+0+0",
                    "-filter",
                    "point",
                    "-resize",
                    "300%",
                    str(out.with_name(out.stem + "-titlebar.png")),
                ],
                check=True,
            )
            subprocess.run(
                [
                    "/usr/bin/convert",
                    str(out),
                    "-crop",
                    "300x30+0+770",
                    "-filter",
                    "point",
                    "-resize",
                    "300%",
                    str(out.with_name(out.stem + "-taskbar.png")),
                ],
                check=True,
            )
        finally:
            app.terminate()
            app.wait(30)
            wm.terminate()
            wm.wait(10)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
