"""Deterministic server-side token counter, deliberately DIFFERENT from the client's estimator.

The client estimates ~4 UTF-8 bytes per token; this counter uses other ratios so tests can see a
client calibrate against server-reported usage instead of trusting its own guess.

Exact formula (all divisions round up, ``ceil``):

* text ``s``:   ceil((utf8_bytes(s) - 3*cjk(s)) / text_ratio) + ceil(cjk(s) / cjk_chars_per_token)
  where ``cjk(s)`` counts Han / kana / hangul characters (each 3 UTF-8 bytes). Defaults: text_ratio 3.3,
  cjk_chars_per_token 1.3.
* JSON ``v``:   ceil(utf8_bytes(compact_json(v)) / json_ratio), json_ratio default 2.2.
* block:        block_overhead (3) + the block body:
    - text: text(text);  thinking: text(thinking);  redacted_thinking: text(data)
    - tool_use: text(name) + JSON(input)
    - tool_result: str content -> text(content); list content -> sum(block(sub) for sub); plain
      objects -> JSON.
    - image: min(image_cap, ceil(w*h/750)) after scaling the long edge down to 1568 px; w, h read
      from the PNG/JPEG/GIF/WebP header with Pillow; unknown size (url/file source, bad data) -> image_cap (1600).
    - document: text source -> text(data); content source -> sum of sub-blocks; base64 PDF ->
      pdf_page_tokens (1500) per page (pages found by ``/Type /Page``); other -> pdf_page_tokens.
    - anything else: JSON(block without cache_control).
* message:      message_overhead (5) + sum(block) (string content counts as one text block).
* system:       system_overhead (5) + text(system) or sum(block) for a block list.
* each tool:    tool_overhead (5) + JSON(tool without cache_control).
* request:      tools + system + messages (in that order; it is also the prompt-cache prefix order).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

Block = dict[str, Any]

# Han (incl. ext A + compatibility), kana, hangul syllables: all 3-byte UTF-8 code points.
# Matching runs rather than single characters is ~8x faster on Chinese text.
_CJK_RUNS = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def compact_json(value: Any) -> str:
    """The JSON rendering used for counting (key order as sent, like the real prompt renderer)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def strip_cache_control(block: Block) -> Block:
    return {k: v for k, v in block.items() if k != "cache_control"} if "cache_control" in block else block


@dataclass(slots=True)
class Unit:
    """One cacheable position of the prompt: a tool definition, a system block or a message block.

    ``tokens`` includes the framing of the enclosing message when this is the message's first unit,
    so that the sum of all units is exactly the request count.
    """

    section: str  # "tools" | "system" | "messages"
    block: Block
    tokens: int
    msg_index: int = -1  # index into messages (-1 for tools/system)
    role: str = ""
    first_in_message: bool = False


@dataclass
class TokenCounter:
    """Configurable deterministic counter. Thread-safe for reads; the image memo is a plain dict."""

    text_ratio: float = 3.3
    json_ratio: float = 2.2
    cjk_chars_per_token: float = 1.3
    block_overhead: int = 3
    message_overhead: int = 5
    system_overhead: int = 5
    tool_overhead: int = 5
    image_cap: int = 1600
    pdf_page_tokens: int = 1500
    _image_memo: dict[bytes, int] = field(default_factory=dict, repr=False)

    # -- primitives -------------------------------------------------------------------------------

    def count_text(self, text: str) -> int:
        return self.tokens_of(*self.measure_text(text))

    @staticmethod
    def measure_text(text: str) -> tuple[int, int]:
        """(non-CJK UTF-8 bytes, CJK characters): additive over concatenation, unlike token counts."""
        nbytes = len(text.encode("utf-8"))
        if text.isascii():
            return nbytes, 0
        cjk = sum(map(len, _CJK_RUNS.findall(text)))
        return nbytes - 3 * cjk, cjk

    def tokens_of(self, other_bytes: int, cjk_chars: int) -> int:
        return math.ceil(other_bytes / self.text_ratio) + math.ceil(cjk_chars / self.cjk_chars_per_token)

    def count_json(self, value: Any) -> int:
        return math.ceil(len(compact_json(value).encode("utf-8")) / self.json_ratio)

    def count_image(self, block: Block) -> int:
        source = block.get("source") or {}
        data = source.get("data") if source.get("type") == "base64" else None
        if not isinstance(data, str):
            return self.image_cap
        key = hashlib.sha1(data.encode("ascii", "ignore")).digest()
        memo = self._image_memo.get(key)
        if memo is None:
            memo = self._image_tokens(data)
            self._image_memo[key] = memo
        return memo

    def _image_tokens(self, data: str) -> int:
        size = image_size(data)
        if size is None:
            return self.image_cap
        w, h = size
        long_edge = max(w, h)
        if long_edge > 1568:  # the API downsizes before counting
            scale = 1568 / long_edge
            w, h = max(1, int(w * scale)), max(1, int(h * scale))
        return min(self.image_cap, max(1, math.ceil(w * h / 750)))

    def pdf_pages(self, block: Block) -> int:
        """Pages a document block stands for (1 for non-PDF sources)."""
        source = block.get("source") or {}
        if source.get("type") == "base64" and isinstance(source.get("data"), str):
            try:
                raw = base64.b64decode(source["data"], validate=False)
            except (ValueError, TypeError):
                return 1
            return max(1, len(_PDF_PAGE.findall(raw)))
        return 1

    def count_document(self, block: Block) -> int:
        source = block.get("source") or {}
        kind = source.get("type")
        if kind == "text":
            return self.count_text(str(source.get("data", "")))
        if kind == "content":
            content = source.get("content")
            if isinstance(content, str):
                return self.count_text(content)
            return sum(self.count_block(b) for b in content or [])
        return self.pdf_page_tokens * self.pdf_pages(block)

    # -- blocks -----------------------------------------------------------------------------------

    def count_block(self, block: Block) -> int:
        """Tokens of one content block, its framing included."""
        return self.block_overhead + self._block_body(block)

    def _block_body(self, block: Block) -> int:
        kind = block.get("type")
        if kind == "text":
            return self.count_text(block.get("text", ""))
        if kind == "thinking":
            return self.count_text(block.get("thinking", ""))
        if kind == "redacted_thinking":
            return self.count_text(block.get("data", ""))
        if kind == "tool_use":
            return self.count_text(block.get("name", "")) + self.count_json(block.get("input", {}))
        if kind == "tool_result":
            content = block.get("content")
            if content is None:
                return 0
            if isinstance(content, str):
                return self.count_text(content)
            if isinstance(content, list):
                return sum(self.count_block(b) for b in content if isinstance(b, dict))
            return self.count_json(content)
        if kind == "image":
            return self.count_image(block)
        if kind == "document":
            return self.count_document(block)
        return self.count_json(strip_cache_control(block))

    def count_tool(self, tool: dict[str, Any]) -> int:
        return self.tool_overhead + self.count_json(strip_cache_control(tool))

    # -- requests ---------------------------------------------------------------------------------

    def units(self, body: dict[str, Any]) -> Iterator[Unit]:
        """The request as an ordered list of cacheable positions: tools -> system -> messages."""
        for tool in body.get("tools") or []:
            yield Unit("tools", tool, self.count_tool(tool))
        system = body.get("system")
        if isinstance(system, str) and system:
            yield Unit(
                "system",
                {"type": "text", "text": system},
                self.system_overhead + self.count_block({"type": "text", "text": system}),
            )
        elif isinstance(system, list) and system:
            for i, block in enumerate(system):
                extra = self.system_overhead if i == 0 else 0
                yield Unit("system", block, extra + self.count_block(block))
        for mi, msg in enumerate(body.get("messages") or []):
            role = str(msg.get("role", ""))
            content = msg.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
            if not blocks:  # an empty message still costs its framing
                yield Unit("messages", {"type": "_empty"}, self.message_overhead, mi, role, True)
                continue
            for bi, block in enumerate(blocks):
                extra = self.message_overhead if bi == 0 else 0
                yield Unit("messages", block, extra + self.count_block(block), mi, role, bi == 0)

    def count_request(self, body: dict[str, Any]) -> int:
        return sum(u.tokens for u in self.units(body))

    def count_output(self, content: list[Block]) -> int:
        """Output tokens of a reply: block bodies without framing, at least 1 (like the real API)."""
        return max(1, sum(self._block_body(b) for b in content))


def image_size(data_b64: str) -> tuple[int, int] | None:
    """(width, height) from the image header; only the first 64 KB are decoded."""
    from PIL import Image  # Pillow is a project dependency; imported lazily to keep startup fast

    head = data_b64[: 64 * 1024 * 4 // 3 // 4 * 4]
    try:
        raw = base64.b64decode(head, validate=False)
        with Image.open(io.BytesIO(raw)) as img:
            return img.size
    except Exception:  # truncated or unknown formats: fall back to the whole payload once
        try:
            with Image.open(io.BytesIO(base64.b64decode(data_b64, validate=False))) as img:
                return img.size
        except Exception:
            return None


DEFAULT_COUNTER = TokenCounter()


def count_request_tokens(body: dict[str, Any], counter: TokenCounter | None = None) -> int:
    """Prompt tokens of a /v1/messages (or count_tokens) request body."""
    return (counter or DEFAULT_COUNTER).count_request(body)
