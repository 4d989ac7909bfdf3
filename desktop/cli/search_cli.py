"""`precis search QUERY [--json]`: the full-text index the window's search uses, from the terminal."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
from typing import Any

from desktop.cli.common import open_for_command

DEFAULT_LIMIT = 50


def add_search_command(sub: Any) -> None:
    search = sub.add_parser("search", help="search every chat's messages, tool results and summaries")
    search.add_argument("query", nargs="+", help="words that must all occur (the last one may be a prefix)")
    search.add_argument("--json", action="store_true")
    search.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, help=f"at most this many hits ({DEFAULT_LIMIT})"
    )


async def cmd_search(args: argparse.Namespace) -> int:
    query = " ".join(args.query)
    async with open_for_command(readonly=True) as ctx:
        hits = await ctx.store.search(query, max(1, args.limit))
    if args.json:
        print(json.dumps([h.to_json() for h in hits], ensure_ascii=False, indent=2))
        return 0
    if not hits:
        print(f"precis: no results for {query!r}", file=sys.stderr)
        return 0
    bold, plain = ("\033[1m", "\033[0m") if sys.stdout is not None and sys.stdout.isatty() else ("[", "]")
    for h in hits:
        when = _dt.datetime.fromtimestamp(h.created_at).strftime("%Y-%m-%d")
        where = f"#{h.message_id}" if h.kind == "message" else f"summary {h.compaction_id}"
        print(f"{h.session_id:>5}  {where:<12} {when}  {h.session_title}")
        print(f"       {h.role}: {h.marked(bold, plain)}".replace("\n", " "))
    return 0
