"""What the fake model says: scripted replies, the default echo and the deterministic summariser."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.fakeapi.counting import Block, TokenCounter

SUMMARY_MARKER = "<precis-summary-request>"


@dataclass
class Reply:
    """One assistant turn. ``stop_reason`` None means: "tool_use" if a tool_use block is present,
    else "end_turn". ``output_tokens`` None means: counted from the content."""

    content: list[Block]
    stop_reason: str | None = None
    output_tokens: int | None = None

    @classmethod
    def text(cls, text: str, stop_reason: str | None = None) -> Reply:
        return cls([{"type": "text", "text": text}], stop_reason)

    @classmethod
    def tool_use(
        cls, name: str, input: dict[str, Any], *, text: str | None = None, id: str | None = None
    ) -> Reply:
        blocks: list[Block] = [{"type": "text", "text": text}] if text else []
        blocks.append({"type": "tool_use", "id": id or "", "name": name, "input": input})
        return cls(blocks)

    @classmethod
    def thinking(cls, thinking: str, text: str, signature: str | None = None) -> Reply:
        sig = signature or hashlib.sha256(thinking.encode()).hexdigest()
        return cls(
            [{"type": "thinking", "thinking": thinking, "signature": sig}, {"type": "text", "text": text}]
        )

    @classmethod
    def from_json(cls, obj: Any) -> Reply:
        """Script-file form: "text" | {"text"} | {"tool_use": {name, input}} | {"thinking", "text"} |
        {"content": [...]} ; each may carry "stop_reason"."""
        if isinstance(obj, str):
            return cls.text(obj)
        stop = obj.get("stop_reason")
        if "content" in obj:
            return cls(list(obj["content"]), stop)
        if "tool_use" in obj:
            tu = obj["tool_use"]
            reply = cls.tool_use(tu["name"], tu.get("input", {}), text=obj.get("text"), id=tu.get("id"))
        elif "thinking" in obj:
            reply = cls.thinking(obj["thinking"], obj.get("text", ""), obj.get("signature"))
        else:
            reply = cls.text(str(obj.get("text", "")))
        reply.stop_reason = stop
        return reply

    def resolved_stop_reason(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if any(b.get("type") == "tool_use" for b in self.content) else "end_turn"


@dataclass
class Summariser:
    """Deterministic "summary": bullet lines built from the first words of each user text, cycled
    until the summary reaches ``fraction`` of the prompt tokens (at least ``min_tokens``)."""

    fraction: float = 0.10
    min_tokens: int = 50
    words_per_line: int = 12
    marker: str = SUMMARY_MARKER

    def wants_summary(self, body: dict[str, Any]) -> bool:
        system = body.get("system")
        if self.marker in _plain_text(system):
            return True
        messages = body.get("messages") or []
        last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
        return bool(last_user) and self.marker in _plain_text(last_user.get("content"))

    def summarise(self, body: dict[str, Any], prompt_tokens: int, counter: TokenCounter) -> str:
        target = max(self.min_tokens, math.ceil(self.fraction * prompt_tokens))
        turns = _turns(body, self.marker)
        lines = [
            f"- [{i}] user: " + " ".join(text.split()[: self.words_per_line])
            for i, (role, text, _mid) in enumerate(turns)
            if role == "user" and text.split()
        ]
        if not lines:
            lines = ["- (no user text)"]

        def cycled(n: int) -> str:
            base = lines[n % len(lines)]
            return base if n < len(lines) else f"{base} (again {n // len(lines)})"

        headings = _HEADING_RULE.findall(_plain_text(body.get("system")) + "\n" + last_user_text(body))
        if len(headings) < 3:  # a request without section rules: bullet lines
            return "\n".join(_grow(cycled, "</summary>", target, counter, head="<summary>", sep="\n"))
        # The summary to update: quoted in a transcript request, or opening the conversation of a cached one.
        first = (body.get("messages") or [{}])[0]
        previous = _previous_sections(last_user_text(body)) or _previous_sections(
            _plain_text(first.get("content")), tag="conversation-summary"
        )
        return _sectioned(headings, turns, previous, cycled, target, counter)


# The engine's section rules: "## Heading — what goes in it."; the fake follows them like a careful model:
# instructions, decisions and errors picked by keyword, earlier items kept, the tail of the state padded.
_HEADING_RULE = re.compile(r"^## ([^\n—]+?) — ", re.MULTILINE)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_PICK = (
    ("instruction", ("always", "never", "keep", "must", "prefer", "don't", "do not", "only use")),
    ("decision", ("because", "decided")),
    ("error", ("error", "traceback", "failed")),
)


_LABEL = re.compile(r"^(User|Assistant)(?: \[#(\d+)\])?: ")
_INDEX_LINE = re.compile(r"^#(\d+) \w+: «(.*)»$", re.MULTILINE)


def _turns(body: dict[str, Any], marker: str) -> list[tuple[str, str, int | None]]:
    """(role, text, message id) of the conversation the request carries: the flattened transcript when there is
    one (ids after the roles), else the request's own messages (a summarise instruction appended to the real
    request), their ids read from the index of first words the instruction lists."""
    text = last_user_text(body)
    found = re.search(r"<transcript>\n?(.*?)\n?</transcript>", text, flags=re.DOTALL)
    if found:
        out: list[tuple[str, str, int | None]] = []
        for para in re.split(r"\n\n(?=(?:User|Assistant)(?: \[#\d+\])?: )", found.group(1)):
            label = _LABEL.match(para)
            role, mid = (label.group(1), label.group(2)) if label else ("Assistant", None)
            out.append(
                (
                    "user" if role == "User" else "assistant",
                    para[label.end() :] if label else para,
                    int(mid) if mid else None,
                )
            )
        return out
    index = [(int(mid), " ".join(words.split())) for mid, words in _INDEX_LINE.findall(text)]
    turns = []
    for m in body.get("messages") or []:
        said = _turn_text(m.get("content"), marker)
        flat = " ".join(said.split())
        mid = next((i for i, words in index if words and flat.startswith(words)), None)
        turns.append((str(m.get("role")), said, mid))
    return turns


def _turn_text(content: Any, marker: str) -> str:
    """A message's text without the summarise instruction a client appended to it as a block of its own."""
    if isinstance(content, list):
        content = [
            b
            for b in content
            if not (
                isinstance(b, dict)
                and b.get("type") == "text"
                and str(b.get("text", "")).lstrip().startswith(marker)
            )
        ]
    return _plain_text(content).replace(marker, " ")


def _previous_sections(text: str, tag: str = "previous-summary") -> dict[str, list[str]]:
    found = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, flags=re.DOTALL)
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in (found.group(1) if found else "").splitlines():
        if line.startswith("## "):
            current = out.setdefault(line[3:].strip().casefold(), [])
        elif current is not None and line.strip() and line.strip() not in ("None", "Done:"):
            current.append(line.strip())
    return out


def _sectioned(
    headings: list[str],
    turns: list[tuple[str, str, int | None]],
    previous: dict[str, list[str]],
    cycled: Callable[[int], str],
    target: int,
    counter: TokenCounter,
) -> str:
    picked: dict[str, list[str]] = {kind: [] for kind, _words in _PICK}
    seen: set[tuple[str, str]] = set()
    for role, text, mid in turns:
        for sentence in _SENTENCE.findall(text):
            clean = " ".join(sentence.split()[:30])
            low = clean.casefold()
            for kind, words in _PICK:
                wanted = (kind != "instruction" or role == "user") and any(w in low for w in words)
                if wanted and (kind, clean) not in seen:  # each item cites the message it came from
                    seen.add((kind, clean))
                    picked[kind].append(f"- {clean}" + (f" [#{mid}]" if mid is not None else ""))
    users = [t for r, t, _mid in turns if r == "user" and t.split()]
    body: dict[str, list[str]] = {}
    for heading in headings:
        low = heading.casefold()
        kept = previous.get(low, [])
        kind = next((k for k, _w in _PICK if k in low), None)
        if "goal" in low:
            body[heading] = kept or [" ".join(users[0].split()[:20]) if users else "None"]
        elif kind is not None:
            body[heading] = list(dict.fromkeys([*kept, *picked[kind]]))
        elif "next" in low:
            body[heading] = ["- " + " ".join(users[-1].split()[:20])] if users else ["None"]
        else:  # the state: what the previous summary named as the next step is done now
            nexts = next((v for k, v in previous.items() if "next" in k), [])
            body[heading] = list(dict.fromkeys(["Done:", *kept, *nexts]))
    # Padding goes last: a reply cut at max_tokens loses only padding, like a model cut off in its last section.
    state = headings[-1]

    def render(extra: int) -> str:
        parts = []
        for heading in headings:
            items = body[heading] + ([cycled(n) for n in range(extra)] if heading == state else [])
            parts.append(f"## {heading}\n" + ("\n".join(items) if items else "None"))
        return "<summary>\n" + "\n\n".join(parts) + "\n</summary>"

    extra, lo = 0, 0
    while counter.count_text(render(extra)) < target:  # doubling, then bisection: few counts for long targets
        lo, extra = extra, max(1, extra * 2)
    while lo < extra:
        mid = (lo + extra) // 2
        if counter.count_text(render(mid)) < target:
            lo = mid + 1
        else:
            extra = mid
    return render(extra)


def _grow(
    piece: Callable[[int], str], tail: str, target: int, counter: TokenCounter, *, head: str, sep: str = ""
) -> list[str]:
    """[head, piece(0), ..., piece(n-1), tail]: the fewest pieces whose ``sep``-joined text counts
    >= target. Measured additively (bytes, CJK chars) so it is exact and linear."""

    def measure(s: str) -> tuple[int, int]:
        return counter.measure_text(s)

    other, cjk = measure(head + sep + tail) if tail else measure(head)
    pieces = [head]
    n = 0
    while counter.tokens_of(other, cjk) < target:
        b, k = measure(sep + piece(n))
        other, cjk = other + b, cjk + k
        pieces.append(piece(n))
        n += 1
    return [*pieces, tail] if tail else pieces


def _plain_text(content: Any) -> str:
    """All text in a str / block list, tool_result text included."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(_plain_text(block.get("content")))
    return "\n".join(parts)


def last_user_text(body: dict[str, Any]) -> str:
    for msg in reversed(body.get("messages") or []):
        if msg.get("role") == "user":
            return _plain_text(msg.get("content"))
    return ""


def echo_reply(body: dict[str, Any], counter: TokenCounter, min_tokens: int = 0) -> Reply:
    """Default reply: "Echo: <last user text, first 200 chars>", padded deterministically with
    numbered filler sentences to at least ``min_tokens`` output tokens."""
    text = "Echo: " + " ".join(last_user_text(body).split())[:200]
    if min_tokens > 0:
        pieces = _grow(
            lambda n: f" Filler sentence {n} keeps this reply long and deterministic.",
            "",
            min_tokens,
            counter,
            head=text,
        )
        text = "".join(pieces)
    return Reply.text(text)


def truncate_to(reply: Reply, budget: int, counter: TokenCounter, reason: str) -> Reply:
    """Cut a reply to ``budget`` output tokens (text cut by characters; later blocks dropped)."""
    out: list[Block] = []
    used = 0
    for block in reply.content:
        cost = counter.count_output([block])
        if used + cost <= budget:
            out.append(block)
            used += cost
            continue
        if block.get("type") == "text":
            room = budget - used
            text = block.get("text", "")
            keep = int(room * counter.text_ratio)
            while keep > 0 and counter.count_text(text[:keep]) > room:
                keep -= max(1, keep // 20)
            if keep > 0:
                out.append({**block, "text": text[:keep]})
        break
    return Reply(out or [{"type": "text", "text": ""}], reason)
