"""`precis search QUERY [--json]`: the full-text index the window's search uses, from the terminal."""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from typing import TYPE_CHECKING, Any

from desktop.cli.common import open_for_command
from desktop.cli.terminal_text import dumps, neutralise

if TYPE_CHECKING:
    from desktop.engine.history.search import SearchHit

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
        print(dumps([h.to_json() for h in hits], indent=2))
        return 0
    if not hits:
        print(f"precis: no results for {query!r}", file=sys.stderr)
        return 0
    bold, plain = ("\033[1m", "\033[0m") if sys.stdout is not None and sys.stdout.isatty() else ("[", "]")
    for h in hits:
        when = _dt.datetime.fromtimestamp(h.created_at).strftime("%Y-%m-%d")
        where = f"#{h.message_id}" if h.kind == "message" else f"summary {h.compaction_id}"
        print(f"{h.session_id:>5}  {where:<12} {when}  {neutralise(h.session_title)}")
        print(f"       {neutralise(h.role)}: {_snippet(h, bold, plain)}")
    return 0


def _snippet(hit: SearchHit, start: str, end: str) -> str:
    """The snippet on one line, its text shown inert and its matches between ``start`` and ``end`` (the bold
    this module writes itself is the one sequence that reaches the terminal)."""
    return "".join(
        f"{start}{shown}{end}" if matched else shown
        for text, matched in hit.parts()
        if (shown := neutralise(text.replace("\r\n", " ").replace("\n", " ")))
    )
