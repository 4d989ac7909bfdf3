"""Issue 36, item 4: the window's defects as users found them at 1920x1080 and 1440x900, each with real widgets.

(The blank chat area after a one-step shrink needs a real X11 resize: tests/test_window_defects_x11.py.)
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QFontInfo, QFontMetricsF, QImage, QTextCursor, QWheelEvent
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from desktop.engine.types import StoredMessage
from tests.test_window import ready, until

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def keep_look(qapp):
    """Tests that apply a theme give the next test the palette and style sheet they found."""
    from desktop.ui.look import icons

    palette, sheet = QApplication.palette(), qapp.styleSheet()
    yield
    qapp.setPalette(palette)
    qapp.setStyleSheet(sheet)
    icons.clear_cache()


def _view(qtbot, messages: list[StoredMessage], width: int = 700, height: int = 600):  # noqa: ANN202
    from desktop.ui.transcript.chat_model import ChatModel
    from desktop.ui.transcript.chat_view import ChatView

    view = ChatView()
    view.open_links_externally = False
    model = ChatModel(view)
    view.setModel(model)
    view.resize(width, height)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    model.set_messages(messages, has_older=False)
    model.flush()
    view.doItemsLayout()
    qtbot.wait(1)
    return view, model


def _msg(i: int, role: str, text: str, **kw) -> StoredMessage:  # noqa: ANN003
    return StoredMessage(i, 1, role, [{"type": "text", "text": text}], **kw)  # type: ignore[arg-type]


def _wheel(widget: QWidget, pos: QPointF, dy: int, modifiers=Qt.KeyboardModifier.NoModifier) -> bool:  # noqa: ANN001
    event = QWheelEvent(
        pos,
        widget.mapToGlobal(pos),
        QPoint(),
        QPoint(0, dy),
        Qt.MouseButton.NoButton,
        modifiers,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    return QApplication.sendEvent(widget, event)


def _ink(image: QImage) -> set[str]:
    return {
        image.pixelColor(x, y).name()
        for y in range(image.height())
        for x in range(image.width())
        if image.pixelColor(x, y).alpha() > 200
    }


# --- Medium: the wheel over a number box -------------------------------------------------------------------


@pytest.mark.parametrize("page", ["settings", "welcome"])
def test_the_wheel_over_a_number_box_scrolls_the_page_not_the_number(qtbot, page):
    """Scrolling Settings past Max output tokens turned 8192 into 11264 without a word."""
    from PySide6.QtWidgets import QScrollArea

    from desktop.engine.config.settings import Settings
    from desktop.ui.settings.settings_dialog import SettingsDialog, WelcomePage

    if page == "settings":
        host = SettingsDialog(Settings(), None, "keyring")
        form = host.form
    else:
        host = WelcomePage(Settings())
        form = host.form
    qtbot.addWidget(host)
    host.resize(700, 380)  # shorter than the fields: the page scrolls
    host.show()
    qtbot.waitExposed(host)
    scroll = host.findChild(QScrollArea)
    bar = scroll.verticalScrollBar()
    assert bar.maximum() > 0
    box = form.max_output
    scroll.ensureWidgetVisible(box)
    before, top = box.value(), bar.value()
    for _ in range(3):
        _wheel(box, QPointF(box.rect().center()), -120)
    assert box.value() == before == 8192
    assert bar.value() != top  # the page moved instead
    assert not box.hasFocus()
    assert box.focusPolicy() == Qt.FocusPolicy.StrongFocus  # a click or Tab gives it the focus, not the wheel


# --- Medium: attachment chips after a theme switch -----------------------------------------------------------


@pytest.mark.qt
async def test_attachment_chips_redraw_their_icons_after_a_theme_switch(window, keep_look, tmp_path):
    """Drawn once in the old theme's text colour, the file icon and the × vanished on the new page."""
    from PySide6.QtCore import QSize

    from desktop.ui.look.theme import DARK, LIGHT

    window.look.set_theme("light")
    note = tmp_path / "notes.txt"
    note.write_text("hello")
    window.composer.add_files([str(note)])
    chip = window.composer.chips.chips[str(note)]
    await until(lambda: chip.state == "ready")
    for theme, text in (("dark", DARK.text), ("light", LIGHT.text), ("dark", DARK.text)):
        window.look.set_theme(theme)
        await asyncio.sleep(0.05)
        assert text.lower() in _ink(chip.remove_button.icon().pixmap(QSize(16, 16)).toImage()), theme
        assert text.lower() in _ink(chip.preview.pixmap().toImage()), theme


# --- Low: inline math ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mathtext():
    from desktop.ui.transcript import math_render

    math_render.load_now()
    return math_render


def _formula(math_render, source: str):  # noqa: ANN001, ANN202
    html = math_render.math_html(source, False, "#000000", "monospace")
    number = int(re.search(r"precis-math:(\d+)", html).group(1))
    return math_render.formula(number)


def _ink_rows(image: QImage) -> list[int]:
    return [
        y
        for y in range(image.height())
        if any(image.pixelColor(x, y).alpha() > 60 for x in range(image.width()))
    ]


def _feet(doc, width: int) -> list[tuple[int, int]]:  # noqa: ANN001
    """(left x, lowest inked row) of each inked run of columns when ``doc`` is painted: the feet of its glyphs."""
    from PySide6.QtGui import QPainter

    doc.setTextWidth(width)
    image = QImage(width, int(doc.size().height()) + 4, QImage.Format.Format_ARGB32)
    image.fill(QColor("#ffffff"))
    painter = QPainter(image)
    doc.drawContents(painter)
    painter.end()
    bottoms = []
    for x in range(image.width()):
        inked = [y for y in range(image.height()) if image.pixelColor(x, y).lightness() < 140]
        bottoms.append(max(inked) if inked else -1)
    runs, start = [], None
    for x, bottom in enumerate([*bottoms, -1]):
        if bottom >= 0 and start is None:
            start = x
        elif bottom < 0 and start is not None:
            runs.append((start, max(bottoms[start:x])))
            start = None
    return runs


def test_inline_math_is_as_tall_as_the_text_and_sits_on_its_baseline(qtbot, mathtext):
    """Formulas were typeset at the desktop's 9 pt (10-11 px beside the 15 px body) and centred on the baseline:
    half below the line, and off in table cells."""
    from desktop.ui.transcript.markdown_render import SafeTextDocument, render_markdown
    from desktop.ui.window.reading_column import body_font

    made = _formula(mathtext, "x")
    rows = _ink_rows(made.image)
    x_height = QFontMetricsF(body_font(QApplication.font())).xHeight()
    ink = (rows[-1] - rows[0] + 1) / mathtext.OVERSAMPLE
    assert ink >= 0.8 * x_height, (ink, x_height)
    # Painted beside text, in prose and in a table cell, the formula's x stands on the line the letters do.
    for markdown in ("xxxx $x$ xxxx", "| a |\n|---|\n| xxxx $x$ xxxx |"):
        doc = SafeTextDocument()
        doc.setDefaultFont(body_font(QApplication.font()))
        doc.setHtml(render_markdown(markdown))
        feet = [bottom for _x, bottom in _feet(doc, 400)]
        assert len(feet) >= 3 and max(feet) - min(feet) <= 1, (markdown, feet)


def test_an_operator_after_a_letter_gets_its_thin_space(qtbot, mathtext):
    """``n\\log n`` was set as "nlog n"."""
    assert _formula(mathtext, r"n\log n").width == _formula(mathtext, r"n\,\log n").width
    assert mathtext.spaced(r"n\log n") == r"n\,\log n"
    assert mathtext.spaced(r"\log n") == r"\log n"  # nothing before it
    assert mathtext.spaced(r"a\cdot\log b") == r"a\cdot\log b"  # a command before it sets its own space


# --- Low: Chinese line spacing ----------------------------------------------------------------------------------


def test_chinese_and_english_paragraphs_have_the_same_line_spacing(qtbot):
    """Spacing was a proportion of each line's own height, which the CJK fallback font sets: a reader measured
    ~20 px for Chinese against 27 px for English (here, with Droid Sans Fallback, it came out 30 against 27)."""
    zh = "这是一个很长的中文段落，用来比较中文和英文的行距是否一样。" * 6
    en = "A long English paragraph to compare the line spacing of Chinese and English text in a reply. " * 4
    view, model = _view(qtbot, [_msg(1, "assistant", f"{zh}\n\n{en}"), _msg(2, "user", zh)])
    pitches = []
    for row in range(2):
        block = view.delegate.document(model.index(row)).begin()
        while block.isValid():
            lines = block.layout()
            if lines.lineCount() > 2:
                pitches.append(round(lines.lineAt(2).y() - lines.lineAt(1).y()))
            block = block.next()
    assert len(pitches) == 3 and len(set(pitches)) == 1, pitches
    assert pitches[0] >= 24


# --- Low: the hover bar -------------------------------------------------------------------------------------------


def test_pinning_under_the_pointer_keeps_regenerate_whole(qtbot):
    """The bar kept the width it had with "Pin"; once the chat's pins said "Unpin", Regenerate read "Reg…ate"."""
    from desktop.ui.transcript.message_actions import MessageActions

    view, model = _view(qtbot, [_msg(1, "user", "question"), _msg(2, "assistant", "answer " * 40)])
    actions = MessageActions(view)
    actions.show_for(model.index(1))
    actions.pinned = {2}
    actions.show_pinned(True)  # what the window does when the pins come back
    qtbot.wait(1)
    for button in (actions.copy_button, actions.regenerate_button, actions.pin_button):
        assert button.width() >= button.sizeHint().width(), button.text()
    assert actions.pin_button.text() == "Unpin"


def test_the_hover_bar_leaves_an_edited_messages_arrows_uncovered(qtbot):
    """The bar sat on the bubble's lower corner, where an edited message shows ‹ 2/2 ›."""
    from desktop.ui.transcript.message_actions import MessageActions

    view, model = _view(
        qtbot,
        [
            _msg(1, "user", "an edited question, long enough to wrap a little " * 2),
            _msg(2, "assistant", "ok"),
        ],
    )
    model.row_at(0).versions = (2, 2)
    model.row_at(0).refresh()
    view.delegate.clear_caches()
    view.doItemsLayout()
    actions = MessageActions(view)
    actions.show_for(model.index(0))
    qtbot.wait(1)
    index = model.index(0)
    back, forth = view.delegate.version_rects(index, view.visualRect(index))
    assert not actions.geometry().intersects(back.united(forth).toAlignedRect())
    assert view.viewport().rect().contains(actions.geometry())


# --- Low: settings --------------------------------------------------------------------------------------------------


def test_a_new_profile_without_a_key_does_not_claim_one_is_saved(qtbot):
    """Add › Custom showed "saved in a private file (type to replace)" for a profile that has no key."""
    from desktop.engine.config.profiles import Profile
    from desktop.engine.config.settings import Settings
    from desktop.ui.settings.settings_dialog import SettingsDialog

    settings = Settings(profile="Work", profiles=[Profile("Work", "https://work.example", "x-api-key", "m1")])
    dialog = SettingsDialog(settings, None, "file")
    qtbot.addWidget(dialog)
    form = dialog.form
    assert "private file" in form.api_key.placeholderText()  # the profile in use: its key is in the file
    form.add_profile("Custom")
    assert "saved" not in form.api_key.placeholderText()
    form.profile_box.setCurrentIndex(0)
    assert "private file" in form.api_key.placeholderText()
    form.duplicate_profile(True)  # "Work copy", with Work's key
    assert "copied" in form.api_key.placeholderText()


def test_test_connection_fills_an_empty_model_field_with_the_first_listed_model(qtbot):
    from desktop.engine.config.settings import Settings
    from desktop.ui.settings.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings(), None, "keyring")
    qtbot.addWidget(dialog)
    form = dialog.form
    form.add_profile("Custom")
    form.model.clear()
    form.show_test_result(True, "Connected. Models: qwen3-coder, llama-4", ["qwen3-coder", "llama-4"])
    assert form.model.text() == "qwen3-coder"
    form.show_test_result(True, "Connected.", ["other"])  # a model the user chose stays
    assert form.model.text() == "qwen3-coder"


def test_without_a_keyring_the_private_file_is_the_choice_offered_and_explained(qtbot):
    from desktop.engine.config.settings import Settings
    from desktop.ui.settings.settings_dialog import ProviderForm

    form = ProviderForm(Settings(), "No system keyring is available.", "none")
    qtbot.addWidget(form)
    assert form.in_file.isVisibleTo(form) and form.in_file.isChecked() and not form.run_only.isChecked()
    assert form.in_file_note.isVisibleTo(form) and "0600" in form.in_file_note.text()
    form.api_key.setText("sk-test")
    choice = form.choice()
    assert choice.in_file and not choice.run_only
    form.in_file.setChecked(False)  # the user's other choice: this run only
    assert form.choice().run_only and not form.choice().in_file
    # A key the user kept for this run only stays so; with a keyring, neither choice shows.
    assert not ProviderForm(Settings(), "No keyring.", "session").in_file.isChecked()
    keyring_form = ProviderForm(Settings(), None, "keyring")
    qtbot.addWidget(keyring_form)
    assert not keyring_form.in_file.isVisibleTo(keyring_form)
    assert not keyring_form.in_file_note.isVisibleTo(keyring_form)


# --- Low: View summary -----------------------------------------------------------------------------------------------


def test_view_summary_scrolls_to_the_start_of_the_card(qtbot):
    """The card grew downwards and the view followed the bottom: the summary's start was off-screen."""
    messages = [_msg(i, "user" if i % 2 else "assistant", f"message {i} " * 30) for i in range(1, 13)]
    view, model = _view(qtbot, messages, height=420)
    summary = "\n\n".join(
        f"## Section {n}\n\n" + "A line of the summary that goes on. " * 8 for n in range(8)
    )
    key = model.add_compaction_card(summary, 10, 5000, covers_through_message_id=12)
    # What the window does on "View summary" (MainWindow._on_card_action opens the card).
    view.card_action.connect(
        lambda k, a: (
            model.set_card_detail(k, expanded=not model.card(k).detail.get("expanded"))
            if a == "summary"
            else None
        )
    )
    view.scroll_to_bottom()
    qtbot.wait(10)
    view.card_action.emit(key, "summary")
    qtbot.wait(50)
    rect = view.visualRect(model.index(model.row_of(key)))
    assert rect.height() > view.viewport().height()  # taller than the view: its start is what must show
    assert 0 <= rect.top() <= 8, rect


# --- Low: search snippets ----------------------------------------------------------------------------------------------


def test_search_snippets_show_plain_text(qtbot):
    from desktop.engine.history.search import MARK_END, MARK_START
    from desktop.ui.api import SearchHit
    from desktop.ui.sidebar.search_dialog import SearchDialog, snippet_html

    snippet = (
        f"# Setup\n**Install** the `{MARK_START}precis{MARK_END}` package, see [the docs](https://x.y/z)"
    )
    hit = SearchHit("message", 1, "A chat", 7, None, "assistant", snippet, 0.0)
    shown = snippet_html(hit)
    assert "<b>precis</b>" in shown
    for mark in ("#", "**", "`", "](", "https://"):
        assert mark not in shown, mark
    assert shown == "Setup Install the <b>precis</b> package, see the docs"
    dialog = SearchDialog()
    qtbot.addWidget(dialog)
    dialog.show_results("", [hit])
    assert "**" not in dialog.results.item(0).toolTip()


# --- Low: the /context card --------------------------------------------------------------------------------------------


def test_the_context_cards_columns_line_up_in_chinese(qtbot):
    """The report's columns were runs of spaces in a code block: in Chinese the values drifted."""
    report = (
        "模型         claude-opus-5-5\n"
        "窗口         200,000\n"
        "已用         12,345（6.2%）\n"
        "压缩阈值     100,000（你设的上限）\n"
        "             其中压缩 $0.0100\n"
        "\n"
        "构成\n"
        "      10,000   81.0%  系统提示\n"
        "       2,345   19.0%  消息"
    )
    view, model = _view(qtbot, [_msg(1, "user", "/context")])
    key = model.add_notice(f"```text\n{report}\n```", "上下文")
    index = model.index(model.row_of(key))
    doc = view.delegate.document(index)
    layout = doc.documentLayout()

    def x_of(text: str, end: bool = False) -> float:
        """Where ``text`` starts (or ends) on its line, in the document."""
        found = doc.find(text)
        assert not found.isNull(), text
        block = found.block()
        at = (found.selectionEnd() if end else found.selectionStart()) - block.position()
        line = block.layout().lineForTextPosition(at)
        return round(layout.blockBoundingRect(block).left() + line.cursorToX(at)[0], 1)

    values = {
        t: x_of(t)
        for t in ("claude-opus-5-5", "200,000", "12,345（6.2%）", "100,000（你设的上限）", "其中压缩")
    }
    assert len(set(values.values())) == 1, values
    shares = {t: x_of(t, end=True) for t in ("81.0%", "19.0%")}
    assert len(set(shares.values())) == 1, shares  # right-aligned figures
    assert model.row_at(model.row_of(key)).plain_text.startswith("上下文")  # a copy is the report's text


# --- Low: Markdown -----------------------------------------------------------------------------------------------


def test_a_task_list_shows_its_boxes_without_bullets(qtbot):
    from PySide6.QtGui import QTextDocument, QTextListFormat

    from desktop.ui.transcript.markdown_render import TASK_DONE, TASK_OPEN, render_markdown

    doc = QTextDocument()
    doc.setHtml(render_markdown("- [ ] write the test\n- [x] reproduce it\n\nand a list:\n\n- one\n- two"))
    styles = {}
    block = doc.begin()
    while block.isValid():
        if block.textList() is not None:
            styles[block.text()] = block.textList().format().style()
        block = block.next()
    assert styles[f"{TASK_OPEN} write the test"] == QTextListFormat.Style.ListStyleUndefined
    assert styles[f"{TASK_DONE} reproduce it"] == QTextListFormat.Style.ListStyleUndefined
    assert styles["one"] == QTextListFormat.Style.ListDisc  # a plain list keeps its bullets


def test_a_table_in_a_narrow_column_breaks_no_word_that_fits(qtbot):
    table = (
        "| Setting | What it does | Default |\n|---|---|---|\n"
        "| compaction_threshold | Where the older part of the chat is summarised automatically | fifty percent |\n"
        "| thinking_budget_tokens | Tokens a chat may think with | 4096 |\n"
    )
    view, model = _view(qtbot, [_msg(1, "assistant", table)], width=470)
    doc = view.delegate.document(model.index(0))
    assert doc.textWidth() < 460
    for word in ("compaction_threshold", "thinking_budget_tokens", "summarised", "automatically"):
        block = doc.find(word).block()
        lines = block.layout()
        start = doc.find(word).selectionStart() - block.position()
        line = lines.lineForTextPosition(start)
        assert line.textStart() + line.textLength() >= start + len(word), f"{word} broken"
    assert doc.size().width() <= doc.textWidth() + 1  # and the table stays in the column


# --- Low: the rename dialog, the accent mark, the wording ----------------------------------------------------------


def test_f2s_rename_dialog_is_wide_enough_for_a_title(qapp, qtbot, keep_look):
    """~190 px: a chat's title did not fit its field. The dialog is the one F2 opens (Sidebar.ask_rename:
    QInputDialog.getText, titled "Rename chat"), made here without its modal loop."""
    from PySide6.QtWidgets import QInputDialog

    from desktop.ui.look.theme import apply_theme

    apply_theme(qapp, "light")  # the style sheet, as the app always has it
    dialog = QInputDialog()
    qtbot.addWidget(dialog)
    dialog.setWindowTitle("Rename chat")
    dialog.setLabelText("Title:")
    dialog.setTextValue("Question 0: explain it at length")
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.width() >= 400, dialog.width()


def test_the_ui_says_summarised_as_its_menus_do():
    """ "summarized" on the card, "Summarise" in the menus; the window writes British English."""
    from desktop.ui.api import CompactionRecord
    from desktop.ui.transcript.compaction_card import card_title

    record = CompactionRecord(1, 1, "summary", 10, "manual", {"messages": 3, "tokens_saved": 1200}, 0.0)
    assert "summarised" in card_title(record)
    ui = ROOT / "desktop" / "ui"
    american = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in ui.rglob("*.py")
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if re.search(r"summari[z]", line, re.IGNORECASE)
    ]
    assert not american, american


# --- Low: the permission prompt ------------------------------------------------------------------------------------


def test_the_permission_prompt_fits_the_reading_column_and_its_arguments(qtbot):
    """A ~1,650 px panel at 1920 px with a 150 px box for three lines of JSON."""
    from desktop.tools.permissions import PermissionRequest
    from desktop.tools.types import BUILTIN, ToolSpec
    from desktop.ui.tools.permission_prompt import PermissionPrompt
    from desktop.ui.window.reading_column import COLUMN

    host = QWidget()
    column = QVBoxLayout(host)
    column.addWidget(QWidget(host), 1)
    prompt = PermissionPrompt(host)
    column.addWidget(prompt)
    qtbot.addWidget(host)
    host.resize(1650, 700)
    host.show()
    prompt.show_session(1)
    prompt.ask(
        PermissionRequest(1, "t1", ToolSpec("run", BUILTIN, "run", {}), {"command": "ls -la", "cwd": "."})
    )
    qtbot.waitExposed(host)
    qtbot.wait(20)
    assert COLUMN - 40 <= prompt.width() <= COLUMN
    assert abs(prompt.geometry().center().x() - host.rect().center().x()) <= 2  # centred under the messages
    doc_height = prompt.details.document().size().height()
    assert doc_height <= prompt.details.height() <= doc_height + 12
    long = {f"option_{n}": n for n in range(40)}  # forty lines of JSON
    prompt.ask(PermissionRequest(1, "t2", ToolSpec("run", BUILTIN, "run", {}), long))
    prompt.settled(prompt.current.id)
    qtbot.wait(20)
    assert prompt.details.height() == prompt.details.maximumHeight() < 300  # a long one scrolls in the box


# --- Habits: a long paste, typing in the transcript, type sizes ------------------------------------------------------


def test_a_long_paste_becomes_a_text_attachment(qtbot):
    from desktop.ui.composer.composer import Composer

    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    composer.edit.setPlainText("see: ")
    composer.edit.moveCursor(QTextCursor.MoveOperation.End)
    pasted = "\n".join(
        f"{n:05d} a line of a long log that someone pasted whole" for n in range(700)
    )  # ~33 KB
    mime = QMimeData()
    mime.setText(pasted)
    composer.edit.insertFromMimeData(mime)
    assert composer.edit.toPlainText() == "see: "  # the draft keeps what was typed, not 33 KB
    (path,) = composer.attachments
    assert Path(path).read_text("utf-8") == pasted  # sent whole, as a text file
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(Path(path).parent).st_mode) == 0o700
    assert composer.chips.chips[path].name_label.text() == "Pasted text"
    short = QMimeData()
    short.setText("a short paste")
    composer.edit.insertFromMimeData(short)
    assert composer.edit.toPlainText() == "see: a short paste" and len(composer.attachments) == 1
    composer.clear()  # sent or discarded: the file goes
    assert not Path(path).exists()


@pytest.mark.qt
async def test_text_typed_in_the_transcript_goes_to_the_composer(window, fake_api, qtbot):
    fake_api.queue_text("an answer")
    window.composer.edit.setPlainText("a question")
    window.composer.send_button.click()
    await ready(window)
    await until(lambda: window.chat_model.rowCount() == 2)
    window.chat.setFocus()
    qtbot.keyClicks(
        window.chat, "A"
    )  # typed with the transcript focused: the composer takes it, and the focus
    assert window.composer.edit.hasFocus()
    qtbot.keyClicks(window.composer.edit, "lso, why?")
    assert window.composer.edit.toPlainText() == "Also, why?"
    window.chat.setFocus()
    qtbot.keyClick(
        window.chat, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier
    )  # a shortcut stays the list's
    assert window.composer.edit.toPlainText() == "Also, why?"


@pytest.mark.qt
async def test_type_sizes_the_composer_the_hover_card_and_dialogs(window, keep_look):
    from PySide6.QtWidgets import QLabel

    from desktop.ui.gauge.hover_card import HoverCard
    from desktop.ui.sidebar.search_dialog import SearchDialog
    from desktop.ui.window.reading_column import BODY_PX

    window.look.set_theme("light")
    assert (
        QFontInfo(window.composer.edit.font()).pixelSize()
        == BODY_PX
        == QFontInfo(window.chat.font()).pixelSize()
    )
    card = HoverCard(window.gauge)
    assert QFontInfo(card.font()).pixelSize() >= 14
    for label in card.findChildren(QLabel):
        label.ensurePolished()  # as shown: the style sheet's font applies then
    small = [(lb.objectName(), QFontInfo(lb.font()).pixelSize()) for lb in card.findChildren(QLabel)]
    assert all(px >= 14 for _name, px in small), small
    dialog = SearchDialog(window)
    dialog.show()
    await asyncio.sleep(0.05)
    assert QFontInfo(dialog.edit.font()).pixelSize() >= 14
    assert QFontInfo(dialog.empty.font()).pixelSize() >= 14
    dialog.reject()


# --- Habits: code blocks scroll sideways ------------------------------------------------------------------------------


def test_a_code_blocks_long_lines_stay_whole_and_scroll_sideways(qtbot):
    line = "value = compute(" + ", ".join(f"argument_{n}" for n in range(14)) + ")"
    code = f"```python\n{line}\n{line}\nshort()\n```"
    view, model = _view(qtbot, [_msg(1, "assistant", f"Here:\n\n{code}\n\nAfter the code.")], width=640)
    index = model.index(0)
    doc = view.delegate.document(index)
    found = doc.find("value = compute(")
    assert found.block().layout().lineCount() == 1  # not wrapped
    prose = doc.find("After the code.").block()
    assert (
        doc.documentLayout().blockBoundingRect(prose).right() <= doc.textWidth() + 1
    )  # prose keeps the column
    rect = view.visualRect(index)
    origin = view.delegate.text_origin(index, rect)
    (area,) = view.delegate._code_areas(doc)
    assert area.overflow > 100
    point = origin + area.rect.center()
    before = view.delegate.hit_position(index, rect, point)
    view.viewport().grab()
    _wheel(view.viewport(), point, -120, Qt.KeyboardModifier.ShiftModifier)
    _wheel(view.viewport(), point, -120, Qt.KeyboardModifier.ShiftModifier)
    after = view.delegate.hit_position(index, rect, point)
    assert after > before  # the same point is further along the line: the block moved
    assert view.verticalScrollBar().value() == view.verticalScrollBar().maximum()  # the transcript did not
    # A plain wheel over it still scrolls the transcript, and prose never scrolls sideways.
    assert not view.delegate.scroll_code(index, rect, origin + QPointF(5, 5), 40)


# --- Habits: dev.sh installs a CJK font -------------------------------------------------------------------------------


def _system_packages(tmp_path: Path, cmd: str, zh_fonts: str) -> list[str]:
    """Run dev.sh's system_packages with the system faked: what apt-get would install."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "apt.log"
    log.write_text("")
    fakes = {
        "fc-list": f'case "$*" in *lang=zh*) printf "%s" "{zh_fonts}";; *) echo "NotoColorEmoji.ttf";; esac',
        "apt-get": f'echo "$@" >> "{log}"',
        "id": "echo 0",
        "bwrap": "true",
        "Xvfb": "true",
        "xauth": "true",
        "desktop-file-validate": "true",
        "appstreamcli": "true",
    }
    for name, body in fakes.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    script = (ROOT / "packaging" / "dev.sh").read_text()
    function = re.search(r"^system_packages\(\) \{.*?^\}", script, re.S | re.M).group(0)
    body = f'qt_probe() {{ QT_PROBE=0; }}\nQT_PROBE=0 QT_MISSING="" QT_UNMAPPED=""\ncmd={cmd}\n{function}\nsystem_packages'
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    subprocess.run(["bash", "-c", body], env=env, check=True, capture_output=True, timeout=30)
    installs = [line for line in log.read_text().splitlines() if line.startswith("install")]
    return [word for line in installs for word in line.split()]


def test_dev_sh_app_installs_a_cjk_font_once(tmp_path):
    """A fresh machine showed Chinese as boxes: the emoji font came, no CJK one."""
    assert "fonts-noto-cjk" in _system_packages(tmp_path, "app", "")
    assert (
        _system_packages(tmp_path, "app", "DroidSansFallbackFull.ttf: Droid Sans Fallback") == []
    )  # idempotent
    assert "fonts-droid-fallback" in _system_packages(tmp_path, "test", "")  # the tests' small one
