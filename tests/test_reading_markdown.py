"""Issue 13 item 5: one Markdown renderer for a streaming and a finished reply; task lists, footnotes, quotes,
typeset math; re-rendering while streaming touches only the open last block."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from msgspec.structs import replace
from PySide6.QtGui import QTextDocument

from desktop.engine.types import StoredMessage
from desktop.ui.transcript.chat_model import ChatModel
from desktop.ui.transcript.chat_view import ChatView


@pytest.fixture(autouse=True)
def typeset():
    """matplotlib loaded first, as the window does after its first paint: these tests are about the typeset
    formulas (tests/test_math_warm.py covers the source shown while it loads)."""
    from desktop.ui.transcript import math_render

    math_render.load_now()


REPLY = (
    "# Plan\n\nSome **bold** and `code` text.\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "```python\nprint('hi')\n```\n\n"
    "1. first\n2. second\n\n"
    "> quoted words\n\nThe end."
)


def _doc_html(view: ChatView, row: int) -> str:
    view.model().flush()
    doc = view.delegate.document(view.model().index(row, 0))
    return doc.toHtml()


def test_a_reply_does_not_restyle_when_it_finishes(qtbot, view):
    model: ChatModel = view.model()
    streaming = StoredMessage(1, 1, "assistant", [{"type": "text", "text": REPLY}], status="streaming")
    model.append_message(streaming)
    while_streaming = _doc_html(view, 0)
    model.update_message(replace(streaming, status="complete", content=[{"type": "text", "text": REPLY}]))
    finished = _doc_html(view, 0)
    assert while_streaming == finished


def test_streaming_text_grows_into_the_same_document_as_the_final_reply(qtbot, view):
    model: ChatModel = view.model()
    model.append_message(StoredMessage(1, 1, "assistant", [], status="streaming"))
    for i in range(0, len(REPLY), 7):
        model.append_text(1, REPLY[i : i + 7])
        model.flush()
        view.delegate.document(model.index(0, 0))
    # A long reply's document may lag behind by a rebuild; the delegate's own timer catches it up.
    qtbot.waitUntil(
        lambda: (
            view.delegate.document(model.index(0, 0)) is not None
            and view.delegate.is_current(model.index(0, 0))
        )
    )
    streamed = _doc_html(view, 0)
    model.update_message(StoredMessage(1, 1, "assistant", [{"type": "text", "text": REPLY}]))
    assert streamed == _doc_html(view, 0)


MIXED = REPLY + (
    "\n\n- [ ] open task\n- [x] done task\n\n"
    "Inline $e^{i\\pi}+1=0$ and display:\n\n$$\n\\frac{a}{b}+\\sum_{i=1}^{n} x_i^2\n$$\n\n"
    "````\nnested ``` fence\n````\n\n    indented code\n\nSetext\n------\n\nlast paragraph\nlazy line"
)


def test_rendering_the_open_tail_gives_the_whole_render_at_every_point_of_a_stream(qapp):
    from desktop.ui.transcript.markdown_render import render_markdown
    from desktop.ui.transcript.markdown_stream import render_streaming

    hint, splits = 0, set()
    for n in range(1, len(MIXED) + 1):
        text = MIXED[:n]
        out, hint = render_streaming(text, hint=hint)
        assert out == render_markdown.__wrapped__(text, False, False, 0), n
        splits.add(hint)
    assert len(splits) > 10  # the prefix really was settled and reused, not rendered whole each time


def test_footnotes_and_reference_links_are_rendered_whole(qapp):
    from desktop.ui.transcript.markdown_render import render_markdown
    from desktop.ui.transcript.markdown_stream import render_streaming

    for text in (
        "See it[^1].\n\nMore.\n\n[^1]: the note",
        "A [link][x].\n\nMore.\n\n[x]: https://example.com",
    ):
        assert render_streaming(text)[0] == render_markdown(text)


def _plain(html_text: str) -> str:
    from desktop.ui.transcript.markdown_render import SafeTextDocument

    doc = SafeTextDocument()
    doc.setHtml(html_text)
    return doc.toPlainText()


def test_task_lists_footnotes_and_quotes(qapp):
    from desktop.ui.transcript.markdown_render import LIGHT, render_markdown

    out = render_markdown("- [ ] open\n- [x] done\n\nA claim[^n].\n\n> wise words\n\n[^n]: the source")
    assert "<input" not in out
    text = _plain(out)
    assert "☐ open" in text and "☑ done" in text
    assert "A claim[1]" in text and "the source" in text
    assert "#fn" not in out  # no dead in-bubble links
    assert f'bgcolor="{LIGHT.quote_bar}"' in out and "wise words" in text


def _images(doc: QTextDocument) -> list[str]:
    names = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isImageFormat():
                names.append(fmt.toImageFormat().name())
            it += 1
        block = block.next()
    return names


def test_dollar_math_is_typeset_into_images_the_document_loads(qapp):
    from desktop.ui.transcript.markdown_render import SafeTextDocument, render_markdown
    from desktop.ui.transcript.math_render import formula_for_url

    out = render_markdown(
        "Euler: $e^{i\\pi}+1=0$\n\n$$\n\\frac{a}{b}\n$$\n\nnot math: 5$ and 6$, $5-$10, $HOME and $PATH"
    )
    doc = SafeTextDocument()
    doc.setHtml(out)
    names = _images(doc)
    assert len(names) == 2
    for name in names:
        made = formula_for_url(name)
        assert made is not None and made.width > 5 and made.height > 5
        image = doc.resource(QTextDocument.ResourceType.ImageResource.value, name)
        assert image is not None and not image.isNull()
    assert [formula_for_url(n).source for n in names] == ["e^{i\\pi}+1=0", "\\frac{a}{b}"]
    assert "5$ and 6$, $5-$10, $HOME and $PATH" in doc.toPlainText()


def test_math_mathtext_cannot_parse_shows_its_source(qapp):
    from desktop.ui.transcript.markdown_render import render_markdown

    out = render_markdown("bad: $\\notacommand{x}$")
    assert "<img" not in out and "\\notacommand{x}" in _plain(out)


def test_a_markdown_image_cannot_borrow_the_math_scheme(qapp):
    from desktop.ui.transcript.markdown_render import SafeTextDocument, render_markdown

    render_markdown("$x$")  # formula 0 exists
    out = render_markdown("![x](precis-math:0)")
    doc = SafeTextDocument()
    doc.setHtml(out)
    assert not _images(doc) and "[image: x]" in doc.toPlainText()
