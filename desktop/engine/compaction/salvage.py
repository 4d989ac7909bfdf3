"""A refused sectioned summary salvaged section by section, for models too small to write all of it at once.

The sections that passed the check are kept; each missing or unusable one is asked for on its own with a short
prompt (a small model that loops over a whole summary often writes one short part well), and what still fails
is carried from the previous summary (as if the model had marked it unchanged). Only when a section has no
usable source is the summary refused, and the chat trims as before. The stats say where each section came from.
A reply stopped at its length cap is not asked about section by section: its whole sections are kept and the
rest carried from the previous summary at once, fitted to the cap (see ``start`` and ``fit``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import Struct, field

from desktop.engine.compaction import sections
from desktop.engine.compaction._shared import Message
from desktop.engine.compaction.normalize import flatten
from desktop.engine.compaction.summary_prompt import MARKER, extract_summary, validate_summary
from desktop.engine.metering.tokens import estimate_text
from desktop.engine.types import MessagesRequest

MAX_ASKS = len(sections.SECTIONS)  # section requests per compaction (all its parts together), at most
SECTION_MAX_TOKENS = 512  # one section's reply at most: short, so a looping model stops early
GIVE_UP_AFTER = 2  # unusable section answers in a row: the model cannot do it, stop asking
_TITLES = {key: title for key, title, _h in sections.SECTIONS}
_HINTS = {key: hint for key, _t, hint in sections.SECTIONS}
# Sections the conversation always has something for: an empty answer there is no answer.
_NEVER_EMPTY = frozenset({"goal", "next"})
# A section must be about the conversation: at least this share of its words (by their first five letters, words
# about the request and the sections themselves aside) must occur in what it summarises. A small model asked for
# one section often writes fluent text about nothing in it ("a note about a recent incident involving a tech
# startup"); the corpus's real summaries share 82-98 % of their words with their transcripts, 67 % in the
# loosest paragraph, and such answers 0-25 %.
GROUNDED = 0.5
_LETTERS = re.compile(r"[^\W\d_]{4,}")
_IDEOGRAPHIC = re.compile(r"[\u2e80-\uffff]")  # scripts written without spaces: not judged by words
_STEM = 5
REPEATS = "repeats the text of other sections"  # see sections.repeated: counts as an unusable answer


def _stems(text: str) -> frozenset[str]:
    return frozenset(w.casefold()[:_STEM] for w in _LETTERS.findall(text) if not _IDEOGRAPHIC.search(w))


_GENERIC = frozenset(w[:_STEM] for w in sections.FILLER | sections.META) | _stems(
    " ".join(f"{title} {hint}" for _k, title, hint in sections.SECTIONS)
    + " done progress blocked none unchanged"
)


def source_words(text: str) -> frozenset[str]:
    """What a section may be about: the words of the messages it summarises (and of the previous summary)."""
    return _stems(text)


def source_lines(transcript: str) -> dict[str, frozenset[str]]:
    """What a section may not only copy: the lines of the flattened transcript it summarises (see
    ``sections.transcript_lines``; the previous summary is not part of it)."""
    return sections.transcript_lines(transcript)


def off_topic(body: str, source: frozenset[str] | None) -> bool:
    """Whether fewer than GROUNDED of the section's own words occur in ``source`` (None: not judged)."""
    if source is None:
        return False
    words = _stems(body) - _GENERIC
    return bool(words) and len(words & source) < GROUNDED * len(words)


class Source(enum.StrEnum):
    """Where a section of an accepted summary came from."""

    SUMMARY = "summary"  # the summary as the model first wrote it
    ASKED = "asked"  # a request for that section alone
    PREVIOUS = "previous"  # the previous summary's section, carried unchanged


class Salvage(Struct):
    """A refused summary's usable sections so far and where each came from."""

    found: dict[str, str] = field(default_factory=dict)
    sources: dict[str, Source] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)  # key -> why its latest answer was unusable
    carryable: frozenset[str] = frozenset()  # sections the previous summary can give
    asked: list[str] = field(default_factory=list)  # sections asked for, in order
    failed_in_a_row: int = 0
    limit: int = MAX_ASKS  # section requests this salvage may make (what the compaction has left)
    source: frozenset[str] | None = None  # the words of what is summarised (see off_topic); None: not judged
    # The lines of the summarised transcript (see source_lines), less the previous summary's; None: not judged.
    lines: dict[str, frozenset[str]] | None = None

    @property
    def asks(self) -> int:
        return len(self.asked)

    @property
    def missing(self) -> list[str]:
        return [key for key in sections.KEYS if key not in self.found]

    def next_key(self) -> str:
        """The first missing section not asked for yet."""
        return next(key for key in self.missing if key not in self.asked)

    def wants_more(self) -> bool:
        """Another section request is worth making: a section is missing and not asked for yet, the budget
        allows it, no section asked for in vain is one the previous summary cannot give (the summary could not
        be completed then), and the last GIVE_UP_AFTER answers were not all unusable."""
        todo = [key for key in self.missing if key not in self.asked]
        if not todo or self.asks >= self.limit:
            return False
        if any(key not in self.carryable for key in self.missing if key in self.asked):
            return False
        if len([key for key in todo if key not in self.carryable]) > self.limit - self.asks:
            return False
        return self.failed_in_a_row < GIVE_UP_AFTER

    def refused(self, key: str, problem: str) -> None:
        """The request for section ``key`` brought nothing usable."""
        if key not in self.asked:
            self.asked.append(key)
        self.problems[key] = problem
        self.failed_in_a_row += 1

    def stats(self) -> dict[str, Any]:
        return {
            "section_sources": {key: str(self.sources[key]) for key in sections.KEYS if key in self.sources},
            "section_requests": self.asks,
        }


def start(
    text: str,
    previous_summary: str | None,
    limit: int = MAX_ASKS,
    *,
    source: frozenset[str] | None = None,
    lines: Mapping[str, frozenset[str]] | None = None,
    cut: bool = False,
    room: int | None = None,
) -> Salvage:
    """The sections of a refused reply that pass on their own (a section marked unchanged takes the previous
    summary's text, as ``sections.merge`` does; one text written in several sections passes in none of them).
    ``source``: see ``source_words``. ``lines``: see ``source_lines``. ``cut``: the reply stopped at
    its length cap: the section it stopped in is not whole, and every section the previous summary has is
    carried from it at once (as if the model had marked the rest unchanged): asking for each one alone would
    re-read the whole prompt once a section. ``room``: the reply cap the cut reply met; the carried sections
    give up their oldest items until the summary fits it (see ``fit``)."""
    summary = extract_summary(text)
    parsed = sections.parse(sections.whole_sections(summary) if cut else summary) or {}
    previous = sections.parse(previous_summary) if previous_summary else None
    kept = sections.without(lines, previous_summary)
    out = Salvage(
        carryable=frozenset(previous or ()),
        limit=limit,
        source=source,
        lines=dict(kept) if kept is not None else None,
    )
    for key in sections.KEYS:
        body = parsed.get(key)
        if body is None:
            continue
        if sections.is_unchanged(body):
            if previous is None or key not in previous:
                continue
            out.found[key], out.sources[key] = previous[key], Source.PREVIOUS
            continue
        problem = _answer_problem(key, body, source, out.lines)
        if problem is None:
            out.found[key], out.sources[key] = body.strip() or "None", Source.SUMMARY
        else:
            out.problems[key] = problem
    for key in sections.repeated(
        {key: out.found[key] for key in out.found if out.sources[key] is Source.SUMMARY}
    ):
        del out.found[key], out.sources[key]
        out.problems[key] = REPEATS
    if cut:
        carry(out, previous_summary)
        if room is not None:
            fit(out, room, estimate_text(previous_summary or ""))
    return out


def fit(salvage: Salvage, room: int, previous_tokens: int) -> None:
    """Carried sections give up their oldest items (the first lines; sub-headings such as "Done:" stay) until
    the summary fits ``room`` tokens, or half of the previous summary (``previous_tokens``; a summary smaller
    than that must account for what it dropped, see ``sections.check``). A model cut at its cap wrote what it
    had room for; carrying every older section whole on top of that grew the summary past the cap at every
    compaction, and every later request reads it."""
    target = max(room, int(previous_tokens * sections.SHRINK) + 1)
    carried = [key for key in sections.KEYS if salvage.sources.get(key) is Source.PREVIOUS]
    lines = {key: salvage.found[key].splitlines() for key in carried}
    size = estimate_text(sections.render(salvage.found))
    while size > target:
        items = {
            key: [i for i, line in enumerate(lines[key]) if line.strip() and not line.strip().endswith(":")]
            for key in carried
        }
        longest = max(
            (key for key in carried if len(items[key]) > 1),
            default=None,
            key=lambda key: sum(len(lines[key][i]) for i in items[key]),
        )
        if longest is None:
            break
        dropped = lines[longest].pop(items[longest][0])
        size -= estimate_text(dropped + "\n")
        salvage.found[longest] = "\n".join(lines[longest])


def _answer_problem(
    key: str, body: str, source: frozenset[str] | None, lines: Mapping[str, frozenset[str]] | None = None
) -> str | None:
    if sections.is_empty(body):
        return "empty" if key in _NEVER_EMPTY else None
    if len(body) < 600 and validate_summary(body, 1 << 30) is not None:  # a refusal or a few characters
        return "no answer"
    problem = sections.problem_of(body)
    if problem is None and not sections.is_unchanged(body) and off_topic(body, source):
        return "not about the conversation"
    if problem is None and sections.copied(key, body, lines):
        return sections.COPIES
    return problem


def take_answer(salvage: Salvage, key: str, text: str) -> bool:
    """Record the reply to the request for section ``key`` alone; True when it is usable."""
    answer = extract_summary(text)
    parsed = sections.parse(answer)
    body = parsed[key] if parsed and key in parsed else _without_heading(answer, key)
    if parsed and key not in parsed:
        problem: str | None = "answers other sections"
    else:
        problem = (
            _answer_problem(key, body, salvage.source, salvage.lines)
            if not sections.is_unchanged(body)
            else "unchanged"
        )
        if problem is None and key in sections.repeated({**salvage.found, key: body}):
            problem = REPEATS
    if problem is not None:
        salvage.refused(key, problem)
        return False
    salvage.asked.append(key)
    salvage.found[key], salvage.sources[key] = body.strip() or "None", Source.ASKED
    salvage.problems.pop(key, None)
    salvage.failed_in_a_row = 0
    return True


def _without_heading(answer: str, key: str) -> str:
    """The answer less a first line that only repeats the section's title."""
    lines = answer.strip().splitlines()
    if lines and lines[0].strip().strip("#*: ").casefold() == _TITLES[key].casefold():
        lines = lines[1:]
    return "\n".join(lines).strip()


def carry(salvage: Salvage, previous_summary: str | None) -> None:
    """Every section still missing, taken from the previous summary when it has that section."""
    previous = sections.parse(previous_summary) if previous_summary else None
    if previous is None:
        return
    for key in salvage.missing:
        if key in previous:
            salvage.found[key], salvage.sources[key] = previous[key], Source.PREVIOUS


def assemble(salvage: Salvage, previous_summary: str | None) -> tuple[str, str | None]:
    """(the summary, why it is unusable or None): the salvaged sections in order, checked like any summary; a
    summary with nothing new in it (every section carried) is refused too, since it summarises nothing."""
    missing = salvage.missing
    if missing:
        reasons = "; ".join(f"{_TITLES[key]}: {salvage.problems.get(key, 'missing')}" for key in missing)
        return "", f"the summary lacks usable section(s) even asked one by one ({reasons})"
    if all(source is Source.PREVIOUS for source in salvage.sources.values()):
        return "", "no section of the summary holds anything new"
    previous = sections.parse(previous_summary) if previous_summary else None
    summary = sections.render(salvage.found)
    return summary, sections.check(dict(salvage.found), previous, lines=salvage.lines)


def instruction(key: str) -> str:
    """The short request for one section."""
    return (
        f"{MARKER}\nWrite one part of a summary of the conversation: the section “{_TITLES[key]}” — "
        f"{_HINTS[key]}. Be specific and brief. Answer with that section's text only, in the language the user "
        'writes in; write "None" if there is nothing.'
    )


def transcript_request(
    messages: Sequence[Message],
    key: str,
    *,
    previous_summary: str | None,
    max_tokens: int = SECTION_MAX_TOKENS,
    model: str = "",
) -> MessagesRequest:
    """The transcript and a short instruction for section ``key`` (with that section of the previous summary,
    which the new text updates). The transcript comes first, so that the section requests of one part share it
    as their prefix: a local server reuses what it has evaluated up to the first token that differs, and a
    provider with a prompt cache reads it from there (the transcript is a block of its own, marked for caching;
    the previous section and the instruction, different in each request, follow in a second block)."""
    transcript = {
        "type": "text",
        "text": "<transcript>\n" + flatten(messages, ids=False) + "\n</transcript>",
        "cache_control": {"type": "ephemeral"},
    }
    parts = []
    previous = sections.parse(previous_summary) if previous_summary else None
    if previous and not sections.is_empty(previous.get(key, "")):
        parts.append("Earlier, this section read:\n" + previous[key].strip())
    parts.append(instruction(key).split("\n", 1)[1])
    return {
        "model": model,
        "system": MARKER + "\nYou write short, factual notes about a conversation. Do not call tools.",
        "messages": [{"role": "user", "content": [transcript, {"type": "text", "text": "\n\n".join(parts)}]}],
        "max_tokens": max_tokens,
    }


def cached_request(
    request: MessagesRequest, key: str, *, tail_start: str | None, max_tokens: int = SECTION_MAX_TOKENS
) -> MessagesRequest:
    """The chat's own request (its prefix a cache read) with the short instruction for section ``key``."""
    text = instruction(key) + " Do not call tools and do not answer the last message."
    if tail_start:
        text += (
            " Cover the conversation up to, not including, the message that begins: «"
            + " ".join(tail_start.split())[:160]
            + "»."
        )
    block = {"type": "text", "text": text}
    messages = list(request["messages"])
    last = messages[-1] if messages else None
    if last is not None and last.get("role") == "user":
        content = last.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        messages[-1] = {**last, "content": [*blocks, block]}
    else:
        messages.append({"role": "user", "content": [block]})
    return {**request, "messages": messages, "max_tokens": max_tokens}
