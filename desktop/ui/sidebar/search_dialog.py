"""Search across every chat (Ctrl+K): results with their snippets as typed; Enter or a click opens the chat at
the message found."""

from __future__ import annotations

import datetime as _dt
import html
import re

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.api import SearchHit

HIT_ROLE = Qt.ItemDataRole.UserRole
DEBOUNCE_MS = 180


# Markdown's marks, as a snippet of a message shows them: a result reads as the text, not as its source.
_LINE_MARKS = re.compile(
    r"(^|\n)[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|(?:[-*+]|\d{1,3}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?)"
)
_FENCE = re.compile(r"(^|\n)[ \t]*(?:```|~~~)[^\n]*")
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_LINK_CUT = re.compile(r"!?\[(?=[^\]\n]*$)|\]\([^)\s]*\)?")  # a link the snippet's edge cut in two
_PAIRED = re.compile(r"\*\*|__|~~|`")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])|(?<!\w)_(?=\S)|(?<=\S)_(?!\w)")


def plain(text: str, line_start: bool = True) -> str:
    """``text`` without Markdown's marks (headings' #, emphasis, code's backticks, quote and list marks, a link's
    address). ``line_start``: the text begins a line (a piece after a matched word does not)."""
    if not line_start:
        text = "\0" + text  # no mark at the very start counts as a line's
    text = _FENCE.sub(r"\1", text)
    text = _LINE_MARKS.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _LINK_CUT.sub("", text)
    text = _PAIRED.sub("", text)
    text = _EMPHASIS.sub("", text)
    return text.removeprefix("\0")


def snippet_html(hit: SearchHit) -> str:
    """The snippet as plain text with the matched words in bold (everything escaped: a snippet is never markup)."""
    out = []
    for n, (text, matched) in enumerate(hit.parts()):
        shown = html.escape(plain(text, line_start=n == 0))
        out.append(f"<b>{shown}</b>" if matched else shown)
    return " ".join("".join(out).split("\n"))


class SearchDialog(QDialog):
    query_changed = Signal(str)  # debounced: the window searches and calls show_results
    hit_chosen = Signal(object)  # SearchHit

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("search_dialog")
        self.setWindowTitle(self.tr("Search all chats"))
        self.resize(640, 460)
        self.edit = QLineEdit(self)
        self.edit.setObjectName("search_edit")
        self.edit.setPlaceholderText(self.tr("Search messages, tool results and summaries…"))
        self.edit.setClearButtonEnabled(True)
        self.edit.setAccessibleName(self.tr("Search all chats"))
        self.results = QListWidget(self)
        self.results.setObjectName("search_results")
        self.results.setAccessibleName(self.tr("Search results"))
        self.results.setWordWrap(True)
        self.empty = QLabel(self.tr("No results"), self)
        self.empty.setObjectName("search_empty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setStyleSheet("color: palette(placeholder-text); padding: 24px;")
        self.empty.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self.edit)
        layout.addWidget(self.results, 1)
        layout.addWidget(self.empty)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(lambda: self.query_changed.emit(self.edit.text()))
        self.edit.textChanged.connect(lambda _t: self._timer.start())
        self.edit.returnPressed.connect(self._choose_current)
        self.results.itemActivated.connect(self._choose)
        self.results.itemClicked.connect(self._choose)
        self.edit.installEventFilter(self)
        self._shown_for = ""

    def eventFilter(self, watched, event) -> bool:  # noqa: ANN001, N802 - Qt override
        # Up and Down in the field move through the results, as in a command palette.
        if (
            watched is self.edit
            and isinstance(event, QKeyEvent)
            and event.type() == QKeyEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up)
            and self.results.count()
        ):
            step = 1 if event.key() == Qt.Key.Key_Down else -1
            self.results.setCurrentRow(
                max(0, min(self.results.count() - 1, self.results.currentRow() + step))
            )
            return True
        return super().eventFilter(watched, event)

    def search_now(self) -> None:
        self._timer.stop()
        self.query_changed.emit(self.edit.text())

    def show_results(self, query: str, hits: list[SearchHit]) -> None:
        if query != self.edit.text():
            return  # an answer to an older query
        self._shown_for = query
        self.results.clear()
        for hit in hits:
            item = QListWidgetItem(self.results)
            item.setData(HIT_ROLE, hit)
            when = _dt.datetime.fromtimestamp(hit.created_at).strftime("%Y-%m-%d %H:%M")
            who = {
                "user": self.tr("You"),
                "assistant": self.tr("Assistant"),
                "tool": self.tr("Tool result"),
                "summary": self.tr("Summary"),
            }.get(hit.role, hit.role)
            label = QLabel(
                f"<div><b>{html.escape(hit.session_title)}</b> "
                f"<span style='color: palette(placeholder-text)'>· {html.escape(who)} · {when}</span></div>"
                f"<div>{snippet_html(hit)}</div>",
                self.results,
            )
            label.setWordWrap(True)
            label.setTextFormat(Qt.TextFormat.RichText)
            label.setContentsMargins(6, 4, 6, 4)
            label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
            label.ensurePolished()  # the style sheet's type (14 px in dialogs): the row's height depends on it
            width = max(200, self.results.viewport().width() - 8)
            item.setSizeHint(QSize(width, label.heightForWidth(width)))
            item.setToolTip(plain(hit.plain))
            self.results.setItemWidget(item, label)
        if hits:
            self.results.setCurrentRow(0)
        self.empty.setText(self.tr("No results for “{query}”").format(query=query.strip()))
        self.empty.setVisible(bool(query.strip()) and not hits)
        self.results.setVisible(bool(hits) or not query.strip())

    def hits(self) -> list[SearchHit]:
        return [self.results.item(i).data(HIT_ROLE) for i in range(self.results.count())]

    def _choose_current(self) -> None:
        if self._shown_for != self.edit.text():
            self.search_now()  # Enter before the results came: search, then Enter again opens
            return
        item = self.results.currentItem()
        if item is not None:
            self._choose(item)

    def _choose(self, item: QListWidgetItem) -> None:
        hit = item.data(HIT_ROLE)
        if isinstance(hit, SearchHit):
            self.hit_chosen.emit(hit)
            self.accept()
