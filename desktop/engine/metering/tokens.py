"""Token estimation: offline, pure Python, fast enough to run on every keystroke.

No Claude 3+ tokenizer ships with the SDK, so this is a heuristic. Instead of one bytes/4 ratio, the
count of a text is a small linear model over character classes that Python counts in C
(``bytes.translate`` / ``bytes.count``): UTF-8 bytes, ASCII punctuation, digits, spaces, newlines and
CJK characters. Punctuation is what makes JSON and code denser than prose (JSON lands at ≈2.5-3 B/tok
without a separate "is this JSON?" switch); spaces are cheap because indentation runs merge.
The weights were fitted against ``ctok`` (a reconstruction of Claude's count_tokens) on real Claude Code
transcripts (the corpus the tests and benchmarks read; tool output there is ≈3.1 B/tok on v3, ≈2.5 on v4.7).

Two tokenizer families: "v3" (Claude 3 … Opus/Sonnet 4.6, Haiku 4.5) and "v4.7" (Opus 4.7+, Sonnet 5,
Fable 5, 5.x), which needs ≈1.3x as many tokens for the same English text.

Public API other modules rely on:
    estimate_text(text) -> int
    estimate_block(block) -> int
    estimate_message(content) -> int            # content: list of blocks or a str; includes framing
    estimate_request(system, tools, messages) -> int
All take an optional keyword ``family=`` (default "v3"); see :func:`family_for_model`.
Incremental counting: :class:`MessageEstimateCache`.
Calibration against real usage lives in ``desktop.engine.metering.calibration``.
"""

from __future__ import annotations

import base64
import binascii
import functools
import itertools
import json
import math
import operator
import re
import struct
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from msgspec import Struct

from desktop.engine.lazy_re import LazyPattern
from desktop.engine.types import Block

Family = str  # "v3" | "v4.7"
V3: Family = "v3"
V47: Family = "v4.7"
DEFAULT_FAMILY: Family = V3


class TextModel(Struct, frozen=True):
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
# 20 % / 41 %. Framing constants approximate the API's rendering (tool calls as named parameters,
# results in a wrapper); the corpus' usage deltas suggest more, but Claude Code adds hidden reminders there.
TEXT_MODELS: dict[Family, TextModel] = {
    V3: TextModel(
        per_byte=0.2407,
        per_punct=0.5706,
        per_digit=0.7319,
        per_space=-0.168,
        per_newline=0.0558,
        per_cjk=0.9,
        message=5,
        block=3,
        tool_use=20,
        tool_field=6,
        tool_result=12,
        thinking=4,
    ),
    V47: TextModel(
        per_byte=0.3655,
        per_punct=0.6468,
        per_digit=0.4703,
        per_space=-0.3574,
        per_newline=0.1883,
        per_cjk=0.9,
        message=5,
        block=3,
        tool_use=20,
        tool_field=6,
        tool_result=12,
        thinking=4,
    ),
}

IMAGE_TOKEN_CAP = 1600  # the API downsizes larger images to about 1.15 MP ≈ 1,600 tokens
IMAGE_PIXELS_PER_TOKEN = 750
PDF_TOKENS_PER_PAGE = 2250  # Anthropic gives 1,500-3,000 per page (text plus the page image): the middle
PDF_BYTES_PER_PAGE = 60_000  # fallback page count when the page tree cannot be read
MESSAGE_OVERHEAD = TEXT_MODELS[V3].message
BLOCK_OVERHEAD = TEXT_MODELS[V3].block

# Han (incl. ext A, compatibility), CJK punctuation, kana, hangul, full-width forms: all 3-byte UTF-8.
_CJK = LazyPattern("[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
_PUNCT = b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_DIGITS = b"0123456789"
_PDF_PAGE = LazyPattern(rb"/Type\s*/Page(?![a-zA-Z])")
_PDF_COUNT = LazyPattern(rb"/Count\s+(\d+)")


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
    value = (
        tm.per_byte * (n - 3 * cjk)
        + tm.per_punct * punct
        + tm.per_digit * digits
        + tm.per_space * raw.count(b" ")
        + tm.per_newline * raw.count(b"\n")
        + tm.per_cjk * cjk
    )
    return max(1, math.ceil(value))


def estimate_json(value: Any, *, family: Family = DEFAULT_FAMILY) -> int:
    """Tokens of a JSON value rendered compactly (key order kept, as the API renders it)."""
    return estimate_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")), family=family)


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
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        # SOF0-SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
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


@functools.lru_cache(maxsize=32)
def _b64_pdf_pages(data: str) -> int:
    """Page count of a base64 PDF; cached because decoding a 30 MB PDF takes ~0.2 s and history resends it."""
    try:
        pdf = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        pdf = b""
    return pdf_page_count(pdf)


def _document_tokens(block: Block, family: Family) -> int:
    source = block.get("source") or {}
    extra = estimate_text(str(block.get("title") or ""), family=family) + estimate_text(
        str(block.get("context") or ""), family=family
    )
    kind = source.get("type")
    if kind == "text":
        return extra + estimate_text(str(source.get("data") or ""), family=family)
    if kind == "content":
        content = source.get("content")
        if isinstance(content, str):
            return extra + estimate_text(content, family=family)
        return extra + sum(estimate_block(b, family=family) for b in content or [])
    if kind == "base64" and isinstance(source.get("data"), str):
        return extra + PDF_TOKENS_PER_PAGE * _b64_pdf_pages(source["data"])
    return extra + PDF_TOKENS_PER_PAGE  # url / file id: one page as a floor, size unknown


# ------------------------------------------------------------------------------------------- blocks


def _tool_input_tokens(value: Any, tm: TextModel, family: Family) -> int:
    """Tool inputs are rendered as named parameters: string values go in raw (no JSON escaping)."""
    if isinstance(value, dict):
        return sum(
            tm.tool_field + estimate_text(str(k), family=family) + _tool_input_tokens(v, tm, family)
            for k, v in value.items()
        )
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
            # Items that are not blocks (corrupt rows) count as their text.
            body = sum(
                estimate_block(b, family=family)
                if isinstance(b, dict)
                else estimate_text("" if b is None else str(b), family=family)
                for b in content
            )
        elif content is None:
            body = 0
        else:
            body = estimate_text(content if isinstance(content, str) else json.dumps(content), family=family)
        return tm.block + tm.tool_result + body
    if kind == "tool_use" or kind == "server_tool_use":
        return (
            tm.block
            + tm.tool_use
            + estimate_text(block.get("name") or "", family=family)
            + _tool_input_tokens(block.get("input") or {}, tm, family)
        )
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


def estimate_message(content: list[Block] | str | None, *, family: Family = DEFAULT_FAMILY) -> int:
    """Tokens of one message's content plus the message framing (None content: the framing only)."""
    tm = _text_model(family)
    if isinstance(content, str):
        return tm.message + tm.block + estimate_text(content, family=family)
    return tm.message + sum(estimate_block(b, family=family) for b in content or ())


def estimate_tools(tools: Sequence[Mapping[str, Any]] | None, *, family: Family = DEFAULT_FAMILY) -> int:
    """Tool definitions are rendered into the system prompt as JSON schemas."""
    if not tools:
        return 0
    tm = _text_model(family)
    return sum(tm.block + _tool_cost(t, family) for t in tools)


# Tool definitions come back as the same dicts on every request build (the tool runner keeps them): each is
# estimated once. Keyed by identity with the dict held, so an id is never reused while its entry lives.
_TOOL_COSTS: dict[tuple[int, str], tuple[Mapping[str, Any], int]] = {}
_TOOL_COSTS_MAX = 2048


def _tool_cost(tool: Mapping[str, Any], family: Family) -> int:
    key = (id(tool), family)
    hit = _TOOL_COSTS.get(key)
    if hit is not None and hit[0] is tool:
        return hit[1]
    cost = estimate_json({k: v for k, v in tool.items() if k != "cache_control"}, family=family)
    if len(_TOOL_COSTS) >= _TOOL_COSTS_MAX:
        _TOOL_COSTS.clear()
    _TOOL_COSTS[key] = (tool, cost)
    return cost


def estimate_request(
    system: str | list[Block] | None,
    tools: list[dict[str, Any]] | None,
    messages: list[dict[str, Any]],
    *,
    family: Family = DEFAULT_FAMILY,
) -> int:
    """Whole request: tools, system prompt and every message."""
    total = estimate_tools(tools, family=family)
    if system:
        total += estimate_message(system, family=family)
    for m in messages:
        total += estimate_message(m["content"], family=family)
    return total


# -------------------------------------------------------------------------------------------- cache


def _snapshot(content: list[Block] | str) -> Any:
    """What an entry compares against: strings as is (immutable), lists as shallow block copies.

    Comparing a snapshot with live content runs in C and short-cuts on identical leaves; any block
    whose value was replaced (a streaming text that grew, a tool result cleared by microcompaction,
    an appended block) compares unequal. Nested objects mutated in place (``block["input"]["x"] = 1``)
    are not seen: pass a ``version`` for content edited that way.
    """
    return content if isinstance(content, str) else [dict(b) for b in content or ()]


_ids_of = operator.attrgetter("id")
_contents_of = operator.attrgetter("content")
_first = operator.itemgetter(0)
_second = operator.itemgetter(1)


class MessageEstimateCache:
    """Per-message token estimates, so a turn costs time proportional to what changed.

    ``estimate(msg_id, content)`` recomputes only when the content differs (by value) from what the
    entry was computed from; a caller that tracks changes itself may pass a ``version`` instead (any
    hashable that changes with the content).

    ``total(messages)`` must stay cheap at 10,000 messages, so it checks old messages by *identity*
    of their content object (vectorised in C) and by value only for the newest ``verify_tail``
    messages (where streaming happens) and for any message whose content object changed. Contract:
    edit an older message by giving it a new content list (as microcompaction does), or call
    :meth:`forget` / :meth:`estimate` for it after an in-place edit.

    A call whose list starts with the previous call's checked part (the same ids and content objects, compared
    as two lists in C) takes that part's sum as it was and checks only the rest: one message more per turn
    costs two list comparisons, not a lookup per message.
    """

    def __init__(self, family: Family = DEFAULT_FAMILY, verify_tail: int = 8) -> None:
        self.family = family
        self.verify_tail = verify_tail
        self._tokens: dict[Hashable, int] = {}
        self._keys: dict[Hashable, Any] = {}  # snapshot, or ("version", v)
        self._refs: dict[Hashable, Any] = {}  # the content object last seen (kept alive: ids stay unique)
        self.misses = 0
        # The previous total's messages, how many of them (from the start) were checked outside its verify tail,
        # and their sum; valid while no entry changed after it (``_changes`` counts every change).
        self._last: tuple[list[Any], int, int, int] | None = None
        self._changes = 0

    def estimate(self, msg_id: Hashable, content: list[Block] | str, version: Hashable | None = None) -> int:
        key: Any = ("version", version) if version is not None else None
        old = self._keys.get(msg_id, _MISSING)
        if old is not _MISSING and (old == key if key is not None else old == content):
            self._refs[msg_id] = content
            return self._tokens[msg_id]
        self.misses += 1
        self._changes += 1
        tokens = estimate_message(content, family=self.family)
        self._tokens[msg_id] = tokens
        self._keys[msg_id] = key if key is not None else _snapshot(content)
        self._refs[msg_id] = content
        return tokens

    def total(self, messages: Iterable[Any]) -> int:
        """Sum over StoredMessage-like objects (``.id``, ``.content``) or ``(id, content)`` pairs."""
        seq = list(messages)  # a copy: the caller's list may change before the next call compares with it
        if not seq:
            return 0
        tail = max(0, len(seq) - self.verify_tail)
        # The part the previous call checked, when this list starts with it unchanged: one list comparison in C
        # (identical items compare without being looked into; an item replaced by an equal one is still equal,
        # its id and content then equal too).
        start = total = 0
        last = self._last
        if last is not None and last[3] == self._changes and last[1] <= tail:
            last_seq, checked, checked_sum, _ = last
            if seq[:checked] == last_seq[:checked]:
                start, total = checked, checked_sum
        part = seq[start:]
        if isinstance(seq[0], tuple):
            ids, contents = list(map(_first, part)), list(map(_second, part))
        else:
            ids, contents = list(map(_ids_of, part)), list(map(_contents_of, part))
        cut = tail - start  # messages [start, tail) are checked by identity, the rest by value
        same = list(map(operator.is_, map(self._refs.get, ids[:cut]), contents[:cut]))
        # Only the messages whose content object is the one last seen, each of which has its number (estimate()
        # stores both).
        total += sum(map(self._tokens.__getitem__, itertools.compress(ids, same)))
        # Everything else (a handful per turn): by value, recomputed only if it really changed.
        estimate = self.estimate
        i = same.index(False) if False in same else cut
        while i < cut:
            total += estimate(ids[i], contents[i])
            try:
                i = same.index(False, i + 1)
            except ValueError:
                break
        checked = total
        for j in range(cut, len(part)):
            total += estimate(ids[j], contents[j])
        # Recorded last: what this call estimated is in place, and any change from now on makes the next call
        # check every message again.
        self._last = (seq, tail, checked, self._changes)
        return total

    def forget(self, msg_ids: Iterable[Hashable] | None = None) -> None:
        """Drop entries (all when ``msg_ids`` is None): deleted messages, or in-place edits."""
        self._changes += 1
        if msg_ids is None:
            self._tokens.clear()
            self._keys.clear()
            self._refs.clear()
            return
        for i in msg_ids:
            self._tokens.pop(i, None)
            self._keys.pop(i, None)
            self._refs.pop(i, None)

    def set_family(self, family: Family) -> None:
        """A model switch to another tokenizer family invalidates every entry."""
        if family != self.family:
            self.family = family
            self.forget()

    def __len__(self) -> int:
        return len(self._tokens)


_MISSING = object()
