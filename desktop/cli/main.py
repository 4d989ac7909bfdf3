"""Command line entry point. Status goes to stderr, only the reply (or requested data) to stdout."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from desktop import __version__
from desktop.cli.common import CliError, neutralised, open_for_command
from desktop.cli.terminal_text import Neutraliser, dumps, json_safe, neutralise
from desktop.cli.wording import cli, word
from desktop.engine.messages import QT_TRANSLATE_NOOP

if TYPE_CHECKING:
    from desktop.engine.config.profiles import Profile
    from desktop.engine.events import EngineEvent
    from desktop.engine.history.storage import Storage
    from desktop.engine.types import SessionInfo
    from desktop.runtime import Runtime


SESSION_SUFFIX = QT_TRANSLATE_NOOP("Cli", "{error} (session {id})")


def _status(text: str) -> None:
    # Status lines quote providers, tools and MCP servers (notices, errors): shown inert, like all of stderr.
    print(f"precis: {neutralise(word(text))}", file=sys.stderr, flush=True)


# Signals that stop a turn cleanly (the partial reply is kept, marked interrupted); a closed terminal is one.
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)

# How the terminal words what a session is doing (the window words it in its own, translatable, table).
ACTIVITY_WORDS = {
    "sending": QT_TRANSLATE_NOOP("Cli", "sending…"),
    "waiting": QT_TRANSLATE_NOOP("Cli", "waiting for the reply…"),
    "compacting": QT_TRANSLATE_NOOP("Cli", "Compressing context…"),
    "recovering": QT_TRANSLATE_NOOP(
        "Cli", "Compressing context (the provider said it was too long), then resending…"
    ),
    "tools": QT_TRANSLATE_NOOP("Cli", "running tools…"),
}


def decode_input(data: bytes) -> str:
    """Standard input as text: UTF-8 (a BOM is dropped), or UTF-16 when it starts with its BOM. Anything else is
    refused before anything is stored, never guessed."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise CliError(
                f"standard input is not valid UTF-16 text (byte {exc.start}); nothing was saved"
            ) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CliError(f"standard input is not UTF-8 text (byte {exc.start}); nothing was saved") from None


# Standard input holds one message: more than this is a mistake (a device, a wrong file), never read whole.
STDIN_LIMIT = 10 * 1024 * 1024


def read_stdin(limit: int = STDIN_LIMIT) -> bytes:
    """Standard input's bytes, at most ``limit``; closed, unreadable or larger is one sentence."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise CliError("standard input is closed; give the message as an argument")
    try:
        data = stream.read(limit + 1)
    except OSError as exc:
        raise CliError(
            f"standard input could not be read ({exc.strerror or exc}); nothing was saved"
        ) from None
    if len(data) > limit:
        raise CliError(
            f"standard input is larger than {limit // (1024 * 1024)} MB; nothing was saved "
            "(attach a long text as a file)"
        )
    return data


def _message_text(message: str) -> str:
    if message == "-":
        text = decode_input(read_stdin())
        if "\x00" in text:
            raise CliError("standard input is not text (it holds NUL characters); nothing was saved")
        return text
    # Python keeps undecodable argument bytes as lone surrogates; storing them would fail later.
    bad = next((i for i, ch in enumerate(message) if "\udc80" <= ch <= "\udcff"), None)
    if bad is not None:
        raise CliError(
            f"the message is not valid text in this terminal's encoding (character {bad}); nothing was saved"
        )
    return message


async def _session_or_fail(store: Storage, session_id: int) -> SessionInfo:
    session = await store.get_session(session_id)
    if session is None:
        raise CliError(f"no session with id {session_id}")
    return session


def _active_profile() -> Profile | None:
    from desktop.engine.config.profiles import find
    from desktop.engine.config.settings import Paths, Settings

    settings = Settings.load(Paths.resolve())
    return find(settings.profiles, settings.profile)


# --- commands ----------------------------------------------------------------------------------------
async def cmd_chat(args: argparse.Namespace) -> int:
    from desktop.engine.config.secrets import load_credentials

    text = _message_text(args.message)
    if args.retry and args.session is None:
        raise CliError(cli(QT_TRANSLATE_NOOP("Cli", "--retry needs --session ID")))
    if args.project and args.session is not None:
        raise CliError("--project starts a new chat; `precis project move ID --to NAME` moves a chat")
    if args.resume and args.session is None:
        raise CliError(cli(QT_TRANSLATE_NOOP("Cli", "--continue needs --session ID")))
    if not (args.retry or args.resume) and not text.strip() and not args.attach:
        raise CliError(cli(QT_TRANSLATE_NOOP("Cli", "empty message")))
    if not load_credentials(profile=_active_profile()).present:  # a keyless local profile needs none
        raise CliError(
            cli(
                QT_TRANSLATE_NOOP(
                    "Cli",
                    "no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or save one in Settings",
                )
            )
        )
    from desktop.cli.tools_cli import chat_toolbox, start_servers

    # Checked before the database is opened: a refused file leaves no empty new chat behind.
    attachments = [_attachment(Path(p)) for p in args.attach]
    async with open_for_command(args.model, chat_toolbox(args)) as ctx:
        for problem in ctx.settings.problems:
            _status(problem)
        await start_servers(ctx.toolbox, ctx.engine)
        if args.session is not None:
            session = await _session_or_fail(ctx.store, args.session)
            if args.model:
                await ctx.engine.set_chat_model(session.id, args.model)
        else:
            project = None
            if args.project:
                from desktop.engine.projects.library import UnknownProject

                await ctx.engine.load()
                try:
                    project = ctx.engine.projects.named(args.project).id
                except UnknownProject as exc:
                    raise CliError(str(exc)) from None
            session = await _session_or_fail(ctx.store, await ctx.engine.new_session(args.model, project))
            _status(cli(QT_TRANSLATE_NOOP("Cli", "session {id}"), id=session.id))
        if args.retry:
            from desktop.engine.turn.chat import NothingToRetry

            try:
                return await _stream_turn(ctx, session.id, ctx.engine.retry(session.id), raw=args.raw)
            except NothingToRetry as exc:
                raise CliError(cli(SESSION_SUFFIX, error=exc, id=session.id)) from None
        if args.resume:
            from desktop.engine.turn.continuation import NothingToContinue

            try:
                return await _stream_turn(
                    ctx, session.id, ctx.engine.continue_reply(session.id), raw=args.raw
                )
            except NothingToContinue as exc:
                raise CliError(cli(SESSION_SUFFIX, error=exc, id=session.id)) from None
        meta = {"files": [Path(p).name for p in args.attach]} if args.attach else None
        from desktop.engine.turn.chat import MessageTooLong

        try:
            return await _stream_turn(
                ctx, session.id, ctx.engine.send(session.id, text, attachments, meta=meta), raw=args.raw
            )
        except MessageTooLong as exc:  # refused before anything was sent or stored
            raise CliError(cli(SESSION_SUFFIX, error=exc, id=session.id)) from None


def _print_activity(event: EngineEvent, session_id: int | None = None) -> None:
    """Activity and notices go to stderr, one line each."""
    from desktop.engine.events import Notice, StatusChanged

    if session_id is not None and event.session_id != session_id:
        return
    if isinstance(event, StatusChanged) and (words := ACTIVITY_WORDS.get(event.activity)):
        _status(cli(words))
    elif isinstance(event, Notice) and event.level != "info":
        _status(event.text)


def _say_waiting(holder: Any) -> None:
    """Another process runs a reply in this chat: say why nothing happens yet (it may take a while)."""
    _status(
        cli(
            QT_TRANSLATE_NOOP("Cli", "waiting for another Précis process (process {pid}) using this chat…"),
            pid=holder.pid,
        )
    )


async def _stream_turn(ctx: Runtime, session_id: int, start: Any, *, raw: bool = False) -> int:
    """Run one turn, printing the reply to stdout and status to stderr; Ctrl+C stops it cleanly. The reply's
    control characters are shown, not obeyed (``terminal_text``), unless ``raw``."""
    from desktop.engine.events import TextDelta, TurnError

    errors: list[TurnError] = []
    wrote = False
    # One per reply: a sequence cut between two deltas is inert in both halves; a carriage return that ends a
    # delta waits for the next one (a line end or not). Also when stdout is no terminal: see `chat --raw`.
    shown = None if raw else Neutraliser()

    def on_event(event: EngineEvent) -> None:
        nonlocal wrote
        if event.session_id != session_id:
            return
        if isinstance(event, TextDelta):
            sys.stdout.write(event.text if shown is None else shown.feed(event.text))
            sys.stdout.flush()
            wrote = True
        elif isinstance(event, TurnError):
            errors.append(event)
        else:
            _print_activity(event)

    ctx.engine.subscribe(on_event)
    ctx.engine.locks.on_wait = _say_waiting
    loop = asyncio.get_running_loop()
    for sig in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError):  # Windows: Ctrl+C still ends the process
            loop.add_signal_handler(sig, ctx.engine.stop, session_id)
    reply = await start
    if shown is not None:
        sys.stdout.write(shown.finish())
    if wrote:
        sys.stdout.write("\n")
    if errors and errors[-1].kind == "tool_permission":
        raise CliError(
            cli(
                QT_TRANSLATE_NOOP("Cli", "{error}; the turn ended (session {id})"),
                error=errors[-1].message,
                id=session_id,
            )
        )
    if errors:
        if unsaved := errors[-1].detail.get("storage"):
            raise CliError(
                cli(
                    QT_TRANSLATE_NOOP(
                        "Cli",
                        "the reply above could not be saved: {error} (your message is saved in session {id})",
                    ),
                    error=unsaved,
                    id=session_id,
                )
            )
        raise CliError(
            cli(
                QT_TRANSLATE_NOOP(
                    "Cli",
                    "{error} (your message is saved in session {id}; retry with `precis chat --session {id} --retry`)",
                ),
                error=errors[-1].message,
                id=session_id,
            )
        )
    if reply is not None and reply.status == "interrupted":
        _status(cli(QT_TRANSLATE_NOOP("Cli", "stopped; the partial reply is kept")))
        return 130
    from desktop.engine.turn.continuation import is_cut

    if is_cut(reply):  # whole as far as the provider goes, but not finished: a failure, and how to go on
        assert reply is not None
        raise CliError(
            cli(
                QT_TRANSLATE_NOOP(
                    "Cli", "reply cut by {reason}; run `precis chat --session {id} --continue`"
                ),
                reason={"stream_ended": "the provider ending the stream early"}.get(
                    str(reply.meta.get("stop_reason")), str(reply.meta.get("stop_reason"))
                ),
                id=session_id,
            )
        )
    return 0


def _attachment(path: Path) -> dict[str, Any]:
    from desktop.engine.config.files import os_words
    from desktop.engine.history.attachments import prepare

    try:
        return prepare(path)  # images, PDFs, UTF-8 text (a long text needs the window's workspace read tool)
    except Exception as exc:  # noqa: BLE001 - a clear one-line reason, nothing lost
        error = os_words(exc) if isinstance(exc, OSError) else str(exc)  # a failing disk in words, no errno
        raise CliError(
            cli(QT_TRANSLATE_NOOP("Cli", "cannot attach {path}: {error}"), path=str(path), error=error)
        ) from exc


async def cmd_sessions(args: argparse.Namespace) -> int:
    async with open_for_command(readonly=True) as ctx:
        sessions = await ctx.store.list_sessions()
    rows = [
        {
            "id": s.id,
            "title": s.title,
            "model": s.model,
            "messages": s.message_count,
            "last_usage": s.last_usage.to_json() if s.last_usage else None,
            "updated_at": s.updated_at,
        }
        for s in sessions
    ]
    if args.json:
        print(dumps(rows, indent=2))
        return 0
    for r in rows:
        usage = r["last_usage"]
        used = (
            usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
            if usage
            else 0
        )
        print(
            neutralise(  # a title is the first message's words (typed, piped in or imported)
                cli(
                    QT_TRANSLATE_NOOP("Cli", "{id:>5}  {messages:>6} msgs  {used:>8} tok  {title}"),
                    id=r["id"],
                    messages=r["messages"],
                    used=used,
                    title=str(r["title"]),
                )
            )
        )
    return 0


async def cmd_export(args: argparse.Namespace) -> int:
    from desktop.engine.history.export import export_text

    async with open_for_command(readonly=True) as ctx:
        session = await _session_or_fail(ctx.store, args.id)
        messages = await ctx.store.messages(session.id)
        compactions = await ctx.store.compactions(session.id)
    out = export_text(session, messages, compactions, args.format)
    if args.output:
        from desktop.engine.config.files import write_private

        try:
            write_private(Path(args.output), out + "\n")  # an export holds the history: private, like it
        except OSError as exc:
            raise CliError(
                cli(
                    QT_TRANSLATE_NOOP("Cli", "cannot write {path}: {error}"),
                    path=args.output,
                    error=str(exc.strerror or exc),
                )
            ) from None
        _status(cli(QT_TRANSLATE_NOOP("Cli", "wrote {path}"), path=args.output))
    elif args.raw:
        print(out)
    else:  # the history's text shown inert; JSON keeps every character as an escape (--output and --raw: exact)
        print(json_safe(out) if args.format == "json" else neutralise(out))
    return 0


async def cmd_context(args: argparse.Namespace) -> int:
    from desktop.engine.metering.context import context_report

    async with open_for_command(readonly=True) as ctx:
        await _session_or_fail(ctx.store, args.id)
        snap = await ctx.engine.measure(args.id)
    if args.json:
        print(dumps(snap.to_json(), indent=2))
    else:
        print(neutralise(word(context_report(snap))))
    return 0


async def cmd_import_claude_code(args: argparse.Namespace) -> int:
    from desktop.engine.history.importer import ImportFailed, import_claude_code

    async with open_for_command() as ctx:
        try:
            result = await import_claude_code(ctx.store, args.path, args.title)
        except ImportFailed as exc:
            raise CliError(word(exc)) from None
    for line in result.status_lines():
        _status(line)
    print(result.session_id)
    return 0


async def cmd_compact(args: argparse.Namespace) -> int:
    async with open_for_command() as ctx:
        await _session_or_fail(ctx.store, args.id)
        ctx.engine.subscribe(_print_activity)
        outcome = await ctx.engine.compact(args.id, "manual", focus=args.focus)
    if not outcome.ok:
        raise CliError(word(outcome.message))
    print(neutralise(word(outcome.message)))
    return 0


class _Parser(argparse.ArgumentParser):
    """Bad arguments get one line (no usage block) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"precis: error: {message} (see `{self.prog} --help`)\n")


def session_id(text: str) -> int:
    """A session id as SQLite can hold it (a larger number can name no session)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a session id (a whole number)") from None
    if not 1 <= value <= MAX_ID:
        raise argparse.ArgumentTypeError(f"{text[:40]} is not a session id (ids go from 1 to {MAX_ID})")
    return value


MAX_ID = 2**63 - 1


def build_parser() -> argparse.ArgumentParser:
    from desktop.cli.desktop_cli import add_desktop_commands
    from desktop.cli.tools_cli import add_chat_arguments, add_mcp_commands

    parser = _Parser(prog="precis", description="Précis: a chat client for Claude.")
    parser.add_argument("--version", action="version", version=f"precis {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    chat = sub.add_parser("chat", help="send one message and stream the reply")
    group = chat.add_mutually_exclusive_group()
    group.add_argument("--session", type=session_id, help="continue this session")
    group.add_argument("--new", action="store_true", help="start a new session (the default)")
    chat.add_argument("--model", help="model id for this session")
    chat.add_argument(
        "--project",
        metavar="NAME",
        help="start the chat in this project (its instructions, knowledge, defaults)",
    )
    chat.add_argument("--attach", action="append", default=[], metavar="FILE", help="attach an image or PDF")
    chat.add_argument("--retry", action="store_true", help="resend the session's last message (no MESSAGE)")
    chat.add_argument(
        "--continue",
        dest="resume",
        action="store_true",
        help="resume the session's newest reply where the provider cut it short (no MESSAGE)",
    )
    chat.add_argument("message", nargs="?", default="", help="the message; '-' reads standard input")
    # Neutralised by default even when stdout is a pipe or a file: what is piped is often read on a terminal
    # (`| tee`, `| less -R`, a log `cat` later), and a script gets the exact text with one flag.
    chat.add_argument(
        "--raw",
        action="store_true",
        help="write the reply exactly as the model sent it, escape sequences and control characters included "
        "(by default they are shown, e.g. ESC as ^[, never obeyed): for piping into a program, not for a "
        "terminal",
    )
    add_chat_arguments(chat)

    sessions = sub.add_parser("sessions", help="list sessions")
    sessions.add_argument("--json", action="store_true")

    export = sub.add_parser("export", help="export a session")
    export.add_argument("id", type=session_id)
    export.add_argument("--format", choices=("md", "json"), default="md")
    export.add_argument("--output", "-o")
    export.add_argument(
        "--raw",
        action="store_true",
        help="write control characters and escape sequences to stdout as stored (by default they are shown, "
        "e.g. ESC as ^[; --output always writes them as stored)",
    )

    context = sub.add_parser("context", help="show how full a session's context window is")
    context.add_argument("id", type=session_id)
    context.add_argument("--json", action="store_true")

    imp = sub.add_parser("import-claude-code", help="import a Claude Code session (.jsonl) as a new session")
    imp.add_argument(
        "path", help="a Claude Code session file, e.g. ~/.claude/projects/<project>/<session>.jsonl"
    )
    imp.add_argument("--title", help="session title (default: the first prompt)")

    compact = sub.add_parser("compact", help="summarise the older part of a session now")
    compact.add_argument("id", type=session_id)
    compact.add_argument("--focus", help="what the summary should keep in particular")

    add_mcp_commands(sub)
    add_desktop_commands(sub)
    from desktop.cli.search_cli import add_search_command

    add_search_command(sub)
    from desktop.cli.recall_cli import add_recall_command

    add_recall_command(sub)
    from desktop.cli.pin_cli import add_pin_command

    add_pin_command(sub)
    from desktop.cli.project_cli import add_project_command

    add_project_command(sub)

    sub.add_parser("gui", help="open the window (the default)")
    return parser


async def _cmd_mcp(args: argparse.Namespace) -> int:
    from desktop.cli.tools_cli import cmd_mcp

    # It lists what MCP servers and their configuration say (names, tools, errors): shown inert.
    with neutralised("stdout"):
        return await cmd_mcp(args)


async def _cmd_search(args: argparse.Namespace) -> int:
    from desktop.cli.search_cli import cmd_search

    return await cmd_search(args)


async def _cmd_recall(args: argparse.Namespace) -> int:
    from desktop.cli.recall_cli import cmd_recall

    return await cmd_recall(args)


async def _cmd_pin(args: argparse.Namespace) -> int:
    from desktop.cli.pin_cli import cmd_pin

    return await cmd_pin(args)


async def _cmd_project(args: argparse.Namespace) -> int:
    from desktop.cli.project_cli import cmd_project

    return await cmd_project(args)


async def _cmd_install_desktop(args: argparse.Namespace) -> int:
    from desktop.cli.desktop_cli import cmd_install_desktop

    return await cmd_install_desktop(args)


async def _cmd_uninstall_desktop(args: argparse.Namespace) -> int:
    from desktop.cli.desktop_cli import cmd_uninstall_desktop

    return await cmd_uninstall_desktop(args)


COMMANDS = {
    "chat": cmd_chat,
    "sessions": cmd_sessions,
    "export": cmd_export,
    "context": cmd_context,
    "import-claude-code": cmd_import_claude_code,
    "compact": cmd_compact,
    "mcp": _cmd_mcp,
    "search": _cmd_search,
    "recall": _cmd_recall,
    "pin": _cmd_pin,
    "project": _cmd_project,
    "install-desktop": _cmd_install_desktop,
    "uninstall-desktop": _cmd_uninstall_desktop,
}


def _unusable_argument(args: argparse.Namespace) -> str:
    """Why an argument cannot be used as text or as a path ('' when all can): undecodable bytes (kept by
    Python as lone surrogates, which nothing can store or send) or a NUL (which no path or message holds)."""
    for name, value in vars(args).items():
        for text in value if isinstance(value, list) else [value]:
            if not isinstance(text, str):
                continue
            shown = name.replace("_", "-")
            bad = next((i for i, ch in enumerate(text) if "\ud800" <= ch <= "\udfff"), None)
            if bad is not None:
                return (
                    f"the {shown} is not valid text in this terminal's encoding (character {bad}); "
                    "nothing was saved"
                )
            if "\x00" in text:
                return f"the {shown} holds a NUL character; nothing was saved"
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if problem := _unusable_argument(args):
        print(f"precis: error: {problem}", file=sys.stderr)
        return 1
    if args.command in (None, "gui"):
        from desktop.ui.launch import main as window

        return window()
    from desktop.engine.history.session_lock import SessionBusy
    from desktop.engine.history.storage import StorageError

    # Standard error is for a person at a terminal, and what it says quotes providers, tools and MCP servers
    # (errors, a permission prompt's arguments and diff, a server's failure): all of it is shown inert, whichever
    # module prints it. Standard output is each command's (the reply's `--raw`, JSON kept exact as escapes).
    with neutralised("stderr"):
        try:
            return asyncio.run(COMMANDS[args.command](args))
        except (CliError, StorageError, SessionBusy) as exc:
            error = cli(QT_TRANSLATE_NOOP("Cli", "precis: error: {error}"), error=exc)
            print(neutralise(error), file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 130
        except Exception as exc:  # noqa: BLE001 - last resort: one line, the details in the log
            logging.getLogger("desktop.cli").debug("unexpected failure", exc_info=True)
            print(
                f"precis: error: unexpected {type(exc).__name__}: {neutralise(str(exc)[:200])} (a bug in Précis; "
                "please report it)",
                file=sys.stderr,
            )
            return 70
