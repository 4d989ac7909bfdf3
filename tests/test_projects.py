"""Projects: chats grouped under shared instructions and knowledge. Stored in real SQLite files (schema v15); the
knowledge goes first in every chat of the project, the same bytes, so a second chat reads it from the prompt cache
(the loopback server's cache accounting, the real SDK); recall reaches the project's knowledge and its other
chats; deleting a project never deletes a chat unless told to."""

from __future__ import annotations

import pytest

from desktop.engine.events import ProjectsChanged, SessionsChanged
from desktop.engine.projects.context import KNOWLEDGE_SHARE, project_context
from desktop.engine.projects.records import Knowledge, Project
from desktop.engine.turn import assemble
from desktop.store import Store
from desktop.store.projects import ProjectExists
from desktop.tools.events import ToolCallFinished
from tests.tools_helpers import tool_runtime

FACTS = (
    "Deployment runbook. The staging cluster is called heron-7 and lives in eu-west-3. "
    "Releases go out on Tuesdays after the freeze lifts at 14:00 UTC. "
)


@pytest.fixture
def store(tmp_path):
    s = Store.open_sync(tmp_path / "precis.db")
    yield s
    s.close_sync()


async def test_a_project_keeps_its_knowledge_its_chats_and_a_unique_name(tmp_path):
    store = await Store.open(tmp_path / "precis.db")
    try:
        p = await store.create_project("Parser", "Answer in British English.", workspace="/src/parser")
        with pytest.raises(ProjectExists):
            await store.create_project("Parser")
        note = await store.add_knowledge(p.id, "notes.md", "text", "the grammar is LL(1)")
        await store.add_knowledge(p.id, "spec.txt", "file", "tokens: ident, number", "/tmp/spec.txt")
        chat = await store.create_session("one", None, None, p.id)
        other = await store.create_session("two")
        assert chat.project_id == p.id and other.project_id is None
        assert [k.name for k in await store.knowledge(p.id)] == ["notes.md", "spec.txt"]
        assert (await store.get_project(p.id)).chats == 1
        assert await store.remove_knowledge(note.id)
        assert [k.name for k in await store.knowledge(p.id)] == ["spec.txt"]
        await store.set_session_project(other.id, p.id)
        assert (await store.find_project("Parser")).chats == 2
        # Deleting the project keeps the chats unless the user chose otherwise.
        assert await store.delete_project(p.id, "keep") == []
        assert [s.project_id for s in await store.list_sessions()] == [None, None]
        q = await store.create_project("Gone")
        doomed = await store.create_session("doomed", None, None, q.id)
        assert await store.delete_project(q.id, "delete") == [doomed.id]
        assert {s.title for s in await store.list_sessions()} == {"one", "two"}
        assert await store.projects() == []
    finally:
        await store.close()


def test_the_project_text_is_stable_and_inlines_what_fits_its_share():
    project = Project(1, "Parser", "Be terse.")
    pieces = [
        Knowledge(1, 1, "small.md", "text", "alpha " * 50),
        Knowledge(2, 1, "huge.log", "file", "beta " * 40_000),
        Knowledge(3, 1, "later.md", "text", "gamma " * 50),
    ]

    def words(text: str) -> int:
        return len(text.split())

    ctx = project_context(project, pieces, 100_000, words)
    assert ctx.inlined == ("small.md", "later.md") and ctx.searchable == ("huge.log",)
    assert "huge.log" in ctx.text and "beta" not in ctx.text  # named as searchable, not inlined
    assert ctx.tokens <= 100_000 * KNOWLEDGE_SHARE
    assert project_context(project, pieces, 100_000, words).text == ctx.text  # byte for byte
    assert project_context(Project(2, "Empty"), [], 100_000, words).text == ""
    # In the system prompt: the project ends the cached static block; the chat's own instructions come after.
    system = assemble.system_blocks(model="claude-sonnet-4-6", project=ctx.text, chat_instructions="Mine.")
    assert system[0]["text"].endswith("</project>") and "Mine." in system[1]["text"]
    assert assemble.project_in(system) == ctx.text
    assert "Mine." in assemble.instructions_in(system)
    # Outside a project the prompt is as it always was (the chat's instructions inside the static block).
    plain = assemble.system_blocks(
        model="claude-sonnet-4-6", instructions="Default.", chat_instructions="Mine."
    )
    assert len(plain) == 2 and "Default.\n\nMine." in plain[0]["text"]


async def test_a_second_chat_of_the_project_reads_the_knowledge_from_the_cache(fake_api):
    async with tool_runtime(workspace=None) as rt:
        engine = rt.engine
        heard: list[object] = []
        engine.subscribe(heard.append)
        await engine.load()
        project = await engine.projects.create("Deploys", "Name the cluster when you answer.")
        await engine.projects.add_text(project.id, "runbook.md", FACTS * 60)  # ~2K words
        assert any(isinstance(e, ProjectsChanged) for e in heard)
        first = await engine.new_session(project_id=project.id)
        second = await engine.new_session(project_id=project.id)
        assert (await engine.library.session(first)).project_id == project.id
        fake_api.queue_text("heron-7.")
        await engine.send(first, "Where does staging live?")
        fake_api.queue_text("Tuesdays.")
        await engine.send(second, "When do releases go out?")
        one, two = fake_api.message_requests()[-2:]
        snap = await engine.measure(second)
    assert one.body["system"][0] == two.body["system"][0]  # the project's bytes, the same in both chats
    assert "heron-7" in one.body["system"][0]["text"]
    written = one.usage["cache_creation_input_tokens"]
    read = two.usage["cache_read_input_tokens"]
    # The second chat's first request read the project (what the first chat wrote of it, all but that chat's own
    # question) and wrote only its own question; it sent almost nothing uncached.
    assert written > 2_000 and read >= written - 100
    assert two.usage["cache_creation_input_tokens"] < 200 and two.usage["input_tokens"] < 200
    assert snap.breakdown.get("project", 0) > 2_000  # the gauge shows the project's share
    assert any(isinstance(e, SessionsChanged) for e in heard)


async def test_recall_finds_a_fact_stated_only_in_another_chat_of_the_project(fake_api):
    async with tool_runtime(workspace=None) as rt:
        engine = rt.engine
        await engine.load()
        project = await engine.projects.create("Deploys")
        await engine.projects.add_text(project.id, "oncall.md", "The pager rota changes every Monday.")
        elsewhere = await engine.new_session()  # outside the project: never searched
        await rt.store.add_message(
            elsewhere, "user", [{"type": "text", "text": "the vault key is quokka-12"}]
        )
        source = await engine.new_session(project_id=project.id)
        await rt.store.add_message(
            source, "user", [{"type": "text", "text": "Remember: the canary region is ap-south-2."}]
        )
        asking = await engine.new_session(project_id=project.id)
        fake_api.queue_tool_use("recall", {"query": "canary region", "scope": "project"}, id="toolu_p")
        fake_api.queue_tool_use("recall", {"query": "pager rota", "scope": "project"}, id="toolu_k")
        fake_api.queue_tool_use("recall", {"query": "vault key quokka", "scope": "project"}, id="toolu_v")
        fake_api.queue_text("ap-south-2.")
        await engine.send(asking, "Which region is the canary in?")
        first_request = fake_api.message_requests()[-4].body
        messages = await rt.store.messages(asking)
        # The user turns recall across the project off: the tool is then the chat's own (or none).
        await engine.projects.update(project.id, recall=False)
        engine.view(asking).invalidate()
        fake_api.queue_text("ok")
        await engine.send(asking, "thanks")
        after = fake_api.message_requests()[-1].body
    assert [t["name"] for t in first_request["tools"]] == ["recall"]  # offered before any compaction
    assert "scope" in first_request["tools"][0]["input_schema"]["properties"]
    results = {
        b["tool_use_id"]: b["content"] for m in messages for b in m.content if b.get("type") == "tool_result"
    }
    assert "ap-south-2" in results["toolu_p"] and f"chat {source}" in results["toolu_p"]
    assert "knowledge “oncall.md”" in results["toolu_k"] and "Monday" in results["toolu_k"]
    assert results["toolu_v"].startswith("Nothing in this project")  # a chat outside it is out of reach
    assert [e.status for e in rt.events if isinstance(e, ToolCallFinished)] == ["ok", "ok", "ok"]
    assert "tools" not in after  # no project search, no compaction: no recall tool


async def test_new_chat_in_a_project_takes_its_model_and_workspace(fake_api, tmp_path):
    async with tool_runtime(workspace=None) as rt:
        engine = rt.engine
        await engine.load()
        project = await engine.projects.create("Site", model="claude-haiku-4-5", workspace=str(tmp_path))
        sid = await engine.new_session(project_id=project.id)
        session = await engine.library.session(sid)
        assert session.model == "claude-haiku-4-5" and session.project_id == project.id
        assert await engine.workspace(sid) == str(tmp_path)
        handed = (await engine.library.session(await engine.new_chat_from_summary(sid))).project_id
        assert handed == project.id  # a chat continued from this one stays in the project


def test_the_cli_makes_a_project_adds_knowledge_chats_in_it_and_deletes_it_keeping_the_chats(
    fake_api, capsys, tmp_path
):
    from desktop.cli import main as cli_main

    def precis(*args: str) -> tuple[int, str, str]:
        code = cli_main.main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    notes = tmp_path / "notes.md"
    notes.write_text("The release train leaves on Tuesdays.", "utf-8")
    binary = tmp_path / "logo.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    assert precis("project", "create", "Trains", "--instructions", "Be brief.")[0] == 0
    assert precis("project", "create", "Trains")[0] == 1  # a taken name: one sentence
    code, out, _ = precis("project", "add", "Trains", str(notes), "--text", "Tickets cost 5 EUR.")
    assert code == 0 and "notes.md" in out and "Pasted text" in out
    code, _, err = precis("project", "add", "Trains", str(binary))
    assert code == 1 and "not a text file" in err and err.count("\n") == 1
    fake_api.queue_text("Tuesdays.")
    code, _, err = precis("chat", "--project", "Trains", "When does the train leave?")
    assert code == 0
    body = fake_api.message_requests()[-1].body
    assert "The release train leaves on Tuesdays." in body["system"][0]["text"]
    assert "Be brief." in body["system"][0]["text"]
    code, out, _ = precis("project", "show", "Trains")
    assert code == 0 and "notes.md" in out and "inlined" in out and "Chats (1)" in out
    code, out, _ = precis("project", "list", "--json")
    assert '"chats": 1' in out and '"knowledge": 2' in out
    assert precis("chat", "--project", "Nope", "hi")[0] == 1
    code, out, _ = precis("project", "remove", "Trains", "Pasted text")
    assert code == 0 and "removed Pasted text" in out
    code, out, _ = precis("project", "delete", "Trains")
    assert code == 0 and "1 chat(s) kept" in out
    code, out, _ = precis("sessions", "--json")
    assert '"When does the train leave?"' in out or "When does the train leave" in out
