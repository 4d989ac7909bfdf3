"""Safe Markdown -> Qt rich text for model output (untrusted).

Two paths:
- ``render_markdown``: markdown-it-py (commonmark + table + strikethrough, raw HTML off) + Pygments inline
  styles. Used for finished messages. Only http/https/mailto links survive, images become text, every fenced
  code block gets a "Copy" anchor ``precis-copy:N`` (N counts blocks in document order, see
  ``extract_code_blocks``).
- ``fill_streaming_document``: Qt's own md4c parser with ``MarkdownNoHTML``, ~10x cheaper, re-run per chunk
  while a reply streams (re-rendering the whole reply through markdown-it and Pygments on every chunk is
  too slow).

Qt's HTML subset is small (no CSS classes worth using, no <input>, partial tables), so the HTML emitted here
uses attributes and inline styles Qt understands.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound
from PySide6.QtCore import QCoreApplication, QUrl
from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextDocument

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
COPY_SCHEME = "precis-copy"
MONO_FAMILY = "DejaVu Sans Mono, Menlo, Consolas, monospace"
# Pygments on a huge paste costs more than it is worth; beyond this the block is shown unhighlighted.
HIGHLIGHT_LIMIT = 40_000
STREAM_FEATURES = QTextDocument.MarkdownFeature(
    QTextDocument.MarkdownFeature.MarkdownDialectGitHub.value
    | QTextDocument.MarkdownFeature.MarkdownNoHTML.value
)


@dataclass(frozen=True, slots=True)
class Theme:
    pygments_style: str
    code_bg: str
    code_header_bg: str
    code_border: str
    inline_code_bg: str
    muted: str
    link: str
    table_border: str


LIGHT = Theme("friendly", "#f6f8fa", "#eaeef2", "#d0d7de", "#eff1f3", "#6e7781", "#0969da", "#d0d7de")
DARK = Theme("github-dark", "#161b22", "#22272e", "#30363d", "#2d333b", "#8b949e", "#58a6ff", "#444c56")


def theme_for(dark: bool) -> Theme:
    return DARK if dark else LIGHT


def link_is_safe(href: str) -> bool:
    """True only for absolute http/https/mailto URLs; relative, javascript:, file:, data: and custom schemes fail."""
    scheme, sep, _ = href.strip().partition(":")
    return bool(sep) and scheme.lower() in SAFE_SCHEMES


def _make_parser(breaks: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "breaks": breaks}).enable(["table", "strikethrough"])
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    md.add_render_rule("image", _image)
    md.add_render_rule("fence", _fence)
    md.add_render_rule("code_block", _fence)
    md.add_render_rule("code_inline", _code_inline)
    md.add_render_rule("table_open", _table_open)
    md.add_render_rule("th_open", _cell_open)
    md.add_render_rule("td_open", _cell_open)
    return md


# Render rules. ``self`` is the RendererHTML; env carries the theme and the running code-block index.


def _link_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    href = str(tokens[idx].attrGet("href") or "")
    if not link_is_safe(href):
        env["_dropped_link"] = True
        return ""
    env["_dropped_link"] = False
    theme: Theme = env["theme"]
    return f'<a href="{html.escape(href, quote=True)}" style="color:{theme.link}">'


def _link_close(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    return "" if env.pop("_dropped_link", False) else "</a>"


def _image(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    # Never emit <img>: QTextDocument would try to load it (local files) and remote images leak reads.
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    src = str(token.attrGet("src") or "")
    theme: Theme = env["theme"]
    label = QCoreApplication.translate("Markdown", "[image: {alt}]").format(alt=alt) + (f" {src}" if src else "")
    return f'<span style="color:{theme.muted}">{html.escape(label)}</span>'


def _code_inline(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    theme: Theme = env["theme"]
    return (
        f'<code style="font-family:{MONO_FAMILY}; background-color:{theme.inline_code_bg}">'
        f"{html.escape(tokens[idx].content)}</code>"
    )


def _fence(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    token = tokens[idx]
    lang = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
    number = env["code_index"]
    env["code_index"] = number + 1
    return code_block_html(token.content, lang, number, env["theme"])


def _table_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    theme: Theme = env["theme"]
    # Qt ignores most table CSS; these attributes are what it honours.
    return f'<table border="1" cellspacing="0" cellpadding="4" style="border-color:{theme.table_border}">\n'


def _cell_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    token = tokens[idx]
    tag = "th" if token.type == "th_open" else "td"
    style = str(token.attrGet("style") or "")
    align = style.removeprefix("text-align:").strip() if style.startswith("text-align:") else ""
    return f'<{tag} align="{align}">' if align in {"left", "right", "center"} else f"<{tag}>"


@lru_cache(maxsize=8)
def _formatter(style_name: str) -> HtmlFormatter:
    return HtmlFormatter(noclasses=True, nowrap=True, style=style_name)


@lru_cache(maxsize=64)
def _lexer(lang: str) -> Any:
    try:
        return get_lexer_by_name(lang, stripnl=False, ensurenl=False) if lang else None
    except ClassNotFound:
        return None


def code_block_html(code: str, lang: str, number: int, theme: Theme) -> str:
    """One fenced block as a 2-row table: a header (language, "Copy" anchor) and the code, highlighted."""
    code = code.removesuffix("\n")
    lexer = _lexer(lang.lower()) if len(code) <= HIGHLIGHT_LIMIT else None
    body = highlight(code, lexer, _formatter(theme.pygments_style)) if lexer else html.escape(code)
    body = body.removesuffix("\n")
    label = html.escape(lang) if lang else html.escape(QCoreApplication.translate("Markdown", "code"))
    copy = html.escape(QCoreApplication.translate("Markdown", "Copy"))
    return (
        f'<table width="100%" cellspacing="0" cellpadding="6" border="1" '
        f'style="border-color:{theme.code_border}; border-style:solid; border-collapse:collapse; '
        f'margin-top:4px; margin-bottom:4px">'
        f'<tr><td width="100%" bgcolor="{theme.code_header_bg}" style="border-style:none">'
        f'<span style="color:{theme.muted}; font-size:small">{label}</span></td>'
        f'<td bgcolor="{theme.code_header_bg}" align="right" style="border-style:none">'
        f'<a href="{COPY_SCHEME}:{number}" style="color:{theme.link}; font-size:small; text-decoration:none">'
        f"{copy}</a></td></tr>"
        f'<tr><td colspan="2" bgcolor="{theme.code_bg}" style="border-style:none">'
        f'<pre style="font-family:{MONO_FAMILY}; white-space:pre-wrap; margin:0">{body}</pre></td></tr></table>\n'
    )


_PARSERS: dict[bool, MarkdownIt] = {}


def _parser(breaks: bool) -> MarkdownIt:
    md = _PARSERS.get(breaks)
    if md is None:
        md = _PARSERS[breaks] = _make_parser(breaks)
    return md


@lru_cache(maxsize=1024)
def render_markdown(text: str, dark: bool = False, breaks: bool = False, code_start: int = 0) -> str:
    """Markdown -> Qt rich-text HTML. ``breaks`` turns single newlines into <br> (for typed user text).

    ``code_start`` is the index given to the first code block, so a message made of several text blocks
    numbers its blocks continuously. Cached: re-rendering the same finished message is free.
    """
    env: dict[str, Any] = {"theme": theme_for(dark), "code_index": code_start}
    return _parser(breaks).render(text, env)


@lru_cache(maxsize=1024)
def extract_code_blocks(markdown: str) -> tuple[str, ...]:
    """The source of every fenced/indented code block, in the order render_markdown numbers them."""
    tokens = _parser(False).parse(markdown)
    return tuple(t.content.removesuffix("\n") for t in tokens if t.type in ("fence", "code_block"))


def copy_anchor_index(href: str) -> int | None:
    """``precis-copy:N`` -> N; anything else -> None."""
    scheme, sep, rest = href.partition(":")
    return int(rest) if sep and scheme == COPY_SCHEME and rest.isdigit() else None


class SafeTextDocument(QTextDocument):
    """A QTextDocument that never loads resources: markdown images (streaming path) stay unloaded."""

    def loadResource(self, type: int, name: QUrl | str) -> Any:  # noqa: A002 (Qt's signature)
        return None


def fill_streaming_document(doc: QTextDocument, parts: list[tuple[bool, str]]) -> None:
    """Cheap render for a reply that is still streaming: ``parts`` are (is_markdown, text-or-html) in order.

    Markdown goes through Qt's md4c with MarkdownNoHTML (raw HTML stays text); the other parts are HTML the
    caller built and escaped itself.
    """
    doc.clear()
    cursor = QTextCursor(doc)
    for i, (is_markdown, text) in enumerate(parts):
        if i:
            cursor.insertBlock()
        if is_markdown:
            cursor.insertMarkdown(text, STREAM_FEATURES)
        else:
            cursor.insertHtml(text)
    if any(is_md and "![" in text for is_md, text in parts):
        _images_to_text(doc)


def _images_to_text(doc: QTextDocument) -> None:
    """Swap md4c's image placeholders for '[image: url]' text, as the full render does."""
    found: list[tuple[int, int, str]] = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.charFormat().isImageFormat():
                found.append((frag.position(), frag.length(), frag.charFormat().toImageFormat().name()))
            it += 1
        block = block.next()
    cursor = QTextCursor(doc)
    for pos, length, name in reversed(found):
        cursor.setPosition(pos)
        cursor.setPosition(pos + length, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(f"[image: {name}]", QTextCharFormat())
