"""The artifact ledger: files read and written, commands run with their exit codes, tool errors, derived from
the stored tool calls a summary covers, and the decisions stated in its text with their reasons (picked by rules,
see ``decisions``). It is kept with the compaction (folded into the next one) and sent next
to the summary, like the pinned instructions, so a summary can never forget which files were touched.

Deterministic: the same stored calls give the same ledger, in first-seen order, each list capped (newest kept).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from desktop.engine.compaction._shared import Message, content_of, role_of
from desktop.engine.compaction.citations import strip_citations
from desktop.engine.compaction.decisions import cite, decisions_in
from desktop.engine.metering.tokens import estimate_text
from desktop.engine.types import Block

HEADER = (
    "<artifact-ledger>\nWhat the tools did in the summarised part (from the stored calls, not from memory):"
)
FOOTER = "</artifact-ledger>"
CAPS = {"read": 60, "written": 60, "commands": 40, "errors": 20, "decisions": 30}
READS = {"read", "Read", "NotebookRead"}
WRITES = {"write", "Write", "edit", "Edit", "MultiEdit", "NotebookEdit"}
RUNS = {"run", "Bash"}
_EXIT = re.compile(r"\[exit code (-?\d+)\]\s*$")
# Shown of a command and of a tool error (the ledger keeps more; recall reads the call itself): every later
# request reads these lines, and an inline script or a long message says what it was in its first words.
COMMAND_SHOWN = 80
ERROR_SHOWN = 120

Ledger = dict[str, list[Any]]


def _empty() -> Ledger:
    return {k: [] for k in CAPS}


def _add(items: list[Any], value: Any, cap: int) -> None:
    if value in items:
        items.remove(value)  # seen again: it moves to the newest end
    items.append(value)
    del items[:-cap]


def build(messages: Sequence[Message], previous: dict[str, Any] | None = None) -> Ledger:
    ledger = _empty()
    for key in CAPS:
        for value in (previous or {}).get(key) or []:
            _add(ledger[key], list(value) if isinstance(value, list) else value, CAPS[key])
    calls: dict[str, Block] = {}
    for msg in messages:
        for sentence in decisions_in(msg):
            _add_decision(ledger["decisions"], cite(sentence, msg))
        blocks: Iterable[Block] = [b for b in content_of(msg) if isinstance(b, dict)]
        if role_of(msg) == "assistant":
            for b in blocks:
                if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                    calls[b["id"]] = b
            continue
        for b in blocks:
            if b.get("type") != "tool_result" or (call := calls.get(str(b.get("tool_use_id")))) is None:
                continue
            _record(ledger, call, b)
    return ledger


def _add_decision(items: list[Any], value: str) -> None:
    """A decision restated later keeps its first citation (where it was made)."""
    said = strip_citations(value)
    if not any(strip_citations(str(v)) == said for v in items):
        _add(items, value, CAPS["decisions"])


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        str(c.get("text", "")) for c in content or [] if isinstance(c, dict) and c.get("type") == "text"
    )


def _record(ledger: Ledger, call: Block, result: Block) -> None:
    name = str(call.get("name") or "")
    given = call.get("input")
    args: dict[str, Any] = given if isinstance(given, dict) else {}
    path = str(args.get("file_path") or args.get("notebook_path") or args.get("path") or "")
    text = _text(result.get("content"))
    failed = bool(result.get("is_error"))
    if name in RUNS:
        command = " ".join(str(args.get("command") or "").split())[:200]
        found = _EXIT.search(text)
        code = int(found.group(1)) if found else (1 if failed else 0)
        _add(ledger["commands"], [command, code], CAPS["commands"])
    elif not failed and path and name in READS:
        _add(ledger["read"], path, CAPS["read"])
    elif not failed and path and name in WRITES:
        _add(ledger["written"], path, CAPS["written"])
    if failed and name not in RUNS:
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "error")
        _add(ledger["errors"], f"{name} {path}".strip() + f": {first[:160]}", CAPS["errors"])


def render(ledger: Ledger, budget: int | None = None) -> str:
    """The ledger as sent beside the summary; within ``budget`` tokens when given (the newest entries of each
    list kept, the same number from each: a small window has no room for sixty file names), "" when not even
    one of each fits."""
    text = _render(ledger)
    if budget is None or estimate_text(text) <= budget:
        return text
    n = max(len(ledger.get(k) or []) for k in CAPS)
    while n > 1:
        n = n * 3 // 4
        text = _render({k: list(ledger.get(k) or [])[-n:] for k in CAPS})
        if estimate_text(text) <= budget:
            return text
    return ""


def _render(ledger: Ledger) -> str:
    if not any(ledger.get(k) for k in CAPS):
        return ""
    lines = [HEADER]
    root = _common_dir([*ledger["written"], *ledger["read"]])
    if root:
        lines.append(f"Files below are under {root}/ (named relative to it).")
    if ledger["written"]:
        lines.append("Files written or edited: " + ", ".join(_under(root, p) for p in ledger["written"]))
    read = [p for p in ledger["read"] if p not in ledger["written"]]  # an edited file is named there
    if read:
        lines.append("Files read: " + ", ".join(_under(root, p) for p in read))
    if ledger["commands"]:
        lines.append("Commands run (exit code):")
        lines.extend(f"- {_shown(cmd, COMMAND_SHOWN)} ({code})" for cmd, code in ledger["commands"])
    if ledger["errors"]:
        lines.append("Tool errors:")
        lines.extend(f"- {_shown(e, ERROR_SHOWN)}" for e in ledger["errors"])
    if ledger.get("decisions"):
        lines.append(
            "Decisions stated in the conversation (in its own words; recall reads the cited message):"
        )
        lines.extend(f"- {d}" for d in ledger["decisions"])
    lines.append(FOOTER)
    return "\n".join(lines)


def _shown(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _common_dir(paths: Sequence[str]) -> str:
    """The directory every path is under, when naming it once makes the file lists shorter ("" otherwise): a
    session's files share a long project root, and every later request reads the ledger."""
    if len(paths) < 2:
        return ""
    parts = [p.split("/")[:-1] for p in paths]
    common: list[str] = []
    for names in zip(*parts, strict=False):
        if any(n != names[0] for n in names):
            break
        common.append(names[0])
    root = "/".join(common)
    if not root.strip("/"):
        return ""
    cost = len(f"Files below are under {root}/ (named relative to it).")
    return root if (len(root) + 1) * len(paths) > cost else ""


def _under(root: str, path: str) -> str:
    return path[len(root) + 1 :] if root else path


REINJECT_FILES = 5


def recent_files(ledger: Ledger, limit: int = REINJECT_FILES) -> list[str]:
    """The files touched last, newest first: edited ones before read ones (an edit is the freshest interest)."""
    out: list[str] = []
    for path in [*reversed(ledger.get("written") or []), *reversed(ledger.get("read") or [])]:
        if path not in out and not path.startswith("@spill/"):
            out.append(path)
    return out[:limit]
