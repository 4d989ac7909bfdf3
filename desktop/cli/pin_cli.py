"""`precis pin SESSION [MESSAGE] [--text PART] [--remove] [--json]`: pin a message (or a part of it) so it stays
verbatim beside every summary, unpin it, or list the chat's pins (no MESSAGE). The same pins as the window's.

Wired from ``desktop.cli.main``'s parser; this module never imports it back.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

EXCERPT = 120


def add_pin_command(sub: Any) -> None:
    pin = sub.add_parser("pin", help="keep a message verbatim beside every summary (or list and remove pins)")
    pin.add_argument("session", type=int, help="the session id (see `precis sessions`)")
    pin.add_argument("message", type=int, nargs="?", help="the message id (see `precis recall`); none: list pins")
    pin.add_argument("--text", help="pin only this part of the message (its exact words)")
    pin.add_argument("--remove", action="store_true", help="unpin the message")
    pin.add_argument("--json", action="store_true")


async def cmd_pin(args: argparse.Namespace) -> int:
    from desktop.engine.compaction import user_pins
    from desktop.runtime import open_runtime

    async with open_runtime(background=False) as ctx:
        store = ctx.store
        if args.session < 1 or await store.get_session(args.session) is None:
            print(f"precis: error: no session with id {args.session}", file=sys.stderr)
            return 1
        pins = user_pins.pins_of(await store.get_state(args.session))
        if args.message is None:
            if args.json:
                print(json.dumps([p.to_json() for p in pins], ensure_ascii=False, indent=2))
            elif not pins:
                print(f"precis: nothing is pinned in session {args.session}", file=sys.stderr)
            for p in pins:
                text = " ".join(p.text.split())
                part = " (part)" if p.part else ""
                print(f"#{p.message_id:<7} {p.role:<9}{part} " + (text[:EXCERPT] + "…" if len(text) > EXCERPT else text))
            return 0
        if args.remove:
            if all(p.message_id != args.message for p in pins):
                print(f"precis: error: message {args.message} is not pinned", file=sys.stderr)
                return 1
            await store.update_state(args.session, {user_pins.STATE_KEY: user_pins.without_pin(pins, args.message)})
            print(f"unpinned #{args.message}")
            return 0
        msg = await store.get_message(args.message)
        try:
            pin = user_pins.make(msg if msg is not None and msg.session_id == args.session else None, args.text,
                                 time.time())
            user_pins.check_room(pins, pin, ctx.settings.pin_budget_tokens)
        except ValueError as exc:
            print(f"precis: error: {exc}", file=sys.stderr)
            return 1
        await store.update_state(args.session, {user_pins.STATE_KEY: user_pins.with_pin(pins, pin)})
    print(json.dumps(pin.to_json(), ensure_ascii=False) if args.json else f"pinned #{pin.message_id}")
    return 0
