"""Hostile inputs, each a case of its own: files Précis opens by name that are pipes, devices, folders, garbage
or huge; standard input that is closed, a folder, endless or not text; arguments with surrogates and control
characters; database rows damaged behind Précis's back with sqlite3; transcripts with bad lines; exports to
places that cannot take them.

Every case: no traceback, never the last-resort "a bug in Précis" line, no hang (a subprocess gets 20 s), and
either a refusal (a non-zero exit with one "precis: error:" sentence) or a command that works and names what it
fixed or ignored. Cases that could hang (a pipe, a device, standard input) run `precis` in a subprocess, two at
a time, all started once for the module; the rest call the CLI's ``main`` in this process (the same code).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.cli_faults import PY, env_for, lines, seed
from tests.fakeapi import FakeAnthropic

Setup = Callable[[Path, Path], None]  # (home, scratch folder)
S = "{scratch}"
BUG = "a bug in Précis"
# A hang is for ever; on a loaded 2-core machine one chat round trip in a fresh process took 20-70 s.
TIMEOUT = 120


@dataclass
class Case:
    name: str
    args: list[str]
    expect: str = ""  # a fragment of stderr (case-insensitive)
    # True: the command works (exit 0), with ``expect`` in a warning line; False: refused with one sentence
    # holding ``expect``; None: either (a damaged row may be read around or refused, never a crash)
    ok: bool | None = False
    setup: Setup | None = None
    stdin: bytes | str | None = None  # bytes, or "closed" / "dir" / "zero" / "urandom" / a path under scratch
    env: dict[str, str] = field(default_factory=dict)


# --- setups ------------------------------------------------------------------------------------------------
def _config_file(name: str) -> Callable[[Path], Path]:
    def where(home: Path) -> Path:
        config = home / "config"
        config.mkdir(parents=True, exist_ok=True)
        return config / name

    return where


def _data_file(home: Path) -> Path:
    (home / "data").mkdir(parents=True, exist_ok=True)
    return home / "data" / "precis.db"


WHERE = {
    "settings.json": _config_file("settings.json"),
    "mcp.json": _config_file("mcp.json"),
    "precis.db": _data_file,
}


def content(name: str, data: bytes | str) -> Setup:
    def put(home: Path, scratch: Path) -> None:
        WHERE[name](home).write_bytes(data.encode() if isinstance(data, str) else data)

    return put


def special(name: str, kind: str) -> Setup:
    """``name`` in Précis's folders made a FIFO, a link to a device, a folder, a huge sparse file, unreadable."""

    def put(home: Path, scratch: Path) -> None:
        path = WHERE[name](home)
        if kind == "fifo":
            os.mkfifo(path)
        elif kind in ("zero", "urandom", "null", "full"):
            path.symlink_to(f"/dev/{kind}")
        elif kind == "folder":
            path.mkdir()
        elif kind == "dangling":
            path.symlink_to(scratch / "nowhere")
        elif kind == "huge":
            with open(path, "wb") as fh:
                fh.write(b'{"model": "x"')
                fh.truncate(2 * 1024**3)
        elif kind == "loop":
            path.symlink_to(path)
        elif kind == "unreadable":
            path.write_text("{}")
            path.chmod(0)
        else:
            raise AssertionError(kind)

    return put


def seeded(home: Path, scratch: Path) -> None:
    seed(_data_file(home), sessions=1, exchanges=2)


def damage(sql: str, *params: object) -> Setup:
    """A real database, then one statement run on it with sqlite3 behind Précis's back."""

    def put(home: Path, scratch: Path) -> None:
        seeded(home, scratch)
        con = sqlite3.connect(_data_file(home))
        con.execute(sql, params)
        con.commit()
        con.close()

    return put


def scratch_file(name: str, data: bytes | str = b"", *, kind: str = "") -> Setup:
    def put(home: Path, scratch: Path) -> None:
        path = scratch / name
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "folder":
            path.mkdir()
        elif kind == "zero":
            path.symlink_to("/dev/zero")
        else:
            path.write_bytes(data.encode() if isinstance(data, str) else data)

    return put


def both(*setups: Setup) -> Setup:
    def put(home: Path, scratch: Path) -> None:
        for s in setups:
            s(home, scratch)

    return put


# --- the cases ---------------------------------------------------------------------------------------------
# Cases that may block a process for ever run in a subprocess.
SUBPROCESS: list[Case] = []
# The rest call main() in this process.
INPROCESS: list[Case] = []

# Files Précis opens by name, made something that is not a regular file. Every command reads settings.json
# (the chat names what it ignored), `mcp list` and the chat read mcp.json, every command opens precis.db.
READER = {
    "settings.json": (["sessions"], "", True),
    "mcp.json": (["mcp", "list"], "not a regular file", True),
    "precis.db": (["sessions"], "not a regular file", False),
}
for _name, (_cmd, _expect, _ok) in READER.items():
    for _kind in ("fifo", "zero", "urandom", "full"):
        SUBPROCESS.append(Case(f"{_name} is {_kind}", _cmd, _expect, ok=_ok, setup=special(_name, _kind)))
    SUBPROCESS.append(
        Case(
            f"{_name} is a huge sparse file",
            _cmd,
            "too large" if _name == "mcp.json" else "",
            ok=_ok,
            setup=special(_name, "huge"),
        )
    )
    for _kind in ("folder", "dangling", "loop", "null"):
        INPROCESS.append(
            Case(
                f"{_name} is {_kind}",
                ["chat", "hi"],
                "",
                ok=_name != "precis.db" or _kind == "dangling",
                setup=special(_name, _kind),
            )
        )
SUBPROCESS += [
    Case(
        "settings.json is a FIFO, the chat names it",
        ["chat", "hi"],
        "not a regular file",
        ok=True,
        setup=special("settings.json", "fifo"),
    ),
    Case(
        "settings.json is huge, the chat names it",
        ["chat", "hi"],
        "too large",
        ok=True,
        setup=special("settings.json", "huge"),
    ),
    Case(
        "precis.db is a FIFO, chat", ["chat", "hi"], "not a regular file", setup=special("precis.db", "fifo")
    ),
]

# Standard input.
for _stdin, _expect in (
    ("closed", "standard input"),
    ("dir", "is a directory"),
    ("zero", "larger than"),
    ("urandom", "larger than"),
    ("fifo-at", "not a regular"),
    (b"x" * (30 * 1024**2), "larger than"),
    (b"\xed\xa0\x80 surrogate", "not UTF-8"),
    (b"\xff\xfe\x00\xd8", "not valid UTF-16"),
    (b"caf\xe9", "not UTF-8"),
    (b"", "empty message"),
    (b"\x00\x00\x00", "not text"),
    (b" \n\t\n", "empty message"),
    (b"\xef\xbb\xbf", "empty message"),
):
    _label = _stdin if isinstance(_stdin, str) else f"{len(_stdin)} bytes {_stdin[:6]!r}"
    if _stdin == "fifo-at":
        continue  # a FIFO on stdin is an ordinary pipe: covered by the bytes cases
    SUBPROCESS.append(Case(f"stdin {_label}", ["chat", "-"], _expect, stdin=_stdin))
# Under the cap, but more than the model can read: refused before anything is sent, in one sentence.
SUBPROCESS.append(Case("stdin 9 MB of text", ["chat", "-"], "more than", stdin=b"word " * (9 * 1024**2 // 5)))
SUBPROCESS.append(Case("stdin closed, no '-'", ["chat", "hi"], "", ok=True, stdin="closed"))
SUBPROCESS.append(Case("stdin a folder, sessions", ["sessions"], "", stdin="dir"))

# Exports and imports that could block.
SUBPROCESS += [
    Case(
        "export to a FIFO",
        ["export", "1", "-o", S + "/pipe"],
        "pipe",
        setup=both(seeded, scratch_file("pipe", kind="fifo")),
    ),
    # A device takes the bytes as a pipe with a reader does (`-o /dev/stdout` is a use): never blocks.
    Case(
        "export to /dev/zero link",
        ["export", "1", "-o", S + "/z"],
        "wrote",
        ok=True,
        setup=both(seeded, scratch_file("z", kind="zero")),
    ),
    Case(
        "import a FIFO",
        ["import-claude-code", S + "/pipe"],
        "not a regular file",
        setup=scratch_file("pipe", kind="fifo"),
    ),
    Case("import /dev/urandom", ["import-claude-code", "/dev/urandom"], "not a regular file"),
    Case(
        "mcp list with mcp.json a FIFO",
        ["mcp", "list"],
        "not a regular file",
        ok=True,
        setup=special("mcp.json", "fifo"),
    ),
]


# MCP servers that misbehave on their output: stopped with one sentence, the command goes on.
def hostile_server(mode: str) -> Setup:
    root = str(Path(__file__).resolve().parent.parent)
    return content(
        "mcp.json",
        json.dumps(
            {
                "mcpServers": {
                    "hog": {"command": sys.executable, "args": ["-m", "tests.mcp_hostile", mode], "cwd": root}
                }
            }
        ),
    )


SUBPROCESS += [
    Case(
        "an MCP server writes one endless line, chat",
        ["chat", "hi"],
        "sent a message larger than",
        ok=True,
        setup=hostile_server("long-line"),
    ),
    Case(
        "an MCP server writes one endless line, mcp list --check",
        ["mcp", "list", "--check"],
        "",
        ok=True,
        setup=hostile_server("long-line"),
    ),
    Case(
        "an MCP server prints garbage, chat",
        ["chat", "hi"],
        "not MCP messages",
        ok=True,
        setup=hostile_server("garbage"),
    ),
]

# settings.json: wrong types for every field (fixed or ignored with a named warning; the command works).
WRONG = {
    "text": '"x"',
    "list": "[1]",
    "object": '{"a": 1}',
    "null": "null",
    "true": "true",
    "negative": "-5",
    "huge": "1e400",
    "nan-string": '"NaN"',
}
SETTINGS_FIELDS = {
    "model": ("list", "object", "null", "true", "negative"),
    "base_url": ("list", "object", "true", "negative"),
    "small_model": ("list", "true"),
    "max_output_tokens": ("text", "list", "null", "negative", "huge", "nan-string"),
    "max_retries": ("text", "object", "negative", "huge"),
    "request_timeout": ("text", "list", "negative", "huge"),
    "auto_compact_ratio": ("text", "negative", "huge"),
    "prepare_ratio": ("list", "negative"),
    "keep_tool_results": ("text", "negative"),
    "pin_budget_tokens": ("object", "negative"),
    "max_model_calls": ("text", "negative"),
    "thinking_budget_tokens": ("text", "negative"),
    "long_cache_ttl": ("text", "negative", "list"),
    "auto_approve_read_only": ("text", "object"),
    "instructions": ("list", "negative"),
    "language": ("text", "negative", "list"),
    "model_overrides": ("text", "list", "true"),
    "profile": ("text", "negative", "list", "object", "true"),
    "profiles": ("text", "object", "negative", "true"),
}
for _field, _kinds in SETTINGS_FIELDS.items():
    for _kind in _kinds:
        INPROCESS.append(
            Case(
                f"settings {_field} {_kind}",
                ["chat", "hi"],
                _field,
                ok=True,
                setup=content("settings.json", f'{{"{_field}": {WRONG[_kind]}}}'),
            )
        )
INPROCESS += [
    Case(
        "settings profile names no profile",
        ["chat", "hi"],
        "profile",
        ok=True,
        setup=content("settings.json", '{"profile": "Nobody", "profiles": []}'),
    ),
    Case(
        "settings two profiles with one name",
        ["chat", "hi"],
        "profiles",
        ok=True,
        setup=content("settings.json", '{"profiles": [{"name": "A"}, {"name": "A", "model": "m"}]}'),
    ),
    Case(
        "settings profiles entry a number",
        ["chat", "hi"],
        "profiles",
        ok=True,
        setup=content("settings.json", '{"profiles": [5]}'),
    ),
    Case(
        "settings max_output 0",
        ["chat", "hi"],
        "max_output",
        ok=True,
        setup=content("settings.json", '{"model_overrides": {"claude-sonnet-4-6": {"max_output": 0}}}'),
    ),
    Case(
        "settings window 0",
        ["chat", "hi"],
        "window",
        ok=True,
        setup=content("settings.json", '{"model_overrides": {"claude-sonnet-4-6": {"window": 0}}}'),
    ),
    Case(
        "settings override key unknown",
        ["chat", "hi"],
        "colour",
        ok=True,
        setup=content("settings.json", '{"model_overrides": {"m": {"colour": 1}}}'),
    ),
    Case(
        "settings unknown top-level key",
        ["chat", "hi"],
        "colour",
        ok=True,
        setup=content("settings.json", '{"colour": "blue"}'),
    ),
    Case(
        "settings BOM",
        ["chat", "hi"],
        "",
        ok=True,
        setup=content("settings.json", b'\xef\xbb\xbf{"max_retries": 1}'),
    ),
    Case(
        "settings BOM, empty object",
        ["chat", "hi"],
        "",
        ok=True,
        setup=content("settings.json", b"\xef\xbb\xbf{}"),
    ),
    Case(
        "settings UTF-16 with BOM",
        ["chat", "hi"],
        "",
        ok=True,
        setup=content("settings.json", '{"max_retries": 1}'.encode("utf-16")),
    ),
    Case(
        "settings empty file", ["chat", "hi"], "settings.json", ok=True, setup=content("settings.json", b"")
    ),
    Case(
        "settings binary garbage",
        ["chat", "hi"],
        "settings.json",
        ok=True,
        setup=content("settings.json", bytes(range(256)) * 4),
    ),
    Case(
        "settings NUL bytes",
        ["chat", "hi"],
        "settings.json",
        ok=True,
        setup=content("settings.json", b"\x00" * 64),
    ),
    Case(
        "settings lone surrogate escape",
        ["chat", "hi"],
        "model",
        ok=True,
        setup=content("settings.json", '{"model": "\\ud800"}'),
    ),
    Case(
        "settings control characters in model",
        ["chat", "hi"],
        "model",
        ok=True,
        setup=content("settings.json", '{"model": "a\\u0000b\\nc"}'),
    ),
]
for _cut in (
    '{"model": "claude',
    '{"max_retries": 1,',
    '{"profiles": [{"name": "A"',
    "{",
    '{"a":',
    "[",
    "nul",
    '{"model": "x"}}',
    '{"model": "x"} trailing',
    "{'model': 'x'}",
    '{"model": "x",}',
):
    INPROCESS.append(
        Case(
            f"settings truncated {_cut!r}",
            ["chat", "hi"],
            "settings.json",
            ok=True,
            setup=content("settings.json", _cut),
        )
    )

# mcp.json: broken files and entries (named; the command works).
for _label, _text in (
    ("not JSON", "{"),
    ("a list", "[]"),
    ("null", "null"),
    ("servers a list", '{"mcpServers": []}'),
    ("server a string", '{"mcpServers": {"a": "x"}}'),
    ("no command", '{"mcpServers": {"a": {}}}'),
    ("command a number", '{"mcpServers": {"a": {"command": 5}}}'),
    ("args a string", '{"mcpServers": {"a": {"command": "x", "args": "y"}}}'),
    ("env a list", '{"mcpServers": {"a": {"command": "x", "env": [1]}}}'),
    ("binary", bytes(range(256))),
    ("BOM", b'\xef\xbb\xbf{"mcpServers": {}}'),
    ("lone surrogate", '{"mcpServers": {"\\ud800": {"command": "x"}}}'),
):
    INPROCESS.append(
        Case(f"mcp.json {_label}", ["mcp", "list"], "", ok=True, setup=content("mcp.json", _text))
    )

# The database: damaged rows and versions.
_COMMANDS = (
    ["sessions"],
    ["export", "1"],
    ["export", "1", "--format", "json"],
    ["context", "1"],
    ["chat", "--session", "1", "hi"],
    ["search", "question"],
)
for _label, _setup in (
    ("user_version -1", damage("PRAGMA user_version = -1")),
    ("message not JSON", damage("UPDATE messages SET content = 'not json{' WHERE id = 2")),
    ("message JSON a number", damage("UPDATE messages SET content = '5' WHERE id = 2")),
    ("session state not JSON", damage("UPDATE sessions SET state = '{oops' WHERE id = 1")),
    ("usage not JSON", damage("UPDATE messages SET usage = 'x' WHERE id = 2")),
    ("meta not JSON", damage("UPDATE messages SET meta = '[' WHERE id = 2")),
    ("message role unknown", damage("UPDATE messages SET role = 'robot' WHERE id = 2")),
    ("message status unknown", damage("UPDATE messages SET status = 'weird' WHERE id = 2")),
):
    for _cmd in _COMMANDS:
        INPROCESS.append(Case(f"database {_label} ({' '.join(_cmd)})", _cmd, "", ok=None, setup=_setup))
INPROCESS += [
    Case(
        "database user_version 2^31", ["sessions"], "newer", setup=damage("PRAGMA user_version = 2147483647")
    ),
    Case(
        "database user_version -5, chat",
        ["chat", "hi"],
        "schema version -5",
        setup=damage("PRAGMA user_version = -5"),
    ),
]

# Arguments with surrogates (undecodable bytes) and control characters.
for _label, _text in (
    ("surrogate", "caf\udce9"),
    ("lone high surrogate", "a\ud800b"),
    ("NUL", "a\x00b"),
    ("escape", "a\x1b[2Jb"),
    ("bell", "\x07"),
    ("newlines", "a\n\nb"),
):
    for _cmd in (
        ["search", _text],
        ["chat", "--model", _text, "hi"],
        ["import-claude-code", S + "/" + _text],
        ["export", "1", "-o", S + "/" + _text],
        ["chat", _text],
    ):
        INPROCESS.append(
            Case(
                f"argument {_label} in {_cmd[0]} {_cmd.index(_text) if _text in _cmd else 'path'}",
                _cmd,
                "",
                ok=None,
                setup=seeded,
            )
        )

# Transcripts to import with bad lines (the good ones import, the bad ones are counted).
GOOD = '{"type": "user", "message": {"role": "user", "content": "hello"}}\n'
for _label, _line in (
    ("lone surrogate", '{"type": "user", "message": {"role": "user", "content": "a\\ud800"}}'),
    ("surrogate in a key", '{"type": "user", "\\udc80": 1, "message": {"role": "user", "content": "x"}}'),
    ("NUL", '{"type": "user", "message": {"role": "user", "content": "a\\u0000b"}}'),
    ("content a number", '{"type": "user", "message": {"role": "user", "content": 5}}'),
    ("content blocks of numbers", '{"type": "user", "message": {"role": "user", "content": [1, 2]}}'),
    ("message a list", '{"type": "user", "message": []}'),
    ("role unknown", '{"type": "user", "message": {"role": "robot", "content": "x"}}'),
    ("type a number", '{"type": 5}'),
    ("huge number", '{"type": "user", "n": 1e999999}'),
    ("a bare surrogate byte", b'{"type": "user", "message": {"role": "user", "content": "\xed\xa0\x80"}}'),
    ("half a line", '{"type": "user", "message": {"ro'),
    ("control characters", "\x01\x02\x03"),
    ("one long line", '{"type": "user", "message": {"role": "user", "content": "' + "x" * 3_000_000 + '"}}'),
    (
        "usage wrong types",
        '{"type": "assistant", "message": {"role": "assistant", "content": "x", '
        '"usage": {"input_tokens": "many"}}}',
    ),
    (
        "image without data",
        '{"type": "user", "message": {"role": "user", "content": [{"type": "image", "source": {}}]}}',
    ),
):
    _data = (_line if isinstance(_line, bytes) else _line.encode("utf-8", "surrogatepass")) + b"\n"
    INPROCESS.append(
        Case(
            f"import a line with {_label}",
            ["import-claude-code", S + "/t.jsonl"],
            "",
            ok=True,
            setup=scratch_file("t.jsonl", GOOD.encode() + _data),
        )
    )
INPROCESS += [
    Case(
        "import only bad lines",
        ["import-claude-code", S + "/t.jsonl"],
        "",
        setup=scratch_file("t.jsonl", "{\n[\n"),
    ),
    Case(
        "import a link to a folder",
        ["import-claude-code", S + "/f"],
        "",
        setup=scratch_file("f", kind="folder"),
    ),
    Case(
        "import a UTF-16 transcript",
        ["import-claude-code", S + "/t.jsonl"],
        "",
        ok=None,
        setup=scratch_file("t.jsonl", GOOD.encode("utf-16")),
    ),
]

# Exports to places that cannot take them.
INPROCESS += [
    Case(
        "export to a folder",
        ["export", "1", "-o", S + "/d"],
        "cannot write",
        setup=both(seeded, scratch_file("d", kind="folder")),
    ),
    Case("export into a missing folder", ["export", "1", "-o", S + "/no/x.md"], "cannot write", setup=seeded),
    Case("export to /dev/full", ["export", "1", "-o", "/dev/full"], "", setup=seeded),
    Case("export to an empty name", ["export", "1", "-o", ""], "", ok=None, setup=seeded),
    Case("export into /proc", ["export", "1", "-o", "/proc/x.md"], "cannot write", setup=seeded),
    Case(
        "export into a file as folder",
        ["export", "1", "-o", S + "/f/x.md"],
        "cannot write",
        setup=both(seeded, scratch_file("f", "x")),
    ),
    Case(
        "export json to a folder",
        ["export", "1", "--format", "json", "-o", S + "/d"],
        "cannot write",
        setup=both(seeded, scratch_file("d", kind="folder")),
    ),
    Case(
        "export a damaged row to a file",
        ["export", "1", "-o", S + "/x.md"],
        "",
        ok=None,
        setup=damage("UPDATE messages SET content = '{' WHERE id = 1"),
    ),
]


# --- checks ------------------------------------------------------------------------------------------------
# A folder on standard input is refused by the Python interpreter itself, before any of Précis's code runs: its
# one line (and a note of no Python frame) is the sentence there is; the case checks it is that and no traceback.
PYTHON_REFUSES_DIR = "<stdin> is a directory, cannot continue"


def _problems(case: Case, rc: int, err: str) -> list[str]:
    problems = []
    if case.stdin == "dir":
        return [] if rc != 0 and PYTHON_REFUSES_DIR in err and "Traceback" not in err else [f"{rc}: {err!r}"]
    if "Traceback" in err:
        problems.append("a traceback")
    if BUG in err:
        problems.append("the last-resort line")
    errors = [line for line in lines(err) if line.startswith("precis: error:")]
    if case.ok is None:
        if rc != 0 and len(errors) != 1:
            problems.append(f"exit code {rc} with {len(errors)} error lines")
    elif case.ok:
        if rc != 0:
            problems.append(f"exit code {rc}")
        if case.expect and case.expect.lower() not in err.lower():
            problems.append(f"no line names {case.expect!r}")
    else:
        if rc == 0:
            problems.append("exit code 0")
        if len(errors) != 1:
            problems.append(f"{len(errors)} error lines")
        elif case.expect.lower() not in errors[0].lower():
            problems.append(f"the error does not say {case.expect!r}")
    return [f"{p}: {err[-400:]!r}" for p in problems]


def _fill(text: str, scratch: Path) -> str:
    return text.replace(S, str(scratch))


def _run_subprocess(case: Case, root: Path, base_url: str) -> tuple[int, str] | str:
    home, scratch = root / "home", root / "scratch"
    scratch.mkdir(parents=True)
    if case.setup is not None:
        case.setup(home, scratch)
    env = env_for(home, base_url, **case.env)
    args = [_fill(a, scratch) for a in case.args]
    fd: int | None = None  # a descriptor opened here for the child's standard input
    data: bytes | None = case.stdin if isinstance(case.stdin, bytes) else b""
    if case.stdin == "dir":
        fd = os.open(scratch, os.O_RDONLY)
    elif case.stdin in ("zero", "urandom"):
        fd = os.open(f"/dev/{case.stdin}", os.O_RDONLY)
    command = [PY, "-m", "desktop", *args]
    try:
        if case.stdin == "closed":  # the child starts with no descriptor 0 at all
            res = subprocess.run(
                command,
                env=env,
                capture_output=True,
                stdin=subprocess.DEVNULL,
                timeout=TIMEOUT,
                preexec_fn=lambda: os.close(0),
            )
        elif fd is not None:
            res = subprocess.run(command, env=env, capture_output=True, stdin=fd, timeout=TIMEOUT)
        else:
            res = subprocess.run(command, env=env, capture_output=True, input=data, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"did not finish in {TIMEOUT} s"
    except OSError as exc:  # the case could not be run as written: its own failure, not the module's
        return f"could not run: {exc!r}"
    finally:
        if fd is not None:
            os.close(fd)
    return res.returncode, res.stderr.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def subprocess_results(tmp_path_factory):
    """Every subprocess case, run two at a time once for the module."""
    root = tmp_path_factory.mktemp("hostile")
    with FakeAnthropic(window=200_000) as srv:
        for _ in SUBPROCESS:
            srv.queue_text("ok")
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(
                pool.map(
                    lambda ic: _run_subprocess(ic[1], root / f"case{ic[0]}", srv.base_url),
                    enumerate(SUBPROCESS),
                )
            )
    return {case.name: res for case, res in zip(SUBPROCESS, results, strict=True)}


@pytest.mark.timeout(900)  # the first case runs the module's batch
@pytest.mark.parametrize("case", SUBPROCESS, ids=[c.name for c in SUBPROCESS])
def test_a_hostile_input_to_a_process(case: Case, subprocess_results) -> None:
    res = subprocess_results[case.name]
    assert not isinstance(res, str), res
    rc, err = res
    assert not _problems(case, rc, err), _problems(case, rc, err)


@pytest.fixture(scope="module")
def shared_api():
    """One loopback server for the module (starting and stopping one per case would double the suite's time)."""
    with FakeAnthropic(window=200_000) as srv:
        yield srv


@pytest.mark.parametrize("case", INPROCESS, ids=[c.name for c in INPROCESS])
def test_a_hostile_input_in_process(
    case: Case, tmp_path, precis_home, shared_api, monkeypatch, capsys
) -> None:
    from desktop.cli import main as cli_main

    monkeypatch.setenv("ANTHROPIC_BASE_URL", shared_api.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    if case.setup is not None:
        case.setup(precis_home, scratch)
    shared_api.queue_text("ok")
    try:
        rc = cli_main.main([_fill(a, scratch) for a in case.args])
    except SystemExit as exc:  # argparse's refusals
        rc = exc.code if isinstance(exc.code, int) else 1
    err = capsys.readouterr().err
    assert not _problems(case, rc, err), _problems(case, rc, err)


def test_the_suite_is_large_enough() -> None:
    names = [c.name for c in SUBPROCESS + INPROCESS]
    assert len(set(names)) == len(names), [n for n in names if names.count(n) > 1]
    assert len(names) >= 200, len(names)
