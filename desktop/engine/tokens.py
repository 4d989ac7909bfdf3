"""Token estimation: offline, pure Python, fast enough to run on every keystroke.

No Claude 3+ tokenizer ships with the SDK, so this is a heuristic. Instead of one bytes/4 ratio, the
count of a text is a small linear model over character classes that Python counts in C
(``bytes.translate`` / ``bytes.count``): UTF-8 bytes, ASCII punctuation, digits, spaces, newlines and
CJK characters. Punctuation is what makes JSON and code denser than prose (JSON lands at ≈2.3 B/tok
without a separate "is this JSON?" switch); spaces are cheap because indentation runs merge.
The weights were fitted against ``ctok`` (a reconstruction of Claude's count_tokens) on the
transcripts in /work/shared/corpus: ≈4.3 B/tok for English prose, ≈3.1 for tool output, ≈2.3 for JSON.

Two tokenizer families: "v3" (Claude 3 … Opus/Sonnet 4.6, Haiku 4.5) and "v4.7" (Opus 4.7+, Sonnet 5,
Fable 5, 5.x), which needs ≈1.3x as many tokens for the same English text.

Public API other modules rely on:
    estimate_text(text) -> int
    estimate_block(block) -> int
    estimate_message(content) -> int            # content: list of blocks or a str; includes framing
    estimate_request(system, tools, messages) -> int
All take an optional keyword ``family=`` (default "v3"); see :func:`family_for_model`.
Incremental counting: :class:`MessageEstimateCache`. Usage anchoring: :func:`anchored_estimate`.
Calibration against real usage lives in ``desktop.engine.calibration``.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from desktop.engine.types import Block

Family = str  # "v3" | "v4.7"
V3: Family = "v3"
V47: Family = "v4.7"
DEFAULT_FAMILY: Family = V3


@dataclass(frozen=True, slots=True)
class TextModel:
    """Weights of the linear text model of one tokenizer family, plus its framing overheads."""

    per_byte: float  # every UTF-8 byte of non-CJK text
    per_punct: float  # extra for each ASCII punctuation byte
    per_digit: float  # extra for each ASCII digit
    per_space: float  # (negative) spaces mostly merge into the next word or an indentation run
    per_newline: float
    per_cjk: float  # per Han / kana / hangul character (its 3 bytes are not in per_byte)
    message: int  # role + turn markers of one message
    block: int  # boundary of one content block
    tool_use: int  # tool call wrapper (name, id, invoke markup), on top of `block`
    tool_field: int  # per input key of a tool call
    tool_result: int  # result wrapper (tool_use_id, markers), on top of `block`
    thinking: int  # thinking wrapper, on top of `block`


# Fitted against ctok 1.3 on the corpus (2,567 text pieces, least squares weighted by 1/sqrt(tokens)):
# per-piece median error 7 % / p95 29 % (pieces ≥ 200 tokens: 5.6 % / 21 %) versus bytes/4 at
# 20 % / 41 %. Framing constants were fitted on the corpus' real usage deltas (see tests/bench).
TEXT_MODELS: dict[Family, TextModel] = {
    V3: TextModel(per_byte=0.2407, per_punct=0.5706, per_digit=0.7319, per_space=-0.168,
                  per_newline=0.0558, per_cjk=0.9, message=4, block=3, tool_use=8, tool_field=3,
                  tool_result=6, thinking=4),
    V47: TextModel(per_byte=0.3655, per_punct=0.6468, per_digit=0.4703, per_space=-0.3574,
                   per_newline=0.1883, per_cjk=0.9, message=4, block=3, tool_use=8, tool_field=3,
                   tool_result=6, thinking=4),
}

IMAGE_TOKEN_CAP = 1600  # the API downsizes larger images to about 1.15 MP ≈ 1,600 tokens
IMAGE_PIXELS_PER_TOKEN = 750
PDF_TOKENS_PER_PAGE = 2250  # docs: 1,500-3,000 per page (text plus the page image)
PDF_BYTES_PER_PAGE = 60_000  # fallback page count when the page tree cannot be read
MESSAGE_OVERHEAD = TEXT_MODELS[V3].message
BLOCK_OVERHEAD = TEXT_MODELS[V3].block

# Han (incl. ext A, compatibility), CJK punctuation, kana, hangul, full-width forms: all 3-byte UTF-8.
_CJK = re.compile("[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
_PUNCT = b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_DIGITS = b"0123456789"
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
_PDF_COUNT = re.compile(rb"/Count\s+(\d+)")


def family_for_model(model: str | None) -> Family:
    """Tokenizer family of a model id; unknown ids get the older (denser-per-token) v3 family.

    Kept here (not in the catalog) so the engine can count without a catalog at hand; the catalog
    reports the same value.
    """
    if not model:
        return DEFAULT_FAMILY
    m = model.lower()
    if re.search(r"claude-(?:[a-z]+-)?5|claude-[a-z]+-5|fable|mythos|opus-4-[7-9]|sonnet-4-[7-9]", m):
        return V47
    return V3


def _text_model(family: Family) -> TextModel:
    return TEXT_MODELS.get(family) or TEXT_MODELS[DEFAULT_FAMILY]


# ---------------------------------------------------------------------------------------------- text

def estimate_text(text: str, *, family: Family = DEFAULT_FAMILY) -> int:
    """Tokens of a bare string (no framing). Empty text is 0."""
    if not text:
        return 0
    tm = _text_model(family)
    if text.isascii():
        raw = text.encode("ascii")
        cjk = 0
    else:
        raw = text.encode("utf-8", "surrogatepass")
        cjk = len(_CJK.findall(text))
    n = len(raw)
    punct = n - len(raw.translate(None, _PUNCT))
    digits = n - len(raw.translate(None, _DIGITS))
    value = (tm.per_byte * (n - 3 * cjk) + tm.per_punct * punct + tm.per_digit * digits
             + tm.per_space * raw.count(b" ") + tm.per_newline * raw.count(b"\n") + tm.per_cjk * cjk)
    return max(1, math.ceil(value))


def estimate_json(value: Any, *, family: Family = DEFAULT_FAMILY) -> int:
    """Tokens of a JSON value rendered compactly (key order kept, as the API renders it)."""
    return estimate_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")), family=family)


def looks_like_json(text: str) -> bool:
    """Cheap test used by callers that want to know; the estimate itself needs no switch."""
    s = text.lstrip()[:1]
    return s in ("{", "[")


# -------------------------------------------------------------------------------------------- media

def _b64_prefix(data: str, chars: int) -> bytes:
    """Decode only the start of a base64 string (a multiple of 4 characters)."""
    head = data[: chars - chars % 4]
    try:
        return base64.b64decode(head, validate=False)
    except (binascii.Error, ValueError):
        return b""


def image_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) from the first bytes of a PNG, GIF, WebP or JPEG file; None if not found."""
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return struct.unpack("<HH", head[6:10])
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP" and len(head) >= 30:
        chunk = head[12:16]
        if chunk == b"VP8 " and head[23:26] == b"\x9d\x01\x2a":
            w, h = struct.unpack("<HH", head[26:30])
            return w & 0x3FFF, h & 0x3FFF
        if chunk == b"VP8L" and head[20] == 0x2F:
            bits = int.from_bytes(head[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        if chunk == b"VP8X":
            return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
        return None
    if head[:2] == b"\xff\xd8":
        return _jpeg_size(head)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            i += 1
            continue
        marker = data[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
            i += 1 if marker == 0xFF else 2
            continue
        length = int.from_bytes(data[i + 2:i + 4], "big")
        # SOF0-SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            return w, h
        i += 2 + length
    return None


def image_tokens(width: int | None, height: int | None) -> int:
    """w*h/750, with the API's downscale (long edge ≤ 1568 px, ≈1.15 MP) capping it near 1,600."""
    if not width or not height:
        return IMAGE_TOKEN_CAP
    scale = min(1.0, 1568 / max(width, height))
    w, h = width * scale, height * scale
    return max(1, min(IMAGE_TOKEN_CAP, math.ceil(w * h / IMAGE_PIXELS_PER_TOKEN)))


def _image_block_tokens(block: Block) -> int:
    source = block.get("source") or {}
    if source.get("type") != "base64" or not isinstance(source.get("data"), str):
        return IMAGE_TOKEN_CAP  # url / file id: size unknown
    data: str = source["data"]
    size = image_size(_b64_prefix(data, 64))
    if size is None and data[:4] == "/9j/":  # JPEG: the frame header may sit behind EXIF data
        size = _jpeg_size(_b64_prefix(data, 96_000))
    return image_tokens(*size) if size else IMAGE_TOKEN_CAP


def pdf_page_count(pdf: bytes) -> int:
    """Pages of a PDF: page objects if visible, else the page tree's /Count, else by size."""
    pages = len(_PDF_PAGE.findall(pdf))
    if pages:
        return pages
    counts = [int(c) for c in _PDF_COUNT.findall(pdf)]
    if counts:
        return max(counts)
    return max(1, math.ceil(len(pdf) / PDF_BYTES_PER_PAGE))


def _document_tokens(block: Block, family: Family) -> int:
    source = block.get("source") or {}
    extra = estimate_text(str(block.get("title") or ""), family=family) + estimate_text(
        str(block.get("context") or ""), family=family)
    kind = source.get("type")
    if kind == "text":
        return extra + estimate_text(str(source.get("data") or ""), family=family)
    if kind == "content":
        content = source.get("content")
        if isinstance(content, str):
            return extra + estimate_text(content, family=family)
        return extra + sum(estimate_block(b, family=family) for b in content or [])
    if kind == "base64" and isinstance(source.get("data"), str):
        try:
            pdf = base64.b64decode(source["data"], validate=False)
        except (binascii.Error, ValueError):
            pdf = b""
        return extra + PDF_TOKENS_PER_PAGE * pdf_page_count(pdf)
    return extra + PDF_TOKENS_PER_PAGE  # url / file id: one page as a floor, size unknown


# ------------------------------------------------------------------------------------------- blocks

def _tool_input_tokens(value: Any, tm: TextModel, family: Family) -> int:
    """Tool inputs are rendered as named parameters: string values go in raw (no JSON escaping)."""
    if isinstance(value, dict):
        return sum(tm.tool_field + estimate_text(str(k), family=family) + _tool_input_tokens(v, tm, family)
                   for k, v in value.items())
    if isinstance(value, str):
        return estimate_text(value, family=family)
    return estimate_json(value, family=family)


def estimate_block(block: Block, *, family: Family = DEFAULT_FAMILY) -> int:
    """Tokens of one content block including its boundary overhead."""
    tm = _text_model(family)
    kind = block.get("type")
    if kind == "text":
        return tm.block + estimate_text(block.get("text") or "", family=family)
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            body = sum(estimate_block(b, family=family) for b in content)
        elif content is None:
            body = 0
        else:
            body = estimate_text(content if isinstance(content, str) else json.dumps(content), family=family)
        return tm.block + tm.tool_result + body
    if kind == "tool_use" or kind == "server_tool_use":
        return (tm.block + tm.tool_use + estimate_text(block.get("name") or "", family=family)
                + _tool_input_tokens(block.get("input") or {}, tm, family))
    if kind == "thinking":
        text = block.get("thinking") or ""
        if not text and block.get("signature"):
            # Omitted ("display": "omitted") thinking still reaches the model: its signature carries it.
            return tm.block + tm.thinking + len(block["signature"]) // 4
        return tm.block + tm.thinking + estimate_text(text, family=family)
    if kind == "redacted_thinking":
        return tm.block + tm.thinking + len(block.get("data") or "") // 4
    if kind == "image":
        return tm.block + _image_block_tokens(block)
    if kind == "document":
        return tm.block + _document_tokens(block, family)
    if kind == "compaction":
        return tm.block + estimate_text(str(block.get("content") or ""), family=family)
    # search results, server tool results, unknown future blocks: their JSON is a fair upper estimate.
    rest = {k: v for k, v in block.items() if k not in ("cache_control", "citations")}
    return tm.block + estimate_json(rest, family=family)


def estimate_message(content: list[Block] | str, *, family: Family = DEFAULT_FAMILY) -> int:
    """Tokens of one message's content plus the message framing."""
    tm = _text_model(family)
    if isinstance(content, str):
        return tm.message + tm.block + estimate_text(content, family=family)
    return tm.message + sum(estimate_block(b, family=family) for b in content)


def estimate_tools(tools: Sequence[Mapping[str, Any]] | None, *, family: Family = DEFAULT_FAMILY) -> int:
    """Tool definitions are rendered into the system prompt as JSON schemas."""
    if not tools:
        return 0
    tm = _text_model(family)
    return sum(tm.block + estimate_json({k: v for k, v in t.items() if k != "cache_control"}, family=family)
               for t in tools)


def estimate_request(system: str | list[Block] | None, tools: list[dict[str, Any]] | None,
                     messages: list[dict[str, Any]], *, family: Family = DEFAULT_FAMILY) -> int:
    """Whole request: tools, system prompt and every message."""
    total = estimate_tools(tools, family=family)
    if system:
        total += estimate_message(system, family=family)
    for m in messages:
        total += estimate_message(m["content"], family=family)
    return total


# -------------------------------------------------------------------------------------------- cache

def _snapshot(content: list[Block] | str) -> Any:
    """What a cache entry compares against: strings as is (immutable), lists as shallow block copies.

    Comparing a snapshot with the live content runs in C and short-cuts on identical leaves, so an
    unchanged message costs one list comparison; any block whose value was replaced (a streaming
    text that grew, a tool result cleared by microcompaction, an added block) compares unequal.
    Nested objects mutated in place (e.g. ``block["input"]["x"] = 1``) are not seen: pass a
    ``version`` when content is edited that way.
    """
    return content if isinstance(content, str) else [dict(b) for b in content]


class MessageEstimateCache:
    """Per-message token estimates, so a turn costs time proportional to what changed.

    ``estimate(msg_id, content)`` recomputes only when the message's content differs from what the
    entry was computed from. A caller that tracks changes itself may pass a ``version`` (any
    hashable it changes with the content), which replaces the content comparison.
    """

    def __init__(self, family: Family = DEFAULT_FAMILY) -> None:
        self.family = family
        self._entries: dict[Hashable, tuple[Any, int]] = {}
        self.misses = 0

    def estimate(self, msg_id: Hashable, content: list[Block] | str, version: Hashable | None = None) -> int:
        entry = self._entries.get(msg_id)
        if version is not None:
            key: Any = ("version", version)
            if entry is not None and entry[0] == key:
                return entry[1]
        else:
            if entry is not None and entry[0] == content:
                return entry[1]
            key = _snapshot(content)
        self.misses += 1
        tokens = estimate_message(content, family=self.family)
        self._entries[msg_id] = (key, tokens)
        return tokens

    def total(self, messages: Iterable[Any]) -> int:
        """Sum over messages given as StoredMessage-like objects (``id``, ``content``) or
        ``(id, content)`` / ``(id, content, version)`` tuples."""
        total = 0
        entries = self._entries
        for m in messages:
            if isinstance(m, tuple):
                msg_id, content = m[0], m[1]
                version = m[2] if len(m) > 2 else None
            else:
                msg_id, content, version = m.id, m.content, None
            if version is None:
                entry = entries.get(msg_id)
                # Inlined hit path of estimate(): this loop runs over every message on every turn.
                if entry is not None and entry[0] == content:
                    total += entry[1]
                    continue
            total += self.estimate(msg_id, content, version)
        return total

    def forget(self, msg_ids: Iterable[Hashable] | None = None) -> None:
        """Drop entries (all when ``msg_ids`` is None), e.g. after messages were deleted."""
        if msg_ids is None:
            self._entries.clear()
        else:
            for i in msg_ids:
                self._entries.pop(i, None)

    def set_family(self, family: Family) -> None:
        """A model switch to another tokenizer family invalidates every entry."""
        if family != self.family:
            self.family = family
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


# ----------------------------------------------------------------------------------------- anchoring

@dataclass(frozen=True, slots=True)
class Estimate:
    tokens: int
    source: Literal["api", "estimate"]  # "api": anchored on a real usage figure
    anchor: int | None = None  # the real prompt size it started from
    added: int = 0  # estimated tokens on top of the anchor (after calibration)


def anchored_estimate(anchor_prompt_tokens: int | None, added: Iterable[list[Block] | str],
                      whole: Callable[[], int], *, removed: Iterable[Block] = (),
                      family: Family = DEFAULT_FAMILY, factor: float = 1.0) -> Estimate:
    """Size of the next request.

    With an anchor (prompt tokens of the previous request: input + cache_read + cache_creation),
    only what changed is estimated: ``added`` is every message content appended since that request
    (its assistant reply, then the new user message or tool results) and ``removed`` is content the
    previous request carried but the next one will not, as blocks (e.g. thinking blocks the API
    drops at a new user turn on models that do not keep them, see ``catalog.ModelInfo.keeps_thinking``). ``factor`` is the calibration correction applied to
    the estimated part only; the real anchor is taken as is.

    Without an anchor, ``whole()`` estimates the full request (system + tools + messages); it is
    called only then, and the caller applies calibration inside it.
    """
    if anchor_prompt_tokens is None:
        return Estimate(tokens=max(0, int(whole())), source="estimate")
    delta = sum(estimate_message(c, family=family) for c in added)
    delta -= sum(estimate_block(b, family=family) for b in removed)
    delta = round(delta * factor)
    return Estimate(tokens=max(0, anchor_prompt_tokens + delta), source="api",
                    anchor=anchor_prompt_tokens, added=delta)
