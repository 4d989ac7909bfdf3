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
    return await VERBS[args.verb](args, engine)


def _said(text: str) -> int:
    print(neutralise(text))
    return 0


async def _create(args: argparse.Namespace, engine: Any) -> int:
    project = await engine.projects.create(
        args.name, _stdin_or(args.instructions) or "", args.profile, args.model, _folder(args.workspace)
    )
    return _said(f"project {project.id}: {project.name}")


async def _list(args: argparse.Namespace, engine: Any) -> int:
    projects = engine.projects
    listed = projects.all()
    if args.json:
        print(dumps([_summary(p, projects) for p in listed], indent=2))
        return 0
    if not listed:
        print("precis: no projects yet (`precis project create NAME`)", file=sys.stderr)
    for p in listed:
        pieces = len(projects.knowledge(p.id))
        print(neutralise(f"{p.id:>4}  {p.name}  ({p.chats} chat(s), {pieces} piece(s) of knowledge)"))
    return 0


async def _edit(args: argparse.Namespace, engine: Any) -> int:
    project = engine.projects.named(args.name)
    changes: dict[str, str | bool | None] = {}
    for field, value in (("name", args.rename), ("instructions", _stdin_or(args.instructions))):
        if value is not None:
            changes[field] = value
    for field, value in (
        ("profile", args.profile),
        ("model", args.model),
        ("workspace", _folder(args.workspace)),
    ):
        if value is not None:
            changes[field] = value or None  # '' clears a default
    if args.recall is not None:
        changes["recall"] = args.recall == "on"
    if not changes:
        raise ProjectError(
            "nothing to change: give --rename, --instructions, --profile, --model, --workspace or --recall"
        )
    await engine.projects.update(project.id, **changes)
    return _said(f"project {project.id} changed: {', '.join(sorted(changes))}")


async def _add(args: argparse.Namespace, engine: Any) -> int:
    project = engine.projects.named(args.name)
    if not args.files and args.text is None:
        raise ProjectError("nothing to add: give text files, or --text")
    added = [await engine.projects.add_file(project.id, path) for path in args.files]
    if args.text is not None:
        added.append(await engine.projects.add_text(project.id, args.title, _stdin_or(args.text) or ""))
    for piece in added:
        print(neutralise(f"added {piece.name} ({len(piece.text):,} characters) as knowledge {piece.id}"))
    return 0


async def _remove(args: argparse.Namespace, engine: Any) -> int:
    project = engine.projects.named(args.name)
    for name in args.knowledge:
        piece = await engine.projects.remove(project.id, name)
        print(neutralise(f"removed {piece.name}"))
    return 0


async def _move(args: argparse.Namespace, engine: Any) -> int:
    project = None if args.none else engine.projects.named(args.to)
    if await engine.library.session(args.session) is None:
        raise ProjectError(f"no session with id {args.session}")
    await engine.projects.move_chat(args.session, project.id if project else None)
    return _said(f"session {args.session} is now in {project.name if project else 'no project'}")


async def _delete(args: argparse.Namespace, engine: Any) -> int:
    project = engine.projects.named(args.name)
    chats = "delete" if args.delete_chats else "keep"
    deleted = await engine.delete_project(project.id, chats)
    kept = "" if chats == "delete" else f"; its {project.chats} chat(s) kept, out of any project"
    gone = f"; {len(deleted)} chat(s) deleted" if deleted else ""
    return _said(f"deleted project {project.name}{kept}{gone}")


async def _show_verb(args: argparse.Namespace, engine: Any) -> int:
    return await _show(args, engine, engine.projects.named(args.name))


VERBS = {
    "create": _create,
    "list": _list,
    "show": _show_verb,
    "edit": _edit,
    "add": _add,
    "remove": _remove,
    "move": _move,
    "delete": _delete,
}


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
