"""The multi-step turn with real tools against the test server: definitions in the request, permission answers,
results paired with their calls, Stop during a running tool, a huge result, a small window, a crash mid-loop."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from desktop.engine.compaction.request_shape import problems
from desktop.engine.events import Notice, TurnError
from desktop.tools.events import PermissionAsked, ToolCallFinished, ToolCallStarted
from desktop.tools.permissions import Answer
from tests.tools_helpers import make_workspace, tool_runtime

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process


def _results(messages):
    return {
        b["tool_use_id"]: b
        for m in messages
        if m.role == "user"
        for b in m.content
        if b.get("type") == "tool_result"
    }


def _assert_pairs_intact(messages):
    calls = [
        b["id"] for m in messages if m.role == "assistant" for b in m.content if b.get("type") == "tool_use"
    ]
    answered = _results(messages)
    assert calls and all(c in answered for c in calls)


async def test_read_grep_edit_after_approval_and_run_in_one_turn(fake_api, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    fake_api.queue_tool_use("read", {"file_path": "src/config.py"}, id="toolu_read")
    fake_api.queue_tool_use("grep", {"pattern": "parse_config"}, id="toolu_grep")
    fake_api.queue_tool_use(
        "edit",
        {
            "file_path": "src/config.py",
            "old_string": "open(path).read()",
            "new_string": "open(path, encoding='utf-8').read()",
        },
        id="toolu_edit",
    )
    fake_api.queue_tool_use("run", {"command": "grep -c encoding src/config.py"}, id="toolu_run")
    fake_api.queue_text("Done: parse_config now reads UTF-8.")
    async with tool_runtime(workspace=ws, allow=["read", "grep", "run"]) as rt:
        asked = []

        def answer(event):
            if isinstance(event, PermissionAsked):
                asked.append(event.request)
                rt.toolbox.answer(event.request.id, Answer.ONCE)

        rt.engine.subscribe(answer)
        sid = await rt.engine.new_session()
        reply = await rt.engine.send(sid, "Make parse_config read UTF-8.")
        messages = await rt.store.messages(sid)
        audit = await rt.tool_log.audit(sid)
    assert reply is not None and reply.content[0]["text"].startswith("Done")
    # Only the edit asked (read, grep and run were allowed up front), and its prompt showed the diff.
    assert [r.spec.name for r in asked] == ["edit"]
    assert (
        "-    return open(path).read()" in asked[0].diff
        and "+    return open(path, encoding='utf-8')" in asked[0].diff
    )
    assert "encoding='utf-8'" in (ws / "src" / "config.py").read_text()
    results = _results(messages)
    assert "def parse_config" in results["toolu_read"]["content"]
    assert "src/main.py:1:" in results["toolu_grep"]["content"]
    assert results["toolu_run"]["content"].startswith("1\n[exit code 0]")
    assert not any(r.get("is_error") for r in results.values())
    _assert_pairs_intact(messages)
    # Every request offered the built-in tools in the same fixed order.
    bodies = [r.body for r in fake_api.message_requests()]
    assert len(bodies) == 5
    names = [[t["name"] for t in b["tools"]] for b in bodies]
    assert all(n == ["read", "glob", "grep", "write", "edit", "run"] for n in names)
    assert json.dumps(bodies[0]["tools"]) == json.dumps(bodies[-1]["tools"])
    assert [(a.tool, a.decision, a.outcome) for a in audit] == [
        ("read", "allow-list", "ok"),
        ("grep", "allow-list", "ok"),
        ("edit", "asked:once", "ok"),
        ("run", "allow-list", "ok"),
    ]


async def test_a_turns_tool_events_reach_the_engines_listeners_from_its_conversation(fake_api, tmp_path):
    """The engine's bus alone carries a chat's tool events, in the turn's order: the call's row, the call
    started and finished, then the row with its result."""
    ws = make_workspace(tmp_path / "ws")
    fake_api.queue_tool_use("read", {"file_path": "src/config.py"}, id="toolu_read")
    fake_api.queue_tool_use(
        "edit",
        {
            "file_path": "src/config.py",
            "old_string": "open(path).read()",
            "new_string": "open(path).read().strip()",
        },
        id="toolu_edit",
    )
    fake_api.queue_text("Done.")
    async with tool_runtime(workspace=ws, allow=["read"]) as rt:
        seen: list = []

        def listen(event):
            seen.append(event)
            if isinstance(event, PermissionAsked):
                rt.toolbox.answer(event.request.id, Answer.ONCE)

        rt.engine.subscribe(listen)
        sid = await rt.engine.new_session()
        await rt.engine.send(sid, "Strip it.")
    kinds = [
        type(e).__name__
        for e in seen
        if e.session_id == sid
        and type(e).__name__
        in ("ToolCallStarted", "ToolCallFinished", "PermissionAsked", "PermissionSettled")
    ]
    assert kinds == [
        "ToolCallStarted",
        "ToolCallFinished",
        "PermissionAsked",
        "PermissionSettled",
        "ToolCallStarted",
        "ToolCallFinished",
    ]
    finished = [e for e in seen if isinstance(e, ToolCallFinished)]
    assert [(e.tool_use_id, e.status) for e in finished] == [("toolu_read", "ok"), ("toolu_edit", "ok")]
    # Between the reply that called the tool and the row that answers it.
    order = [
        e for e in seen if e.session_id == sid and type(e).__name__ in ("MessageAdded", "ToolCallFinished")
    ]
    first = next(i for i, e in enumerate(order) if isinstance(e, ToolCallFinished))
    assert order[first - 1].message.role == "assistant" and order[first + 1].message.role == "user"


async def test_the_gauge_counts_the_tool_definitions(fake_api, tmp_path):
    async with tool_runtime(workspace=make_workspace(tmp_path / "ws")) as rt:
        sid = await rt.engine.new_session()
        await rt.engine.send(sid, "hello")
        snap = await rt.engine.measure(sid)
    assert snap.breakdown["tools"] > 200
    async with tool_runtime(workspace=None) as rt:
        sid = await rt.engine.new_session()
        await rt.engine.send(sid, "hello")
        assert (await rt.engine.measure(sid)).breakdown["tools"] == 0


async def test_each_answer_decides_this_call_and_the_next(fake_api, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    answers = [Answer.DENY, Answer.CHAT, Answer.ALWAYS]
    async with tool_runtime(workspace=ws) as rt:
        asked = []

        def answer(event):
            if isinstance(event, PermissionAsked):
                asked.append(event.request.spec.name)
                rt.toolbox.answer(event.request.id, answers.pop(0))

        rt.engine.subscribe(answer)
        sid = await rt.engine.new_session()
        fake_api.queue_tool_use("run", {"command": "echo one"}, id="t1")  # denied
        fake_api.queue_tool_use("run", {"command": "echo two"}, id="t2")  # allowed for this chat
        fake_api.queue_tool_use("run", {"command": "echo three"}, id="t3")  # no prompt: allowed for the chat
        fake_api.queue_tool_use("glob", {"pattern": "*"}, id="t4")  # always
        fake_api.queue_text("ok")
        await rt.engine.send(sid, "go")
        other = await rt.engine.new_session()
        fake_api.queue_tool_use("glob", {"pattern": "*"}, id="t5")  # saved: no prompt in another chat
        fake_api.queue_tool_use("run", {"command": "echo four"}, id="t6")  # chat approval does not carry over
        fake_api.queue_text("ok")
        answers.append(Answer.ONCE)
        await rt.engine.send(other, "go")
        results = _results(await rt.store.messages(sid)) | _results(await rt.store.messages(other))
        saved = await rt.tool_log.approvals()
    assert asked == ["run", "run", "glob", "run"]
    assert results["t1"]["is_error"] and "denied" in results["t1"]["content"]
    assert [results[t]["content"].split("\n")[0] for t in ("t2", "t3", "t6")] == ["two", "three", "four"]
    assert [(a.server, a.tool) for a in saved] == [("builtin", "glob")]


async def test_nobody_to_ask_ends_the_turn_with_a_reason(fake_api, tmp_path):
    fake_api.queue_tool_use("write", {"file_path": "x.txt", "content": "x"}, id="tw")
    async with tool_runtime(workspace=make_workspace(tmp_path / "ws"), asker=None) as rt:
        sid = await rt.engine.new_session()
        assert await rt.engine.send(sid, "write x") is None
        messages = await rt.store.messages(sid)
    errors = [e for e in rt.events if isinstance(e, TurnError)]
    assert [e.kind for e in errors] == ["tool_permission"] and "--allow write" in errors[0].message
    assert len(fake_api.message_requests()) == 1  # the model was not called again
    assert _results(messages)["tw"]["is_error"] and not (tmp_path / "ws" / "x.txt").exists()


async def test_stop_during_a_running_tool_answers_the_call_and_kills_it(fake_api, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    fake_api.queue_tool_use("run", {"command": "sleep 30; touch finished"}, id="tslow")
    async with tool_runtime(workspace=ws, yes=True) as rt:
        sid = await rt.engine.new_session()
        started = asyncio.Event()
        rt.engine.subscribe(lambda e: started.set() if isinstance(e, ToolCallStarted) else None)
        turn = asyncio.ensure_future(rt.engine.send(sid, "wait for it"))
        await asyncio.wait_for(started.wait(), 30)
        rt.engine.stop(sid)
        await asyncio.wait_for(turn, 30)
        messages = await rt.store.messages(sid)
    result = _results(messages)["tslow"]
    assert result["is_error"] and "cancelled" in result["content"]
    assert [e.status for e in rt.events if isinstance(e, ToolCallFinished)] == ["cancelled"]
    assert len(fake_api.message_requests()) == 1 and not (ws / "finished").exists()


async def test_a_tool_printing_200000_characters_reaches_the_model_as_a_preview(fake_api, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    fake_api.queue_tool_use(
        "run",
        {
            "command": "python3 -c \"print('x' * 99 + '\\n', end='') \" ; "
            "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 200000"
        },
        id="tbig",
    )
    fake_api.queue_tool_use("read", {"file_path": "@spill/PLACEHOLDER"}, id="tread")
    fake_api.queue_text("read it")
    async with tool_runtime(workspace=ws, yes=True) as rt:
        sid = await rt.engine.new_session()
        await rt.engine.send(sid, "print a lot")
        messages = await rt.store.messages(sid)
    stored = _results(messages)["tbig"]["content"]
    assert len(stored) > 200_000  # the chat keeps the whole output
    sent = fake_api.message_requests()[1].body["messages"][-1]["content"][0]["content"]
    assert len(sent) < 5_000 and "@spill/" in sent and str(tmp_path) not in sent
    assert "read more with the read tool" in sent


async def test_the_model_reads_a_spilled_result_through_the_read_tool(fake_api, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    fake_api.queue_tool_use("run", {"command": "seq 1 40000"}, id="tbig")
    async with tool_runtime(workspace=ws, yes=True) as rt:
        sid = await rt.engine.new_session()
        fake_api.queue_text("first")
        await rt.engine.send(sid, "count")
        sent = fake_api.message_requests()[1].body["messages"][-1]["content"][0]["content"]
        virtual = sent.split('file_path "')[1].split('"')[0]
        fake_api.queue_tool_use("read", {"file_path": virtual, "view_range": [20000, 20002]}, id="tread")
        fake_api.queue_text("second")
        await rt.engine.send(sid, "read the middle")
        result = _results(await rt.store.messages(sid))["tread"]
    assert virtual.startswith("@spill/") and result["content"] == "20000\n20001\n20002"


async def test_sixty_tool_rounds_in_an_8k_window_reach_no_error(fake_api, tmp_path, monkeypatch):
    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "8000")
    fake_api.window = 8_000
    ws = make_workspace(tmp_path / "ws")
    for n in range(60):
        fake_api.queue_tool_use("run", {"command": f"seq {n} {n + 300}"}, id=f"t{n:02d}")
    fake_api.queue_text("all done")
    async with tool_runtime(
        workspace=ws, yes=True, settings={"max_output_tokens": 1024, "max_model_calls": 100}
    ) as rt:
        sid = await rt.engine.new_session()
        reply = await rt.engine.send(sid, "Count sixty times.")
        messages = await rt.store.messages(sid)
    assert [e for e in rt.events if isinstance(e, TurnError)] == []
    assert reply is not None and reply.content[0]["text"] == "all done"
    assert len(_results(messages)) == 60
    ok = [r for r in fake_api.message_requests() if r.status == 200]
    assert all(r.prompt_tokens <= 8_000 for r in ok)


async def test_the_per_turn_model_call_cap_comes_from_the_settings(fake_api, tmp_path):
    for n in range(5):
        fake_api.queue_tool_use("glob", {"pattern": f"{n}*"}, id=f"g{n}")
    async with tool_runtime(
        workspace=make_workspace(tmp_path / "ws"), yes=True, settings={"max_model_calls": 3}
    ) as rt:
        sid = await rt.engine.new_session()
        await rt.engine.send(sid, "loop")
        messages = await rt.store.messages(sid)
    assert len(fake_api.message_requests()) == 3 and len(_results(messages)) == 3
    assert any(isinstance(e, Notice) and "3 model calls" in e.text for e in rt.events)


async def test_repeating_the_same_calls_in_small_rounds_stops_the_turn(fake_api, tmp_path):
    for _ in range(6):
        fake_api.queue_tool_use("glob", {"pattern": "*"})
    async with tool_runtime(workspace=make_workspace(tmp_path / "ws"), yes=True) as rt:
        sid = await rt.engine.new_session()
        await rt.engine.send(sid, "loop")
    # The first call is new; the next three repeat it: the turn ends after four rounds.
    assert len(fake_api.message_requests()) == 4
    assert any(isinstance(e, Notice) and "repeated" in e.text for e in rt.events)


CRASHING_CHILD = textwrap.dedent("""
    import asyncio, sys
    from desktop.engine.config.secrets import Credentials
    from desktop.runtime import open_runtime, toolbox_factory

    async def main():
        async with open_runtime(credentials=Credentials(api_key="test-key", source="env"),
                                toolbox=toolbox_factory(workspace=sys.argv[1], yes=True)) as rt:
            sid = await rt.engine.new_session()
            await rt.engine.send(sid, "run the slow thing")

    asyncio.run(main())
""")


@pytest.mark.loopback  # the crashing engine runs in another process
async def test_sigkill_mid_loop_then_restart_leaves_every_tool_use_answered(fake_api, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    fake_api.queue_tool_use("run", {"command": "echo fast"}, id="t_fast")
    fake_api.queue_tool_use("run", {"command": "touch started; sleep 60"}, id="t_slow")
    child = subprocess.Popen(
        [sys.executable, "-c", CRASHING_CHILD, str(ws)], env=os.environ.copy(), cwd=os.getcwd()
    )
    try:
        for _ in range(600):
            if (ws / "started").exists() or child.poll() is not None:
                break
            await asyncio.sleep(0.05)
        assert (ws / "started").exists()
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    fake_api.queue_text("picked up again")
    async with tool_runtime(workspace=ws, yes=True) as rt:
        sid = (await rt.store.list_sessions())[0].id
        messages = await rt.store.messages(sid)
        _assert_pairs_intact(messages)
        assert "interrupted" in _results(messages)["t_slow"]["content"]
        assert not _results(messages)["t_fast"].get("is_error")
        await rt.engine.send(sid, "what happened?")
    body = fake_api.message_requests()[-1].body
    assert problems(body["messages"]) == []


async def test_repeating_a_call_whose_result_changes_is_progress(fake_api, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    (ws / "n").write_text("0")
    for _ in range(6):
        fake_api.queue_tool_use("run", {"command": "echo $(( $(cat n) + 1 )) > n; cat n"})
    fake_api.queue_text("counted to six")
    async with tool_runtime(workspace=ws, yes=True) as rt:
        sid = await rt.engine.new_session()
        reply = await rt.engine.send(sid, "count")
    assert reply is not None and reply.content[0]["text"] == "counted to six"
    assert (ws / "n").read_text().strip() == "6"
