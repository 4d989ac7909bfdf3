"""`precis recall SESSION QUERY [--json]`: what the model's recall tool finds in one chat's own history, from the
terminal (best first, each hit with its message id, the words around the match and the message's text).

Wired from ``desktop.cli.main``'s parser; this module never imports it back.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from desktop.cli.terminal_text import dumps, neutralise

DEFAULT_LIMIT = 10
TEXT_CHARS = 4_000  # of each hit's message, in --json


def add_recall_command(sub: Any) -> None:
    recall = sub.add_parser("recall", help="search one chat's own history, the summarised part included")
    recall.add_argument("session", type=int, help="the session id (see `precis sessions`)")
    recall.add_argument(
        "query", nargs="+", help="words or a question; any word may match, best matches first"
    )
    recall.add_argument("--json", action="store_true")
    recall.add_argument(
        "--project",
        action="store_true",
        help="search the chat's project instead: its knowledge and its other chats (as the model's recall does)",
    )
    recall.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, help=f"at most this many hits ({DEFAULT_LIMIT})"
    )


async def _project_recall(ctx: Any, args: argparse.Namespace, query: str) -> int:
    session = await ctx.store.get_session(args.session)
    if session.project_id is None:
        print(f"precis: error: session {args.session} belongs to no project", file=sys.stderr)
        return 1
    await ctx.engine.load()
    hits = await ctx.engine.projects.search(session.project_id, query, max(1, args.limit), args.session)
    if args.json:
        print(dumps([h.to_json() for h in hits], indent=2))
        return 0
    if not hits:
        print(f"precis: nothing in the project of session {args.session} matches {query!r}", file=sys.stderr)
        return 0
    for h in hits:
        where = f"knowledge {h.title}" if h.source == "knowledge" else f"chat {h.session_id} #{h.message_id}"
        print(neutralise(f"{where:<24} " + " ".join(h.snippet.split())))
    return 0


async def cmd_recall(args: argparse.Namespace) -> int:
    from desktop.runtime import open_runtime
    from desktop.tools.recall import message_text

    query = " ".join(args.query)
    async with open_runtime(background=False, readonly=True) as ctx:
        if args.session < 1 or await ctx.store.get_session(args.session) is None:
            print(f"precis: error: no session with id {args.session}", file=sys.stderr)
            return 1
        if args.project:
            return await _project_recall(ctx, args, query)
        hits = await ctx.store.recall(args.session, query, max(1, args.limit))
        messages = {m.id: m for m in await ctx.store.recall_read(args.session, [h.message_id for h in hits])}
    if args.json:
        rows = []
        for h in hits:
            text = message_text(messages[h.message_id]) if h.message_id in messages else ""
            cut = text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS] + "…"
            rows.append({**h.to_json(), "text": cut})
        print(dumps(rows, indent=2))
        return 0
    if not hits:
        print(f"precis: nothing in session {args.session} matches {query!r}", file=sys.stderr)
        return 0
    for h in hits:
        print(neutralise(f"#{h.message_id:<7} {h.role:<9} " + " ".join(h.snippet.split())))
    return 0
