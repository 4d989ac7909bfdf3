"""ChatModel paging and cards, ChatDelegate sizing/copy, ChatView scrolling, empty state and menus."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import QModelIndex, QPoint, Qt
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import QStyleOptionViewItem

from desktop.engine.types import StoredMessage
from desktop.ui.transcript.chat_model import PENDING_FALLBACK_MS, ChatModel, Roles, Segment
from desktop.ui.transcript.chat_view import ChatView

CODE = 'def reverse(s: str) -> str:\n    return s[::-1]  # "slicing" <ok>'


def msg(i: int, role: str = "assistant", text: str | None = None, **kw) -> StoredMessage:
    body = text if text is not None else f"message {i}"
    return StoredMessage(i, 1, role, [{"type": "text", "text": body}], **kw)  # type: ignore[arg-type]


def page(lo: int, hi: int) -> list[StoredMessage]:
    return [msg(i, "user" if i % 2 else "assistant", f"message {i}\n\nsome text " * 3) for i in range(lo, hi)]


def ids(model: ChatModel) -> list:
    return [model.index(r, 0).data(Roles.Id) for r in range(model.rowCount())]


def settle(qtbot, view: ChatView) -> None:
    """Let deferred model emits and the delayed QListView layout run."""
    view.model().flush()
    view.doItemsLayout()
    qtbot.wait(1)


# -- model -------------------------------------------------------------------------------------------------


def test_paging_prepend_keeps_order_and_flag(qtbot):
    model = ChatModel()
    model.set_messages(page(101, 111), has_older=True)
    assert model.has_older and ids(model) == list(range(101, 111))
    inserted = []
    model.rowsInserted.connect(lambda parent, first, last: inserted.append((first, last)))
    model.prepend_older(page(91, 101), has_older=False)
    assert inserted == [(0, 9)]  # one beginInsertRows at row 0
    assert ids(model) == list(range(91, 111)) and not model.has_older
    assert model.oldest_message_id() == 91
    model.prepend_older(page(95, 101), has_older=False)  # overlap: nothing duplicated
    assert ids(model) == list(range(91, 111))


def test_append_update_remove(qtbot):
    model = ChatModel()
    model.set_messages(page(1, 4), has_older=False)
    model.append_message(msg(4, text="new"))
    assert ids(model)[-1] == 4 and model.index(3, 0).data(Roles.Text) == "new"
    with qtbot.waitSignal(model.dataChanged):
        model.update_message(msg(2, text="edited", status="interrupted"))
    idx = model.index(model.row_of(2), 0)
    assert idx.data(Roles.Text) == "edited" and idx.data(Roles.Status) == "interrupted"
    model.remove_message(3)
    assert ids(model) == [1, 2, 4]
    model.append_message(msg(2, text="again"))  # existing id -> update, not a second row
    assert ids(model) == [1, 2, 4] and model.index(1, 0).data(Roles.Text) == "again"


def test_model_does_not_mutate_engine_messages(qtbot):
    original = msg(7, text="hello")
    model = ChatModel()
    model.set_messages([original], has_older=False)
    model.append_text(7, " world")
    model.flush()
    assert original.content[0]["text"] == "hello" and original.status == "complete"
    assert model.index(0, 0).data(Roles.Text) == "hello world"


def test_blocks_render_as_compact_lines(qtbot):
    assistant = StoredMessage(
        1,
        1,
        "assistant",
        [
            {"type": "thinking", "thinking": "\nLet me look at the file first.\nThen answer."},
            {"type": "text", "text": "Reading it."},
            {
                "type": "tool_use",
                "id": "t1",
                "name": "Read",
                "input": {"file_path": "src/app.py", "limit": 50},
            },
            {"type": "tool_use", "id": "t2", "name": "Custom", "input": {"x": 1}},
        ],
    )
    result = StoredMessage(
        2,
        1,
        "user",
        [
            {"type": "tool_result", "tool_use_id": "t1", "content": "line one\nline two\nline three"},
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "is_error": True,
                "content": [{"type": "text", "text": "boom"}, {"type": "image", "source": {}}],
            },
        ],
    )
    user = StoredMessage(
        3, 1, "user", [{"type": "text", "text": "see this"}, {"type": "image", "source": {}}]
    )
    model = ChatModel()
    model.set_messages([assistant, result, user], has_older=False)
    segs = model.index(0, 0).data(Roles.Segments)
    assert segs == (
        Segment("thinking", "✻ Let me look at the file first."),
        Segment("markdown", "Reading it."),
        Segment("tool", "⚙ Read src/app.py"),
        Segment("tool", '⚙ Custom {"x":1}'),
    )
    assert model.index(1, 0).data(Roles.Kind) == "tool"  # tool results are not the user's bubble
    assert [s.text for s in model.index(1, 0).data(Roles.Segments)] == [
        "↳ line one  (+2 lines)",
        "✖ error: boom  (1 image)",
    ]
    assert model.index(2, 0).data(Roles.Kind) == "message"
    last = model.index(2, 0).data(Roles.Segments)[-1]
    assert (last.kind, last.text) == ("image", "Image")  # no name kept with the message: a generic one


def test_cards_sit_after_covered_messages_even_across_paging(qtbot):
    model = ChatModel()
    model.set_messages(page(50, 60), has_older=True)
    card = model.add_compaction_card(
        "Summary of 1..55", covered_count=55, tokens_saved=41_000, covers_through_message_id=55
    )
    old_card = model.add_compaction_card("Older summary", 20, 9_000, covers_through_message_id=20)
    notice = model.add_notice("Context: 12% used", title="/context")
    assert ids(model) == [old_card, *range(50, 56), card, *range(56, 60), notice]
    row = model.row_of(card)
    assert model.index(row, 0).data(Roles.Kind) == "compaction"
    assert "41,000 tokens saved" in model.index(row, 0).data(Roles.Title)
    model.prepend_older(page(15, 50), has_older=False)
    assert ids(model) == [*range(15, 21), old_card, *range(21, 56), card, *range(56, 60), notice]
    model.append_message(msg(60))
    assert ids(model)[-2:] == [notice, 60]
    model.clear_cards("compaction")
    assert card not in ids(model) and old_card not in ids(model) and notice in ids(model)


# -- streaming and sizes -----------------------------------------------------------------------------------


def test_streaming_append_text_updates_row_and_grows_height(qtbot, view):
    model: ChatModel = view.model()
    model.set_messages(page(1, 6), has_older=False)
    model.append_message(msg(6, text="", status="streaming"))
    settle(qtbot, view)
    index = model.index(model.row_of(6), 0)
    option = QStyleOptionViewItem()
    h0 = view.delegate.sizeHint(option, index).height()
    rect0 = view.visualRect(index).height()
    with qtbot.waitSignal(model.dataChanged, timeout=2000):
        for n in range(30):
            model.append_text(6, f"chunk {n} with some words to wrap the line further\n\n")
    assert index.data(Roles.Text).startswith("chunk 0") and "chunk 29" in index.data(Roles.Text)
    assert index.data(Roles.Status) == "streaming"
    assert view.delegate.sizeHint(option, index).height() > h0 + 100
    qtbot.waitUntil(lambda: view.visualRect(index).height() > rect0 + 100, timeout=3000)


def test_sticky_bottom_only_when_already_at_bottom(qtbot, view):
    model: ChatModel = view.model()
    model.set_messages(page(1, 40), has_older=False)
    model.append_message(msg(40, text="", status="streaming"))
    settle(qtbot, view)
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and view.is_at_bottom())
    for n in range(20):
        model.append_text(40, f"streamed line {n}\n\n")
    settle(qtbot, view)
    qtbot.waitUntil(view.is_at_bottom)
    bar.setValue(bar.maximum() // 2)  # the user scrolls up to read
    reading = bar.value()
    for n in range(20):
        model.append_text(40, f"more {n}\n\n")
    old_max = bar.maximum()
    settle(qtbot, view)
    qtbot.waitUntil(lambda: bar.maximum() > old_max)
    assert bar.value() == reading


def test_older_requested_once_at_top_and_position_kept_after_prepend(qtbot, view):
    model: ChatModel = view.model()
    model.set_messages(page(101, 141), has_older=True)
    settle(qtbot, view)
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and view.is_at_bottom())
    requests = []
    view.older_requested.connect(lambda: requests.append(1))
    bar.setValue(bar.maximum() // 2)
    assert requests == []
    with qtbot.waitSignal(view.older_requested, timeout=1000):
        bar.setValue(0)
    bar.setValue(30)
    bar.setValue(0)
    assert requests == [1]  # once per arrival, until the page comes in
    top_index = view.indexAt(QPoint(5, 5))
    key, y = top_index.data(Roles.Id), view.visualRect(top_index).top()
    model.prepend_older(page(81, 101), has_older=False)
    settle(qtbot, view)
    assert ids(model)[:1] == [81]
    new_index = model.index(model.row_of(key), 0)
    assert abs(view.visualRect(new_index).top() - y) <= 1  # the row the user was reading did not move
    bar.setValue(0)
    assert requests == [1]  # has_older is now False


def test_placeholder_shown_only_when_empty(qtbot, view):
    assert view.is_showing_placeholder()
    image = view.viewport().grab().toImage()
    background = image.pixelColor(2, 2)
    mid = image.height() // 2
    row_pixels = {image.pixelColor(x, y).rgb() for x in range(image.width()) for y in range(mid - 8, mid + 8)}
    assert len(row_pixels - {background.rgb()}) > 5  # text is painted in the middle
    view.model().set_messages(page(1, 3), has_older=False)
    assert not view.is_showing_placeholder()
    view.set_placeholder_text("")
    view.model().set_messages([], has_older=False)
    assert not view.is_showing_placeholder()


# -- bubbles, copy, menus, links, keys ------------------------------------------------------------------------


def test_user_right_assistant_left(qtbot, view):
    model: ChatModel = view.model()
    model.set_messages([msg(1, "user", "hi"), msg(2, "assistant", "hello there")], has_older=False)
    settle(qtbot, view)
    u, a = model.index(0, 0), model.index(1, 0)
    ub = view.delegate.bubble_rect(u, view.visualRect(u))
    ab = view.delegate.bubble_rect(a, view.visualRect(a))
    width = view.viewport().width()
    assert ub.right() > width - 40 and ub.left() > width / 2
    assert ab.left() < 20


def _code_view(view: ChatView, qtbot) -> QModelIndex:
    text = f"Here:\n\n```python\n{CODE}\n```\n\nand\n\n```\nsecond block\n```\n"
    view.model().set_messages([msg(1, "user", "code please"), msg(2, "assistant", text)], has_older=False)
    settle(qtbot, view)
    return view.model().index(1, 0)


def test_click_copy_puts_code_block_on_clipboard(qtbot, view):
    index = _code_view(view, qtbot)
    points = view.delegate.copy_anchor_points(index, view.visualRect(index))
    assert len(points) == 2
    clipboard = QGuiApplication.clipboard()
    for n, expected in enumerate([CODE, "second block"]):
        clipboard.setText("sentinel")
        assert view.anchor_at(points[n]) == f"precis-copy:{n}"
        with qtbot.waitSignal(view.code_copied) as sig:
            qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=points[n].toPoint())
        assert sig.args == [n]
        assert clipboard.text() == expected


def test_context_menu_copy_message_and_code(qtbot, view):
    index = _code_view(view, qtbot)
    center = view.visualRect(index).center()
    menu = view.build_context_menu(center)
    labels = [a.text() for a in menu.actions()]
    assert labels[:3] == ["Copy message", "Copy code block 1", "Copy code block 2"]
    clipboard = QGuiApplication.clipboard()
    menu.actions()[0].trigger()
    assert clipboard.text().startswith("Here:") and "second block" in clipboard.text()
    menu.actions()[2].trigger()
    assert clipboard.text() == "second block"
    assert view.build_context_menu(QPoint(5, view.viewport().height() - 2)).actions() == []


def test_safe_link_click_emits_and_unsafe_is_text(qtbot, view):
    view.model().set_messages(
        [msg(1, "assistant", "go [docs](https://docs.python.org/3/) or [bad](javascript:alert(1))")],
        has_older=False,
    )
    settle(qtbot, view)
    index = view.model().index(0, 0)
    rect = view.visualRect(index)
    hrefs = {
        view.anchor_at(QPoint(x, y))
        for x in range(rect.left(), rect.right(), 3)
        for y in range(rect.top(), rect.bottom(), 3)
    }
    assert hrefs - {""} == {"https://docs.python.org/3/"}
    point = next(
        QPoint(x, y)
        for x in range(rect.left(), rect.right(), 3)
        for y in range(rect.top(), rect.bottom(), 3)
        if view.anchor_at(QPoint(x, y))
    )
    with qtbot.waitSignal(view.link_activated) as sig:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert sig.args == ["https://docs.python.org/3/"]


def test_keyboard_navigation_and_ctrl_c(qtbot, view):
    view.model().set_messages(page(1, 6), has_older=False)
    settle(qtbot, view)
    view.setFocus()
    view.setCurrentIndex(view.model().index(0, 0))
    qtbot.keyClick(view, Qt.Key.Key_Down)
    qtbot.keyClick(view, Qt.Key.Key_Down)
    assert view.currentIndex().row() == 2
    QGuiApplication.clipboard().setText("sentinel")
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text().startswith("message 3")


def test_status_tags_add_height(qtbot, view):
    model: ChatModel = view.model()
    model.set_messages(
        [msg(1, text="same"), msg(2, text="same", status="error", meta={"error": "overloaded"})],
        has_older=False,
    )
    settle(qtbot, view)
    ok, failed = (view.delegate.sizeHint(QStyleOptionViewItem(), model.index(r, 0)).height() for r in (0, 1))
    assert failed > ok


def test_dark_palette_switches_theme(qtbot, view):
    view.model().set_messages([msg(1, text=f"```python\n{CODE}\n```")], has_older=False)
    settle(qtbot, view)
    index = view.model().index(0, 0)
    light_html = view.delegate.document(index).toHtml()
    palette = view.palette()
    palette.setColor(palette.ColorRole.Base, QColor("#1e1e1e"))
    palette.setColor(palette.ColorRole.Window, QColor("#1e1e1e"))
    palette.setColor(palette.ColorRole.Text, QColor("#e6e6e6"))
    view.setPalette(palette)
    assert view.delegate.document(index).toHtml() != light_html


def test_long_first_page_is_held_back_and_released_on_scroll(qtbot, view):
    model: ChatModel = view.model()
    long = [msg(i, text=f"{i} " + "word " * 400) for i in range(1, 61)]  # ~2,000 chars each
    model.set_messages(long, has_older=False)
    settle(qtbot, view)
    assert model.rowCount() < 20 and model.release_pending()  # a screenful first, then the rest of the page
    settle(qtbot, view)
    shown = model.rowCount()
    assert 20 <= shown < 60 and ids(model)[-1] == 60
    assert model.has_older and not model.store_has_older and model.oldest_message_id() == 1
    requests = []
    view.older_requested.connect(lambda: requests.append(1))
    bar = view.verticalScrollBar()
    for _ in range(10):
        if model.rowCount() == 60:
            break
        bar.setValue(0)
        settle(qtbot, view)
    assert ids(model) == list(range(1, 61)) and not model.has_older
    assert requests == []  # held rows never cost a store round trip


def test_a_first_page_shows_a_screenful_and_the_rest_once_released(qtbot):
    model = ChatModel()
    model.set_messages(page(1, 201), has_older=False)  # ~100 characters each: the whole page is shown
    screen = model.rowCount()
    assert 8 <= screen < 100 and ids(model)[-1] == 200
    assert model.has_older and not model.store_has_older and model.oldest_message_id() == 1
    model.update_message(msg(5, text="edited while pending"))
    model.remove_message(6)
    model.set_trimmed({7})
    assert model.release_held()  # scrolling up shows the rest of the page first
    assert ids(model) == [i for i in range(1, 201) if i != 6] and not model.has_older
    assert model.row_at(model.row_of(5)).plain_text == "edited while pending"
    assert model.row_at(model.row_of(7)).detail.get("trimmed")
    assert not model.release_pending()


def test_a_first_page_shows_the_rest_by_itself_when_no_measurement_reports(qtbot):
    model = ChatModel()
    model.set_messages(page(1, 201), has_older=False)
    assert model.rowCount() < 100  # the rest waits for the chat's measurement, which never comes here
    qtbot.waitUntil(lambda: model.rowCount() == 200, timeout=PENDING_FALLBACK_MS * 4)
    assert ids(model) == list(range(1, 201)) and not model.release_pending()


def test_prepend_older_merges_held_rows(qtbot):
    model = ChatModel()
    model.set_messages([msg(i, text="word " * 400) for i in range(50, 110)], has_older=True)
    assert model.rowCount() < 60 and model.oldest_message_id() == 50
    model.prepend_older([msg(i) for i in range(40, 50)], has_older=False)
    assert ids(model) == list(range(40, 110)) and not model.has_older


# -- review pass: tool rows, tags, accessibility, keyboard ------------------------------------------------


def _tool_turns() -> list[StoredMessage]:
    return [
        msg(1, "user", "fix the lint"),
        StoredMessage(
            2,
            1,
            "assistant",
            [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make lint"}}],
        ),
        StoredMessage(3, 1, "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
        msg(4, "assistant", "Done."),
    ]


def test_tool_only_assistant_turn_is_a_tool_row_until_it_gains_text(qtbot):
    model = ChatModel()
    model.set_messages(_tool_turns(), has_older=False)
    assert [model.index(r, 0).data(Roles.Kind) for r in range(4)] == ["message", "tool", "tool", "message"]
    model.append_text(2, "Now explaining.")
    model.flush()
    assert model.index(1, 0).data(Roles.Kind) == "message"


def test_accessible_text_names_the_speaker_and_the_tag(qtbot):
    model = ChatModel()
    model.set_messages([*_tool_turns(), msg(5, text="cut", status="interrupted")], has_older=False)
    model.set_trimmed({3})
    text = [model.index(r, 0).data(Qt.ItemDataRole.AccessibleTextRole) for r in range(5)]
    assert text[0] == "You: fix the lint" and text[3] == "Claude: Done."
    assert text[1].startswith("Tool: ⚙ Bash make lint")
    desc = [model.index(r, 0).data(Qt.ItemDataRole.AccessibleDescriptionRole) for r in range(5)]
    assert desc == ["", "", "Shortened in the context sent to the model", "", "Interrupted"]


def _contrast(a: QColor, b: QColor) -> float:
    def lum(c: QColor) -> float:
        ch = [
            (v / 255) / 12.92 if v / 255 <= 0.03928 else ((v / 255 + 0.055) / 1.055) ** 2.4
            for v in (c.red(), c.green(), c.blue())
        ]
        return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2]

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("base, text", [("#ffffff", "#1f1f1f"), ("#1e1e20", "#e6e6e6")])
def test_tags_are_readable_on_light_and_dark(qtbot, base, text):
    from PySide6.QtGui import QPalette

    from desktop.ui.transcript.chat_delegate import TAG_FILL, TRIMMED_TAG, _blend, tag_colour

    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Base, QColor(base))
    palette.setColor(QPalette.ColorRole.Text, QColor(text))
    for tag in ("error: overloaded", "interrupted", TRIMMED_TAG):
        colour = tag_colour(tag, palette)
        pill = _blend(QColor(base), colour, TAG_FILL)
        assert _contrast(colour, pill) >= 4.5, tag  # WCAG AA for small text


def test_trimmed_tag_explains_itself_on_hover(qtbot, view):
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QToolTip

    from desktop.ui.transcript.chat_delegate import TRIMMED_TIP

    model: ChatModel = view.model()
    model.set_messages(_tool_turns(), has_older=False)
    model.set_trimmed({3})
    settle(qtbot, view)
    index = model.index(2, 0)
    option = QStyleOptionViewItem()
    option.rect = view.visualRect(index)
    pill = view.delegate.tag_rect(index, option.rect)
    assert not pill.isEmpty() and pill.top() > view.delegate.bubble_rect(index, option.rect).bottom()
    assert view.delegate.tag_rect(model.index(1, 0), view.visualRect(model.index(1, 0))).isEmpty()
    point = pill.center().toPoint()
    event = QHelpEvent(QHelpEvent.Type.ToolTip, point, view.viewport().mapToGlobal(point))
    assert view.delegate.helpEvent(event, view, option, index)
    assert QToolTip.text() == TRIMMED_TIP
    QToolTip.hideText()


def test_compaction_card_links_use_the_theme_link_colour(qtbot, view):
    from desktop.ui.transcript.markdown_render import DARK, LIGHT

    model: ChatModel = view.model()
    model.set_messages(page(1, 4), has_older=False)
    key = model.add_compaction_card("summary", 2, 900, covers_through_message_id=2)
    settle(qtbot, view)
    index = model.index(model.row_of(key), 0)
    assert QColor(LIGHT.link).name() in view.delegate.document(index).toHtml()
    palette = view.palette()
    palette.setColor(palette.ColorRole.Base, QColor("#1e1e1e"))
    palette.setColor(palette.ColorRole.Text, QColor("#e6e6e6"))
    view.setPalette(palette)
    assert QColor(DARK.link).name() in view.delegate.document(index).toHtml()


def test_compaction_card_actions_from_menu_and_enter(qtbot, view):
    model: ChatModel = view.model()
    model.set_messages(page(1, 4), has_older=False)
    key = model.add_compaction_card("summary", 2, 900, covers_through_message_id=2)
    model.set_card_detail(key, undoable=True)
    settle(qtbot, view)
    index = model.index(model.row_of(key), 0)
    menu = view.build_context_menu(view.visualRect(index).center())
    labels = [a.text() for a in menu.actions() if a.text()]
    assert labels[:3] == ["View summary", "Show originals", "Undo"]
    assert "Edit and resend…" not in labels and "Delete message…" not in labels
    actions = []
    view.card_action.connect(lambda k, a: actions.append((k, a)))
    menu.actions()[2].trigger()
    view.setFocus()
    view.setCurrentIndex(index)
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert actions == [(key, "undo"), (key, "summary")]


def test_edit_is_offered_only_for_typed_messages(qtbot, view):
    model: ChatModel = view.model()
    model.set_messages(_tool_turns(), has_older=False)
    settle(qtbot, view)

    def labels(row: int) -> list[str]:
        return [
            a.text() for a in view.build_context_menu(view.visualRect(model.index(row, 0)).center()).actions()
        ]

    assert "Edit and resend…" in labels(0)
    assert "Edit and resend…" not in labels(2)  # a tool result has the user role but nobody typed it
    assert "Delete message…" in labels(2)


def test_tab_into_the_list_starts_at_the_newest_row_on_screen(qtbot):
    from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget

    host = QWidget()
    qtbot.addWidget(host)
    edit, view = QLineEdit(host), ChatView(host)
    layout = QVBoxLayout(host)
    layout.addWidget(edit)
    layout.addWidget(view)
    view.setModel(ChatModel(view))
    view.model().set_messages(page(1, 30), has_older=True)
    host.resize(600, 400)
    host.show()
    qtbot.waitExposed(host)
    settle(qtbot, view)
    view.scroll_to_bottom()
    bottom = view.verticalScrollBar().value()
    requests = []
    view.older_requested.connect(lambda: requests.append(1))
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_Tab)
    assert view.hasFocus()
    assert view.currentIndex().row() == view.model().rowCount() - 1
    qtbot.keyClick(view, Qt.Key.Key_Up)
    assert view.currentIndex().row() == view.model().rowCount() - 2
    assert view.verticalScrollBar().value() > bottom - view.viewport().height() and not requests
    assert view.accessibleName() == "Conversation"


# -- composer and sidebar keyboard -------------------------------------------------------------------------


@pytest.fixture
def composer(qtbot):
    from desktop.ui.composer.composer import Composer

    c = Composer()
    c.resize(600, 120)
    qtbot.addWidget(c)
    c.show()
    qtbot.waitExposed(c)
    c.activateWindow()
    return c


def test_composer_tab_goes_to_send_and_enter_on_it_sends(qtbot, composer):
    composer.edit.setFocus()
    qtbot.keyClicks(composer.edit, "hello")
    qtbot.keyClick(composer.edit, Qt.Key.Key_Tab)
    assert composer.send_button.hasFocus() and composer.edit.toPlainText() == "hello"
    with qtbot.waitSignal(composer.send_requested) as sig:
        qtbot.keyClick(composer.send_button, Qt.Key.Key_Return)
    assert sig.args == ["hello", []]
    composer.set_busy(True)
    assert composer.stop_button.hasFocus()  # focus follows Send -> Stop
    with qtbot.waitSignal(composer.stop_requested):
        qtbot.keyClick(composer.stop_button, Qt.Key.Key_Space)
    composer.set_busy(False)
    qtbot.keyClick(composer.send_button, Qt.Key.Key_Tab)
    assert composer.attach_button.hasFocus()


def test_composer_controls_have_accessible_names(qtbot, composer):
    names = {
        w.objectName(): w.accessibleName()
        for w in (
            composer.edit,
            composer.send_button,
            composer.stop_button,
            composer.attach_button,
            composer.clear_attachments_button,
        )
    }
    assert names == {
        "composer_edit": "Message",
        "send_button": "Send message",
        "stop_button": "Stop the reply",
        "attach_button": "Attach files",
        "clear_attachments_button": "Remove the attachments",
    }
    assert composer.attach_button.width() == composer.send_button.width()  # one aligned column


def test_composer_grows_with_the_draft_and_shrinks_after_sending(qtbot, composer):
    from desktop.ui.composer.composer import MAX_LINES, MIN_HEIGHT

    assert composer.edit.height() == MIN_HEIGHT
    composer.edit.setPlainText("\n".join(f"line {i}" for i in range(8)))
    grown = composer.edit.height()
    assert grown > MIN_HEIGHT
    composer.edit.setPlainText("\n".join(f"line {i}" for i in range(MAX_LINES * 3)))
    capped = composer.edit.height()
    assert grown < capped < MAX_LINES * 2 * composer.edit.fontMetrics().lineSpacing()
    composer.send_requested.connect(lambda *_: composer.clear())  # the window clears it once committed
    composer.send_button.click()
    assert composer.edit.height() == MIN_HEIGHT


def test_sidebar_f2_renames_and_delete_asks(qtbot, monkeypatch):
    from PySide6.QtWidgets import QInputDialog, QMessageBox

    from desktop.engine.types import SessionInfo
    from desktop.ui.sidebar.sidebar import Sidebar

    bar = Sidebar()
    qtbot.addWidget(bar)
    bar.set_sessions(
        [SessionInfo(id=7, title="First", model="m", created_at=0.0, updated_at=0.0, message_count=2)]
    )
    bar.list.setCurrentRow(0)
    bar.show()
    bar.list.setFocus()
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("Renamed", True))
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(bar.rename_requested) as renamed:
        qtbot.keyClick(bar.list, Qt.Key.Key_F2)
    with qtbot.waitSignal(bar.delete_requested) as deleted:
        qtbot.keyClick(bar.list, Qt.Key.Key_Delete)
    assert renamed.args == [7, "Renamed"] and deleted.args == [7]
    assert bar.list.accessibleName() == "Chats"


def test_imported_client_command_records_show_as_quiet_lines():
    from desktop.ui.transcript.chat_model import segments_for

    command = (
        "<command-name>/review</command-name>\n<command-message>review</command-message>\n"
        "<command-args>167</command-args>"
    )
    assert [(s.kind, s.text) for s in segments_for([{"type": "text", "text": command}])] == [
        ("note", "/review 167")
    ]
    out = segments_for([{"type": "text", "text": "<local-command-stdout>Bye</local-command-stdout>"}])
    assert [(s.kind, s.text) for s in out] == [("note", "↳ Bye")]
    typed = segments_for([{"type": "text", "text": "Please explain <command-name> tags"}])
    assert typed[0].kind == "markdown"  # only whole records, not text that mentions the tags


def _viewport_setup(widget) -> dict:
    return {
        "name": widget.objectName(),
        "background": widget.backgroundRole(),
        "fill": widget.autoFillBackground(),
        "foreground": widget.foregroundRole(),
        "tracking": widget.hasMouseTracking(),
        "focus": widget.focusPolicy(),
        "proxied": widget.focusProxy() is not None,
        "menu": widget.contextMenuPolicy(),
        "drops": widget.acceptDrops(),
        "cursor": widget.cursor().shape(),
        "attributes": [a for a in Qt.WidgetAttribute if widget.testAttribute(a)],
    }


def test_the_chat_views_own_viewport_is_set_up_as_the_one_qt_makes(qtbot):
    """The view makes its viewport (so PySide6 need not make every widget class to wrap Qt's): same set-up."""
    from PySide6.QtWidgets import QListView

    ours, plain = ChatView(), QListView()
    qtbot.addWidget(ours)
    qtbot.addWidget(plain)
    plain.setMouseTracking(True)  # as the chat view does
    assert _viewport_setup(ours.viewport()) == _viewport_setup(plain.viewport())
