"""The artifact ledger: derived from stored tool calls, folded across compactions, sent next to the summary."""

from __future__ import annotations

import pytest

from desktop.engine.compaction.ledger import COMMAND_SHOWN, build, render
from desktop.engine.types import StoredMessage

# Engine behaviour, not HTTP: the fake server's script answered in-process (tests/scripted_provider.py).
pytestmark = pytest.mark.in_process


def call(i: int, mid: int, name: str, **args) -> StoredMessage:
    return StoredMessage(
        mid, 1, "assistant", [{"type": "tool_use", "id": f"t{i}", "name": name, "input": args}]
    )


def result(i: int, mid: int, text: str, error: bool = False) -> StoredMessage:
    block = {"type": "tool_result", "tool_use_id": f"t{i}", "content": text}
    if error:
        block["is_error"] = True
    return StoredMessage(mid, 1, "user", [block])


HISTORY = [
    call(1, 1, "read", file_path="src/a.py"),
    result(1, 2, "code"),
    call(2, 3, "edit", file_path="src/a.py", old_string="x", new_string="y"),
    result(2, 4, "edited"),
    call(3, 5, "run", command="pytest -q"),
    result(3, 6, "1 failed\n[exit code 1]", error=True),
    call(4, 7, "Bash", command="ls"),
    result(4, 8, "a.py"),
    call(5, 9, "write", file_path="../out.txt", content="x"),
    result(5, 10, "write: outside", error=True),
    call(6, 11, "Read", file_path="src/b.py"),
    result(6, 12, "more"),
]


def test_the_ledger_names_files_commands_with_exit_codes_and_errors():
    ledger = build(HISTORY)
    assert ledger["read"] == ["src/a.py", "src/b.py"] and ledger["written"] == ["src/a.py"]
    assert ledger["commands"] == [["pytest -q", 1], ["ls", 0]]
    assert ledger["errors"] == ["write ../out.txt: write: outside"]
    text = render(ledger)
    assert "Files written or edited: src/a.py" in text and "- pytest -q (1)" in text
    assert render(build(HISTORY)) == text  # deterministic


def test_a_later_compaction_folds_the_previous_ledger_in():
    first = build(HISTORY[:4])
    later = build(HISTORY[4:], previous=first)
    assert later == build(HISTORY)
    assert render(build([])) == ""


async def test_a_summary_of_a_tool_session_carries_the_ledger(fake_api, tmp_path, monkeypatch):
    from tests.tools_helpers import make_workspace, tool_runtime

    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "8000")
    fake_api.window = 8_000
    ws = make_workspace(tmp_path / "ws")
    async with tool_runtime(workspace=ws, yes=True, settings={"max_output_tokens": 1024}) as rt:
        sid = await rt.engine.new_session()
        fake_api.queue_tool_use("read", {"file_path": "src/config.py"}, id="r1")
        fake_api.queue_tool_use("run", {"command": "exit 4"}, id="r2")
        fake_api.queue_text("looked")
        await rt.engine.send(sid, "Look around. " * 50)
        for n in range(6):
            fake_api.queue_text(f"reply {n}")
            await rt.engine.send(sid, f"Next step {n}. " * 150)
        outcome = await rt.engine.compact(sid, "manual")
        assert outcome.ok, outcome.message
        fake_api.queue_text("after")
        await rt.engine.send(sid, "go on")
    first_user = fake_api.message_requests()[-1].body["messages"][0]["content"][0]["text"]
    assert "<artifact-ledger>" in first_user and "Files read: src/config.py" in first_user
    assert "- exit 4 (4)" in first_user


async def test_after_a_summary_the_files_touched_last_come_back_fresh_from_disk(
    fake_api, tmp_path, monkeypatch
):
    from tests.tools_helpers import make_workspace, tool_runtime

    monkeypatch.setenv("PRECIS_CONTEXT_WINDOW", "8000")
    fake_api.window = 8_000
    ws = make_workspace(tmp_path / "ws")
    (ws / "gone.py").write_text("soon deleted\n")
    async with tool_runtime(workspace=ws, yes=True, settings={"max_output_tokens": 1024}) as rt:
        sid = await rt.engine.new_session()
        fake_api.queue_tool_use("read", {"file_path": "gone.py"}, id="r0")
        fake_api.queue_tool_use("read", {"file_path": "src/main.py"}, id="r1")
        fake_api.queue_tool_use(
            "edit",
            {
                "file_path": "src/config.py",
                "old_string": "open(path)",
                "new_string": "open(path, encoding='utf-8')",
            },
            id="r2",
        )
        fake_api.queue_text("edited")
        await rt.engine.send(sid, "Fix it. " * 50)
        (ws / "gone.py").unlink()
        (ws / "src" / "main.py").write_text("# changed on disk after the read\n")
        for n in range(6):
            fake_api.queue_text(f"reply {n}")
            await rt.engine.send(sid, f"Next step {n}. " * 150)
        outcome = await rt.engine.compact(sid, "manual")
        assert outcome.ok, outcome.message
        fake_api.queue_text("after")
        await rt.engine.send(sid, "go on")
    head = fake_api.message_requests()[-1].body["messages"][0]["content"][0]["text"]
    files = head.split("<recent-files>")[1]
    # The edited file first, then the read one as it is now; the deleted file is left out.
    assert files.index("=== src/config.py ===") < files.index("=== src/main.py ===")
    assert "encoding='utf-8'" in files and "# changed on disk after the read" in files
    assert "gone.py ===" not in files


def say(mid: int, role: str, text: str) -> StoredMessage:
    return StoredMessage(mid, 1, role, [{"type": "text", "text": text}])


def test_decisions_and_their_reasons_are_kept_from_the_transcript_not_from_the_summariser():
    history = [
        say(1, "user", "Which journal mode? The app and the CLI share the database."),
        say(
            2,
            "assistant",
            "Let me think. We decided on WAL mode because the CLI reads while the app writes. "
            "Nothing else changes.",
        ),
        say(3, "user", "Let's go with httpx instead of requests, because it does HTTP/2."),
        say(4, "assistant", "Decision: keep the summaries in English.\nThe weather is nice."),
        say(5, "assistant", "I chose a B-tree over a hash index because ranges are common."),
        StoredMessage(
            6,
            1,
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t9",
                    "content": "we decided nothing here because it is a tool's output",
                }
            ],
        ),
        say(7, "assistant", "Wir haben entschieden, SQLite zu nehmen, weil es eingebettet ist."),
        say(8, "user", "我们决定使用 WAL 模式，因为命令行需要读取。"),
        say(9, "assistant", "The tests pass because the fixture is fixed."),  # a reason, not a decision
    ]
    ledger = build(history)
    assert ledger["decisions"] == [
        "We decided on WAL mode because the CLI reads while the app writes. [#2]",
        "Let's go with httpx instead of requests, because it does HTTP/2. [#3]",
        "Decision: keep the summaries in English. [#4]",
        "I chose a B-tree over a hash index because ranges are common. [#5]",
        "Wir haben entschieden, SQLite zu nehmen, weil es eingebettet ist. [#7]",
        "我们决定使用 WAL 模式，因为命令行需要读取。 [#8]",
    ]
    text = render(ledger)
    assert "Decisions stated in the conversation" in text
    assert "- We decided on WAL mode because the CLI reads while the app writes. [#2]" in text
    # Folded into the next compaction's ledger, whatever its summary says.
    later = build(
        [say(10, "assistant", "We decided to drop Python 3.10 because of match statements.")], ledger
    )
    assert later["decisions"][0].startswith("We decided on WAL mode") and later["decisions"][-1].endswith(
        "[#10]"
    )


def test_paths_under_one_directory_name_it_once():
    # Real sessions name files by absolute path: forty files under one project directory repeated that
    # directory forty times in a block every later request reads. It is named once; each file stays findable.
    root = "/Users/someone/projects/service-worktrees/service-feature-branch"
    history = []
    for k in range(20):
        history += [
            call(2 * k, 4 * k + 1, "Read", file_path=f"{root}/lib/module_{k}.ex"),
            result(2 * k, 4 * k + 2, "code"),
            call(2 * k + 1, 4 * k + 3, "Edit", file_path=f"{root}/test/module_{k}_test.exs"),
            result(2 * k + 1, 4 * k + 4, "edited"),
        ]
    ledger = build(history)
    text = render(ledger)
    assert text.count(root) == 1
    assert "lib/module_19.ex" in text and "test/module_0_test.exs" in text
    plain = f"{root}/lib/module_19.ex"
    assert len(text) < sum(len(p) for p in ledger["read"] + ledger["written"]) and plain not in text
    assert render(build(HISTORY)).count("src/a.py") == 1  # no common directory worth naming: as before


def test_the_ledger_names_each_file_once_and_shortens_long_commands():
    # Every later request reads the ledger: a file edited after it was read is named in the edited list alone,
    # and a command is shown by its start (an inline script of 200 characters said no more than its first 80);
    # the ledger keeps the longer text, and recall reads the call itself.
    script = "cd test && uv run python -c \"import sys; sys.path.insert(0, '..'); " + "x = 1; " * 30 + '"'
    history = [*HISTORY, call(7, 13, "Bash", command=script), result(7, 14, "ok")]
    ledger = build(history)
    text = render(ledger)
    assert "Files read: src/b.py" in text and "Files written or edited: src/a.py" in text
    assert ledger["read"] == ["src/a.py", "src/b.py"]  # the record is unchanged
    shown = next(line for line in text.splitlines() if line.startswith("- cd test"))
    assert shown.endswith("… (0)") and len(shown) <= len("- ") + COMMAND_SHOWN + len(" (0)")
    assert ledger["commands"][-1][0] == " ".join(script.split())[:200]
