"""Versions in the window: send, regenerate, edit, switch with ‹ › (mouse and keyboard) with a compaction in
between, restart, and the choice is still there; each request carries exactly the path shown."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from desktop.runtime import open_runtime
from tests.fakeapi import SUMMARY_MARKER
from tests.test_window import cards, compacted, message_rows, ready, until

pytestmark = pytest.mark.qt


def shown(win) -> list[str]:  # noqa: ANN001
    return [" ".join(str(b.get("text", "")) for b in m.content)[:40] for m in message_rows(win)]


def row_of(win, message_id: int):  # noqa: ANN001, ANN201
    return win.chat_model.row_at(win.chat_model.row_of(message_id))


def last_chat_request(srv) -> list[str]:  # noqa: ANN001
    body = [r.body for r in srv.message_requests() if SUMMARY_MARKER not in str(r.body.get("system", ""))][-1]
    return [
        " ".join(str(b.get("text", "")) for b in m["content"] if isinstance(b, dict))[:40]
        for m in body["messages"]
    ]


async def open_window(runtime):  # noqa: ANN001, ANN201
    from desktop.ui.bridge import Bridge
    from desktop.ui.window.main_window import MainWindow

    bridge = Bridge(runtime.engine)
    win = MainWindow(bridge, runtime.paths.config_dir / "window.ini")
    win.resize(900, 700)
    win.show()
    await win.start()
    return win, bridge


async def close_window(win, bridge) -> None:  # noqa: ANN001
    await bridge.close()
    win.close()
    win.deleteLater()


async def send(win, srv, text: str, answer: str) -> None:  # noqa: ANN001
    await ready(win)
    srv.queue_text(answer)
    win.composer.edit.setPlainText(text)
    win.composer.send_button.click()
    await until(
        lambda: any(
            m.content and m.content[0].get("text") == answer and m.status == "complete"
            for m in message_rows(win)
        )
    )
    await ready(win)


def menu_action(win, message_id: int, prefix: str):  # noqa: ANN001, ANN201
    index = win.chat_model.index(win.chat_model.row_of(message_id))
    menu = win.chat.build_context_menu(win.chat.visualRect(index).center())
    return next(a for a in menu.actions() if a.text().startswith(prefix))


async def test_versions_round_trip_with_a_compaction_between(qtbot, fake_api):
    async with open_runtime() as runtime:
        win, bridge = await open_window(runtime)
        sid = win.session_id
        store = runtime.store
        await compacted(win, store)  # more than the verbatim tail, so Compact now summarises the start
        await until(lambda: not bridge.engine.busy(sid))

        await send(win, fake_api, "after the summary", "first reply")
        reply = message_rows(win)[-1]
        fake_api.queue_text("second reply")
        menu_action(win, reply.id, "Regenerate").trigger()
        await until(
            lambda: (
                shown(win)[-1] == "second reply"
                and message_rows(win)[-1].status == "complete"
                and row_of(win, message_rows(win)[-1].id).versions == (2, 2)
            )
        )
        await ready(win)  # the composer, too: the edit below is sent with its Send button
        sent = last_chat_request(fake_api)
        assert sent[0].startswith("<conversation-summary>") and sent[-1] == "after the summary"
        assert "first reply" not in sent
        assert await store.get_message(reply.id) is not None  # the first reply is kept, as version 1
        assert len(cards(win)) == 1  # the summary still covers this path

        # ‹ with the mouse: the first reply is shown again.
        second = message_rows(win)[-1]
        index = win.chat_model.index(win.chat_model.row_of(second.id))
        win.chat.scrollTo(index)
        prev, _next = win.chat.delegate.version_rects(index, win.chat.visualRect(index))
        qtbot.mouseClick(win.chat.viewport(), Qt.MouseButton.LeftButton, pos=prev.center().toPoint())
        await until(lambda: shown(win)[-1] == "first reply" and row_of(win, reply.id).versions == (1, 2))

        # Edit the question (after the boundary: the summary stays), then step back with the keyboard.
        question = message_rows(win)[-2]
        win._edit_message(question.id)
        win.composer.edit.setPlainText("after the summary, edited")
        fake_api.queue_text("third reply")
        win.composer.send_button.click()
        await until(
            lambda: (
                shown(win)[-2:] == ["after the summary, edited", "third reply"]
                and row_of(win, message_rows(win)[-2].id).versions == (2, 2)
            )
        )
        await until(lambda: not bridge.engine.busy(sid))
        assert last_chat_request(fake_api)[0].startswith("<conversation-summary>")
        assert "after the summary" not in last_chat_request(fake_api)
        edited = message_rows(win)[-2]
        win.chat.setFocus()
        win.chat.setCurrentIndex(win.chat_model.index(win.chat_model.row_of(edited.id)))
        qtbot.keyClick(win.chat, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
        await until(lambda: shown(win)[-2:] == ["after the summary", "first reply"])
        assert row_of(win, question.id).versions == (1, 2) and row_of(win, reply.id).versions == (1, 2)
        await close_window(win, bridge)

    async with open_runtime() as runtime:  # the next start shows the version chosen last
        win, bridge = await open_window(runtime)
        assert win.session_id == sid
        assert shown(win)[-2:] == ["after the summary", "first reply"]
        assert row_of(win, message_rows(win)[-1].id).versions == (1, 2) and len(cards(win)) == 1
        await send(win, fake_api, "one more", "fourth reply")
        sent = last_chat_request(fake_api)
        assert sent[0].startswith("<conversation-summary>") and sent[-3:] == [
            "after the summary",
            "first reply",
            "one more",
        ]
        assert not {"second reply", "third reply", "after the summary, edited"} & set(sent)
        await close_window(win, bridge)


def test_the_arrows_the_menu_and_the_keyboard_ask_for_the_version_beside_it(qtbot):
    from desktop.engine.types import StoredMessage
    from desktop.ui.transcript.chat_model import ChatModel
    from desktop.ui.transcript.chat_view import ChatView

    view = ChatView()
    model = ChatModel(view)
    view.setModel(model)
    view.resize(640, 480)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    rows = [
        StoredMessage(1, 1, "user", [{"type": "text", "text": "question"}]),
        StoredMessage(3, 1, "assistant", [{"type": "text", "text": "first of two"}], parent_id=1),
    ]
    model.set_messages(rows, False, {3: (1, 2)})
    view.doItemsLayout()
    asked: list[tuple[int, int]] = []
    view.version_requested.connect(lambda mid, delta: asked.append((mid, delta)))
    reply = model.index(1, 0)
    assert view.delegate.version_rects(model.index(0, 0), view.visualRect(model.index(0, 0))) is None
    prev, nxt = view.delegate.version_rects(reply, view.visualRect(reply))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=prev.center().toPoint())
    assert asked == []  # already the first version: ‹ does nothing
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=nxt.center().toPoint())
    assert asked == [(3, 1)]
    menu = {a.text(): a for a in view.build_context_menu(view.visualRect(reply).center()).actions()}
    assert "Regenerate" in menu and not menu["Previous version (1/2)"].isEnabled()
    menu["Next version (1/2)"].trigger()
    user_menu = [
        a.text() for a in view.build_context_menu(view.visualRect(model.index(0, 0)).center()).actions()
    ]
    assert "Regenerate" not in user_menu and not any("version" in t for t in user_menu)
    view.setFocus()
    view.setCurrentIndex(reply)
    qtbot.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    qtbot.keyClick(view, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)  # nothing before version 1
    assert asked == [(3, 1), (3, 1), (3, 1)]
    assert "Version 1 of 2" in str(reply.data(Qt.ItemDataRole.AccessibleDescriptionRole))
    # The arrows take a line under the bubble; the same reply without versions has none.
    with_versions = view.sizeHintForRow(1)
    model.set_messages(rows, False)
    view.doItemsLayout()
    assert view.sizeHintForRow(1) < with_versions


async def test_switching_keeps_the_message_where_it_was_on_screen(window, fake_api, qtbot):
    from tests.conftest import engine_of

    store = engine_of(window).store
    sid = window.session_id
    for i in range(12):
        await store.add_message(sid, "user", [{"type": "text", "text": f"question {i}\n\n" + "words " * 60}])
        await store.add_message(
            sid, "assistant", [{"type": "text", "text": f"answer {i}\n\n" + "more " * 80}]
        )
    await window.bridge.open_session(sid)
    third = next(m for m in message_rows(window) if m.content[0]["text"].startswith("answer 3"))
    fake_api.queue_text("answer 3, again")
    window.regenerate(third.id)
    await until(
        lambda: (
            shown(window)[-1] == "answer 3, again"
            and message_rows(window)[-1].status == "complete"
            and row_of(window, message_rows(window)[-1].id).versions == (2, 2)
        )
    )
    await until(lambda: not window.bridge.engine.busy(sid))
    again = message_rows(window)[-1]
    index = window.chat_model.index(window.chat_model.row_of(again.id))
    y = window.chat.visualRect(index).top()
    window.switch_version(again.id, -1)
    await until(lambda: len(message_rows(window)) == 24 and row_of(window, third.id).versions == (1, 2))
    await until(
        lambda: (
            abs(window.chat.visualRect(window.chat_model.index(window.chat_model.row_of(third.id))).top() - y)
            <= 2
        )
    )
    assert (
        not window.chat.is_at_bottom()
    )  # the long path came back below it; the view did not jump to its end
