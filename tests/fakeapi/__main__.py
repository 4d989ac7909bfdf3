"""``python -m tests.fakeapi --port 8787 --window 200000 [--reply TEXT] [--script FILE.json]``."""

from __future__ import annotations

import argparse
import json
import signal
import threading
from pathlib import Path

from tests.fakeapi.replies import Reply
from tests.fakeapi.server import FakeAnthropic


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakeapi", description="Loopback fake Anthropic API"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8787, help="0 picks a free port")
    parser.add_argument("--window", type=int, default=200_000, help="context window in tokens")
    parser.add_argument("--reply", help="fixed reply text once the script is used up (default: echo)")
    parser.add_argument(
        "--script", type=Path, help="JSON list of replies, or {replies: [...], replay: [[...]]}"
    )
    parser.add_argument("--api-key", default="test-key", help="expected key; '' disables the check")
    parser.add_argument("--min-cache-tokens", type=int, default=1024)
    parser.add_argument("--no-cache-fields", action="store_true", help="omit cache fields from usage")
    parser.add_argument("--reply-tokens", type=int, default=0, help="pad the echo reply to this many tokens")
    parser.add_argument("--verbose", action="store_true", help="log every request line")
    args = parser.parse_args(argv)

    srv = FakeAnthropic(
        args.window,
        host=args.host,
        port=args.port,
        api_key=args.api_key or None,
        min_cache_tokens=args.min_cache_tokens,
        report_cache=not args.no_cache_fields,
        reply_text=args.reply,
        default_reply_tokens=args.reply_tokens,
        verbose=args.verbose,
    )
    if args.script:
        script = json.loads(args.script.read_text(encoding="utf-8"))
        replies = script.get("replies", []) if isinstance(script, dict) else script
        srv.queue_reply(*(Reply.from_json(r) for r in replies))
        if isinstance(script, dict) and script.get("replay"):
            srv.set_replay(script["replay"])

    url = srv.start()
    print(
        f"fake Anthropic API on {url} (window {args.window}, key {args.api_key or '<any>'}); Ctrl-C stops",
        flush=True,
    )
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()
        print(json.dumps(srv.stats.as_dict()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
