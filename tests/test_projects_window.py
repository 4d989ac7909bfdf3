"""Projects in the window: the sidebar groups chats under their project (a folding header with its count, a "+"
and a menu) above the date groups; a new chat in a project is in it and its requests carry the project's text;
chats move in and out; the project page shows each piece of knowledge as inlined or searchable; Delete project…
asks, and keeps the chats unless told otherwise. And opening a search hit that lives in a version not shown
switches to that version. Real window, engine, store and server."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QMenu, QMessageBox

from desktop.ui.sidebar.sidebar import ID_ROLE, project_parts
from tests.conftest import engine_of
from tests.test_versions_window import row_of, send
from tests.test_window import message_rows, ready, until

pytestmark = pytest.mark.qt

FACT = "The staging cluster is called heron-7."


def texts(window) -> list[str]:  # noqa: ANN001
    return [str(m.content[0].get("text", "")) if m.content else "" for m in message_rows(window)]


async def regenerated(window, srv, reply_id: int, text: str) -> None:  # noqa: ANN001
    """Regenerate a reply and wait until the new one shows as version 2 of 2 and the chat is idle."""
    await ready(window)
    srv.queue_text(text)
    window.regenerate(reply_id)
    await until(
        lambda: (
            texts(window)[-1:] == [text]
            and message_rows(window)[-1].status == "complete"
            and row_of(window, message_rows(window)[-1].id).versions == (2, 2)
        )
    )
    await ready(window)


def system_text(request) -> str:  # noqa: ANN001
    return " ".join(str(b.get("text", "")) for b in request.body.get("system", []))


async def project_with_chats(window, name: str = "Parser", chats: int = 1):  # noqa: ANN001, ANN201
    """A project with instructions and one piece of knowledge, and ``chats`` chats in it (each with a message)."""
    engine = engine_of(window)
    project = await engine.projects.create(name, "Answer in British English.")
    await engine.projects.add_text(project.id, "facts.md", FACT)
    ids = []
    for n in range(chats):
        sid = await engine.new_session(project_id=project.id)
        await engine.store.add_message(sid, "user", [{"type": "text", "text": f"question {n}"}])
        await engine.library.rename(sid, f"{name} chat {n}")
        ids.append(sid)
    await window.bridge.listed()
    return project, ids


def click_header(window, qtbot, project_id: int, part: str) -> None:  # noqa: ANN001
    rect = window.sidebar.band_rect(project_id)
    assert rect is not None, "the project's header is not listed"
    target = (
        project_parts(rect)[part].center()
        if part != "toggle"
        else QPoint(rect.left() + 60, rect.center().y())
    )
    qtbot.mouseClick(window.sidebar.list.viewport(), Qt.MouseButton.LeftButton, pos=target)


async def test_the_sidebar_groups_chats_under_their_project_above_the_date_groups(window, qtbot):
    loose = window.session_id  # the start's own chat, in no project
    project, inside = await project_with_chats(window, "Parser", 2)
    empty = await engine_of(window).projects.create("Empty one")
    await until(lambda: [p[1] for p in window.sidebar.shown_projects()] == ["Empty one", "Parser"])
    groups = window.sidebar.groups()
    assert groups[0] == ("Empty one", [])
    assert groups[1][0] == "Parser" and sorted(groups[1][1]) == sorted(inside)
    assert groups[2] == ("Today", [loose])  # chats outside any project keep their date groups
    assert window.sidebar.shown_projects() == [
        (empty.id, "Empty one", 0, False),
        (project.id, "Parser", 2, False),
    ]
    # Headers are painted: the list holds chats only (the keyboard's chat switching counts rows as chats).
    assert window.sidebar.list.count() == 3
    assert window.keys.chat_ids() == [*groups[1][1], loose]

    # A click on the header folds the project (its chats hidden, its header and count still shown); again unfolds.
    click_header(window, qtbot, project.id, "toggle")
    await until(lambda: window.sidebar.shown_projects()[1][3])
    hidden = [window.sidebar.list.item(i).isHidden() for i in range(3)]
    assert hidden == [True, True, False]
    assert window.sidebar.band_rect(project.id) is not None
    assert window.session_id == loose  # a header is not a chat: nothing was opened
    # Opening a chat of a folded project (here from the keyboard's chat switching) unfolds it.
    window.keys.open_nth(1)
    await until(lambda: window.session_id == inside[0] or window.session_id == inside[1])
    await until(lambda: not window.sidebar.shown_projects()[1][3])
    assert not any(window.sidebar.list.item(i).isHidden() for i in range(3))

    # Filtering by title shows the projects with a matching chat only.
    window.sidebar.filter_edit.setText("Parser chat 1")
    await until(lambda: [g[0] for g in window.sidebar.groups()] == ["Parser"])
    window.sidebar.filter_edit.clear()
    await until(lambda: len(window.sidebar.groups()) == 3)


async def test_a_new_chat_in_a_project_is_in_it_and_its_requests_carry_the_projects_text(
    window, fake_api, qtbot
):
    project, _ids = await project_with_chats(window, "Deploys", 0)
    first = window.session_id
    await until(lambda: window.sidebar.band_rect(project.id) is not None)
    click_header(window, qtbot, project.id, "add")  # the header's "+"
    await until(lambda: window.session_id != first)
    sid = window.session_id
    assert (await window.bridge.engine.library.session(sid)).project_id == project.id
    await until(lambda: sid in window.sidebar.groups()[0][1])
    await send(window, fake_api, "Which cluster is staging?", "heron-7.")
    system = system_text(fake_api.message_requests()[-1])
    assert FACT in system and "Answer in British English." in system and '<project name="Deploys">' in system
    await until(
        lambda: (
            window.gauge.snapshot() is not None and window.gauge.snapshot().breakdown.get("project", 0) > 0
        )
    )

    # The header's menu button opens its menu: the same, the project page, fold, delete.
    click_header(window, qtbot, project.id, "menu")
    await until(lambda: any(m.isVisible() for m in window.sidebar.findChildren(QMenu, "project_menu")))
    menu = next(m for m in window.sidebar.findChildren(QMenu, "project_menu") if m.isVisible())
    names = [a.objectName() for a in menu.actions()]
    assert {"project_new_chat_action", "project_page_action", "project_delete_action"} <= set(names)
    next(a for a in menu.actions() if a.objectName() == "project_page_action").trigger()
    menu.close()
    await until(lambda: window.projects.page is not None and window.projects.page.project_id == project.id)
    window.projects.page.reject()


async def test_a_chat_moves_into_a_project_and_out_of_it_from_its_menu(window, fake_api, qtbot):
    project, _ids = await project_with_chats(window, "Site", 0)
    sid = window.session_id
    await send(window, fake_api, "hello", "hi")
    assert FACT not in system_text(fake_api.message_requests()[-1])

    def menu_of(session_id: int):  # noqa: ANN202
        item = next(
            window.sidebar.list.item(i)
            for i in range(window.sidebar.list.count())
            if window.sidebar.list.item(i).data(ID_ROLE) == session_id
        )
        menu = window.sidebar.build_context_menu(item)
        return next(
            a.menu() for a in menu.actions() if a.menu() is not None and a.menu().objectName() == "move_menu"
        )

    move = menu_of(sid)
    into = next(a for a in move.actions() if a.objectName() == f"move_to_{project.id}")
    assert into.text() == "Site" and into.isEnabled() and not into.isChecked()
    assert not next(a for a in move.actions() if a.objectName() == "move_out").isEnabled()
    into.trigger()
    await until(lambda: window.sidebar.groups()[0] == ("Site", [sid]))
    assert (await window.bridge.engine.library.session(sid)).project_id == project.id
    await send(window, fake_api, "Which cluster is staging?", "heron-7.")
    assert FACT in system_text(fake_api.message_requests()[-1])

    out = next(a for a in menu_of(sid).actions() if a.objectName() == "move_out")
    assert out.isEnabled()
    out.trigger()
    await until(lambda: window.sidebar.groups()[0] == ("Site", []))
    assert (await window.bridge.engine.library.session(sid)).project_id is None
    await send(window, fake_api, "and now?", "no idea.")
    assert FACT not in system_text(fake_api.message_requests()[-1])


async def test_new_project_from_the_sidebar_opens_its_page_and_a_chat_can_move_into_a_new_one(window, qtbot):
    qtbot.mouseClick(window.sidebar.new_project_button, Qt.MouseButton.LeftButton)
    await until(lambda: window.projects.name_dialog is not None)
    window.projects.name_dialog.setTextValue("Docs")
    window.projects.name_dialog.accept()
    await until(lambda: window.projects.page is not None)
    assert window.projects.page.name.text() == "Docs"
    assert [p.name for p in window.sidebar.projects()] == ["Docs"]
    window.projects.page.reject()
    # A taken name is refused in one sentence, and so is none; nothing else changes.
    await window.projects.create_project("Docs")
    await until(lambda: "exists already" in window.toast.text())
    await window.projects.create_project("   ")
    await until(lambda: "needs a name" in window.toast.text())
    assert [p.name for p in window.sidebar.projects()] == ["Docs"]
    # Move to project › New project…: the chat goes into the project made.
    sid = window.session_id
    await window.projects.create_project("Notes", move=sid)
    await until(lambda: ("Notes", [sid]) in window.sidebar.groups())
    # File › New project… is there too, and File › Projects opens a project's page.
    assert window.findChild(type(window.projects.new_action), "new_project_action") is not None
    window.projects.menu.aboutToShow.emit()
    entries = [a for a in window.projects.menu.actions() if a.text() == "Notes"]
    assert len(entries) == 1
    entries[0].trigger()
    await until(lambda: window.projects.page is not None and window.projects.page.name.text() == "Notes")


async def test_the_project_page_shows_which_knowledge_is_inlined_and_which_is_searchable(
    window, qtbot, tmp_path
):
    engine = engine_of(window)
    project = await engine.projects.create("Handbook")
    page = window.projects.open_page(project.id)
    assert page is not None and page.isVisible()
    small = tmp_path / "style.md"
    small.write_text("Use the Oxford comma.\n", "utf-8")
    binary = tmp_path / "logo.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    assert await page.add_files([str(small), str(binary)]) == 1
    # A refusal is one sentence; the other file was added.
    assert page.refusal.isVisible() and "logo.png" in page.refusal.text()
    assert page.refusal.text().count(".") >= 1 and "\n" not in page.refusal.text()
    # Far larger than the project's share of the model's window (a quarter): searchable, not inlined.
    assert await page.add_text("Manual", "The parser reads one token at a time. " * 40_000)
    await until(lambda: len(page.rows()) == 2)
    rows = {name: (kind, size, where) for name, kind, size, where in page.rows()}
    assert rows["style.md"][0] == "File" and rows["style.md"][2] == "Inlined"
    assert rows["Manual"][0] == "Text" and rows["Manual"][2] == "Searchable"
    assert rows["style.md"][1] == "22 characters"
    _model, context = window.bridge.project_context(project.id, None, None)
    assert context is not None and context.inlined == ("style.md",) and context.searchable == ("Manual",)
    assert "recall" in page.summary.text()

    # The defaults and instructions are kept by Save; Remove takes a piece away at once.
    page.instructions.setPlainText("Cite the handbook.")
    page.recall.setChecked(False)
    page.workspace.setText(str(tmp_path))
    assert await page.save()
    stored = engine.projects.get(project.id)
    assert (
        stored.instructions == "Cite the handbook."
        and not stored.recall
        and stored.workspace == str(tmp_path)
    )
    page.workspace.setText(str(tmp_path / "missing"))
    assert not await page.save() and "not a folder" in page.error.text()
    page.workspace.setText(str(tmp_path))
    assert await page.remove("Manual")
    await until(lambda: [r[0] for r in page.rows()] == ["style.md"])


async def test_delete_project_asks_and_keeps_the_chats_unless_told_to_delete_them(window, qtbot):
    engine = engine_of(window)
    project, kept = await project_with_chats(window, "Old", 2)
    page = window.projects.open_page(project.id)
    page.delete_button.click()
    await until(lambda: window.projects.delete_box is not None and window.projects.delete_box.isVisible())
    box = window.projects.delete_box
    assert box.defaultButton().objectName() == "keep_chats"  # Enter keeps them
    assert "2 chats" in box.informativeText()
    box.escapeButton().click()  # Cancel: nothing happens
    await until(lambda: window.projects.delete_box is None)
    assert engine.projects.get(project.id) is not None
    assert [(await engine.library.session(s)).project_id for s in kept] == [project.id, project.id]

    window.projects.ask_delete(project.id)
    await until(lambda: window.projects.delete_box is not None and window.projects.delete_box.isVisible())
    window.projects.delete_box.defaultButton().click()
    await until(lambda: engine.projects.get(project.id) is None)
    await until(lambda: window.projects.page is None)  # its page closed with it
    for sid in kept:
        session = await engine.library.session(sid)
        assert session is not None and session.project_id is None
    await until(lambda: window.sidebar.shown_projects() == [])

    # "Delete the chats too" deletes them, and the open one gives way to another chat.
    doomed_project, doomed = await project_with_chats(window, "Scratch", 2)
    await window.bridge.open_session(doomed[0])
    window.projects.ask_delete(doomed_project.id)
    await until(lambda: window.projects.delete_box is not None and window.projects.delete_box.isVisible())
    box = window.projects.delete_box
    gone = next(b for b in box.buttons() if b.objectName() == "delete_chats")
    assert box.buttonRole(gone) == QMessageBox.ButtonRole.DestructiveRole
    gone.click()
    await until(lambda: engine.projects.get(doomed_project.id) is None)
    await until(lambda: window.session_id not in doomed)
    assert [await engine.library.session(s) for s in doomed] == [None, None]
    assert None not in [await engine.library.session(s) for s in kept]


async def test_opening_a_search_hit_in_a_version_not_shown_switches_to_it_and_highlights_it(
    window, fake_api, qtbot
):
    await send(window, fake_api, "Name an amphibian.", "The axolotl, a salamander.")
    first = message_rows(window)[-1]
    await regenerated(window, fake_api, first.id, "A frog.")
    other = await window.bridge.new_session()  # another chat is open when the hit is chosen
    assert window.session_id == other

    hits = await window.bridge.engine.library.search("axolotl")
    hit = next(h for h in hits if h.message_id == first.id)
    row = await window.organise.jump_to(hit)
    assert row >= 0
    shown = window.chat_model.row_at(row)
    assert shown.message is not None and shown.message.id == first.id  # the message found, not a neighbour
    assert window.chat.currentIndex().row() == row
    assert row_of(window, first.id).versions == (1, 2)  # its version is the one shown now
    await until(lambda: message_rows(window)[-1].id == first.id)


async def test_a_search_hit_two_versions_deep_is_reached(window, fake_api, qtbot):
    """The hit's reply was regenerated, then its question edited: two forks between the path shown and it."""
    await send(window, fake_api, "Name an amphibian.", "The axolotl, a salamander.")
    first = message_rows(window)[-1]
    await regenerated(window, fake_api, first.id, "A frog.")
    question = message_rows(window)[-2]
    window._edit_message(question.id)
    await send(window, fake_api, "Name a bird.", "A heron.")
    assert texts(window) == ["Name a bird.", "A heron."]

    hit = next(h for h in await window.bridge.engine.library.search("axolotl") if h.message_id == first.id)
    row = await window.organise.jump_to(hit)
    assert row >= 0 and window.chat_model.row_at(row).message.id == first.id
    assert [m.content[0].get("text") for m in message_rows(window)] == [
        "Name an amphibian.",
        "The axolotl, a salamander.",
    ]
