"""The window's one way into the engine (desktop/ui/api.py): its declared names, a bridge that forwards nothing and
re-exports nothing, and a list of chats read again on the engine's word (events.SessionsChanged) alone."""

from __future__ import annotations

import ast
import asyncio
import inspect
import pathlib

import pytest

from desktop.engine.events import SessionsChanged

ROOT = pathlib.Path(__file__).resolve().parent.parent
BRIDGE = ROOT / "desktop" / "ui" / "bridge.py"

# Adding a name here and in the API is a choice made twice, on purpose: the window's reach into the engine grows
# only when someone means it to.
DECLARED = {
    "ANTHROPIC", "AUTH_KINDS", "AUTH_WORDS", "CATEGORIES", "CITATION", "CUSTOM", "CUT_STOP_REASONS", "LABELS",
    "PRESETS", "THRESHOLD_CAP", "THRESHOLD_CAP_RANGE", "THRESHOLD_PERCENT", "THRESHOLD_PERCENT_RANGE",
    "WARNING_RATIO", "Activity", "Answer", "AttachmentRefused", "Bill", "Block", "ChatLibrary", "Chats", "Checked",
    "Cold", "CompactionRecord", "ContextSnapshot", "Draft", "ImportFailed", "ImportResult", "McpServerConfig",
    "Page", "PermissionRequest", "Pin", "Plan", "ProbeResult", "Profile", "ProfileEdits", "SavedApproval",
    "SearchHit", "ServerStatus", "SessionInfo", "Settings", "StoredMessage", "TurnBill", "Verdict",
    "Knowledge", "Project", "ProjectContext", "Projects", "StorageError",
    "covered_through", "display", "events", "one_line", "preset", "profile_list", "supports_thinking", "threshold_percent",
    "tool_events",
}  # fmt: skip


def test_the_api_declares_exactly_its_names_and_each_one_resolves():
    from desktop.ui import api

    assert set(api.__all__) == DECLARED
    assert len(api.__all__) == len(DECLARED)  # no name twice
    for name in api.__all__:
        assert getattr(api, name) is not None, name


def test_the_engine_is_what_the_window_api_asks_of_it():
    """Every member of ``Chats`` exists on the engine with the same parameters (mypy checks the types where the
    bridge hands the engine over; this checks the names without it)."""
    from desktop.engine.turn.chat import ChatEngine
    from desktop.ui.api import Chats

    members = [n for n in vars(Chats) if not n.startswith("_")]
    assert len(members) >= 20
    for name in members:
        ours, theirs = getattr(Chats, name), getattr(ChatEngine, name)
        if isinstance(ours, property):
            assert isinstance(theirs, property), name
            continue
        assert list(inspect.signature(ours).parameters) == list(inspect.signature(theirs).parameters), name


def test_widgets_import_from_the_bridge_only_the_bridge_itself():
    own = {"Bridge", "PAGE_SIZE", "ProviderChoice"}
    found: dict[str, set[str]] = {}
    for path in [*(ROOT / "desktop").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "desktop.ui.bridge":
                names = {a.name for a in node.names} - own
                if names:
                    found[str(path.relative_to(ROOT))] = names
    assert found == {}
    assert "__all__" not in BRIDGE.read_text("utf-8")  # the bridge re-exports nothing


def forwarders(source: str) -> list[str]:
    """Methods of ``Bridge`` that only pass their arguments on to the engine, the library or the toolbox: one
    statement, a call on ``self._engine``/``self._toolbox`` (or deeper) whose arguments are the method's own
    parameters or constants."""
    found = []
    bridge = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "Bridge")
    for method in bridge.body:
        if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = [s for s in method.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if len(body) != 1 or not isinstance(body[0], ast.Return | ast.Expr):
            continue
        call = body[0].value
        if isinstance(call, ast.Await):
            call = call.value
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            continue
        root = call.func.value
        while isinstance(root, ast.Attribute):
            if (
                root.attr in ("_engine", "_toolbox")
                and isinstance(root.value, ast.Name)
                and root.value.id == "self"
            ):
                break
            root = root.value
        else:
            continue
        params = {a.arg for a in method.args.args + method.args.kwonlyargs}
        args = [*call.args, *(k.value for k in call.keywords)]
        if all(isinstance(a, ast.Constant) or (isinstance(a, ast.Name) and a.id in params) for a in args):
            found.append(method.name)
    return found


def test_forwarders_finds_a_forwarder_and_leaves_work_alone():
    source = (
        "class Bridge:\n"
        "    async def retry(self, sid):\n        '''Doc.'''\n        await self._engine.retry(sid)\n"
        "    def busy(self, sid):\n        return self._engine.tasks.busy(sid)\n"
        "    async def search(self, q, limit=5):\n        return await self._engine.library.search(q, limit)\n"
        "    def answer(self, rid):\n        return self._toolbox.answer(rid, None)\n"
        "    async def later(self, p):\n        return await asyncio.to_thread(self.check, p)\n"
        "    async def listed(self):\n        await self.listed_once()\n        return self._sessions\n"
        "    def emits(self, sid):\n        self.failed.emit(sid)\n"
    )
    assert forwarders(source) == ["retry", "busy", "search", "answer"]


def test_the_bridge_forwards_nothing():
    assert forwarders(BRIDGE.read_text("utf-8")) == []


def test_the_list_of_chats_is_read_by_hand_only_at_start_on_a_filter_and_after_another_process_wrote():
    calls = [
        f"{p.relative_to(ROOT)}:{node.lineno}"
        for p in (ROOT / "desktop" / "ui").rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text("utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "refresh_sessions"
    ]
    # The bridge's own read when the engine says the list changed, its poll of another process's writes, the
    # window's first read and the sidebar's filter.
    assert len(calls) == 4, calls


async def test_every_change_to_the_list_of_chats_is_an_event(engine):
    heard: list[int] = []
    engine.subscribe(lambda e: heard.append(e.session_id) if isinstance(e, SessionsChanged) else None)
    sid = await engine.new_session()
    assert heard == [sid]
    await engine.library.rename(sid, "Parser fix")
    await engine.library.set_pinned(sid, True)
    await engine.set_chat_model(sid, "claude-sonnet-4-6")
    assert heard == [sid] * 4
    await engine.send(sid, "hello")  # a finished turn: its title and place in the list change
    assert heard == [sid] * 5
    await engine.delete_session(sid)
    assert heard == [sid] * 6


@pytest.mark.qt
async def test_the_window_lists_the_chats_again_on_the_engines_word_once_for_a_burst(engine, qtbot):
    from desktop.ui.bridge import Bridge

    bridge = Bridge(engine)
    shown: list[list[str]] = []
    bridge.sessions_changed.connect(lambda sessions: shown.append([s.title for s in sessions]))
    sid = await engine.new_session()  # made by the engine, as the CLI's commands or a hand-off make chats
    assert [s.id for s in await bridge.listed()] == [sid]
    await asyncio.gather(*(engine.library.rename(sid, f"Title {n}") for n in range(5)))
    await bridge.listed()
    assert shown[-1] == ["Title 4"]
    assert len(shown) <= 3  # one read for the new chat, then the burst of renames shares at most two
    await bridge.close()
