"""Translations without Qt: the same ``.ts`` the window's ``.qm`` is built from, read as a dictionary.

The CLI words its human-readable lines and the engine's messages with it (JSON output keeps English keys);
the window falls back to it when a ``.qm`` has not been built.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from desktop.i18n import ENGLISH, ts_file

ENGINE = "Engine"


class Catalog:
    """(context, source) -> translation; what is missing or unfinished reads as the source."""

    def __init__(self, entries: Mapping[tuple[str, str], str] | None = None) -> None:
        self._entries = dict(entries or {})

    def __len__(self) -> int:
        return len(self._entries)

    def translate(self, context: str, source: str) -> str:
        return self._entries.get((context, source)) or source

    def word(self, text: Any) -> str:
        """An engine message (template + arguments, arguments worded too) or a plain string, translated."""
        template, params = getattr(text, "template", None), getattr(text, "params", None)
        if isinstance(template, str) and isinstance(params, Mapping):
            args = {k: v if isinstance(v, int | float) else self.word(v) for k, v in params.items()}
            try:
                return self.translate(ENGINE, template).format(**args)
            except (KeyError, IndexError, ValueError):
                return template.format(**args)
        lines = getattr(text, "lines", None)
        if isinstance(lines, tuple):
            return "\n".join(self.word(line) for line in lines)
        parts = getattr(text, "parts", None)
        if isinstance(parts, tuple):
            worded = [self.word(p) for p in parts]
            return "".join(w if w.endswith(("。", "！", "？")) else w + " " for w in worded).rstrip()
        return self.translate(ENGINE, str(text)) if text else ""


def parse(xml: str) -> Catalog:
    from xml.etree import ElementTree as ET  # noqa: N817 (English, the window's usual start, reads no .ts)

    entries: dict[tuple[str, str], str] = {}
    for context in ET.fromstring(xml).iter("context"):
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            source = message.findtext("source")
            node = message.find("translation")
            if source is None or node is None or node.get("type") in ("unfinished", "obsolete", "vanished"):
                continue
            # A %n string's translation sits in <numerusform>s (Simplified Chinese has one form); Qt fills in %n.
            form = node.find("numerusform")
            text = form.text if form is not None else node.text
            if text and text.strip():
                entries[(name, source)] = text
    return Catalog(entries)


@functools.cache
def load(language: str) -> Catalog:
    """The catalog of ``language`` (empty for English or when its file is missing or unreadable)."""
    if language == ENGLISH:
        return Catalog()
    from xml.etree import ElementTree as ET  # noqa: N817

    try:
        return parse(ts_file(language).read_text("utf-8"))
    except (OSError, ET.ParseError):
        return Catalog()
