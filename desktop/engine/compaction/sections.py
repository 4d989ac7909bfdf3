"""The summary's fixed sections: parsed, checked and merged into the previous summary section by section.

A summary is the chat's working memory, so it is checked like data, not accepted because it is shorter: every
section must be there, no section may only talk about the request itself (what small models write when they do
not follow it), one text may not fill several sections, no section may only copy lines of the conversation (when
its lines are known, see ``transcript_lines``), and a new summary much smaller than the one it updates must say
the content it dropped is done.
Files and commands are not a section: the artifact ledger lists them from the stored tool calls.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from desktop.engine.compaction.citations import strip_citations
from desktop.engine.lazy_re import LazyPattern
from desktop.engine.metering.tokens import estimate_text

# (key, heading, what goes in it). The headings stay in English (they are read back by this module); the
# content is written in the conversation's language.
SECTIONS: tuple[tuple[str, str, str], ...] = (
    ("goal", "Goal", "what the user is ultimately trying to achieve"),
    (
        "instructions",
        "User instructions and constraints",
        "every rule, preference and constraint the user stated, quoting exact wording where it matters",
    ),
    ("decisions", "Decisions and why", "what was decided and the reason for it, including rejected options"),
    ("state", "Current state", "three lists, Done:, In progress: and Blocked:, each item one line"),
    (
        "errors",
        "Errors and fixes",
        "each error met, with its exact message, and how it was fixed or that it is still open",
    ),
    ("next", "Next step", "the immediate next action, in line with the user's latest request"),
)
KEYS = tuple(key for key, _title, _hint in SECTIONS)
# Headings a model may translate along with the content.
_ALIASES: dict[str, tuple[str, ...]] = {
    "goal": ("goal", "primary goal", "目标", "目標", "目的", "목표"),
    "instructions": (
        "user instructions and constraints",
        "user instructions",
        "instructions and constraints",
        "用户的指示与约束",
        "用户指示与约束",
        "用户指令与约束",
        "ユーザーの指示と制約",
        "사용자 지시와 제약",
    ),
    "decisions": (
        "decisions and why",
        "key decisions",
        "decisions",
        "决定及原因",
        "决策及原因",
        "決定と理由",
        "결정과 이유",
    ),
    "state": ("current state", "当前状态", "現在の状態", "현재 상태"),
    "errors": ("errors and fixes", "错误与修复", "エラーと修正", "오류와 수정"),
    "next": ("next step", "next steps", "下一步", "次のステップ", "다음 단계"),
}
_BY_HEADING = {alias: key for key, aliases in _ALIASES.items() for alias in aliases}
_HEADING = LazyPattern(r"^\s*(?:#{1,6}\s*|\*\*)(?:\d+[.)]\s*)?(?P<title>[^*#\n]+?)\s*:?\s*(?:\*\*)?\s*:?\s*$")
UNCHANGED = frozenset({"unchanged", "no change", "no changes", "未变", "不变", "変更なし", "변경 없음"})
EMPTY = frozenset({"none", "n/a", "-", "—", "无", "無", "なし", "없음"})
SHRINK = 0.5  # a new summary under this share of the previous one must account for what it dropped

# Words about the request itself: a section made of them (and filler) restates the request.
_META = frozenset(
    [
        "summary",
        "summaries",
        "summarise",
        "summarize",
        "summarised",
        "summarized",
        "summarising",
        "summarizing",
        "task",
        "tasks",
        "user",
        "users",
        "request",
        "requests",
        "requested",
        "requesting",
        "provide",
        "provided",
        "providing",
        "information",
        "detail",
        "details",
        "detailed",
        "incomplete",
        "complete",
        "lacks",
        "lack",
        "relevant",
        "conversation",
        "conversations",
        "transcript",
        "please",
        "write",
        "written",
        "assistant",
        "section",
        "sections",
        "instruction",
        "instructions",
        "missing",
        "help",
        "need",
        "needs",
        "needed",
        "content",
        "following",
        "above",
        "below",
        "asked",
        "asks",
        "ask",
    ]
)
_ANCHORS = frozenset(
    [
        "summary",
        "summaries",
        "summarise",
        "summarize",
        "summarised",
        "summarized",
        "request",
        "requests",
        "requested",
    ]
)
_FILLER = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "as",
        "at",
        "by",
        "from",
        "so",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "your",
        "you",
        "yours",
        "i",
        "me",
        "my",
        "we",
        "our",
        "they",
        "them",
        "their",
        "he",
        "she",
        "his",
        "her",
        "there",
        "here",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "not",
        "no",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "also",
        "any",
        "some",
        "all",
    ]
)
_WORD = LazyPattern(r"[A-Za-z]+|\w+")
FILLER, META = _FILLER, _META  # also what the salvage leaves aside when it asks what a section is about


def _norm(text: str) -> str:
    """An item as compared across summaries: its citations aside (an update may cite more or other messages)."""
    return " ".join(strip_citations(text).strip().lstrip("-*•").split()).casefold()


def parse(text: str) -> dict[str, str] | None:
    """{key: body} for the known headings in ``text`` (a repeated heading: the first one), None when there is
    none at all. Unknown headings stay inside the section before them."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in (text or "").splitlines():
        match = _HEADING.match(line)
        key = _BY_HEADING.get(_norm(match.group("title")).rstrip(":：")) if match else None
        if key is not None and key not in found:
            current = found.setdefault(key, [])
            continue
        if current is not None:
            current.append(line)
    if not found:
        return None
    return {key: "\n".join(lines).strip() for key, lines in found.items()}


def whole_sections(text: str) -> str:
    """``text`` less its last known section: what a reply stopped at its length cap holds whole (the section it
    stopped in is cut short). Unchanged when it has no known heading."""
    lines = (text or "").splitlines()
    last = None
    seen: set[str] = set()
    for index, line in enumerate(lines):
        match = _HEADING.match(line)
        key = _BY_HEADING.get(_norm(match.group("title")).rstrip(":：")) if match else None
        if key is not None and key not in seen:
            seen.add(key)
            last = index
    return text if last is None else "\n".join(lines[:last])


def render(parsed: Mapping[str, str]) -> str:
    return "\n\n".join(
        f"## {title}\n{(parsed.get(key) or 'None').strip()}" for key, title, _h in SECTIONS if key in parsed
    )


def is_unchanged(body: str) -> bool:
    return _norm(body).rstrip(".。") in UNCHANGED


def is_empty(body: str) -> bool:
    return not body.strip() or _norm(body).rstrip(".。") in EMPTY


def merge(new: Mapping[str, str], previous: Mapping[str, str] | None) -> dict[str, str]:
    """The previous summary updated in place: a section the model marked unchanged keeps its old text."""
    out: dict[str, str] = {}
    for key in KEYS:
        body = new.get(key, "")
        if previous is not None and is_unchanged(body):
            body = previous.get(key, "None")
        out[key] = body.strip() or "None"
    return out


def _restates(body: str) -> bool:
    """Talk about the summary or the request and little else: most distinct words (repetition aside) are
    words about the request, and the summary or the request is named."""
    content = {w.casefold() for w in _WORD.findall(strip_citations(body))} - _FILLER
    if len(content) < 3 or not content & _ANCHORS:
        return False
    return len(content & _META) >= 0.7 * len(content)


# Markup of the request a model echoed instead of summarising (the transcript, the previous summary, tool records).
_ECHO = LazyPattern(
    r"^\s*(?:</?(?:transcript|previous-summary|prior-tool-call|prior-tool-result|"
    r"precis-summary-request|pre_transcript)\b|>?\s*(?:user|assistant)(?: \[#\d+\])?:)",
    re.IGNORECASE | re.MULTILINE,
)
_CHAR_RUN = LazyPattern(r"([^\s\-=_*#~.|])\1{29,}")  # one character 30 times: a runaway number or letter
LOOP_WINDOW = 40  # words: this many in a row with fewer than LOOP_DISTINCT different ones is a loop
LOOP_DISTINCT = 6
LOOP_LINES = 3  # the same line (three words or more) this many times


def loops(body: str) -> str | None:
    """Why ``body`` is degenerate output rather than content (None: it is not): a line opening with the request's
    markup or a transcript's "User:" / "Assistant:" (the model echoed the request), one character or a few words repeated on and on, or one line written
    again and again."""
    if _ECHO.search(body):
        return "echoes the request's markup"
    if _CHAR_RUN.search(body):
        return "repeats one character"
    words = [w.casefold() for w in body.split()]
    for start in range(0, max(0, len(words) - LOOP_WINDOW) + 1, LOOP_WINDOW // 4):
        window = words[start : start + LOOP_WINDOW]
        if len(window) == LOOP_WINDOW and len(set(window)) < LOOP_DISTINCT:
            return "loops on a few words"
    counts: dict[str, int] = {}
    for line in body.splitlines():
        item = _norm(line)
        if len(item.split()) >= 3:
            counts[item] = counts.get(item, 0) + 1
            if counts[item] >= LOOP_LINES:
                return "repeats one line"
    return None


def problem_of(body: str) -> str | None:
    """Why one section's text is unusable (None: it is usable)."""
    if is_empty(body) or is_unchanged(body):
        return None
    if _restates(body):
        return "restates the request"
    return loops(body)


# One text written under several headings (a summariser answering by rote: "The user is working on the project."
# in every section): the same text, or the same sentence making up most of the text, in REPEATS filled sections.
# Two may be right (in a young chat the goal and the next step can say the same).
REPEATS = 3
_MOST = 0.8  # a sentence "makes up most" of a section at this share of its words
_SENTENCE_END = LazyPattern(r"[.!?。！？]+(?:\s+|$)|\n")
_LIST_MARK = LazyPattern(r"^(?:[-*•+]+\s*|\d+[.)]\s+)")
_LABEL = LazyPattern(
    r"^(?:done|in progress|blocked|"
    + "|".join(re.escape(title.casefold()) for _k, title, _h in SECTIONS)
    + r")\s*:\s*"
)
_WRAP = "\"'“”‘’`*_ "
_TRAIL = ".!?;:,。！？；：，… "


def line_key(line: str) -> str:
    """A line as compared with other lines: its citations, case, spacing, list marker, a leading "Done:" or
    section title, the quotes or emphasis around it and the punctuation at its end aside."""
    text = _LIST_MARK.sub("", " ".join(strip_citations(line).split()).casefold())
    return _LABEL.sub("", text).strip(_WRAP).rstrip(_TRAIL).strip(_WRAP)


def _gists(body: str) -> set[str]:
    """What a section says, as compared across sections: its whole text, and a sentence of three words or more
    making up most of it."""
    lines = [key for line in body.splitlines() if (key := line_key(line))]
    out = {"\n".join(lines)} if lines else set()
    words = len(strip_citations(body).split())
    for sentence in _SENTENCE_END.compiled.split(body):
        key = line_key(sentence)
        if len(key.split()) >= max(3, _MOST * words):
            out.add(key)
    return out


def repeated(bodies: Mapping[str, str]) -> list[str]:
    """The sections (keys, in order) whose text, or the sentence making up most of it, fills REPEATS sections
    or more of ``bodies`` (empty ones and ones marked unchanged aside)."""
    gists = {
        key: _gists(body)
        for key, body in bodies.items()
        if key in KEYS and not is_empty(body) and not is_unchanged(body)
    }
    counts = Counter(gist for found in gists.values() for gist in found)
    shared = {gist for gist, count in counts.items() if count >= REPEATS}
    return [key for key in KEYS if key in gists and gists[key] & shared]


# A section that only copies lines of the conversation summarises nothing ("Reply 24: calling write." as the
# goal, the line an assistant message was made of): a summariser answering garbage writes it, and since it shares
# its words with the conversation it passes for a section about it. Lines are compared whole (``line_key``), of
# COPY_WORDS words or more, or found inside a line when they are COPY_PART_WORDS long. Some copies are what a section asks for: the user's own words as the goal, an
# instruction or the next step, an error's exact message (a tool's output) in the errors section.
COPY_WORDS = 3
COPY_PART_WORDS = 12  # a line this long found inside a line of the conversation is a copy of it too
QUOTABLE: dict[str, frozenset[str]] = {
    "goal": frozenset({"user"}),
    "instructions": frozenset({"user"}),
    "next": frozenset({"user"}),
    "errors": frozenset({"tool"}),
}
COPIES = "copies the conversation instead of summarising it"
Lines = Mapping[str, frozenset[str]]  # line_key -> who wrote that line: "user", "assistant" or "tool"
_ROLE = LazyPattern(r"^(user|assistant)(?: \[#\d+\])?: ?", re.IGNORECASE)
_RESULT_OPEN = LazyPattern(r"<prior-tool-result\b[^>]*>")
_RESULT_CLOSE = "</prior-tool-result>"
# Blocks of a request that are not the conversation: the previous summary and the ledger sent with it.
_ASIDE = {"<conversation-summary>": "</conversation-summary>", "<artifact-ledger>": "</artifact-ledger>"}


def _unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def transcript_lines(text: str) -> dict[str, frozenset[str]]:
    """The lines of a flattened transcript (``normalize.flatten``: "User: …" / "Assistant: …" paragraphs) of
    COPY_WORDS words or more, by ``line_key``, each with who wrote it: "user", "assistant", or "tool" for a
    tool's output (and the tool-call markers). The roles' labels, the tool-result tags and the previous summary
    and ledger a cached request opens with aside."""
    found: dict[str, set[str]] = {}
    role, in_tool, aside = "assistant", False, None
    for raw in (text or "").splitlines():
        line = raw
        if aside is not None:
            aside = None if aside in line else aside
            continue
        label = _ROLE.match(line)
        if label:
            role, in_tool, line = label.group(1).casefold(), False, line[label.end() :]
        opener = next((tag for tag in _ASIDE if line.lstrip().startswith(tag)), None)
        if opener is not None:
            aside = None if _ASIDE[opener] in line else _ASIDE[opener]
            continue
        opened = _RESULT_OPEN.search(line)
        if opened:
            in_tool, line = True, line[opened.end() :]
        kind = "tool" if in_tool or line.lstrip().startswith("<prior-tool-call") else role
        if _RESULT_CLOSE in line:
            line, in_tool = line.split(_RESULT_CLOSE, 1)[0], False
        key = line_key(_unescape(line) if kind == "tool" else line)
        if len(key.split()) >= COPY_WORDS:
            found.setdefault(key, set()).add(kind)
    return {key: frozenset(kinds) for key, kinds in found.items()}


def without(lines: Lines | None, text: str | None) -> Lines | None:
    """``lines`` less the lines of ``text`` (the previous summary: keeping its items is no copy)."""
    if not lines or not text:
        return lines
    drop = {line_key(line) for line in text.splitlines()}
    return {key: kinds for key, kinds in lines.items() if key not in drop}


def _copied(body: str, lines: Lines) -> list[frozenset[str]] | None:
    """Who wrote each line of the transcript that the content lines of ``body`` copy; None when a content line
    copies none (or there is no content line). Sub-headings such as "Done:" and "None" aside."""
    kinds = []
    for line in body.splitlines():
        if is_empty(line) or _norm(line).endswith((":", "：")) or not (key := line_key(line)):
            continue
        found = lines.get(key) or _inside(key, lines)
        if found is None:
            return None
        kinds.append(found)
    return kinds or None


def _inside(key: str, lines: Lines) -> frozenset[str] | None:
    """Who wrote the transcript lines that hold ``key`` word for word, when it is long enough (COPY_PART_WORDS)
    that a summary would not write it by chance: a summariser that echoes copies a line's start as often as the
    whole line. None: no line holds it."""
    if len(key.split()) < COPY_PART_WORDS:
        return None
    padded = f" {key} "
    found = frozenset().union(*(kinds for line, kinds in lines.items() if padded in f" {line} "))
    return found or None


def copied(key: str, body: str, lines: Lines | None) -> bool:
    """Whether section ``key``'s ``body`` only copies lines of the conversation (``lines``, see
    ``transcript_lines``; None: not judged), one at least a line the section may not quote (QUOTABLE)."""
    if not lines or is_empty(body) or is_unchanged(body):
        return False
    kinds = _copied(body, lines)
    allowed = QUOTABLE.get(key, frozenset())
    return kinds is not None and any(not found & allowed for found in kinds)


def copies(new: Mapping[str, str] | None, lines: Lines | None) -> str | None:
    """Why the summary ``new`` only copies the conversation, or None: each of its filled sections is made of
    lines of the conversation (``lines``, see ``transcript_lines``; None: not judged), and one at least of lines
    that section may not quote."""
    if not new or not lines:
        return None
    filled = {
        key: body
        for key, body in new.items()
        if key in KEYS and not is_empty(body) and not is_unchanged(body)
    }
    if not filled or any(_copied(body, lines) is None for body in filled.values()):
        return None
    copying = [title for key, title, _h in SECTIONS if key in filled and copied(key, filled[key], lines)]
    return f"the summary {COPIES} ({', '.join(copying)})" if copying else None


def _items(body: str) -> list[str]:
    """The lines of a section that carry something (list markers and sub-headings such as "Done:" aside)."""
    out = []
    for line in body.splitlines():
        item = _norm(line)
        if item and not is_empty(item) and not item.endswith(":"):
            out.append(item)
    return out


def _done_part(state: str) -> list[str]:
    """The items listed under "Done:" in a Current state section."""
    out: list[str] = []
    inside = False
    for line in state.splitlines():
        item = _norm(line)
        if item.endswith(":") or re.match(
            r"^(done|in progress|blocked|已完成|完成|进行中|受阻)\s*[:：]", item
        ):
            inside = item.startswith(("done", "已完成", "完成"))
            rest = item.split(":", 1)[-1].strip() if ":" in item else ""
            if inside and rest:
                out.append(rest)
            continue
        if inside and item:
            out.append(item)
    return out


def _accounted(item: str, new_text: str, done: list[str]) -> bool:
    if item in new_text:
        return True
    return any(len(d) >= 8 and (item.startswith(d) or d in item or item in d) for d in done)


def check(
    new: Mapping[str, str] | None, previous: Mapping[str, str] | None, *, lines: Lines | None = None
) -> str | None:
    """Why the sectioned summary ``new`` (already merged) is unusable, or None. ``previous``: the summary it
    updates, when that one had sections. ``lines``: the lines of the summarised transcript (``transcript_lines``),
    to refuse a summary that only copies them; None: not judged."""
    if new is None:
        return "the summary has none of the required sections"
    missing = [title for key, title, _h in SECTIONS if key not in new]
    if missing:
        return "the summary lacks the section(s) " + ", ".join(missing)
    filled = {key: body for key, body in new.items() if not is_empty(body) and not is_unchanged(body)}
    restating = [title for key, title, _h in SECTIONS if key in filled and _restates(filled[key])]
    if restating:
        return "the summary restates the request instead of summarising (" + ", ".join(restating) + ")"
    looping = [
        f"{title}: {why}" for key, title, _h in SECTIONS if key in filled and (why := loops(filled[key]))
    ]
    if looping:
        return "the summary is degenerate (" + "; ".join(looping) + ")"
    same = repeated(filled)
    if same:
        titles = [title for key, title, _h in SECTIONS if key in same]
        return "the summary repeats the same text under several sections (" + ", ".join(titles) + ")"
    copying = copies(filled, without(lines, render(previous) if previous else None))
    if copying:
        return copying
    if previous is None:
        return None
    size, before = estimate_text(render(new)), estimate_text(render(previous))
    if size >= SHRINK * before:
        return None
    new_text = "\n".join(_items("\n".join(new.values())))
    done = _done_part(new.get("state", ""))
    dropped = [
        item for key in KEYS for item in _items(previous.get(key, "")) if not _accounted(item, new_text, done)
    ]
    if not dropped:
        return None
    return (
        f"the summary is much smaller than the one it updates ({size:,} vs {before:,} tokens) and drops "
        f"content not marked done (e.g. “{dropped[0][:80]}”)"
    )


def accept(text: str, previous_summary: str | None, *, lines: Lines | None = None) -> tuple[str, str | None]:
    """(the summary to keep, why it is unusable or None): ``text`` merged into the previous summary section by
    section, then checked. ``lines``: see ``check``."""
    new = parse(text)
    previous = parse(previous_summary) if previous_summary else None
    if new is None:
        return text, check(None, previous)
    merged = merge(new, previous)
    # Checked before the merge fills them with "None": a section left out is missing, not empty.
    missing = [title for key, title, _h in SECTIONS if key not in new]
    if missing:
        return render(merged), "the summary lacks the section(s) " + ", ".join(missing)
    return render(merged), check(merged, previous, lines=lines)
