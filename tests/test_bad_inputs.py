"""Every bad input we could think of, through `precis` in a subprocess: CLI arguments, files (attachments,
transcripts, export targets), settings.json, environment values and database states.

Each case asserts no traceback, exactly one line on stderr for a refusal (a fixed setting may add its one line
of explanation to a command that then works), the expected exit code, and that the line is a real sentence,
not the last-resort "unexpected" one. The test prints the count of cases tried and of tracebacks left.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.cli_faults import env_for, lines, run, seed

BIG = "99999999999999999999999"


@dataclass
class Case:
    name: str
    args: list[str]
    expect: str  # a fragment of the stderr line
    rc: int | None = 1  # None: any non-zero; 0: accepted (with a warning line)
    stdin: bytes | None = None
    setup: Callable[[Path, Path], None] | None = None  # (home, scratch folder)
    env: dict[str, str] = field(default_factory=dict)
    warn_lines: int = 1  # stderr lines of a command that works: the warning (plus status lines, ignored)


def settings(text: str | bytes) -> Callable[[Path, Path], None]:
    def put(home: Path, scratch: Path) -> None:
        config = home / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "settings.json").write_bytes(text.encode() if isinstance(text, str) else text)

    return put


def file(
    name: str, data: bytes | None = None, *, sparse: int = 0, fifo: bool = False, folder: bool = False
) -> Callable[[Path, Path], None]:
    def put(home: Path, scratch: Path) -> None:
        path = scratch / name
        if fifo:
            os.mkfifo(path)
        elif folder:
            path.mkdir()
        else:
            with open(path, "wb") as fh:
                fh.write(data or b"")
                if sparse:
                    fh.truncate(sparse)

    return put


def database(how: str) -> Callable[[Path, Path], None]:
    def put(home: Path, scratch: Path) -> None:
        db = home / "data" / "precis.db"
        seed(db)
        if how == "corrupt":
            data = bytearray(db.read_bytes())
            data[100:4096] = b"\xa5" * 3996
            db.write_bytes(bytes(data))
        elif how == "truncated":
            db.write_bytes(db.read_bytes()[:8192])
        elif how == "garbage":
            db.write_bytes(b"SQLite format 3\x00" + b"\x01" * 5000)
        elif how == "text":
            db.write_text("not a database\n")
        elif how == "foreign":
            db.unlink()
            con = sqlite3.connect(db)
            con.execute("CREATE TABLE t (x)")
            con.commit()
            con.close()
        elif how == "future":
            con = sqlite3.connect(db)
            con.execute("PRAGMA user_version = 99")
            con.close()
        elif how == "folder":
            db.unlink()
            db.mkdir()
        elif how == "complete":  # the last reply is complete: nothing to retry
            pass

    return put


def home_is_file(home: Path, scratch: Path) -> None:
    home.parent.mkdir(parents=True, exist_ok=True)
    home.write_text("x")


def data_is_file(home: Path, scratch: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "data").write_text("x")


PNG = b"\x89PNG\r\n\x1a\n"
S = "{scratch}"
NESTED = b"[" * 200_000

CASES = [
    # --- arguments -----------------------------------------------------------------------------------------
    Case("unknown option", ["--bogus"], "unrecognized arguments", 2),
    Case("unknown command", ["nosuch"], "invalid choice", 2),
    Case("session not a number", ["chat", "--session", "abc", "x"], "not a session id", 2),
    Case("session too large", ["chat", "--session", BIG, "x"], "not a session id", 2),
    Case("session negative", ["chat", "--session", "-1", "x"], "not a session id", 2),
    Case("session zero", ["chat", "--session", "0", "x"], "not a session id", 2),
    Case("session float", ["chat", "--session", "1.5", "x"], "not a session id", 2),
    Case("session missing", ["chat", "--session", "42", "x"], "no session with id 42"),
    Case("new and session", ["chat", "--new", "--session", "1", "x"], "not allowed with", 2),
    Case("two messages", ["chat", "a", "b"], "unrecognized arguments", 2),
    Case("empty message", ["chat"], "empty message"),
    Case("blank message", ["chat", "   \t  "], "empty message"),
    Case("retry without session", ["chat", "--retry"], "--retry needs --session"),
    Case(
        "retry after a complete reply",
        ["chat", "--session", "1", "--retry"],
        "nothing to retry",
        setup=database("complete"),
    ),
    Case("retry of a missing session", ["chat", "--session", "7", "--retry"], "no session with id 7"),
    Case("no API key", ["chat", "hello"], "no API key", env={"ANTHROPIC_API_KEY": ""}),
    Case("stdin not UTF-8", ["chat", "-"], "not UTF-8", stdin=b"caf\xe9 \xff\xfe\x00"),
    Case("stdin broken UTF-16", ["chat", "-"], "not valid UTF-16", stdin=b"\xff\xfe\x00\xd8a"),
    Case("stdin empty", ["chat", "-"], "empty message", stdin=b""),
    Case("argv not text", ["chat", "caf\udce9"], "not valid text"),
    Case("export without id", ["export"], "required", 2),
    Case("export id not a number", ["export", "one"], "not a session id", 2),
    Case("export id too large", ["export", BIG], "not a session id", 2),
    Case("export missing session", ["export", "42"], "no session with id 42"),
    Case("export bad format", ["export", "1", "--format", "pdf"], "invalid choice", 2),
    Case(
        "export into a missing folder",
        ["export", "1", "-o", S + "/nope/out.md"],
        "cannot write",
        setup=database("complete"),
    ),
    Case(
        "export onto a folder",
        ["export", "1", "-o", S + "/dir"],
        "cannot write",
        setup=lambda h, s: (database("complete")(h, s), (s / "dir").mkdir()),
    ),
    Case(
        "export onto a full device",
        ["export", "1", "-o", "/dev/full"],
        "cannot write",
        setup=database("complete"),
    ),
    Case(
        "export into /proc",
        ["export", "1", "-o", "/proc/precis-export.md"],
        "cannot write",
        setup=database("complete"),
    ),
    Case("context id too large", ["context", BIG], "not a session id", 2),
    Case("context missing session", ["context", "42"], "no session with id 42"),
    Case("compact id too large", ["compact", BIG], "not a session id", 2),
    Case("compact missing session", ["compact", "42"], "no session with id 42"),
    Case("compact bad id", ["compact", "x"], "not a session id", 2),
    # --- attachments ---------------------------------------------------------------------------------------
    Case("attach /dev/zero", ["chat", "--attach", "/dev/zero", "look"], "not a regular file"),
    Case("attach /dev/urandom", ["chat", "--attach", "/dev/urandom", "look"], "not a regular file"),
    Case(
        "attach a FIFO",
        ["chat", "--attach", S + "/pipe", "look"],
        "not a regular file",
        setup=file("pipe", fifo=True),
    ),
    Case(
        "attach a folder",
        ["chat", "--attach", S + "/folder", "look"],
        "is a folder",
        setup=file("folder", folder=True),
    ),
    Case("attach a missing file", ["chat", "--attach", S + "/missing.png", "look"], "cannot read"),
    Case(
        "attach a 2 GB sparse PNG",
        ["chat", "--attach", S + "/huge.png", "look"],
        "must be at most 50 MB",
        setup=file("huge.png", PNG, sparse=2 * 1024**3),
    ),
    Case(
        "attach a 40 MB PDF",
        ["chat", "--attach", S + "/big.pdf", "look"],
        "must be at most 32 MB",
        setup=file("big.pdf", b"%PDF-1.7\n", sparse=40 * 1024**2),
    ),
    Case(
        "attach a binary file",
        ["chat", "--attach", S + "/blob.bin", "look"],
        "unsupported file type",
        setup=file("blob.bin", b"\x7fELF\x02\x01\x00\x00" * 8),
    ),
    Case(
        "attach Latin-1 text",
        ["chat", "--attach", S + "/latin.txt", "look"],
        "not UTF-8",
        setup=file("latin.txt", "café crème\n".encode("latin-1")),
    ),
    Case(
        "attach an empty file",
        ["chat", "--attach", S + "/empty.png", "look"],
        "is empty",
        setup=file("empty.png"),
    ),
    Case(
        "attach a cut PNG",
        ["chat", "--attach", S + "/cut.png", "look"],
        "not a readable image",
        setup=file("cut.png", PNG + b"\x00" * 30),
    ),
    Case(
        "attach a PNG named .pdf",
        ["chat", "--attach", S + "/x.pdf", "look"],
        "not a readable image",
        setup=file("x.pdf", PNG + b"garbage"),
    ),
    # --- transcripts to import -----------------------------------------------------------------------------
    Case("import a missing file", ["import-claude-code", S + "/none.jsonl"], "no such file"),
    Case(
        "import a folder",
        ["import-claude-code", S + "/folder"],
        "directory",
        setup=file("folder", folder=True),
    ),
    Case("import an empty file", ["import-claude-code", S + "/empty.jsonl"], "", setup=file("empty.jsonl")),
    Case(
        "import binary garbage",
        ["import-claude-code", S + "/bin.jsonl"],
        "",
        setup=file("bin.jsonl", bytes(range(256)) * 40),
    ),
    Case(
        "import 200,000 nested [",
        ["import-claude-code", S + "/nested.jsonl"],
        "",
        setup=file("nested.jsonl", NESTED),
    ),
    Case(
        "import 200,000 nested { in a line",
        ["import-claude-code", S + "/nested2.jsonl"],
        "",
        setup=file("nested2.jsonl", b'{"a":' * 200_000),
    ),
    Case(
        "import JSON that is not a transcript",
        ["import-claude-code", S + "/other.jsonl"],
        "",
        setup=file("other.jsonl", b'{"a": 1}\n[1, 2]\n"x"\nnull\n'),
    ),
    # Not UTF-8 in a transcript: replacement characters (the policy), the rest imports.
    Case(
        "import invalid UTF-8",
        ["import-claude-code", S + "/latin.jsonl"],
        "imported",
        0,
        setup=file("latin.jsonl", b'{"type": "user", "message": {"role": "user", "content": "caf\xe9"}}\n'),
    ),
    Case(
        "import a FIFO",
        ["import-claude-code", S + "/pipe"],
        "not a regular file",
        setup=file("pipe", fifo=True),
    ),
    Case("import /dev/zero", ["import-claude-code", "/dev/zero"], "not a regular file"),
    # --- settings.json (fixed with one line; the command still works) --------------------------------------
    Case("settings []", ["chat", "hi"], "not an object", 0, setup=settings("[]")),
    Case("settings null", ["chat", "hi"], "not an object", 0, setup=settings("null")),
    Case("settings string", ["chat", "hi"], "not an object", 0, setup=settings('"x"')),
    Case("settings not JSON", ["chat", "hi"], "could not be read", 0, setup=settings("{")),
    Case(
        "settings nested 100,000 deep", ["chat", "hi"], "could not be read", 0, setup=settings("[" * 100_000)
    ),
    Case(
        "settings invalid UTF-8", ["chat", "hi"], "could not be read", 0, setup=settings(b'{"model": "\xff"}')
    ),
    Case(
        "settings negative max_retries",
        ["chat", "hi"],
        "max_retries",
        0,
        setup=settings('{"max_retries": -1}'),
    ),
    Case(
        "settings max_output_tokens 1e12",
        ["chat", "hi"],
        "max_output_tokens",
        0,
        setup=settings('{"max_output_tokens": 1e12}'),
    ),
    Case(
        "settings window big",
        ["chat", "hi"],
        "window",
        0,
        setup=settings('{"model_overrides": {"claude-sonnet-4-6": {"window": "big"}}}'),
    ),
    Case(
        "settings overrides a list",
        ["chat", "hi"],
        "model_overrides",
        0,
        setup=settings('{"model_overrides": []}'),
    ),
    Case(
        "settings timeout text",
        ["chat", "hi"],
        "request_timeout",
        0,
        setup=settings('{"request_timeout": "soon"}'),
    ),
    Case("settings model empty", ["chat", "hi"], "model", 0, setup=settings('{"model": ""}')),
    Case(
        "settings is a folder",
        ["chat", "hi"],
        "could not be read",
        0,
        setup=lambda h, s: (h / "config" / "settings.json").mkdir(parents=True),
    ),
    # --- environment ---------------------------------------------------------------------------------------
    Case(
        "base URL not a URL",
        ["chat", "hi"],
        "Could not reach the provider",
        env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:1"},
    ),
    Case("bad busy timeout value", ["sessions"], "", 0, env={"PRECIS_BUSY_TIMEOUT": "soon"}, warn_lines=0),
    # --- database states -----------------------------------------------------------------------------------
    Case("corrupt database, chat", ["chat", "hi"], "damaged", setup=database("corrupt")),
    Case("corrupt database, sessions", ["sessions"], "damaged", setup=database("corrupt")),
    Case("truncated database, export", ["export", "1"], "cut short", setup=database("truncated")),
    Case("garbage after the header", ["sessions"], "", setup=database("garbage")),
    Case("text file as database", ["context", "1"], "not an SQLite database", setup=database("text")),
    Case("foreign SQLite, chat", ["chat", "hi"], "another program's", setup=database("foreign")),
    Case("future schema, sessions", ["sessions"], "newer Précis", setup=database("future")),
    Case("future schema, compact", ["compact", "1"], "newer Précis", setup=database("future")),
    Case("database is a folder", ["sessions"], "in the way", setup=database("folder")),
    Case("home is a file, sessions", ["sessions"], "in the way", setup=home_is_file),
    Case("home is a file, chat", ["chat", "hi"], "in the way", setup=home_is_file),
    Case("data folder is a file", ["chat", "hi"], "in the way", setup=data_is_file),
]


def _try(case: Case, root: Path, base_url: str) -> tuple[Case, object]:
    home, scratch = root / "home", root / "scratch"
    scratch.mkdir(parents=True)
    if case.setup is not None:
        case.setup(home, scratch)
    env = env_for(home, base_url, **case.env)
    args = [a.replace(S, str(scratch)) for a in case.args]
    try:
        return case, run(args, env, input_bytes=case.stdin if case.stdin is not None else b"", timeout=30)
    except Exception as exc:  # noqa: BLE001 - a hang or a spawn failure is this case's result
        return case, exc


STATUS = ("precis: session ", "precis: sending", "precis: waiting")


def _problems(case: Case, res: object) -> list[str]:
    if not isinstance(res, subprocess.CompletedProcess):
        return [f"did not finish: {res!r}"]
    problems = []
    # Status lines of a command that got as far as the provider are not the refusal.
    err = [line for line in lines(res.stderr) if not line.startswith(STATUS)]  # type: ignore[attr-defined]
    if "Traceback" in res.stderr:  # type: ignore[attr-defined]
        problems.append("traceback")
    if any("unexpected" in line and "a bug in Précis" in line for line in err):
        problems.append("only the last-resort sentence")
    rc = res.returncode  # type: ignore[attr-defined]
    if case.rc == 0:
        if rc != 0:
            problems.append(f"exit code {rc}")
        found = [line for line in err if case.expect in line] if case.expect else []
        if len(found) != case.warn_lines:
            problems.append(f"{len(found)} lines with {case.expect!r}")
    else:
        if rc == 0 or (case.rc is not None and rc != case.rc):
            problems.append(f"exit code {rc}")
        if len(err) != 1:
            problems.append(f"{len(err)} stderr lines")
        elif case.expect.lower() not in err[0].lower():
            problems.append(f"line without {case.expect!r}")
    return [f"{p}: {res.stderr[-300:]!r}" for p in problems]  # type: ignore[attr-defined]


@pytest.mark.timeout(600)
def test_every_bad_input_gets_one_sentence_never_a_traceback(tmp_path, fake_api):
    for _ in range(len(CASES)):
        fake_api.queue_text("ok")
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(
            pool.map(lambda ic: _try(ic[1], tmp_path / f"case{ic[0]}", fake_api.base_url), enumerate(CASES))
        )
    failures = {case.name: p for case, res in results if (p := _problems(case, res))}
    tracebacks = sum(
        1
        for _case, res in results
        if isinstance(res, subprocess.CompletedProcess) and "Traceback" in res.stderr
    )
    hangs = sum(1 for _case, res in results if not isinstance(res, subprocess.CompletedProcess))
    refused = sum(1 for case in CASES if case.rc != 0)
    print(
        f"bad inputs tried: {len(CASES)} ({refused} refused, {len(CASES) - refused} fixed with a warning); "
        f"tracebacks left: {tracebacks}; did not finish: {hangs}; cases failing: {len(failures)}"
    )
    assert len({c.name for c in CASES}) == len(CASES) >= 60
    assert not failures, json.dumps(failures, indent=1, ensure_ascii=False)


@pytest.mark.parametrize("name", ["/dev/zero", "fifo"])
def test_an_attachment_that_never_ends_is_refused_without_reading(name, tmp_path):
    """In-process: the check is from stat and the first bytes; a FIFO with no writer is not waited on."""
    from desktop.engine.compaction.media import MediaError, prepare_attachment

    path = Path(name)
    if name == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)
    with pytest.raises(MediaError, match="not a regular file"):
        prepare_attachment(path)
