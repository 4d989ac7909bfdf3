"""`precis` end to end in subprocesses, against the loopback server, with a real PRECIS_HOME database."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from tests.fakeapi import Fault


def run(args, env, input_text=None, timeout=60):
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        env=env,
        input=input_text,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def cli_env(fake_api, precis_home):
    env = dict(os.environ)
    env.update(
        PRECIS_HOME=str(precis_home), ANTHROPIC_BASE_URL=fake_api.base_url, ANTHROPIC_API_KEY="test-key"
    )
    return env


def test_chat_prints_only_the_reply_on_stdout(cli_env, fake_api):
    fake_api.queue_text("Hello from the server")
    res = run(["chat", "--new", "Hi there"], cli_env)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "Hello from the server\n"
    assert "session 1" in res.stderr


def test_chat_continues_a_session_and_sessions_lists_it(cli_env, fake_api):
    fake_api.queue_text("one")
    assert run(["chat", "first"], cli_env).returncode == 0
    fake_api.queue_text("two")
    res = run(["chat", "--session", "1", "second"], cli_env)
    assert res.returncode == 0 and res.stdout == "two\n"
    body = fake_api.message_requests()[-1].body
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    listing = json.loads(run(["sessions", "--json"], cli_env).stdout)
    assert listing[0]["id"] == 1 and listing[0]["messages"] == 4 and listing[0]["title"] == "first"
    assert listing[0]["last_usage"]["input_tokens"] > 0


def test_export_json_and_markdown(cli_env, fake_api):
    fake_api.queue_text("**bold** answer")
    run(["chat", "question"], cli_env)
    data = json.loads(run(["export", "1", "--format", "json"], cli_env).stdout)
    assert data["session"]["id"] == 1
    assert [m["role"] for m in data["messages"]] == ["user", "assistant"]
    assert data["messages"][1]["content"] == [{"type": "text", "text": "**bold** answer"}]
    assert data["messages"][1]["usage"]["output_tokens"] > 0
    assert data["messages"][1]["status"] == "complete"
    assert data["compactions"] == []
    assert "test-key" not in json.dumps(data)
    md = run(["export", "1"], cli_env).stdout
    assert "## User" in md and "**bold** answer" in md


def test_errors_exit_non_zero_with_one_line_and_keep_the_message(cli_env, fake_api):
    fake_api.queue_fault(Fault.custom(401, "authentication_error", "invalid x-api-key"))
    res = run(["chat", "keep me"], cli_env)
    assert res.returncode == 1
    lines = [line for line in res.stderr.splitlines() if "error" in line]
    assert len(lines) == 1 and "API key" in lines[0]
    data = json.loads(run(["export", "1", "--format", "json"], cli_env).stdout)
    assert data["messages"][0]["content"][0]["text"] == "keep me"
    fake_api.queue_text("second time lucky")
    res = run(["chat", "--session", "1", "--retry"], cli_env)
    assert res.returncode == 0 and res.stdout == "second time lucky\n"


def test_usage_errors(cli_env):
    assert run(["export", "42"], cli_env).returncode == 1
    assert run(["chat", ""], cli_env).returncode == 1
    env = dict(cli_env)
    env.pop("ANTHROPIC_API_KEY")
    res = run(["chat", "hi"], env)
    assert res.returncode == 1 and "no API key" in res.stderr


def test_sigkill_mid_stream_keeps_committed_rows(cli_env, fake_api, precis_home):
    hold = Fault.hold(after=40, timeout=30)
    fake_api.queue_fault(hold)
    fake_api.queue_text("x" * 2000)  # 20-character chunks: 40 deltas = 800 characters before the hold
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", "chat", "survive this"],
        env=cli_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert hold.reached.wait(30)
    db = precis_home / "data" / "precis.db"
    # Wait until the progressive commit has written streamed text (it commits at least every 0.5 s).
    deadline = time.monotonic() + 10
    partial = ""
    while time.monotonic() < deadline and not partial:
        con = sqlite3.connect(db)
        rows = con.execute("SELECT content FROM messages WHERE role='assistant'").fetchall()
        con.close()
        partial = json.loads(rows[0][0])[0]["text"] if rows and json.loads(rows[0][0]) else ""
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    hold.release.set()
    assert partial.startswith("x")
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    res = run(["export", "1", "--format", "json"], cli_env)  # reopening sweeps 'streaming' rows
    data = json.loads(res.stdout)
    assert data["messages"][0]["content"][0]["text"] == "survive this"
    assert data["messages"][1]["status"] == "interrupted"
    assert data["messages"][1]["content"][0]["text"].startswith("x")


def seed_long_session(precis_home) -> None:
    """Session 1 with six long exchanges (about 48K tokens), written through the real store."""
    from desktop.store import Store

    store = Store.open_sync(precis_home / "data" / "precis.db")
    sid = store.repo.create_session("long", "claude-sonnet-4-6").id
    for i in range(6):
        store.repo.add_message(sid, "user", [{"type": "text", "text": f"question {i} " + "dolor " * 3000}])
        store.repo.add_message(
            sid, "assistant", [{"type": "text", "text": f"answer {i} " + "lorem ipsum " * 400}]
        )
    store.close_sync()


def test_compact_and_context_commands(cli_env, fake_api, precis_home):
    seed_long_session(precis_home)
    res = run(["compact", "1", "--focus", "the questions"], cli_env)
    assert res.returncode == 0, res.stderr
    assert "Context compacted" in res.stdout
    ctx = json.loads(run(["context", "1", "--json"], cli_env).stdout)
    assert ctx["summary_active"] and ctx["compactions"] == 1 and ctx["source"] == "estimate"
    data = json.loads(run(["export", "1", "--format", "json"], cli_env).stdout)
    assert len(data["compactions"]) == 1 and data["compactions"][0]["trigger"] == "manual"
    assert len(data["messages"]) == 12  # compaction never deletes the originals
    assert run(["compact", "42"], cli_env).returncode == 1


def test_context_json_prices_a_cliff_per_request(cli_env, fake_api, precis_home):
    """Ten Haiku 5.5 requests of 20K tokens each stay below its 100K price cliff: `precis context --json` says
    $0.0225 (the session's summed 200K would have been billed at 5x, $0.1125)."""
    from desktop.engine.types import Usage
    from desktop.store import Store

    store = Store.open_sync(precis_home / "data" / "precis.db")
    sid = store.repo.create_session("haiku", "claude-haiku-5-5").id
    for i in range(10):  # as the reply recorder writes a reply: streaming, its usage, then complete
        store.repo.add_message(sid, "user", [{"type": "text", "text": f"question {i}"}])
        row = store.repo.add_message(sid, "assistant", [], status="streaming", model="claude-haiku-5-5")
        store.repo.update_message(
            row.id,
            content=[{"type": "text", "text": f"answer {i}"}],
            status="complete",
            usage=Usage(20_000, 500, 0, 0),
        )
    store.close_sync()
    res = run(["context", str(sid), "--json"], cli_env)
    assert res.returncode == 0, res.stderr
    ctx = json.loads(res.stdout)
    assert ctx["cost_session"] == pytest.approx(0.0225)
    assert ctx["session_bill"]["total"] == pytest.approx(0.0225)


def test_sigkill_during_compaction_leaves_old_or_new_state(cli_env, fake_api, precis_home):
    seed_long_session(precis_home)
    hold = Fault.hold(after=2, timeout=30)
    fake_api.queue_fault(hold)  # the summary request streams two deltas, then stalls
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", "compact", "1"],
        env=cli_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert hold.reached.wait(30)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    hold.release.set()
    con = sqlite3.connect(precis_home / "data" / "precis.db")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT COUNT(*) FROM compactions").fetchone()[0] == 0  # the old state, whole
    assert con.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 12
    con.close()
    res = run(["compact", "1"], cli_env)  # and the next attempt completes: the new state, whole
    assert res.returncode == 0, res.stderr
    con = sqlite3.connect(precis_home / "data" / "precis.db")
    assert con.execute("SELECT COUNT(*) FROM compactions").fetchone()[0] == 1
    con.close()


def test_chat_recovers_from_overflow_headless_with_status_on_stderr(cli_env, fake_api, precis_home):
    seed_long_session(precis_home)  # ~48K tokens
    fake_api.window = 30_000  # the provider's real window is smaller than the catalog's 1M
    fake_api.queue_text("still here")
    res = run(["chat", "--session", "1", "and now?"], cli_env)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "still here\n"
    assert "Compressing context" in res.stderr
    assert [
        r.status for r in fake_api.message_requests() if "precis-summary" not in str(r.body.get("system"))
    ][:1] == [400]
    ctx = json.loads(run(["context", "1", "--json"], cli_env).stdout)
    assert ctx["window"] == 30_000 and ctx["summary_active"]


def test_retry_after_a_complete_reply_is_refused_and_appends_nothing(cli_env, fake_api):
    fake_api.queue_text("the one answer")
    assert run(["chat", "--new", "question"], cli_env).returncode == 0
    res = run(["chat", "--session", "1", "--retry"], cli_env)
    assert res.returncode == 1 and "nothing to retry" in res.stderr
    data = json.loads(run(["export", "1", "--format", "json"], cli_env).stdout)
    assert [m["role"] for m in data["messages"]] == ["user", "assistant"]  # no second reply appended


def test_sighup_stops_the_turn_like_sigterm(cli_env, fake_api, precis_home):
    hold = Fault.hold(after=5, timeout=30)
    fake_api.queue_fault(hold)
    fake_api.queue_text("y" * 400)
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", "chat", "hang up on me"],
        env=cli_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert hold.reached.wait(30)
    time.sleep(0.8)  # a progressive commit has happened
    os.kill(proc.pid, signal.SIGHUP)
    out, err = proc.communicate(timeout=20)
    hold.release.set()
    assert proc.returncode == 130, err  # stopped cleanly, not killed by the signal
    data = json.loads(run(["export", "1", "--format", "json"], cli_env).stdout)
    assert data["messages"][1]["status"] == "interrupted"


def test_compact_words_a_provider_error_like_the_chat_does(cli_env, fake_api, precis_home):
    seed_long_session(precis_home)
    fake_api.queue_fault(*[Fault.custom(529, "overloaded_error", "Overloaded")] * 4)
    res = run(["compact", "1"], cli_env)
    assert res.returncode == 1
    assert "overloaded" in res.stderr.lower()
    assert "Error code" not in res.stderr and "{'type'" not in res.stderr  # no raw SDK text


def _run_bytes(args, env, data: bytes):
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args], env=env, input=data, capture_output=True, timeout=60
    )


def test_input_that_is_not_clean_utf8_is_refused_before_anything_is_stored(cli_env, fake_api, precis_home):
    for data in (b"caf\xe9 au lait", b"\xff\xfe" + "ok".encode("utf-16-le")[:-1]):
        res = _run_bytes(["chat", "-"], cli_env, data)
        assert res.returncode == 1, res.stderr
        err = res.stderr.decode()
        assert "nothing was saved" in err and "Traceback" not in err
    bad_argv = subprocess.run(
        [sys.executable, "-m", "desktop", "chat", b"caf\xe9".decode("utf-8", "surrogateescape")],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        bad_argv.returncode == 1
        and "nothing was saved" in bad_argv.stderr
        and "Traceback" not in bad_argv.stderr
    )
    assert json.loads(run(["sessions", "--json"], cli_env).stdout) == []  # no empty "New chat" left behind


def test_utf8_with_a_bom_and_utf16_input_are_sent_as_text(cli_env, fake_api):
    fake_api.queue_text("one")
    assert _run_bytes(["chat", "-"], cli_env, "\ufeffhéllo".encode()).returncode == 0
    fake_api.queue_text("two")
    assert _run_bytes(["chat", "-"], cli_env, "wörld".encode("utf-16")).returncode == 0  # with its BOM
    data = json.loads(run(["export", "1", "--format", "json"], cli_env).stdout)
    assert data["messages"][0]["content"][0]["text"] == "héllo"
    data = json.loads(run(["export", "2", "--format", "json"], cli_env).stdout)
    assert data["messages"][0]["content"][0]["text"] == "wörld"
