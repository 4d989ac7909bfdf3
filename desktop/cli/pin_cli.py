"""`precis pin SESSION [MESSAGE] [--text PART] [--remove] [--json]`: pin a message (or a part of it) so it stays
verbatim beside every summary, unpin it, or list the chat's pins (no MESSAGE). The same pins as the window's.

Wired from ``desktop.cli.main``'s parser; this module never imports it back.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from desktop.cli.terminal_text import dumps, neutralise

EXCERPT = 120


def add_pin_command(sub: Any) -> None:
    pin = sub.add_parser("pin", help="keep a message verbatim beside every summary (or list and remove pins)")
    pin.add_argument("session", type=int, help="the session id (see `precis sessions`)")
    pin.add_argument(
        "message", type=int, nargs="?", help="the message id (see `precis recall`); none: list pins"
    )
    pin.add_argument("--text", help="pin only this part of the message (its exact words)")
    pin.add_argument("--remove", action="store_true", help="unpin the message")
    pin.add_argument("--json", action="store_true")


async def cmd_pin(args: argparse.Namespace) -> int:
    from desktop.runtime import open_runtime

    # Through the engine, as the window does: the chat's conversation writes its own pins and checks their room.
    async with open_runtime(background=False) as ctx:
        engine = ctx.engine
        if args.session < 1 or await ctx.store.get_session(args.session) is None:
            print(f"precis: error: no session with id {args.session}", file=sys.stderr)
            return 1
        if args.message is None:
            pins = await engine.pins(args.session)
            if args.json:
                print(dumps([p.to_json() for p in pins], indent=2))
            elif not pins:
                print(f"precis: nothing is pinned in session {args.session}", file=sys.stderr)
            for p in pins:
                text = " ".join(p.text.split())
                part = " (part)" if p.part else ""
                print(
                    neutralise(  # a message's own words
                        f"#{p.message_id:<7} {p.role:<9}{part} "
                        + (text[:EXCERPT] + "…" if len(text) > EXCERPT else text)
                    )
                )
            return 0
        if args.remove:
            if not await engine.unpin_message(args.session, args.message):
                print(f"precis: error: message {args.message} is not pinned", file=sys.stderr)
                return 1
            print(f"unpinned #{args.message}")
            return 0
        try:
            pin = await engine.pin_message(args.session, args.message, args.text)
        except ValueError as exc:
            print(f"precis: error: {neutralise(str(exc))}", file=sys.stderr)
            return 1
    print(dumps(pin.to_json()) if args.json else f"pinned #{pin.message_id}")
    return 0
