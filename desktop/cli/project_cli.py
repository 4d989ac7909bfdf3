"""`precis project …`: projects from the terminal — create, list, show, edit, add and remove knowledge, move a chat
in or out, delete (its chats kept unless --delete-chats). `precis chat --project NAME` starts a chat in one.

Wired from ``desktop.cli.main``'s parser; this module never imports it back.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from desktop.cli.terminal_text import dumps, neutralise


class ProjectError(Exception):
    """A project command that cannot be done, in one sentence."""


def add_project_command(sub: Any) -> None:
    project = sub.add_parser("project", help="projects: chats grouped with shared instructions and knowledge")
    verbs = project.add_subparsers(dest="verb", required=True)

    create = verbs.add_parser("create", help="make a project")
    create.add_argument("name")
    _defaults(create)

    edit = verbs.add_parser("edit", help="change a project's name, instructions or a new chat's defaults")
    edit.add_argument("name", help="the project's name or id")
    edit.add_argument("--rename", metavar="NAME", help="its new name")
    edit.add_argument("--recall", choices=("on", "off"), help="recall reaches its knowledge and other chats")
    _defaults(edit)

    listed = verbs.add_parser("list", help="list projects")
    listed.add_argument("--json", action="store_true")

    show = verbs.add_parser("show", help="a project's instructions, defaults, knowledge and chats")
    show.add_argument("name", help="the project's name or id")
    show.add_argument("--json", action="store_true")

    add = verbs.add_parser("add", help="add knowledge: text files, or --text")
    add.add_argument("name", help="the project's name or id")
    add.add_argument("files", nargs="*", metavar="FILE", help="UTF-8 text files (their text as it is now)")
    add.add_argument("--text", help="text to keep as knowledge ('-' reads standard input)")
    add.add_argument("--title", default="Pasted text", help="the name of --text's knowledge")

    remove = verbs.add_parser("remove", help="remove knowledge by its name or id")
    remove.add_argument("name", help="the project's name or id")
    remove.add_argument(
        "knowledge", nargs="+", help="names or ids of its knowledge (see `precis project show`)"
    )

    move = verbs.add_parser("move", help="move a chat into a project, or out of any with --none")
    move.add_argument("session", type=int, help="the session id (see `precis sessions`)")
    where = move.add_mutually_exclusive_group(required=True)
    where.add_argument("--to", metavar="PROJECT", help="the project's name or id")
    where.add_argument("--none", action="store_true", help="out of any project")

    delete = verbs.add_parser("delete", help="delete a project (its chats stay, out of any project)")
    delete.add_argument("name", help="the project's name or id")
    chats = delete.add_mutually_exclusive_group()
    chats.add_argument("--keep-chats", action="store_true", help="keep its chats (the default)")
    chats.add_argument("--delete-chats", action="store_true", help="delete its chats too")


def _defaults(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--instructions", help="instructions every chat of the project keeps to ('-': stdin)")
    parser.add_argument("--profile", help="a new chat's provider profile")
    parser.add_argument("--model", help="a new chat's model")
    parser.add_argument("--workspace", metavar="FOLDER", help="a new chat's workspace folder")


def _stdin_or(value: str | None) -> str | None:
    return sys.stdin.read() if value == "-" else value


async def cmd_project(args: argparse.Namespace) -> int:
    from desktop.engine.history.attachments import AttachmentRefused
    from desktop.engine.projects.library import UnknownProject
    from desktop.runtime import open_runtime

    readonly = args.verb in ("list", "show")
    async with open_runtime(background=False, readonly=readonly) as ctx:
        engine = ctx.engine
        await engine.load()
        try:
            return await _run(args, engine)
        except (UnknownProject, ProjectError, AttachmentRefused, ValueError) as exc:
            print(neutralise(f"precis: error: {exc}"), file=sys.stderr)
            return 1


async def _run(args: argparse.Namespace, engine: Any) -> int:
    projects = engine.projects
    verb = args.verb
    if verb == "create":
        project = await projects.create(
            args.name, _stdin_or(args.instructions) or "", args.profile, args.model, _folder(args.workspace)
        )
        print(neutralise(f"project {project.id}: {project.name}"))
        return 0
    if verb == "list":
        listed = projects.all()
        if args.json:
            print(dumps([_summary(p, projects) for p in listed], indent=2))
        elif not listed:
            print("precis: no projects yet (`precis project create NAME`)", file=sys.stderr)
        for p in [] if args.json else listed:
            pieces = len(projects.knowledge(p.id))
            print(neutralise(f"{p.id:>4}  {p.name}  ({p.chats} chat(s), {pieces} piece(s) of knowledge)"))
        return 0
    project = projects.named(args.to if verb == "move" and args.to else getattr(args, "name", "") or "")
    if verb == "move" and args.none:
        project = None
    if verb == "show":
        return await _show(args, engine, project)
    if verb == "edit":
        changes: dict[str, str | bool | None] = {}
        for field, value in (
            ("name", args.rename),
            ("instructions", _stdin_or(args.instructions)),
            ("profile", args.profile),
            ("model", args.model),
            ("workspace", _folder(args.workspace)),
        ):
            if value is not None:
                changes[field] = value or None if field in ("profile", "model", "workspace") else value
        if args.recall is not None:
            changes["recall"] = args.recall == "on"
        if not changes:
            raise ProjectError("nothing to change: give --rename, --instructions, --profile, --model, "
                               "--workspace or --recall")  # fmt: skip
        await projects.update(project.id, **changes)
        print(neutralise(f"project {project.id} changed: {', '.join(sorted(changes))}"))
        return 0
    if verb == "add":
        if not args.files and args.text is None:
            raise ProjectError("nothing to add: give text files, or --text")
        for path in args.files:
            piece = await projects.add_file(project.id, path)
            print(neutralise(f"added {piece.name} ({len(piece.text):,} characters) as knowledge {piece.id}"))
        if args.text is not None:
            piece = await projects.add_text(project.id, args.title, _stdin_or(args.text) or "")
            print(neutralise(f"added {piece.name} ({len(piece.text):,} characters) as knowledge {piece.id}"))
        return 0
    if verb == "remove":
        for name in args.knowledge:
            piece = await projects.remove(project.id, name)
            print(neutralise(f"removed {piece.name}"))
        return 0
    if verb == "move":
        if await engine.library.session(args.session) is None:
            raise ProjectError(f"no session with id {args.session}")
        await projects.move_chat(args.session, project.id if project else None)
        print(neutralise(f"session {args.session} is now in {project.name if project else 'no project'}"))
        return 0
    if verb == "delete":
        chats = "delete" if args.delete_chats else "keep"
        deleted = await projects.delete(project.id, chats)
        kept = "" if chats == "delete" else f"; its {project.chats} chat(s) kept, out of any project"
        gone = f"; {len(deleted)} chat(s) deleted" if deleted else ""
        print(neutralise(f"deleted project {project.name}{kept}{gone}"))
        return 0
    raise ProjectError(f"unknown project command {verb!r}")


def _folder(value: str | None) -> str | None:
    if value is None or value == "":
        return value
    from pathlib import Path

    path = Path(value).expanduser().resolve()
    if not path.is_dir():
        raise ProjectError(f"{value} is not a folder")
    return str(path)


def _summary(project: Any, projects: Any) -> dict[str, object]:
    return {
        "id": project.id,
        "name": project.name,
        "chats": project.chats,
        "knowledge": len(projects.knowledge(project.id)),
        "profile": project.profile,
        "model": project.model,
        "workspace": project.workspace,
        "recall": project.recall,
    }


async def _show(args: argparse.Namespace, engine: Any, project: Any) -> int:
    """Instructions, defaults, each piece of knowledge (inlined in requests, or searchable through recall, on the
    model a new chat of the project takes) and the chats."""
    model = project.model or engine.settings.model
    info = engine.catalog.info(model)
    context = engine.projects.context(project.id, info.window, info.family)
    chats = [s for s in await engine.library.sessions() if s.project_id == project.id]
    pieces = engine.projects.knowledge(project.id)
    inlined = set(context.inlined if context else ())
    if args.json:
        print(
            dumps(
                {
                    **_summary(project, engine.projects),
                    "instructions": project.instructions,
                    "knowledge": [
                        {
                            "id": k.id,
                            "name": k.name,
                            "kind": k.kind,
                            "characters": len(k.text),
                            "inlined": k.name in inlined,
                            "source": k.source,
                        }
                        for k in pieces
                    ],  # fmt: skip
                    "tokens": context.tokens if context else 0,
                    "chats": [{"id": s.id, "title": s.title} for s in chats],
                },
                indent=2,
            )
        )
        return 0
    lines = [f"{project.name} (project {project.id})"]
    if project.instructions:
        lines += ["", "Instructions:", project.instructions]
    lines += ["", f"A new chat: {project.profile or 'the active profile'}, {model}, "
              f"workspace {project.workspace or 'none'}; recall across the project {'on' if project.recall else 'off'}"]  # fmt: skip
    tokens = context.tokens if context else 0
    lines += ["", f"Knowledge ({len(pieces)}; ~{tokens:,} tokens in every request on {model}):"]
    for k in pieces:
        how = "inlined" if k.name in inlined else "searchable (recall)"
        lines.append(f"  {k.id:>4}  {k.name}  {len(k.text):,} characters, {how}")
    lines += ["", f"Chats ({len(chats)}):"] + [f"  {s.id:>4}  {s.title}" for s in chats]
    print(neutralise("\n".join(lines)))
    return 0
