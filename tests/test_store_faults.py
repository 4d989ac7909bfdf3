"""Fault injection for the store, through `precis` in subprocesses (and the window where it opens the database):
damaged, cut-short, foreign and newer databases, another process holding the lock before and during a reply,
a read-only home, a full disk, a home that is a file. Each refusal is one line on stderr, a non-zero exit, and
nothing lost or written.

The lock tests run on shortened waits (PRECIS_BUSY_TIMEOUT, PRECIS_LOCK_WAIT) scaled 1:20 from the shipped
ones (5 s busy timeout, 60 s wait): a 0.5 s and a 1 s hold stand for 10 s and 20 s; one test holds the lock
for 7 s, past the shipped busy timeout itself, against the shipped defaults.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from tests.cli_faults import (
    env_for,
    error_line,
    fingerprint,
    fsize_limit,
    lines,
    lock_held,
    message_count,
    one_line,
    remount_read_only,
    run,
    seed,
    tmpfs,
)
from tests.fakeapi import Fault

# 1:20 of the shipped waits: busy timeout 5 s -> 0.25 s, a write's whole wait 60 s -> 3 s.
SCALED = {"PRECIS_BUSY_TIMEOUT": "0.25", "PRECIS_LOCK_WAIT": "3"}


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


@pytest.fixture
def db(home):
    path = home / "data" / "precis.db"
    seed(path)
    return path


def damage(path, how):
    """Put the database file in one of the broken states the suite covers."""
    if how == "corrupt":  # the schema page overwritten: SQLite sees the header, then garbage
        data = bytearray(path.read_bytes())
        data[100:4096] = os.urandom(3996)
        path.write_bytes(bytes(data))
    elif how == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif how == "not-sqlite":
        path.write_bytes(b"this is somebody's notes file, not a database\n" * 50)
    elif how == "foreign-sqlite":
        path.unlink()
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
        con.execute("INSERT INTO photos (name) VALUES ('cat.jpg')")
        con.commit()
        con.close()
    elif how == "future":
        con = sqlite3.connect(path)
        con.execute("PRAGMA user_version = 99")
        con.close()


BROKEN = {
    "corrupt": "damaged",
    "truncated": "cut short",
    "not-sqlite": "not an SQLite database",
    "foreign-sqlite": "another program's SQLite database",
    "future": "newer Précis",
}


@pytest.mark.parametrize("how", list(BROKEN))
@pytest.mark.parametrize(
    "command",
    [
        ["chat", "hello"],
        ["sessions"],
        ["export", "1"],
        ["context", "1"],
        ["import-claude-code", "{transcript}"],
    ],
)
def test_a_broken_database_is_refused_in_one_sentence_and_left_untouched(
    how, command, home, db, fake_api, tmp_path
):
    damage(db, how)
    before = fingerprint(db.parent)
    transcript = tmp_path / "cc.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}) + "\n")
    args = [a.replace("{transcript}", str(transcript)) for a in command]
    res = run(args, env_for(home, fake_api.base_url))
    line = one_line(res)
    assert res.returncode != 0
    assert str(db) in line and BROKEN[how] in line and "left untouched" in line, line
    assert "start fresh" in line and ("backup" in line or "newer Précis" in line), line
    assert fingerprint(db.parent) == before  # no -wal, no -shm, not a byte changed
    assert not fake_api.message_requests()  # and nothing was sent


def test_the_window_refuses_a_broken_database_in_one_sentence(home, db):
    damage(db, "corrupt")
    before = fingerprint(db.parent)
    env = env_for(home, QT_QPA_PLATFORM="offscreen", PRECIS_QUIT_AFTER="5")
    res = run([], env, timeout=90)
    assert res.returncode == 1
    errors = [line for line in lines(res.stderr) if line.startswith("precis: error:")]
    assert "Traceback" not in res.stderr and len(errors) == 1, res.stderr
    assert "damaged" in errors[0] and "left untouched" in errors[0]
    assert fingerprint(db.parent) == before


@pytest.mark.parametrize("command", [["chat", "hello"], ["sessions"], ["export", "1"]])
def test_a_home_that_is_a_regular_file(command, tmp_path, fake_api):
    home = tmp_path / "home"
    home.write_text("not a folder")
    res = run(command, env_for(home, fake_api.base_url))
    line = one_line(res)
    assert res.returncode != 0 and str(home) in line and "in the way" in line, line
    assert home.read_text() == "not a folder"


def test_a_data_folder_that_is_a_file(home, fake_api):
    (home / "data").mkdir(parents=True, exist_ok=True)
    (home / "data").rmdir()
    (home / "data").write_text("x")
    res = run(["chat", "hello"], env_for(home, fake_api.base_url))
    line = one_line(res)
    assert res.returncode != 0 and "in the way" in line and str(home / "data") in line


# --- another process holds the lock ---------------------------------------------------------------------------
def test_read_only_commands_work_while_another_process_holds_the_lock(home, db, fake_api):
    """They open without writing: no sweep, no migration, no pragma that needs the write lock."""
    env = env_for(home, fake_api.base_url)  # the shipped waits: a write would block 5 s, then fail
    with lock_held(db):
        started = time.monotonic()
        sessions = run(["sessions", "--json"], env)
        export = run(["export", "1", "--format", "json"], env)
        context = run(["context", "1", "--json"], env)
        took = time.monotonic() - started
    for res in (sessions, export, context):
        assert res.returncode == 0, res.stderr
        assert "Traceback" not in res.stderr
    assert json.loads(sessions.stdout)[0]["messages"] == 6
    assert len(json.loads(export.stdout)["messages"]) == 6
    assert json.loads(context.stdout)["used"] > 0
    print(f"three read-only commands on a locked database: {took:.1f} s")


@pytest.mark.parametrize("hold", [0.5, 1.0])  # 10 s and 20 s at the scaled waits
def test_a_lock_held_before_the_reply_is_waited_out(hold, home, db, fake_api):
    fake_api.queue_text("waited for the lock")
    env = env_for(home, fake_api.base_url, **SCALED)
    with lock_held(db, hold):
        res = run(["chat", "--session", "1", "after the lock"], env)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "waited for the lock\n"
    data = json.loads(run(["export", "1", "--format", "json"], env).stdout)
    assert data["messages"][-2]["content"][0]["text"] == "after the lock"
    assert data["messages"][-1]["status"] == "complete"
    assert data["messages"][-1]["content"][0]["text"] == "waited for the lock"


def _committed_text(db) -> str:
    """The text the reply being streamed has committed so far."""
    con = sqlite3.connect(db)
    try:
        row = con.execute(
            "SELECT content FROM messages WHERE role='assistant' AND status='streaming'"
        ).fetchone()
    finally:
        con.close()
    return "".join(b.get("text", "") for b in json.loads(row[0])) if row is not None else ""


def _chat_with_lock_during_reply(home, db, fake_api, hold_seconds, env):
    """Start a reply, let 40 deltas stream, take the database's lock, let the reply finish under it."""
    hold = Fault.hold(after=40, timeout=60)
    fake_api.queue_fault(hold)
    fake_api.queue_text("z" * 2000)  # 20-character deltas: 800 before the hold, 1,200 after
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", "chat", "--session", "1", "during the lock"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert hold.reached.wait(30)
    deadline = time.monotonic() + 30
    # The clock commits what came before the hold, perhaps over several ticks on a slow machine: wait for all of it.
    while time.monotonic() < deadline and len(_committed_text(db)) < 800:
        time.sleep(0.05)
    with lock_held(db, hold_seconds):
        hold.release.set()  # the rest of the reply arrives while the lock is held
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("hold", [0.5, 1.0])  # 10 s and 20 s at the scaled waits
def test_a_lock_held_during_the_reply_never_loses_it(hold, home, db, fake_api):
    env = env_for(home, fake_api.base_url, **SCALED)
    res = _chat_with_lock_during_reply(home, db, fake_api, hold, env)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    assert res.stdout == "z" * 2000 + "\n"
    data = json.loads(run(["export", "1", "--format", "json"], env).stdout)
    assert data["messages"][-1]["status"] == "complete"
    assert data["messages"][-1]["content"][0]["text"] == "z" * 2000


def test_a_lock_longer_than_the_shipped_busy_timeout_during_a_reply(home, db, fake_api):
    """The shipped waits, unscaled: 7 s is past SQLite's 5 s busy timeout (main lost the reply here)."""
    env = env_for(home, fake_api.base_url)
    res = _chat_with_lock_during_reply(home, db, fake_api, 7.0, env)
    assert res.returncode == 0, res.stderr
    data = json.loads(run(["export", "1", "--format", "json"], env).stdout)
    assert data["messages"][-1]["status"] == "complete"
    assert data["messages"][-1]["content"][0]["text"] == "z" * 2000


def test_a_lock_longer_than_the_whole_wait_is_one_sentence_and_keeps_the_message(home, db, fake_api):
    env = env_for(home, fake_api.base_url, PRECIS_BUSY_TIMEOUT="0.2", PRECIS_LOCK_WAIT="1")
    res = _chat_with_lock_during_reply(home, db, fake_api, 3.0, env)
    line = error_line(res)
    assert res.returncode == 1
    assert "could not be saved" in line and "locked by another program" in line, line
    assert res.stdout == "z" * 2000 + "\n"  # the user saw the reply
    data = json.loads(run(["export", "1", "--format", "json"], env).stdout)
    assert data["messages"][-2]["content"][0]["text"] == "during the lock"  # the user's message is kept
    assert data["messages"][-1]["content"][0]["text"].startswith("z" * 800)  # and what was committed


def test_a_lock_held_past_the_wait_before_a_reply_saves_nothing_and_says_so(home, db, fake_api):
    env = env_for(home, fake_api.base_url, PRECIS_BUSY_TIMEOUT="0.2", PRECIS_LOCK_WAIT="0.5")
    with lock_held(db):
        res = run(["chat", "--session", "1", "never stored"], env)
    line = one_line(res)
    assert res.returncode == 1 and "locked by another program" in line and str(db) in line
    assert message_count(db) == 6 and not fake_api.message_requests()


# --- read-only home, full disk ---------------------------------------------------------------------------------
def test_a_read_only_home(tmp_path, fake_api):
    root = tmp_path / "ro"
    with tmpfs(root, "8m") as mounted:
        if mounted is None and os.geteuid() == 0:
            pytest.skip("root without mount: no way to make a read-only home")
        home = root / "home"
        seed(home / "data" / "precis.db")
        env = env_for(home, fake_api.base_url)
        if mounted is None:
            for d in (home / "data", home):
                d.chmod(0o500)
        elif not remount_read_only(root):
            pytest.skip("could not remount the tmpfs read-only")
        before = fingerprint(home)
        res = run(["chat", "--session", "1", "hello"], env)
        line = one_line(res)
        assert res.returncode != 0 and "cannot be written" in line, line
        sessions = run(["sessions", "--json"], env)
        assert sessions.returncode == 0, sessions.stderr
        assert json.loads(sessions.stdout)[0]["messages"] == 6
        export = run(["export", "1"], env)
        assert export.returncode == 0 and "question 2" in export.stdout, export.stderr
        context = run(["context", "1"], env)
        assert context.returncode == 0, context.stderr
        assert fingerprint(home) == before
        assert not fake_api.message_requests()


def test_a_full_disk(tmp_path, fake_api):
    root = tmp_path / "small"
    with tmpfs(root, "2m") as mounted:
        home = (mounted or tmp_path) / "home"
        db = home / "data" / "precis.db"
        seed(db)
        env = env_for(home, fake_api.base_url)
        run(["sessions"], env)
        preexec = None
        if mounted is not None:
            fd = os.open(mounted / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
            for size in (65536, 4096, 512, 1):  # fill the file system to the last byte
                while True:
                    try:
                        os.write(fd, b"\0" * size)
                    except OSError:
                        break
            os.close(fd)
        else:
            print("no tmpfs: a file-size limit stands for the full disk")
            preexec = fsize_limit(db.stat().st_size)
        count = message_count(db)
        fake_api.queue_text("never stored")
        res = subprocess.run(
            [sys.executable, "-m", "desktop", "chat", "--session", "1", "-"],
            env=env,
            input="x" * 200_000,
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=preexec,
        )
        line = one_line(res)
        assert res.returncode != 0, res.stderr
        assert ("full" in line or "could not be written" in line) and "nothing was" in line, line
        assert message_count(db) == count
        con = sqlite3.connect(db)
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        con.close()


# --- two processes on one session ------------------------------------------------------------------------------
def _start_held_chat(env, fake_api, text="first process"):
    hold = Fault.hold(after=5, timeout=60)
    fake_api.queue_fault(hold)
    fake_api.queue_text("a" * 400)
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", "chat", "--session", "1", text],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert hold.reached.wait(30)
    return proc, hold


def test_a_second_process_on_a_busy_session_refuses_in_one_sentence(home, db, fake_api):
    env = env_for(home, fake_api.base_url, PRECIS_SESSION_WAIT="1")
    first, hold = _start_held_chat(env, fake_api)
    second = run(["chat", "--session", "1", "second process"], env)
    hold.release.set()
    out, err = first.communicate(timeout=60)
    waiting, refused = lines(second.stderr)  # it said it waits, then why it gave up
    assert "waiting for another Précis process" in waiting and f"process {first.pid}" in waiting, (
        second.stderr
    )
    line = one_line(subprocess.CompletedProcess(second.args, second.returncode, second.stdout, refused))
    assert second.returncode == 1 and "busy" in line and f"process {first.pid}" in line, line
    assert first.returncode == 0 and out == "a" * 400 + "\n", err
    data = json.loads(run(["export", "1", "--format", "json"], env).stdout)
    texts = [m["content"][0]["text"] for m in data["messages"]]
    assert "second process" not in texts  # nothing of the refused one was stored
    assert texts[-2:] == ["first process", "a" * 400] and data["messages"][-1]["status"] == "complete"
    assert len(fake_api.message_requests()) == 1


def test_a_second_process_waits_for_the_first_turn_and_sees_its_reply(home, db, fake_api):
    env = env_for(home, fake_api.base_url, PRECIS_SESSION_WAIT="60")
    first, hold = _start_held_chat(env, fake_api)
    fake_api.queue_text("second reply")
    second = subprocess.Popen(
        [sys.executable, "-m", "desktop", "chat", "--session", "1", "second process"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    said = []  # the second says it waits before anything else happens (its stderr, up to that line)
    while not said or "waiting for another Précis process" not in said[-1]:
        said.append(second.stderr.readline())
        assert said[-1], "".join(said)  # it ended without saying it waits
    assert f"(process {first.pid}) using this chat" in said[-1]
    assert len(fake_api.message_requests()) == 1  # and it has not sent
    threading.Timer(0.5, hold.release.set).start()
    first.communicate(timeout=60)
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    assert out == "second reply\n"
    body = fake_api.message_requests()[-1].body
    last_texts = [
        m["content"][-1]["text"] if isinstance(m["content"], list) else m["content"]
        for m in body["messages"][-3:]
    ]
    assert last_texts == ["first process", "a" * 400, "second process"]  # one history, in order


def test_a_dead_process_lock_is_taken_over(home, db, fake_api):
    env = env_for(home, fake_api.base_url, PRECIS_SESSION_WAIT="1")
    first, hold = _start_held_chat(env, fake_api)
    first.kill()
    first.wait(10)
    hold.release.set()  # the server puts the undelivered reply back: the next request gets it
    res = run(["chat", "--session", "1", "again"], env)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "a" * 400 + "\n"


def test_a_compaction_whose_boundary_moved_says_so(home, fake_api):
    from tests.test_cli import seed_long_session

    seed_long_session(home)
    env = env_for(home, fake_api.base_url)
    hold = Fault.hold(after=2, timeout=60)
    fake_api.queue_fault(hold)  # the summary request streams two deltas, then waits
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", "compact", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert hold.reached.wait(30)
    con = sqlite3.connect(home / "data" / "precis.db")  # another writer compacts meanwhile (an older Précis)
    con.execute(
        "INSERT INTO compactions (session_id, summary, covers_through_message_id, trigger, stats, "
        "created_at) VALUES (1, 'elsewhere', 4, 'manual', '{}', 1)"
    )
    con.commit()
    con.close()
    hold.release.set()
    out, err = proc.communicate(timeout=60)
    res = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    line = error_line(res)
    assert proc.returncode == 1 and "compacted elsewhere" in line and "nothing was changed" in line, line
    con = sqlite3.connect(home / "data" / "precis.db")
    assert [r[0] for r in con.execute("SELECT summary FROM compactions")] == ["elsewhere"]
    con.close()


# --- in-process: what the window sees ------------------------------------------------------------------------
async def test_a_reply_that_cannot_be_saved_is_kept_and_retry_saves_it_without_a_new_request(
    fake_api, precis_home, monkeypatch
):
    """The final commit waits (bounded), then reports one sentence; the reply stays in memory and Retry commits
    it instead of asking the model again."""
    import asyncio

    from desktop.engine.events import TurnError
    from tests.conftest import _open_engine

    monkeypatch.setenv("PRECIS_BUSY_TIMEOUT", "0.1")
    monkeypatch.setenv("PRECIS_LOCK_WAIT", "0.5")
    async with _open_engine() as engine:
        sid = await engine.new_session()
        hold = Fault.hold(after=3, timeout=60)
        fake_api.queue_fault(hold)
        fake_api.queue_text("k" * 200)
        turn = asyncio.ensure_future(engine.send(sid, "keep my reply"))
        assert await asyncio.to_thread(hold.reached.wait, 30)
        db = precis_home / "data" / "precis.db"
        with lock_held(db):  # held until the reply has failed to land
            hold.release.set()
            assert await turn is None
        errors = [e for e in engine.events if isinstance(e, TurnError)]
        assert len(errors) == 1 and errors[0].kind == "storage" and errors[0].retryable
        assert "could not be saved" in errors[0].message and "\n" not in errors[0].message
        requests = len(fake_api.message_requests())
        reply = await engine.retry(sid)  # the lock is free now
        assert reply is not None and reply.status == "complete" and reply.content[0]["text"] == "k" * 200
        assert len(fake_api.message_requests()) == requests  # saved, not asked again
        stored = await engine.store.messages(sid)
        assert [m.role for m in stored] == ["user", "assistant"] and stored[1].status == "complete"
