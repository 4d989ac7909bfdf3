"""Decisions and their reasons, picked from the transcript by rules (never written by a summariser), for the
artifact ledger: a refused or forgetful summary cannot lose them.

A sentence of user or assistant text is a decision when it says one was made ("we decided", "let's go with",
"Decision:", "chose X because", "instead of … because", and a few common forms in German, French, Spanish,
Chinese, Japanese and Korean). Questions, tool output, thinking and code blocks are never read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from desktop.engine.compaction._shared import Message, content_of, has_tool_result, id_of, role_of

MAX_CHARS = 300
_MADE = (
    r"\b(?:we|i)\s+(?:have\s+|'ve\s+|’ve\s+)?(?:decided|agreed|settled on|opted|went with)\b",
    r"\blet['’]?s\s+(?:go with|use|stick with|switch to|settle on|pick|keep)\b",
    r"^\s*(?:decision|decided|final decision|resolution)\s*[:：]",
    r"\bthe decision is\b",
    r"\b(?:chose|chosen|picked|opted for|went with|going with|switched to|settled on)\b.*\b(?:because|since|as it|so that)\b",
    r"\b(?:instead of|rather than)\b.*\b(?:because|since)\b",
    r"\b(?:because|since)\b.*\b(?:instead of|rather than)\b",
    r"\b(?:wir haben|ich habe)\s+(?:uns\s+)?(?:entschieden|beschlossen)\b|\bentscheidung\s*:",
    r"\b(?:on a|nous avons|j['’]ai)\s+(?:décidé|choisi|opté)\b|\bdécision\s*:",
    r"\b(?:decidimos|hemos decidido|he decidido|elegimos)\b|\bdecisión\s*:",
    r"决定|決定|決めた|ことにした|采用.*因为|하기로\s*했|결정",
)
_DECISION = re.compile("|".join(f"(?:{p})" for p in _MADE), re.IGNORECASE | re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)


def _sentences(text: str) -> Iterator[str]:
    for part in _SENTENCE_END.split(_FENCE.sub("\n", text)):
        sentence = " ".join(part.split()).lstrip("-*•> ").strip()
        if sentence:
            yield sentence


def decisions_in(msg: Message) -> list[str]:
    """The decision sentences of one message, each cut to ``MAX_CHARS``; [] for tool results and other roles."""
    if role_of(msg) not in ("user", "assistant") or has_tool_result(msg):
        return []
    out: list[str] = []
    for block in content_of(msg):
        if block.get("type") != "text":
            continue
        for sentence in _sentences(str(block.get("text", ""))):
            if sentence.endswith(("?", "？")) or not _DECISION.search(sentence):
                continue
            out.append(sentence if len(sentence) <= MAX_CHARS else sentence[: MAX_CHARS - 1] + "…")
    return out


def cite(sentence: str, msg: Message) -> str:
    """The sentence with the id of its message, as a summary cites it."""
    mid = id_of(msg)
    return f"{sentence} [#{mid}]" if isinstance(mid, int) else sentence
