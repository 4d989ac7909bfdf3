"""What a compaction card says about its row: summarised or trimmed (and why the summary failed), what the
summary cost and what it saves on every later turn, whether the user edited it; and the card a summary that
failed outside any row leaves (why, what the model wrote, Retry)."""

from __future__ import annotations

import re

from PySide6.QtCore import QCoreApplication

from desktop.ui.api import CITATION, CompactionRecord
from desktop.ui.look.format import fmt_cost
from desktop.ui.look.plural import numerus
from desktop.ui.look.wording import word
from desktop.ui.transcript.chat_delegate import CITE_SCHEME

EXCERPT = 600  # characters of a refused summary the card quotes
_ID = re.compile(r"#(\d+)")


def cite_links(text: str) -> str:
    """The summary's citations ([#123], [#12, #14], [#12-#15]) as links that open the cited message."""

    def link(found: re.Match[str]) -> str:
        inner = _ID.sub(lambda m: f"[#{m.group(1)}]({CITE_SCHEME}{m.group(1)})", found.group(0)[1:-1])
        return "\\[" + inner + "\\]"

    return CITATION.sub(link, text)


def card_title(record: CompactionRecord) -> str:
    stats = record.stats
    count = int(stats.get("messages", 0))
    if stats.get("snipped"):
        title = numerus(
            QCoreApplication.translate(
                "CompactionCard",
                "Context trimmed · %n oldest message(s) dropped without a summary",
                None,
                count,
            ),
            count,
        )
        reason = str(stats.get("summary_error") or "")
        if reason:
            title += " · " + QCoreApplication.translate(
                "CompactionCard", "the summary failed: {reason}"
            ).format(reason=reason)
        return title
    saved = int(stats.get("tokens_saved", 0))
    title = numerus(
        QCoreApplication.translate(
            "CompactionCard",
            "Context compacted · %n message(s) summarised · ~{saved} tokens saved",
            None,
            count,
        ),
        count,
    ).format(saved=f"{saved:,}")
    cost = stats.get("summary_cost")
    if isinstance(cost, int | float):
        read = int((stats.get("summary_usage") or {}).get("cache_read_input_tokens") or 0)
        title += " · " + (
            QCoreApplication.translate("CompactionCard", "summary cost {cost} (prompt read from the cache)")
            if read
            else QCoreApplication.translate("CompactionCard", "summary cost {cost}")
        ).format(cost=fmt_cost(float(cost)))
    saving = stats.get("saving_per_turn")
    if isinstance(saving, int | float) and saving > 0:
        title += " · " + QCoreApplication.translate("CompactionCard", "saves ~{cost} per turn").format(
            cost=fmt_cost(float(saving))
        )
    why = stats.get("schedule")
    if isinstance(why, dict) and why.get("why") == "pays":
        title += " · " + QCoreApplication.translate(
            "CompactionCard", "made now: the reads it saves over ~{turns} turns outweigh its cost"
        ).format(turns=int(why.get("turns") or 0))
    elif isinstance(why, dict) and why.get("why") == "due":
        title += " · " + QCoreApplication.translate(
            "CompactionCard", "made now: the context neared the end of the room"
        )
    if stats.get("edited"):
        title += " · " + QCoreApplication.translate("CompactionCard", "edited")
    return title


def _quoted(rejected: str) -> str:
    if len(rejected) > EXCERPT:  # enough to see what went wrong; a looping reply would fill the chat
        rejected = rejected[:EXCERPT].rstrip() + " …"
    return "\n".join("> " + line for line in rejected.splitlines())


def card_body(record: CompactionRecord) -> str:
    """The card's text: the summary, and on a trimmed row what the summary model wrote that was refused."""
    rejected = str(record.stats.get("rejected_summary") or "").strip()
    if not record.stats.get("snipped") or not rejected:
        return readable(cite_links(record.summary))
    heading = QCoreApplication.translate("CompactionCard", "What the summary model wrote (refused):")
    return f"{readable(cite_links(record.summary))}\n\n{heading}\n\n{_quoted(rejected)}"


# A line that starts a labelled part of a section ("Done:", "In progress: the AST"), a list item, a fence.
_LABEL = re.compile(r"^\s*[^\s*+>#|-][^:：]{0,40}[:：](\s|$)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_HEADING = re.compile(r"^#{1,3}\s+")


def readable(summary: str) -> str:
    """The summary as Markdown that keeps its lines: a labelled line ("In progress:") after a list item or
    another line starts a paragraph of its own instead of joining the line before it (Markdown runs a
    paragraph's lines together and takes a line after a list item as part of that item). Its section headings
    become the smallest level, bold at the text's size: a card in the chat, not a page of its own."""
    out: list[str] = []
    fenced = False
    for line in summary.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced:
            line = _HEADING.sub("#### ", line)
        previous = out[-1] if out else ""
        if (
            not fenced
            and previous.strip()
            and line.strip()
            and not _ITEM.match(line)
            and (_LABEL.match(line) or _ITEM.match(previous))
        ):
            out.append("")
        out.append(line)
    return "\n".join(out)


def failure_title() -> str:
    return QCoreApplication.translate("CompactionCard", "Summary failed · nothing was compacted")


def failure_body(reason: str, rejected: str) -> str:
    """Why the summary failed, and what the model wrote instead (an excerpt), for the failure card."""
    why = QCoreApplication.translate("CompactionCard", "Why: {reason}").format(reason=word(reason))
    rejected = rejected.strip()
    if not rejected:
        return why + "\n\n" + QCoreApplication.translate("CompactionCard", "The model wrote nothing usable.")
    heading = QCoreApplication.translate("CompactionCard", "What the summary model wrote:")
    return f"{why}\n\n{heading}\n\n{_quoted(rejected)}"
