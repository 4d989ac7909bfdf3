"""`precis` in a pseudo-terminal: text from the model, the provider, a tool or the database never drives it.

The real CLI runs in a subprocess whose standard input, output and error are a pty, against the loopback server;
everything it wrote is read back from the pty's master side and checked byte by byte: no ESC (0x1b), no C1 CSI
(0x9b), no BEL and no carriage return that is not part of a line end reach the terminal, and the text around
the sequences is all there, their own characters shown in caret notation (``^[``). Issue 35.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

import pytest

from tests.fakeapi import Fault

pytestmark = pytest.mark.slow  # several CLI runs in subprocesses

# A reply that tries everything: the clipboard (OSC 52), the window title (OSC 0, ST-terminated), clearing the
# screen, overwriting the line, a C1 CSI, a DCS string; the first ESC is the last character of a streamed delta
# (the server sends 20-character deltas) and its OSC 52 arrives in the next one.
SPLIT_AT = 20
HOSTILE_REPLY = (
    "VISIBLE-ONE padding\x1b"  # 19 characters and an ESC: the first delta ends in the middle of the sequence
    "]52;c;UFdORUQ=\x07"  # the rest of OSC 52 (clipboard := "PWNED"), BEL-terminated
    "VISIBLE-TWO"
    "\x1b]0;evil title\x1b\\"  # OSC 0, ST-terminated
    "VISIBLE-THREE\x1b[2J"  # erase the screen
    "\r\x1b[2KVISIBLE-FOUR"  # back to the line's start and erase it
    "\x9b31mVISIBLE-FIVE"  # a C1 CSI
    "\x1bP1$qm\x1b\\VISIBLE-SIX"  # a DCS request
)
VISIBLE = ("VISIBLE-ONE", "VISIBLE-TWO", "VISIBLE-THREE", "VISIBLE-FOUR", "VISIBLE-FIVE", "VISIBLE-SIX")


def run_in_pty(
    args, env, *, answer: bytes = b"", when: bytes = b"", timeout: float = 60
) -> tuple[int, bytes]:
    """Run `precis ARGS` with a pty as its terminal: (exit code, every byte it wrote there). ``answer`` is typed
    once ``when`` appeared on the terminal."""
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    out = bytearray()
    answered = not answer
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the process closed its end of the terminal
                break
            if not data:
                break
            out += data
            if not answered and when in out:
                os.write(master, answer)
                answered = True
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return code, bytes(out)


def assert_inert(out: bytes, allowed: tuple[bytes, ...] = ()) -> None:
    """Nothing in ``out`` can drive a terminal: no ESC (but ``allowed`` sequences the CLI writes itself), no C1
    control, no BEL, no carriage return except the pty's own line ends, no other C0 control."""
    for own in allowed:
        out = out.replace(own, b"")
    assert b"\x1b" not in out, out
    assert b"\x9b" not in out and b"\x9d" not in out and b"\x90" not in out, out
    assert b"\x07" not in out, out
    assert b"\r" not in out.replace(b"\r\n", b""), out
    text = out.decode("utf-8")
    assert not [c for c in text if (ord(c) < 32 and c not in "\r\n\t") or 0x7F <= ord(c) <= 0x9F], out


@pytest.fixture
def cli_env(fake_api, precis_home):
    env = dict(os.environ)
    env.update(
        PRECIS_HOME=str(precis_home), ANTHROPIC_BASE_URL=fake_api.base_url, ANTHROPIC_API_KEY="test-key"
    )
    return env


def test_a_hostile_reply_streams_to_the_terminal_visible_and_inert(cli_env, fake_api):
    fake_api.chunk_chars = SPLIT_AT
    deltas = [HOSTILE_REPLY[i : i + SPLIT_AT] for i in range(0, len(HOSTILE_REPLY), SPLIT_AT)]
    assert deltas[0].endswith("\x1b") and deltas[1].startswith("]52;")  # the sequence is cut between deltas
    fake_api.queue_text(HOSTILE_REPLY)
    code, out = run_in_pty(["chat", "hello"], cli_env)
    assert code == 0, out
    assert_inert(out)
    text = out.decode("utf-8")
    for word in VISIBLE:
        assert word in text
    # Every character of every sequence is still there, only shown: nothing was silently dropped.
    assert "^[]52;c;UFdORUQ=^G" in text
    assert "^[]0;evil title^[\\" in text
    assert "^[[2J" in text and "^M^[[2K" in text and "M-^[31m" in text and "^[P1$qm^[\\" in text


def test_raw_gives_the_exact_bytes_and_a_pipe_is_neutralised_too(cli_env, fake_api):
    fake_api.queue_text(HOSTILE_REPLY)
    fake_api.queue_text(HOSTILE_REPLY)
    raw = subprocess.run(
        [sys.executable, "-m", "desktop", "chat", "--raw", "hi"], env=cli_env, capture_output=True, timeout=60
    )
    assert raw.returncode == 0, raw.stderr
    assert raw.stdout == (HOSTILE_REPLY + "\n").encode()
    piped = subprocess.run(
        [sys.executable, "-m", "desktop", "chat", "hi"], env=cli_env, capture_output=True, timeout=60
    )
    assert piped.returncode == 0, piped.stderr
    assert b"\x1b" not in piped.stdout and "^[]52;c;UFdORUQ=^G" in piped.stdout.decode()
    helped = subprocess.run(
        [sys.executable, "-m", "desktop", "chat", "--help"], env=cli_env, capture_output=True, text=True
    )
    assert "--raw" in helped.stdout


def test_error_messages_reach_the_terminal_inert(cli_env, fake_api, tmp_path):
    # The provider's own words (the engine may flatten their controls itself: either way none reaches the terminal).
    fake_api.queue_fault(
        Fault.custom(400, "invalid_request_error", "ERR-START \x1b]52;c;UFdORUQ=\x07 \x9b2J\r\x1b[2K ERR-END")
    )
    code, out = run_in_pty(["chat", "hello"], cli_env)
    assert code == 1, out
    assert_inert(out)
    text = out.decode("utf-8")
    assert "ERR-START" in text and "ERR-END" in text
    # An error the CLI words itself, quoting what it was given (twice: its own words and the system's).
    gone = tmp_path / "gone\x1b]52;c;UFdORUQ=\x07\x9b2J.png"
    code, out = run_in_pty(["chat", "--attach", str(gone), "hello"], cli_env)
    assert code == 1, out
    assert_inert(out)
    assert out.decode("utf-8").count("gone^[]52;c;UFdORUQ=^GM-^[2J.png") == 2


def test_a_tool_call_shown_for_permission_reaches_the_terminal_inert(cli_env, fake_api, tmp_path):
    """The permission prompt shows the model's arguments and the diff of what a write would write: both are
    the model's text."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake_api.queue_tool_use(
        "write",
        {
            "file_path": "note\x1b]0;evil\x07.txt",
            "content": "CONTENT-START \x1b]52;c;UFdORUQ=\x07 \x9b2J\r\x1b[2K CONTENT-END\n",
        },
    )
    fake_api.queue_text("all done")
    code, out = run_in_pty(
        ["chat", "--workspace", str(workspace), "write it"], cli_env, answer=b"d\n", when=b"Allow?"
    )
    assert code == 0, out
    assert_inert(out)
    text = out.decode("utf-8")
    assert "CONTENT-START" in text and "CONTENT-END" in text and "all done" in text
    assert "M-^[2J" in text and "tool write: denied" in text
    assert not list(workspace.iterdir())


def test_stored_text_the_commands_print_reaches_the_terminal_inert(cli_env, fake_api):
    """Titles, messages and snippets come from the database: `sessions`, `search`, `recall`, `export` and `pin`
    show them (search may bold its matches with its own SGR)."""
    fake_api.queue_text("zebra answer \x1b]52;c;UFdORUQ=\x07 \x9b2J\r\x1b[2K tail")
    res = subprocess.run(
        [sys.executable, "-m", "desktop", "chat", "zebra title \x1b]0;evil\x07 \x9b1m end"],
        env=cli_env,
        capture_output=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    for args, own in (
        (["sessions"], ()),
        (["sessions", "--json"], ()),
        (["search", "zebra"], (b"\x1b[1m", b"\x1b[0m")),
        (["recall", "1", "zebra"], ()),
        (["export", "1"], ()),
        (["pin", "1", "2"], ()),
        (["pin", "1"], ()),
    ):
        code, out = run_in_pty(args, cli_env)
        assert code == 0, (args, out)
        assert_inert(out, own)
        assert "zebra" in out.decode("utf-8") or args[0] == "pin", (args, out)
    code, out = run_in_pty(["sessions", "--json"], cli_env)
    listing = json.loads(out.decode("utf-8"))
    # The title was made one line of plain text when the chat took it (control characters became spaces).
    assert listing[0]["title"] == "zebra title ]0;evil 1m end"
