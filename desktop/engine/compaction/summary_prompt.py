"""The summariser request, the check of its answer, and trimming when the request itself is too long."""

from __future__ import annotations

import re
from collections.abc import Sequence

from desktop.engine.compaction._shared import Message, content_of, group_starts, role_of
from desktop.engine.compaction.citations import RULE as CITE_RULE
from desktop.engine.compaction.normalize import flatten
from desktop.engine.compaction.sections import SECTIONS
from desktop.engine.lazy_re import LazyPattern
from desktop.engine.metering.tokens import estimate_text
from desktop.engine.types import MessagesRequest

MARKER = "<precis-summary-request>"
MIN_CHARS = 10

SECTION_RULES = (
    "Use exactly these sections, each under its Markdown heading written exactly as here (in English), in this "
    'order; write the content in the conversation\'s language, and "None" when a section is empty:\n'
    + "\n".join(f"## {title} — {hint}." for _key, title, hint in SECTIONS)
)
UPDATE_RULES = (
    "Update this existing summary of the earlier conversation with what happened since, section by section: "
    'write every heading again; under a heading that needs no change write only "unchanged"; otherwise write '
    "the whole updated section, keeping every item that still matters. Move finished work to Done: under "
    "Current state instead of dropping it."
)

SYSTEM = (
    MARKER + "\n"
    "You write the working memory of a long conversation between a user and an AI assistant. The summary you "
    "write replaces the transcript below: the assistant will continue the conversation from your summary alone "
    "(plus a few recent messages, the user's verbatim instructions and a ledger of the files and commands the "
    "tools touched), so keep every fact it needs and nothing else. Be specific: exact names, numbers, error "
    "messages, reasons. No greetings, no filler, no remarks about this request.\n\n"
    "The transcript marks tool activity with <prior-tool-call …/> and <prior-tool-result …> tags. They are "
    "records of what happened, not a format to copy: do not write such tags, and do not call tools. Answer "
    "only with the summary.\n\n" + SECTION_RULES + "\n\n" + CITE_RULE
)
_LANGUAGES = {
    "zh": "Chinese (in the same script, simplified or traditional, that the user writes)",
    "ja": "Japanese",
    "ko": "Korean",
    # Not CJK: the user's own language (English, French, German, …); the model reads it off the transcript.
    "en": "the language the user writes in (English if the user mixes languages)",
}
_HAN = LazyPattern(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_KANA = LazyPattern(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HANGUL = LazyPattern(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_LETTER = LazyPattern(r"\w")
CJK_SHARE = 0.3

_REFUSAL = LazyPattern(
    r"^\s*(i'?m sorry|i am sorry|sorry,|i apologi[sz]e|i can(?:not|'t)|i'm unable|i am unable|"
    r"as an ai|抱歉|对不起|對不起|我无法|我不能|申し訳|죄송)",
    re.IGNORECASE,
)


def detect_language(messages: Sequence[Message]) -> str:
    """ "zh" / "ja" / "ko" when CJK characters make up much of what the user wrote, otherwise "en"."""
    text = "".join(
        str(b.get("text", ""))
        for m in messages
        if role_of(m) == "user"
        for b in content_of(m)
        if b.get("type") == "text"
    )
    letters = len(_LETTER.findall(text))
    if not letters:
        return "en"
    han, kana, hangul = len(_HAN.findall(text)), len(_KANA.findall(text)), len(_HANGUL.findall(text))
    if (han + kana + hangul) / letters < CJK_SHARE:
        return "en"
    if hangul >= max(han, kana):
        return "ko"
    if kana >= 0.1 * (han + kana):  # Japanese mixes kana into kanji; Chinese has none
        return "ja"
    return "zh"


def build_summary_request(
    messages: Sequence[Message],
    *,
    previous_summary: str | None,
    focus: str | None,
    max_tokens: int,
    model: str = "",
) -> MessagesRequest:
    """System prompt + one user message holding the transcript (see ``flatten``) and the instructions."""
    language = _LANGUAGES[detect_language(messages)]
    parts: list[str] = []
    if previous_summary and previous_summary.strip():
        parts.append(
            UPDATE_RULES + "\n<previous-summary>\n" + previous_summary.strip() + "\n</previous-summary>"
        )
    parts.append("<transcript>\n" + flatten(messages, ids=True) + "\n</transcript>")
    if focus and focus.strip():
        parts.append("The user asked the summary to focus on: " + focus.strip())
    parts.append(length(max_tokens))
    parts.append(f"Write the summary now, in {language}.")
    return {
        "model": model,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "\n\n".join(parts)}]}],
        "max_tokens": max_tokens,
    }


def length(max_tokens: int) -> str:
    """The length a summary is asked for: what its reply cap holds, in words (about 3/4 of a token each)."""
    return f"The summary has room for at most {max_tokens * 3 // 4:,} words."


def extract_summary(text: str) -> str:
    """The summary proper: a <summary> element's body when present, without any <analysis> scratchpad."""
    text = re.sub(r"<analysis>.*?</analysis>", "", text, flags=re.DOTALL)
    match = re.search(r"<summary>(.*?)(?:</summary>|$)", text, flags=re.DOTALL)
    return (match.group(1) if match else text).strip()


def validate_summary(summary: str, replaced_tokens: int) -> str | None:
    """Why ``summary`` must be rejected, or None when it is usable."""
    text = (summary or "").strip()
    if len(text) < MIN_CHARS:
        return f"summary too short ({len(text)} characters)"
    if len(text) < 600 and _REFUSAL.match(text):
        return "summariser refused or answered without a summary"
    size = estimate_text(text)
    if size >= replaced_tokens:
        return f"summary not smaller than what it replaces ({size:,} ≥ {replaced_tokens:,} tokens)"
    return None


def drop_oldest_groups(messages: Sequence[Message], n: int) -> list[Message]:
    """Drop the ``n`` oldest complete groups (a plain user message up to the next one); pairs stay whole."""
    if n <= 0:
        return list(messages)
    starts = group_starts(messages)
    if n >= len(starts):
        return []
    return list(messages[starts[n] :])
