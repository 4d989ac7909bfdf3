"""``precis install-desktop`` / ``uninstall-desktop``: the desktop entry, icons and metainfo for the user."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add_desktop_commands(sub: Any) -> None:
    for name, what in (
        ("install-desktop", "add Précis to the desktop's application menu (this user)"),
        ("uninstall-desktop", "remove what install-desktop added"),
    ):
        cmd = sub.add_parser(name, help=what)
        cmd.add_argument(
            "--data-home", type=Path, metavar="DIR", help="instead of $XDG_DATA_HOME (default ~/.local/share)"
        )


async def cmd_install_desktop(args: argparse.Namespace) -> int:
    from desktop import integration

    written = integration.install(args.data_home)
    for path in written:
        print(path)
    entry = written[0].read_text("utf-8")
    command = next(line[5:] for line in entry.splitlines() if line.startswith("Exec="))
    print(
        f"precis: installed the desktop entry, {len(written) - 2} icons and the metainfo; the menu entry runs "
        f"{command}",
        file=sys.stderr,
    )
    return 0


async def cmd_uninstall_desktop(args: argparse.Namespace) -> int:
    from desktop import integration

    removed = integration.uninstall(args.data_home)
    for path in removed:
        print(path)
    print(
        f"precis: removed {len(removed)} files" if removed else "precis: nothing was installed there",
        file=sys.stderr,
    )
    return 0
