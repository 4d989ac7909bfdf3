"""What a compaction card says about its row: summarised or trimmed (and why the summary failed), what the
summary cost and what it saves on every later turn, whether the user edited it."""

from __future__ import annotations

import re

from PySide6.QtCore import QCoreApplication

from desktop.ui.bridge import CITATION, CompactionRecord
from desktop.ui.chat_delegate import CITE_SCHEME
from desktop.ui.format import fmt_cost

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
        title = QCoreApplication.translate(
            "CompactionCard", "Context trimmed · {n} oldest messages dropped without a summary").format(n=f"{count:,}")
        reason = str(stats.get("summary_error") or "")
        if reason:
            title += " · " + QCoreApplication.translate("CompactionCard", "the summary failed: {reason}").format(reason=reason)
        return title
    saved = int(stats.get("tokens_saved", 0))
    title = QCoreApplication.translate(
        "CompactionCard", "Context compacted · {n} messages summarized · ~{saved} tokens saved").format(
        n=f"{count:,}", saved=f"{saved:,}")
    cost = stats.get("summary_cost")
    if isinstance(cost, int | float):
        read = int((stats.get("summary_usage") or {}).get("cache_read_input_tokens") or 0)
        title += " · " + (QCoreApplication.translate("CompactionCard", "summary cost {cost} (prompt read from the cache)") if read
                          else QCoreApplication.translate("CompactionCard", "summary cost {cost}")).format(cost=fmt_cost(float(cost)))
    saving = stats.get("saving_per_turn")
    if isinstance(saving, int | float) and saving > 0:
        title += " · " + QCoreApplication.translate("CompactionCard", "saves ~{cost} per turn").format(cost=fmt_cost(float(saving)))
    if stats.get("edited"):
        title += " · " + QCoreApplication.translate("CompactionCard", "edited")
    return title


def card_body(record: CompactionRecord) -> str:
    """The card's text: the summary, and on a trimmed row what the summary model wrote that was refused."""
    rejected = str(record.stats.get("rejected_summary") or "").strip()
    if not record.stats.get("snipped") or not rejected:
        return cite_links(record.summary)
    if len(rejected) > EXCERPT:  # enough to see what went wrong; a looping reply would fill the chat
        rejected = rejected[:EXCERPT].rstrip() + " …"
    quoted = "\n".join("> " + line for line in rejected.splitlines())
    heading = QCoreApplication.translate("CompactionCard", "What the summary model wrote (refused):")
    return f"{cite_links(record.summary)}\n\n{heading}\n\n{quoted}"

