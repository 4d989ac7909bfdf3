"""Safe Markdown rendering: untrusted model text must never become live HTML, links or loaded images."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QTextDocument, QTextTable

from desktop.ui.transcript.markdown_render import (
    SafeTextDocument,
    copy_anchor_index,
    extract_code_blocks,
    link_is_safe,
    render_markdown,
)


def _anchors(doc: QTextDocument) -> list[str]:
    out = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isAnchor() and fmt.anchorHref():
                out.append(fmt.anchorHref())
            it += 1
        block = block.next()
    return out


def _has_image(doc: QTextDocument) -> bool:
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            if it.fragment().charFormat().isImageFormat():
                return True
            it += 1
        block = block.next()
    return False


def test_raw_html_stays_literal_text(qapp):
    src = 'hi <b>bold</b> <img src="file:///etc/passwd" onerror="x()"> <script>alert(1)</script> **md**'
    out = render_markdown(src)
    assert "<img" not in out and "<script" not in out and "<b>" not in out
    assert "&lt;img src=&quot;file:///etc/passwd&quot;" in out
    doc = SafeTextDocument()
    doc.setHtml(out)
    text = doc.toPlainText()
    assert '<img src="file:///etc/passwd" onerror="x()">' in text
    assert "<b>bold</b>" in text
    assert not _has_image(doc)
    assert "<strong>md</strong>" in out  # Markdown itself still works


@pytest.mark.parametrize(
    "href",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,hi",
        "myapp://open",
        "vbscript:x",
        "relative/path.html",
    ],
)
def test_unsafe_links_are_plain_text(qapp, href):
    out = render_markdown(f"see [click me]({href}) now")
    assert "<a " not in out
    assert "click me" in out
    doc = SafeTextDocument()
    doc.setHtml(out)
    assert _anchors(doc) == []


def test_safe_links_kept(qapp):
    out = render_markdown(
        "[a](https://example.com/x?y=1&z=2) [b](http://e.org) [c](mailto:me@e.org) <https://auto.link>"
    )
    doc = SafeTextDocument()
    doc.setHtml(out)
    assert _anchors(doc) == [
        "https://example.com/x?y=1&z=2",
        "http://e.org",
        "mailto:me@e.org",
        "https://auto.link",
    ]


def test_link_is_safe():
    assert link_is_safe("https://x") and link_is_safe("HTTP://x") and link_is_safe("mailto:a@b")
    assert not link_is_safe("javascript:x") and not link_is_safe("/local") and not link_is_safe("ftp://x")


def test_images_become_alt_text_and_url(qapp):
    out = render_markdown("look ![a cat](https://tracker.example/cat.png) here")
    assert "<img" not in out
    assert "[image: a cat] https://tracker.example/cat.png" in out
    doc = SafeTextDocument()
    doc.setHtml(out)
    assert not _has_image(doc) and _anchors(doc) == []


def test_code_block_highlighted_with_inline_styles(qapp):
    src = "```python\ndef f(x):\n    return x + 1  # note\n```\n"
    light, dark = render_markdown(src), render_markdown(src, dark=True)
    for out in (light, dark):
        assert "<pre" in out and 'class="' not in out
        assert out.count('<span style="color:') >= 3  # keyword, name, comment... coloured inline
    assert light != dark  # the dark flag picks another palette
    doc = SafeTextDocument()
    doc.setHtml(light)
    assert "return x + 1  # note" in doc.toPlainText()
    colours = set()
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            colours.add(it.fragment().charFormat().foreground().color().name())
            it += 1
        block = block.next()
    assert len(colours) >= 3  # Qt really applied several colours


def test_unknown_language_is_escaped_not_highlighted(qapp):
    out = render_markdown("```nosuchlang\n<b>x</b>\n```")
    assert "&lt;b&gt;x&lt;/b&gt;" in out and "<b>x" not in out


def test_tables_render_as_qt_tables(qapp):
    out = render_markdown("| name | n |\n|:--|--:|\n| a | 1 |\n| b | 2 |\n")
    assert '<table border="1"' in out and "<th" in out and 'align="right"' in out
    doc = SafeTextDocument()
    doc.setHtml(out)
    tables = [f for f in doc.rootFrame().childFrames() if isinstance(f, QTextTable)]
    assert len(tables) == 1 and tables[0].rows() == 3 and tables[0].columns() == 2


def test_strikethrough(qapp):
    assert "<s>gone</s>" in render_markdown("~~gone~~")


def test_extract_code_blocks_matches_copy_anchors(qapp):
    src = "text\n\n```js\nlet a = 1;\n```\n\n- item\n\n  ```\n  nested\n  ```\n\nend\n\n    indented code\n"
    assert extract_code_blocks(src) == ("let a = 1;", "nested", "indented code")
    out = render_markdown(src)
    doc = SafeTextDocument()
    doc.setHtml(out)
    assert [copy_anchor_index(h) for h in _anchors(doc)] == [0, 1, 2]
    shifted = SafeTextDocument()
    shifted.setHtml(render_markdown(src, code_start=5))
    assert [copy_anchor_index(h) for h in _anchors(shifted)] == [5, 6, 7]


def test_model_cannot_forge_copy_anchor(qapp):
    doc = SafeTextDocument()
    doc.setHtml(render_markdown("[Copy](precis-copy:0) <precis-copy:1>"))
    assert _anchors(doc) == []  # only the renderer's own code blocks carry copy anchors


def test_render_is_cached(qapp):
    src = "# cached\n\nbody " * 3
    assert render_markdown(src) is render_markdown(src)


def test_breaks_flag_keeps_typed_newlines(qapp):
    assert "<br" in render_markdown("line one\nline two", breaks=True)
    assert "<br" not in render_markdown("line one\nline two")


def test_streaming_path_keeps_html_literal(qapp):
    from desktop.ui.transcript.markdown_stream import render_streaming

    doc = SafeTextDocument()
    doc.setHtml(render_streaming("hi <b>bold-html</b> <img src='file:///etc/passwd'> **md**")[0])
    text = doc.toPlainText()
    assert "<b>bold-html</b>" in text and "<img" in text and "md" in text
    assert not _has_image(doc)
    bold = [it.fragment().text() for it in _fragments(doc) if it.fragment().charFormat().fontWeight() >= 700]
    assert "md" in bold


def _fragments(doc: QTextDocument):
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            yield it
            it += 1
        block = block.next()


def test_safe_document_never_loads_local_images(qapp, tmp_path):
    png = tmp_path / "real.png"
    image = QImage(4, 4, QImage.Format.Format_RGB32)
    image.fill(0xFF0000)
    assert image.save(str(png))
    url = QUrl.fromLocalFile(str(png))
    plain = QTextDocument()
    assert plain.resource(QTextDocument.ResourceType.ImageResource.value, url) is not None  # Qt would load it
    safe = SafeTextDocument()
    safe.setHtml(f'<img src="{url.toString()}">')  # even HTML of our own naming a local file loads nothing
    assert safe.resource(QTextDocument.ResourceType.ImageResource.value, url) is None
    assert "<img" not in render_markdown(f"![x]({url.toString()})")
