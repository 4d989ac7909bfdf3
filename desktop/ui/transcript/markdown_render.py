"""Safe Markdown -> Qt rich text for model output (untrusted).

One renderer, ``render_markdown``: markdown-it-py (commonmark + table + strikethrough, raw HTML off; task lists,
footnotes and dollar math from mdit-py-plugins) + Pygments inline styles. Only http/https/mailto links survive,
images become text, every fenced code block gets a "Copy" anchor ``precis-copy:N`` (N counts blocks in document
order, see ``extract_code_blocks``), formulas are typeset by ``math_render``. A reply that is still streaming
goes through the same renderer (``markdown_stream`` re-renders only its open last block), so nothing restyles
when it finishes.

Qt's HTML subset is small (no CSS classes worth using, no <input>, partial tables), so the HTML emitted here
uses attributes and inline styles Qt understands.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from msgspec import Struct
from PySide6.QtCore import QCoreApplication, QUrl
from PySide6.QtGui import QTextDocument, QTextTable

from desktop.ui.transcript.code_scroll import CODE_PADDING
from desktop.ui.transcript.math_render import formula_for_url, math_html
from desktop.ui.transcript.table_columns import MD_TABLE_PADDING, Columns

if TYPE_CHECKING:  # the parser and Pygments load with the first message rendered, not with the window
    from markdown_it import MarkdownIt
    from markdown_it.token import Token
    from pygments.formatters import HtmlFormatter

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
COPY_SCHEME = "precis-copy"
MONO_FAMILY = "DejaVu Sans Mono, Menlo, Consolas, monospace"
# Pygments on a huge paste costs more than it is worth; beyond this the block is shown unhighlighted.
HIGHLIGHT_LIMIT = 40_000


class Theme(Struct, frozen=True):
    """The colours rendered Markdown uses, for one palette."""

    pygments_style: str
    code_bg: str
    code_header_bg: str
    code_border: str
    inline_code_bg: str
    muted: str
    link: str
    table_border: str
    text: str = "#1f2328"  # typeset math is drawn in this colour
    quote_bar: str = "#d0d7de"


LIGHT = Theme("friendly", "#f6f8fa", "#eaeef2", "#d0d7de", "#eff1f3", "#6e7781", "#0969da", "#d0d7de")
DARK = Theme(
    "github-dark",
    "#161b22",
    "#22272e",
    "#30363d",
    "#2d333b",
    "#8b949e",
    "#58a6ff",
    "#444c56",
    "#e6edf3",
    "#3d444d",
)
TASK_OPEN, TASK_DONE = "☐", "☑"  # Qt has no <input>: the box is a glyph every desktop font has


def theme_for(dark: bool) -> Theme:
    return DARK if dark else LIGHT


_CITE = re.compile(
    r"precis-cite:\d{1,12}"
)  # a summary's citation: the window opens the message, nothing else


def link_is_safe(href: str) -> bool:
    """True only for absolute http/https/mailto URLs; relative, javascript:, file:, data: and custom schemes fail."""
    scheme, sep, _ = href.strip().partition(":")
    return bool(sep) and scheme.lower() in SAFE_SCHEMES


def _make_parser(breaks: bool) -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.footnote import footnote_plugin
    from mdit_py_plugins.tasklists import tasklists_plugin

    md = MarkdownIt("commonmark", {"html": False, "breaks": breaks}).enable(["table", "strikethrough"])
    # Prices ("$5-$10") and shell variables are not math: no space inside the dollars, no digit outside them.
    md.use(tasklists_plugin).use(footnote_plugin).use(
        dollarmath_plugin, allow_space=False, allow_digits=False, double_inline=True
    )
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    md.add_render_rule("image", _image)
    md.add_render_rule("fence", _fence)
    md.add_render_rule("code_block", _fence)
    md.add_render_rule("code_inline", _code_inline)
    md.add_render_rule("table_open", _table_open)
    md.add_render_rule("th_open", _cell_open)
    md.add_render_rule("td_open", _cell_open)
    md.add_render_rule("html_inline", _html_inline)
    md.add_render_rule("bullet_list_open", _bullet_list_open)
    md.add_render_rule("blockquote_open", _blockquote_open)
    md.add_render_rule("blockquote_close", _blockquote_close)
    md.add_render_rule("math_inline", _math_inline)
    md.add_render_rule("math_inline_double", _math_display)
    md.add_render_rule("math_block", _math_display)
    md.add_render_rule("math_block_label", _math_display)
    md.add_render_rule("footnote_block_open", _footnotes_open)
    md.add_render_rule("footnote_block_close", _footnotes_close)
    md.add_render_rule("footnote_ref", _footnote_ref)
    md.add_render_rule("footnote_anchor", lambda *_args: "")  # a back link inside one bubble goes nowhere
    return md


# Render rules. ``self`` is the RendererHTML; env carries the theme and the running code-block index.


def _link_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    href = str(tokens[idx].attrGet("href") or "")
    if not link_is_safe(href) and not _CITE.fullmatch(href):
        env["_dropped_link"] = True
        return ""
    env["_dropped_link"] = False
    theme: Theme = env["theme"]
    return f'<a href="{html.escape(href, quote=True)}" style="color:{theme.link}">'


def _link_close(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    return "" if env.pop("_dropped_link", False) else "</a>"


def _html_inline(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    # With html off, the only inline HTML tokens are the task-list plugin's checkboxes.
    content = tokens[idx].content
    if content.startswith('<input class="task-list-item-checkbox"'):
        return TASK_DONE if 'checked="checked"' in content else TASK_OPEN
    return html.escape(content)


def _bullet_list_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    # A task list's items start with their box (TASK_OPEN / TASK_DONE): a bullet as well read "• ☐ item". Qt styles
    # a whole list, not an item, so a list loses its bullets when every item of it is a task.
    level, items = tokens[idx].level, []
    for token in tokens[idx + 1 :]:
        if token.type == "bullet_list_close" and token.level == level:
            break
        if token.type == "list_item_open" and token.level == level + 1:
            items.append(token.attrGet("class") == "task-list-item")
    if items and all(items):
        return '<ul style="list-style-type:none">\n'
    return "<ul>\n"


def _blockquote_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    # Qt draws no left border on a block: a thin coloured cell beside the quote is the bar.
    theme: Theme = env["theme"]
    return (
        f'<table width="100%" cellspacing="0" cellpadding="0" style="margin-top:4px; margin-bottom:4px">'
        f'<tr><td width="3" bgcolor="{theme.quote_bar}"></td>'
        f'<td style="padding-left:10px; color:{theme.muted}">\n'
    )


def _blockquote_close(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    return "</td></tr></table>\n"


def _math_inline(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    theme: Theme = env["theme"]
    return math_html(tokens[idx].content, False, theme.text, MONO_FAMILY)


def _math_display(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    theme: Theme = env["theme"]
    return math_html(tokens[idx].content, True, theme.text, MONO_FAMILY)


def _footnotes_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    theme: Theme = env["theme"]
    return f'<hr><div style="color:{theme.muted}; font-size:small"><ol>\n'


def _footnotes_close(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    return "</ol></div>\n"


def _footnote_ref(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    meta = tokens[idx].meta or {}
    number = int(meta.get("id", 0)) + 1
    return f"<sup>[{number}]</sup>"


def _image(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    # Never emit <img>: QTextDocument would try to load it (local files) and remote images leak reads.
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    src = str(token.attrGet("src") or "")
    theme: Theme = env["theme"]
    label = QCoreApplication.translate("Markdown", "[image: {alt}]").format(alt=alt) + (
        f" {src}" if src else ""
    )
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
    return (
        f'<table border="1" cellspacing="0" cellpadding="{MD_TABLE_PADDING}" '
        f'style="border-color:{theme.table_border}">\n'
    )


def _cell_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict) -> str:
    token = tokens[idx]
    tag = "th" if token.type == "th_open" else "td"
    style = str(token.attrGet("style") or "")
    align = style.removeprefix("text-align:").strip() if style.startswith("text-align:") else ""
    return f'<{tag} align="{align}">' if align in {"left", "right", "center"} else f"<{tag}>"


@lru_cache(maxsize=8)
def _formatter(style_name: str) -> HtmlFormatter:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(noclasses=True, nowrap=True, style=style_name)


@lru_cache(maxsize=64)
def _lexer(lang: str) -> Any:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(lang, stripnl=False, ensurenl=False) if lang else None
    except ClassNotFound:
        return None


def code_block_html(code: str, lang: str, number: int, theme: Theme) -> str:
    """One fenced block: a header (language, "Copy" anchor) and the code, highlighted, in a table of its own whose
    lines never wrap (a long one scrolls sideways: ``code_scroll``)."""
    code = code.removesuffix("\n")
    lexer = _lexer(lang.lower()) if len(code) <= HIGHLIGHT_LIMIT else None
    from pygments import highlight

    body = highlight(code, lexer, _formatter(theme.pygments_style)) if lexer else html.escape(code)
    body = body.removesuffix("\n")
    label = html.escape(lang) if lang else html.escape(QCoreApplication.translate("Markdown", "code"))
    copy = html.escape(QCoreApplication.translate("Markdown", "Copy"))
    frame = (
        f'width="100%" cellspacing="0" cellpadding="{CODE_PADDING}" border="1" '
        f'style="border-color:{theme.code_border}; border-style:solid; border-collapse:collapse; '
    )
    return (
        f'<table {frame}margin-top:4px; margin-bottom:0px">'
        f'<tr><td width="100%" bgcolor="{theme.code_header_bg}" style="border-style:none">'
        f'<span style="color:{theme.muted}; font-size:small">{label}</span></td>'
        f'<td bgcolor="{theme.code_header_bg}" align="right" style="border-style:none">'
        f'<a href="{COPY_SCHEME}:{number}" style="color:{theme.link}; font-size:small; text-decoration:none">'
        f"{copy}</a></td></tr></table>"
        f'<table {frame}margin-top:0px; margin-bottom:4px">'
        f'<tr><td bgcolor="{theme.code_bg}" style="border-style:none">'
        f'<pre style="font-family:{MONO_FAMILY}; white-space:pre; margin:0">{body}</pre></td></tr></table>\n'
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


def parse_blocks(text: str) -> list[Token]:
    """The token stream ``render_markdown`` renders (block structure is the same with or without breaks)."""
    return _parser(False).parse(text)


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
    """A QTextDocument that loads no resource but our own typeset formulas (``precis-math:N``); it keeps its
    Markdown tables' column widths (``table_columns``) for each width it is laid out at."""

    columns: list[Columns] = []  # noqa: RUF012 - set per document by the delegate
    code: list[QTextTable] = []  # noqa: RUF012 - its code blocks' tables (code_scroll), set by the delegate

    def loadResource(self, type: int, name: QUrl | str) -> Any:  # noqa: A002 (Qt's signature)
        url = name.toString() if isinstance(name, QUrl) else str(name)
        made = formula_for_url(url)
        return made.image if made is not None else None
