"""Read a Claude Code session transcript (``~/.claude/projects/**/<session>.jsonl``) into API content blocks.

The file is one JSON object per line. Only ``user`` / ``assistant`` records are conversation; everything
else (progress, file-history-snapshot, queue-operation, system, summary, ...) is client bookkeeping that never
reached the model and is skipped, except ``system/compact_boundary`` whose position and size we keep.

Facts the parser relies on (each seen in real transcripts; tests/test_claude_code.py checks them on the corpus):
* one API response is written as several ``assistant`` lines (one per content block) sharing ``message.id``;
  the lines repeat the usage, and ``output_tokens`` only becomes final on the last line;
* tool results are ``user`` records holding ``tool_result`` blocks, one record per result;
* ``isSidechain`` marks subagent traffic; a subagent's own file (``subagents/agent-*.jsonl``) is sidechain
  throughout, so the "main chain" is whichever chain the file's first conversation record is on;
* ``isMeta`` user records are injected by the client (caveats, skill text), not typed by the user;
* ``model == "<synthetic>"`` assistant records are written by the client (e.g. "No response requested.") and
  never came from the API.

Records are taken in file order; rewound/edited branches (``parentUuid`` forks) are not pruned.
Pure Python: no Qt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from msgspec import Struct, field

from desktop.engine.compaction.request_shape import signed
from desktop.engine.types import Block, Role, Usage

__all__ = [
    "CompactionMark",
    "ImportedMessage",
    "Transcript",
    "api_messages",
    "parse_lines",
    "read_transcript",
]

TITLE_MAX = 80
NO_RESULT_TEXT = "[no result recorded]"

# Record types that are client bookkeeping; the value is the reason name used in Transcript.skipped.
_BOOKKEEPING = {
    "progress": "progress",
    "file-history-snapshot": "snapshot",
    "queue-operation": "queue",
    "summary": "summary",
    "system": "system",
}
# Real thinking signatures are long base64 strings; redacted copies (e.g. "[REDACTED_SIGNATURE]") are not.
_COMMAND_NAME_RE = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.S)
_COMMAND_ARGS_RE = re.compile(r"<command-args>\s*(.*?)\s*</command-args>", re.S)
# User texts that are client output or notices, not a prompt worth naming the session after.
_NOT_A_PROMPT = ("<local-command", "<bash-", "<task-notification", "Caveat:", "[Request interrupted")


class ImportedMessage(Struct):
    role: Role
    content: list[Block]
    usage: Usage | None = None  # assistant only: the request's usage, from the LAST line of its message.id
    model: str | None = None
    api_message_id: str | None = None
    uuid: str | None = None  # uuid of the first record that formed this message
    timestamp: str | None = None
    is_compact_summary: bool = False


class CompactionMark(NamedTuple):
    # index in Transcript.messages of the first message after the boundary (the summary). The name hides
    # tuple.index (mypy: an incompatible override), but readers use .index and tuple(mark): it stays.
    index: int  # type: ignore[assignment]
    trigger: str  # "auto" | "manual" (as written by Claude Code)
    pre_tokens: int | None  # real context size when compacting


class Transcript(Struct):
    messages: list[ImportedMessage] = field(default_factory=list)
    skipped_malformed: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    title: str = ""
    models: list[str] = field(default_factory=list)
    compactions: list[CompactionMark] = field(default_factory=list)
    # tool_use ids with no tool_result anywhere later (interrupted sessions); the data is kept as is.
    unpaired_tool_use_ids: list[str] = field(default_factory=list)
    # tool_result ids with no earlier tool_use.
    orphan_tool_result_ids: list[str] = field(default_factory=list)
    session_id: str | None = None
    version: str | None = None  # Claude Code version that wrote the file

    def api_messages(self, start: int = 0, *, keep_thinking: bool = True) -> list[dict[str, Any]]:
        """Messages from ``start`` on, as a valid Messages API ``messages`` list (see module ``api_messages``)."""
        return api_messages(self.messages[start:], keep_thinking=keep_thinking)


def read_transcript(path: str | Path) -> Transcript:
    """Parse a Claude Code JSONL file line by line. Never raises on bad content; I/O errors propagate."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return parse_lines(fh)


def _scrubbed(value: Any) -> Any:
    """``value`` with every lone surrogate (from a ``\\udXXX`` escape) replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    if isinstance(value, dict):
        return {_scrubbed(k): _scrubbed(v) for k, v in value.items()}
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def parse_lines(lines: Iterable[str]) -> Transcript:
    """Parse an iterable of JSONL lines (a file object streams)."""
    return _Parser().run(lines)


class _Parser:
    def __init__(self) -> None:
        self.t = Transcript()
        self.by_api_id: dict[str, ImportedMessage] = {}
        self.main_sidechain: bool | None = None

    def run(self, lines: Iterable[str]) -> Transcript:
        for line in lines:
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):  # not JSON, or nested deeper than a record can be
                self.t.skipped_malformed += 1
                continue
            if (
                "\\u" in line
            ):  # a lone surrogate escape: replaced like undecodable bytes (nothing could store it)
                try:
                    rec = _scrubbed(rec)
                except RecursionError:
                    self.t.skipped_malformed += 1
                    continue
            if not isinstance(rec, dict) or not self._record(rec):
                self.t.skipped_malformed += 1
        self._finish()
        return self.t

    def _skip(self, reason: str) -> bool:
        self.t.skipped[reason] = self.t.skipped.get(reason, 0) + 1
        return True

    def _record(self, rec: dict[str, Any]) -> bool:
        """Handle one record; False means malformed."""
        kind = rec.get("type")
        if not isinstance(kind, str):
            return False
        if kind not in ("user", "assistant"):
            if kind == "system" and rec.get("subtype") == "compact_boundary" and not rec.get("isSidechain"):
                meta = rec.get("compactMetadata") or {}
                pre = meta.get("preTokens") if isinstance(meta, dict) else None
                trigger = meta.get("trigger") if isinstance(meta, dict) else None
                self.t.compactions.append(
                    CompactionMark(
                        len(self.t.messages), str(trigger or "auto"), pre if isinstance(pre, int) else None
                    )
                )
            return self._skip(_BOOKKEEPING.get(kind, kind))
        msg = rec.get("message")
        if not isinstance(msg, dict):
            return False
        side = bool(rec.get("isSidechain"))
        if self.main_sidechain is None:
            self.main_sidechain = side
            self.t.session_id = _str(rec.get("sessionId"))
            self.t.version = _str(rec.get("version"))
        if side != self.main_sidechain:
            return self._skip("sidechain")
        if kind == "user":
            return self._user(rec, msg)
        return self._assistant(rec, msg)

    def _user(self, rec: dict[str, Any], msg: dict[str, Any]) -> bool:
        if rec.get("isMeta"):
            return self._skip("meta")
        content = _blocks(msg.get("content"))
        if content is None:
            return False
        if not content:
            return self._skip("empty")
        self.t.messages.append(
            ImportedMessage(
                role="user",
                content=content,
                uuid=_str(rec.get("uuid")),
                timestamp=_str(rec.get("timestamp")),
                is_compact_summary=bool(rec.get("isCompactSummary")),
            )
        )
        return True

    def _assistant(self, rec: dict[str, Any], msg: dict[str, Any]) -> bool:
        model = _str(msg.get("model"))
        if model == "<synthetic>" or rec.get("isApiErrorMessage"):
            return self._skip("synthetic")
        content = _blocks(msg.get("content"))
        if content is None:
            return False
        api_id = _str(msg.get("id"))
        usage = Usage.from_json(msg.get("usage")) if isinstance(msg.get("usage"), dict) else None
        if model and model not in self.t.models:
            self.t.models.append(model)
        existing = self.by_api_id.get(api_id) if api_id else None
        if existing is not None:
            # Another line of the same response: add its blocks once, keep the latest usage (final output count).
            for block in content:
                if block not in existing.content:
                    existing.content.append(block)
            if usage is not None:
                existing.usage = usage
            existing.model = model or existing.model
            return True
        if not content:
            return self._skip("empty")
        m = ImportedMessage(
            role="assistant",
            content=content,
            usage=usage,
            model=model,
            api_message_id=api_id,
            uuid=_str(rec.get("uuid")),
            timestamp=_str(rec.get("timestamp")),
        )
        self.t.messages.append(m)
        if api_id:
            self.by_api_id[api_id] = m
        return True

    def _finish(self) -> None:
        t = self.t
        t.title = _title(t.messages)
        later_results: set[str] = set()
        unpaired: list[str] = []
        # Backwards, so "answered somewhere later" is known at each tool_use.
        for m in reversed(t.messages):
            for b in reversed(m.content):
                kind, bid = b.get("type"), b.get("id")
                if kind == "tool_result" and isinstance(b.get("tool_use_id"), str):
                    later_results.add(b["tool_use_id"])
                elif kind == "tool_use" and isinstance(bid, str) and bid not in later_results:
                    unpaired.append(bid)
        t.unpaired_tool_use_ids = unpaired[::-1]
        seen_uses: set[str] = set()
        for m in t.messages:
            for b in m.content:
                if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                    seen_uses.add(b["id"])
                elif b.get("type") == "tool_result" and str(b.get("tool_use_id")) not in seen_uses:
                    t.orphan_tool_result_ids.append(str(b.get("tool_use_id")))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _blocks(content: Any) -> list[Block] | None:
    """Message content as a block list; None when the shape is not a message content at all."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict) and isinstance(b.get("type"), str)]
    return None


def _prompt_title(text: str) -> str | None:
    text = text.strip()
    if not text or text.startswith(_NOT_A_PROMPT):
        return None
    name = _COMMAND_NAME_RE.search(text)
    if name:
        args = _COMMAND_ARGS_RE.search(text)
        text = f"{name.group(1)} {args.group(1) if args else ''}"
    text = " ".join(text.split())
    if len(text) > TITLE_MAX:
        text = text[: TITLE_MAX - 1].rstrip() + "…"
    return text or None


def _title(messages: list[ImportedMessage]) -> str:
    for m in messages:
        if m.role != "user" or m.is_compact_summary:
            continue
        for b in m.content:
            if b.get("type") == "text" and isinstance(b.get("text"), str):
                title = _prompt_title(b["text"])
                if title:
                    return title
    return ""


# ---------------------------------------------------------------- API view


def api_messages(messages: Iterable[ImportedMessage], *, keep_thinking: bool = True) -> list[dict[str, Any]]:
    """Turn imported messages into a ``messages`` list the Messages API accepts.

    * blocks are reduced to request fields (response-only fields such as ``caller``/``citations`` dropped);
    * empty / whitespace-only text blocks are dropped, and messages left empty;
    * thinking blocks are kept only with a real signature (and ``keep_thinking``). Redacted or missing
      signatures are DROPPED, not turned into text: the API rejects them, the API strips earlier turns'
      thinking anyway (so dropping matches what the model saw), and as text the model would read its private
      reasoning as something it said aloud, at full token cost;
    * every tool_use is answered in the very next user message, tool_result blocks first: a result recorded
      further away is moved there, a missing one becomes ``{"is_error": true, "content": "[no result recorded]"}``;
      a tool_result with no earlier tool_use becomes a text block; duplicate tool_use ids are dropped;
    * consecutive same-role messages are merged and the list starts with a user message.
    Images and documents (base64 included) are kept unchanged.
    """
    plain: list[tuple[str, list[Block]]] = []
    for m in messages:
        blocks = [c for b in m.content if (c := _clean(b, m.role, keep_thinking)) is not None]
        if blocks:
            plain.append((m.role, blocks))
    results: dict[str, Block] = {}
    for role, blocks in plain:
        if role == "user":
            for b in blocks:
                if b["type"] == "tool_result":
                    results.setdefault(b["tool_use_id"], b)

    out: list[dict[str, Any]] = []
    placed: set[str] = set()
    seen_uses: set[str] = set()

    def add(role: str, blocks: list[Block]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for role, blocks in plain:
        if role == "assistant":
            kept: list[Block] = []
            ids: list[str] = []
            for b in blocks:
                if b["type"] == "tool_use":
                    if b["id"] in seen_uses:
                        continue
                    seen_uses.add(b["id"])
                    ids.append(b["id"])
                kept.append(b)
            add("assistant", kept)
            if ids:
                answers = [_answer(i, results, placed) for i in ids]
                placed.update(ids)
                out.append({"role": "user", "content": answers})
        else:
            rest: list[Block] = []
            for b in blocks:
                if b["type"] != "tool_result":
                    rest.append(b)
                elif b["tool_use_id"] in placed:
                    continue  # already answered right after its tool_use
                else:
                    # Orphan: shown as text; a later tool_use with this id gets a synthetic result.
                    placed.add(b["tool_use_id"])
                    rest.extend(_orphan_as_blocks(b))
            if rest:
                add("user", rest)
    out = [msg for msg in out if msg["content"]]
    merged: list[dict[str, Any]] = []
    for msg in out:
        if merged and merged[-1]["role"] == msg["role"]:
            merged[-1]["content"].extend(msg["content"])
        else:
            merged.append(msg)
    if merged and merged[0]["role"] != "user":
        merged.insert(0, {"role": "user", "content": [{"type": "text", "text": "[Imported conversation]"}]})
    _strip_final_whitespace(merged)
    return merged


def _answer(tool_use_id: str, results: dict[str, Block], placed: set[str]) -> Block:
    found = results.get(tool_use_id)
    if found is not None and tool_use_id not in placed:
        return found
    return {"type": "tool_result", "tool_use_id": tool_use_id, "is_error": True, "content": NO_RESULT_TEXT}


def _orphan_as_blocks(block: Block) -> list[Block]:
    content = block.get("content")
    head = f"[tool result {block['tool_use_id']} without a matching tool call]"
    if isinstance(content, str):
        return [{"type": "text", "text": f"{head}\n{content}" if content.strip() else head}]
    texts = [b["text"] for b in content or [] if b["type"] == "text"]
    others = [b for b in content or [] if b["type"] != "text"]
    return [{"type": "text", "text": "\n".join([head, *texts])}, *others]


def _clean(block: Block, role: str, keep_thinking: bool) -> Block | None:
    """One block reduced to what a request may carry, or None to drop it."""
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return {"type": "text", "text": text} if isinstance(text, str) and text.strip() else None
    if kind == "thinking":
        sig, thinking = block.get("signature"), block.get("thinking")
        if keep_thinking and role == "assistant" and signed(block):
            return {
                "type": "thinking",
                "thinking": thinking if isinstance(thinking, str) else "",
                "signature": sig,
            }
        return None
    if kind == "redacted_thinking":
        data = block.get("data")
        keep = keep_thinking and role == "assistant" and isinstance(data, str) and data
        return {"type": "redacted_thinking", "data": data} if keep else None
    if kind == "tool_use":
        tid, name, inp = block.get("id"), block.get("name"), block.get("input")
        if role != "assistant" or not isinstance(tid, str) or not isinstance(name, str):
            return None
        return {"type": "tool_use", "id": tid, "name": name, "input": inp if isinstance(inp, dict) else {}}
    if kind == "tool_result":
        tid = block.get("tool_use_id")
        if role != "user" or not isinstance(tid, str):
            return None
        out: Block = {"type": "tool_result", "tool_use_id": tid}
        content = _result_content(block.get("content"))
        if content:
            out["content"] = content
        if block.get("is_error") is True:
            out["is_error"] = True
        return out
    if kind == "image":
        return {"type": "image", "source": block["source"]} if isinstance(block.get("source"), dict) else None
    if kind == "document":
        if not isinstance(block.get("source"), dict):
            return None
        return {
            k: v for k, v in block.items() if k in ("type", "source", "title", "context") and v is not None
        }
    # Server-tool blocks and anything newer: their pairing rules are strict and they cannot be replayed out
    # of their original request, so keep a visible trace instead.
    return {"type": "text", "text": f"[{kind} block omitted]"}


def _result_content(content: Any) -> str | list[Block] | None:
    if isinstance(content, str):
        return content if content.strip() else None
    if not isinstance(content, list):
        return None
    out: list[Block] = []
    for b in content:
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "text":
            if isinstance(b.get("text"), str) and b["text"].strip():
                out.append({"type": "text", "text": b["text"]})
        elif kind in ("image", "document"):
            c = _clean(b, "user", False)
            if c is not None:
                out.append(c)
        elif kind == "tool_reference":
            # Only valid with tool search on and the named tool present; keep the fact as text.
            out.append({"type": "text", "text": f"[tool reference: {b.get('tool_name')}]"})
        else:
            out.append({"type": "text", "text": f"[{kind} omitted]"})
    return out or None


def _strip_final_whitespace(msgs: list[dict[str, Any]]) -> None:
    """The API rejects a final assistant message whose last text ends with whitespace."""
    if not msgs or msgs[-1]["role"] != "assistant":
        return
    last = msgs[-1]["content"][-1]
    if last["type"] == "text":
        last["text"] = last["text"].rstrip()
