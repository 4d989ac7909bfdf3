"""Make any message list API-valid (``repair``) and say what is wrong with one (``problems``).

Rules enforced (what the Messages API rejects): roles alternate starting and ending with user; every tool_use is answered by
a tool_result in the next message, tool_results first; no tool_result without its call; tool_use ids unique; no
empty or whitespace-only text; no keys the API does not know; thinking only with its signature.

Choices: a leading assistant message gets a synthetic user "(continued)" before it (its content is kept); a
trailing assistant message gets a user "(continue)" after it; a missing result becomes an ``is_error`` result
"[no result: interrupted]"; an orphan result or a misplaced block becomes a text marker (never prose that reads
like a tool call); thinking blocks of an assistant message merged into an earlier one are dropped (the API only
keeps thinking of the latest turn, and it must lead that turn); given the request's model, thinking another model
wrote is dropped (the newest models bind thinking to the model that wrote it: a chat that switched model must not
send it back).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from msgspec import Struct, field

from desktop.engine.compaction._shared import Message, content_of, role_of
from desktop.engine.compaction.normalize import tool_call_marker, tool_result_marker
from desktop.engine.types import Block

MISSING_RESULT = "[no result: interrupted]"
EMPTY = "(empty)"
LEADING_USER = "(continued)"
TRAILING_USER = "(continue)"
ORPHAN_CHARS = 50_000  # orphan results become text; ingest already capped them at 50K

_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text", "cache_control"}),
    "image": frozenset({"type", "source", "cache_control"}),
    "document": frozenset({"type", "source", "title", "context", "citations", "cache_control"}),
    "search_result": frozenset({"type", "source", "title", "content", "citations", "cache_control"}),
    "tool_use": frozenset({"type", "id", "name", "input", "cache_control"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error", "cache_control"}),
    "thinking": frozenset({"type", "thinking", "signature"}),
    "redacted_thinking": frozenset({"type", "data"}),
}
_USER_TYPES = frozenset({"text", "image", "document", "search_result", "tool_result"})
_ASSISTANT_TYPES = frozenset({"text", "tool_use", "thinking", "redacted_thinking"})
_RESULT_ITEM_TYPES = frozenset({"text", "image", "document", "search_result"})
_SOURCE_TYPES = frozenset({"base64", "url", "file", "text", "content"})
_ID = re.compile(r"^[A-Za-z0-9_-]{1,256}$")


# A real signature is a long base64 token; transcripts may hold placeholders such as "[REDACTED_SIGNATURE]",
# which the API rejects.
SIGNATURE_RE = re.compile(r"^[A-Za-z0-9+/=_-]{64,}$")


def signed(block: Block) -> bool:
    """A thinking block the API will accept back: it carries a real signature."""
    sig = block.get("signature")
    return isinstance(sig, str) and bool(SIGNATURE_RE.match(sig))


def _text(text: str) -> Block:
    return {"type": "text", "text": text}


# --- block cleaning ---------------------------------------------------------------------------------------


def _clean_block(block: Any) -> Block | None:
    """A whitelisted copy of a block, or None when nothing valid is left."""
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    keys = _KEYS.get(str(kind))
    if keys is None:
        return None
    out = {k: v for k, v in block.items() if k in keys}
    if kind == "text":
        text = out.get("text")
        return out if isinstance(text, str) and text.strip() else None
    if kind in ("image", "document", "search_result"):
        source = out.get("source")
        if kind != "search_result" and not (isinstance(source, dict) and source.get("type") in _SOURCE_TYPES):
            return None
        return out
    if kind == "thinking":
        ok = signed(out) and isinstance(out.get("thinking"), str)
        return out if ok else None
    if kind == "redacted_thinking":
        return out if isinstance(out.get("data"), str) and out["data"] else None
    if kind == "tool_use":
        return _clean_tool_use(out)
    return _clean_tool_result(out)


def _clean_tool_use(block: Block) -> Block:
    data = block.get("input")
    if isinstance(data, str):  # an interrupted stream may leave the raw partial JSON
        try:
            data = json.loads(data)
        except ValueError:
            data = None
    block["input"] = data if isinstance(data, dict) else {}
    if not isinstance(block.get("name"), str) or not block["name"]:
        block["name"] = "unknown_tool"
    return block


def _clean_tool_result(block: Block) -> Block:
    content = block.get("content")
    if isinstance(content, list):
        items = [c for c in (_clean_block(x) for x in content) if c and c["type"] in _RESULT_ITEM_TYPES]
        content = items or None
    elif not isinstance(content, str) or not content.strip():
        content = None
    if content is None:
        block.pop("content", None)
    else:
        block["content"] = content
    if not isinstance(block.get("is_error"), bool):
        block.pop("is_error", None)
    return block


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) and bool(_ID.match(value))


def _as_text(block: Block) -> Block | None:
    """A text stand-in for a block that cannot stay where it is."""
    kind = block["type"]
    if kind == "tool_use":
        return _text(tool_call_marker(block))
    if kind == "tool_result":
        return _text(tool_result_marker(block, "unknown_tool", ORPHAN_CHARS))
    if kind == "image":
        return _text("[image]")
    if kind == "document":
        return _text(f"[document: {block.get('title') or 'file'}]")
    if kind == "text":
        return block
    return None  # thinking outside an assistant turn carries nothing the model needs


def _for_role(role: str, blocks: list[Block]) -> list[Block]:
    allowed = _USER_TYPES if role == "user" else _ASSISTANT_TYPES
    out: list[Block] = []
    for block in blocks:
        ok = block["type"] in allowed
        if block["type"] == "tool_use" and not _valid_id(block.get("id")):
            ok = False
        if ok:
            out.append(block)
        elif (stand_in := _as_text(block)) is not None:
            out.append(stand_in)
    return out


# --- repair -----------------------------------------------------------------------------------------------


def model_of(msg: Message) -> str | None:
    """The model that wrote a message (a row's ``model``, a dict's "model" key), None when not known."""
    model = getattr(msg, "model", None) if not isinstance(msg, dict) else msg.get("model")
    return model.strip().lower() if isinstance(model, str) and model.strip() else None


def repair(messages: Sequence[Message], model: str | None = None) -> list[dict[str, Any]]:
    """An API-valid copy of ``messages`` (StoredMessage rows or dicts): only role and content, see module doc.
    ``model``: the request's model (thinking another model wrote is dropped).

    Returns [] only for an empty input.
    """
    return Repairer().update(messages, model)


Finish = Callable[[dict[str, Any]], dict[str, Any]]


class _Turn(Struct):
    """Consecutive input rows of one role, merged, and what repairing them gave."""

    role: str
    blocks: list[Block]
    first_row: int  # index of its first input row
    out: list[dict[str, Any]] = field(default_factory=list)  # its repaired message(s), after ``finish``
    counts: list[int] = field(default_factory=list)  # blocks of each message of ``out``
    media: int = 0  # images and documents in ``out`` (inside tool results too)
    added: list[str] = field(default_factory=list)  # tool_use ids it added to ``seen``
    pending_before: list[str] = field(default_factory=list)


class Repairer:
    """``repair`` for a list that grows at its end, as a session's rows do between requests.

    The rows are compared with those of the previous call by identity: when the new list only adds rows, only the
    open end is redone (the last turn, which a new row of the same role extends and whose answer to pending
    calls depends on being last); any other change redoes the whole list, reusing each row's cleaned blocks.
    The output is always equal to ``repair`` of the same rows. ``finish`` transforms each repaired message once,
    when it is made (the caller's canonical copy); messages of the output are shared between calls: read-only.
    """

    def __init__(self, finish: Finish | None = None):
        self._finish = finish
        self._rows: list[Message] = []
        self._cleaned: list[list[Block]] = []
        self._turns: list[_Turn] = []
        # The turns' repaired messages and block counts laid end to end (what ``_assemble`` returns between its
        # first and last synthetic rows), grown and cut with ``_turns``: a call copies one list instead of
        # walking every turn.
        self._flat: list[dict[str, Any]] = []
        self._flat_counts: list[int] = []
        self._seen: set[str] = set()
        self._pending: list[str] = []
        self.media = 0  # images and documents in the last output
        self.block_counts: list[int] = []  # blocks of each message of the last output
        self._model: str | None = None  # the request's model the cleaned rows were made for

    def _clean(self, msg: Message) -> list[Block]:
        role = role_of(msg)
        if role not in ("user", "assistant"):
            return []
        blocks = [b for b in (_clean_block(x) for x in content_of(msg)) if b]
        if role == "assistant" and self._model is not None:
            wrote = model_of(msg)
            if wrote is not None and wrote != self._model:  # another model's thinking: not ours to send
                blocks = [b for b in blocks if b["type"] not in ("thinking", "redacted_thinking")]
        return _for_role(role, blocks)

    def update(self, messages: Sequence[Message], model: str | None = None) -> list[dict[str, Any]]:
        rows = list(messages)
        wanted = model.strip().lower() if model and model.strip() else None
        if wanted != self._model:  # rows are cleaned for a model: another one redoes them all
            self._model, self._rows, self._cleaned = wanted, [], []
            self._turns, self._seen, self._pending, self.media = [], set(), [], 0
            self._flat, self._flat_counts = [], []
        old = self._rows
        # Identity first (C speed); rows equal by value repair the same way, so they count as the same too.
        same = len(old) <= len(rows) and old == rows[: len(old)]
        if same:  # only rows were added: the closed turns stay, the open end is redone
            cleaned = self._cleaned + [self._clean(r) for r in rows[len(old) :]]
            start = len(old)
            if self._turns:
                last = self._turns.pop()  # merged with what follows, or last no more
                del self._flat[len(self._flat) - len(last.out) :]
                del self._flat_counts[len(self._flat_counts) - len(last.counts) :]
                self._seen.difference_update(last.added)
                self.media -= last.media
                self._pending = last.pending_before
                start = last.first_row
        else:  # anything else: every turn again, each row's cleaned blocks reused
            reuse = {id(r): c for r, c in zip(old, self._cleaned, strict=True)}
            cleaned = [reuse[id(r)] if id(r) in reuse else self._clean(r) for r in rows]
            self._turns, self._seen, self._pending = [], set(), []
            self._flat, self._flat_counts = [], []
            self.media, start = 0, 0
        self._rows, self._cleaned = rows, cleaned
        turns = self._turns
        new_from = len(turns)
        for i in range(start, len(rows)):
            blocks = cleaned[i]
            if not blocks:
                continue
            role = role_of(rows[i])
            if turns and turns[-1].role == role:  # never a closed turn: the open one was popped above
                if role == "assistant":
                    blocks = [b for b in blocks if b["type"] not in ("thinking", "redacted_thinking")]
                turns[-1].blocks = turns[-1].blocks + blocks
            else:
                turns.append(_Turn(role, blocks, i))
        for n in range(new_from, len(turns)):
            self._repair_turn(turns[n], last=n == len(turns) - 1)
        return self._assemble(bool(rows))

    def _repair_turn(self, turn: _Turn, *, last: bool) -> None:
        turn.pending_before = self._pending
        if turn.role == "assistant":
            fixed: list[Block] = []
            pending: list[str] = []
            for block in turn.blocks:
                if block["type"] == "tool_use":
                    if block["id"] in self._seen:
                        fixed.append(_text(tool_call_marker(block)))
                        continue
                    self._seen.add(block["id"])
                    turn.added.append(block["id"])
                    pending.append(block["id"])
                fixed.append(block)
            fixed = [b for b in fixed if b["type"] != "text" or b["text"].strip()]
            out = [{"role": "assistant", "content": fixed}]
            if pending and last:
                out.append({"role": "user", "content": _answer(pending, [])})
                pending = []
            self._pending = pending
        else:
            out = [{"role": "user", "content": _answer(self._pending, turn.blocks)}]
            self._pending = []
        turn.out = [self._finish(m) for m in out] if self._finish else out
        turn.counts = [len(m["content"]) for m in turn.out]
        turn.media = sum(_media_in(m) for m in turn.out)
        self.media += turn.media
        self._flat.extend(turn.out)
        self._flat_counts.extend(turn.counts)

    def _assemble(self, had_rows: bool) -> list[dict[str, Any]]:
        turns = self._turns
        out: list[dict[str, Any]] = []
        if not turns:
            out = [self._done({"role": "user", "content": [_text(EMPTY)]})] if had_rows else []
            self.block_counts = [1] * len(out)
            return out
        counts: list[int] = []
        if turns[0].role == "assistant":
            out.append(self._done({"role": "user", "content": [_text(LEADING_USER)]}))
            counts.append(1)
        out.extend(self._flat)
        counts.extend(self._flat_counts)
        if out[-1]["role"] == "assistant":
            out.append(self._done({"role": "user", "content": [_text(TRAILING_USER)]}))
            counts.append(1)
        self.block_counts = counts
        return out

    def _done(self, msg: dict[str, Any]) -> dict[str, Any]:
        return self._finish(msg) if self._finish else msg


def _media_in(msg: dict[str, Any]) -> int:
    """Images and documents of one message, top level and inside tool results (what the media limit counts)."""
    n = 0
    for block in msg["content"]:
        kind = block.get("type")
        if kind in ("image", "document"):
            n += 1
        elif kind == "tool_result" and isinstance(block.get("content"), list):
            n += sum(
                1
                for sub in block["content"]
                if isinstance(sub, dict) and sub.get("type") in ("image", "document")
            )
    return n


def _answer(pending: list[str], blocks: list[Block]) -> list[Block]:
    """User content with one result per pending call first (synthesised if missing), orphans as text after."""
    found: dict[str, Block] = {}
    rest: list[Block] = []
    for block in blocks:
        if (
            block["type"] == "tool_result"
            and block.get("tool_use_id") in pending
            and block["tool_use_id"] not in found
        ):
            found[block["tool_use_id"]] = block
        elif block["type"] == "tool_result":
            rest.append(_text(tool_result_marker(block, "unknown_tool", ORPHAN_CHARS)))
        else:
            rest.append(block)
    results = [
        found.get(i) or {"type": "tool_result", "tool_use_id": i, "is_error": True, "content": MISSING_RESULT}
        for i in pending
    ]
    content = results + rest
    return content or [_text(EMPTY)]


# --- problems ---------------------------------------------------------------------------------------------


def problems(messages: Sequence[dict[str, Any]]) -> list[str]:
    """Everything that would make the API reject ``messages`` (empty list: valid)."""
    issues: list[str] = []
    if not messages:
        return ["no messages"]
    seen: set[str] = set()
    pending: list[str | None] = []  # None when a tool_use has no id
    for n, msg in enumerate(messages):
        where = f"messages.{n}"
        extra = set(msg) - {"role", "content"}
        if extra:
            issues.append(f"{where}: unknown keys {sorted(extra)}")
        role = msg.get("role")
        expected = "user" if n % 2 == 0 else "assistant"
        if role != expected:
            issues.append(f"{where}: role {role!r}, expected {expected!r} (roles must alternate from user)")
        content = msg.get("content")
        if not isinstance(content, list) or not content:
            issues.append(f"{where}: content must be a non-empty list of blocks")
            content = content if isinstance(content, list) else []
        issues.extend(_block_problems(where, role, content))
        # Ids compared as given; anything but a string (None, a list from a corrupt row) is compared by its repr.
        results = [
            _key(b.get("tool_use_id"))
            for b in content
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        if role == "user":
            missing = [i for i in pending if i not in results]
            if missing:
                issues.append(f"{where}: tool_use ids without tool_result: {missing}")
            orphans = [i for i in results if i not in pending]
            if orphans:
                issues.append(f"{where}: tool_result without tool_use in the previous message: {orphans}")
            if len(results) != len(set(results)):
                issues.append(f"{where}: duplicate tool_result ids")
            kinds = [b.get("type") for b in content if isinstance(b, dict)]
            if (
                "tool_result" in kinds
                and kinds.index("tool_result") != 0
                or (results and any(k != "tool_result" for k in kinds[: len(results)]))
            ):
                issues.append(f"{where}: tool_result blocks must come first")
            pending = []
        else:
            pending = [
                _key(b.get("id")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"
            ]
            dup = [i for i in pending if i in seen]
            if dup:
                issues.append(f"{where}: duplicate tool_use ids {dup}")
            seen.update(i for i in pending if isinstance(i, str))
    if pending:
        issues.append(f"messages.{len(messages) - 1}: tool_use ids without tool_result: {pending}")
    if messages[-1].get("role") != "user":
        issues.append("the last message must be a user message")
    return issues


def _key(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else repr(value)


def _block_problems(where: str, role: Any, content: list[Any]) -> list[str]:
    issues: list[str] = []
    allowed = _USER_TYPES if role == "user" else _ASSISTANT_TYPES
    for i, block in enumerate(content):
        at = f"{where}.content.{i}"
        if not isinstance(block, dict):
            issues.append(f"{at}: not a block")
            continue
        kind = block.get("type")
        if kind not in allowed:
            issues.append(f"{at}: {kind!r} block not allowed in a {role} message")
            continue
        extra = set(block) - _KEYS[kind]
        if extra:
            issues.append(f"{at}: unknown keys {sorted(extra)}")
        if kind == "text" and not str(block.get("text", "")).strip():
            issues.append(f"{at}: empty text block")
        if kind == "thinking" and not signed(block):
            issues.append(f"{at}: thinking without a valid signature")
        if kind == "tool_use" and (
            not _valid_id(block.get("id")) or not isinstance(block.get("input"), dict)
        ):
            issues.append(f"{at}: malformed tool_use")
        if kind == "tool_result" and isinstance(block.get("content"), list):
            for j, sub in enumerate(block["content"]):
                if not isinstance(sub, dict) or sub.get("type") not in _RESULT_ITEM_TYPES:
                    issues.append(f"{at}.content.{j}: not allowed inside tool_result")
                elif sub.get("type") == "text" and not str(sub.get("text", "")).strip():
                    issues.append(f"{at}.content.{j}: empty text block")
                elif set(sub) - _KEYS[sub["type"]]:
                    issues.append(f"{at}.content.{j}: unknown keys {sorted(set(sub) - _KEYS[sub['type']])}")
        if "cache_control" in block and (kind in ("thinking", "redacted_thinking")):
            issues.append(f"{at}: cache_control on a thinking block")
    return issues
