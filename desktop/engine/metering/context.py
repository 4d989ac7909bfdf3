"""What the gauge, the hover card, ``/context`` and ``precis context`` all show: one snapshot, one number."""

from __future__ import annotations

from typing import Any, Literal

from msgspec import Struct, field, structs

from desktop.engine import messages as M
from desktop.engine.messages import QT_TRANSLATE_NOOP
from desktop.engine.metering.bill import REASONS, Bill, Cold, TurnBill
from desktop.engine.types import Usage

State = Literal["normal", "warning", "critical", "unknown"]

WARNING_RATIO = 0.80
CRITICAL_RATIO = 0.95

# Order matters: the breakdown bar paints these left to right.
CATEGORIES: tuple[str, ...] = (
    "system",
    "instructions",
    "project",
    "tools",
    "summary",
    "pinned",
    "messages",
    "tool_results",
    "media",
    "free",
    "reserved_output",
)


def reserved_output(max_output: int, window: int | None) -> int:
    """Room kept free for the reply: the output setting, but never more than a quarter of the window."""
    return min(max_output, window // 4) if window else max_output


def state_for(used: int, next_turn: int, window: int | None) -> State:
    """normal / warning at 80 % / critical at 95 %, from the larger of the current and next-turn ratios."""
    if not window:
        return "unknown"
    ratio = max(used, next_turn) / window
    if ratio >= CRITICAL_RATIO:
        return "critical"
    if ratio >= WARNING_RATIO:
        return "warning"
    return "normal"


class ContextSnapshot(Struct):
    """The gauge's figure: what the next request carries against the model's window."""

    model: str
    window: int | None  # None: capacity unknown (never a made-up 200K)
    max_output: int
    used: int  # tokens the next request would carry right now
    next_turn: int  # used + expected output of this turn + the draft being typed
    source: Literal["api", "estimate", "none"]  # where `used` comes from
    last_usage: Usage | None = None
    cost_last_turn: float | None = None
    cost_session: float | None = (
        None  # every request made for the chat: its turns, summaries and their retries
    )
    cost_compaction: float | None = None  # the part of cost_session its summaries took
    summary_active: bool = False
    compactions: int = 0
    breaker_open: bool = False
    breakdown: dict[str, int] = field(default_factory=dict)
    can_compact: bool = False
    compact_reason: str = ""
    # Messages whose blocks requests carry shortened (old tool results cleared, old long texts cut, huge
    # content spilled to a file): the window marks them quietly.
    trimmed: tuple[int, ...] = ()
    # Where the window size comes from: "api" (the provider's models API), "catalog", "learned" (from an overflow
    # error), "override" (settings), "env" (PRECIS_CONTEXT_WINDOW) or "unknown".
    window_source: str = "unknown"
    # Where automatic compaction starts (the user's percent and cap): the gauge's tick and the hover card.
    compact_at_tokens: int | None = None
    # ... and the rule behind it, the figure Settings shows: a percent of the input room (the window less the
    # output reserve), or the user's absolute cap when that is lower.
    compact_percent: float | None = None
    compact_capped: bool = False
    # The prompt cache: the clock time it lapses (None: no request in this run) and its TTL in seconds; what the
    # next turn costs while it is warm and once it is cold (None: price unknown).
    cache_expires_at: float | None = None
    cache_ttl: float = 0.0
    next_cost_warm: float | None = None
    next_cost_cold: float | None = None
    # The bill: each request since the summary by kind and why a cold one re-wrote the cache (oldest first), and
    # the session's total by kind (None: a price is unknown).
    turns: tuple[TurnBill, ...] = ()
    session_bill: Bill | None = None

    @property
    def last_turn(self) -> TurnBill | None:
        return self.turns[-1] if self.turns else None

    @property
    def state(self) -> State:
        if self.source == "none" and self.used == 0:
            return "unknown" if not self.window else "normal"
        return state_for(self.used, self.next_turn, self.window)

    @property
    def percent(self) -> float | None:
        if not self.window:
            return None
        return 100.0 * self.used / self.window

    @property
    def next_turn_percent(self) -> float | None:
        if not self.window:
            return None
        return 100.0 * self.next_turn / self.window

    def to_json(self) -> dict[str, Any]:
        data = structs.asdict(self)  # the nested records are put as their own JSON below
        data["last_usage"] = self.last_usage.to_json() if self.last_usage else None
        data["state"] = self.state
        data["percent"] = self.percent
        data["next_turn_percent"] = self.next_turn_percent
        data["turns"] = [turn.to_json() for turn in self.turns]
        data["session_bill"] = self.session_bill.to_json() if self.session_bill else None
        return data


LABELS = {  # marked for lupdate (context "Engine"); the window words them, as the breakdown bar does
    "system": QT_TRANSLATE_NOOP("Engine", "System prompt"),
    "instructions": QT_TRANSLATE_NOOP("Engine", "Instructions"),
    "project": QT_TRANSLATE_NOOP("Engine", "Project"),
    "tools": QT_TRANSLATE_NOOP("Engine", "Tools"),
    "summary": QT_TRANSLATE_NOOP("Engine", "Summary"),
    "pinned": QT_TRANSLATE_NOOP("Engine", "Pinned"),
    "messages": QT_TRANSLATE_NOOP("Engine", "Messages"),
    "tool_results": QT_TRANSLATE_NOOP("Engine", "Tool results"),
    "media": QT_TRANSLATE_NOOP("Engine", "Media"),
    "free": QT_TRANSLATE_NOOP("Engine", "Free"),
    "reserved_output": QT_TRANSLATE_NOOP("Engine", "Reserved for output"),
}
_SOURCES = {
    "api": QT_TRANSLATE_NOOP("Engine", "from the last API response"),
    "estimate": QT_TRANSLATE_NOOP("Engine", "estimated (no usable API response yet)"),
    "none": QT_TRANSLATE_NOOP("Engine", "no data yet"),
}
_STATES = {
    "normal": QT_TRANSLATE_NOOP("Engine", "normal"),
    "warning": QT_TRANSLATE_NOOP("Engine", "warning"),
    "critical": QT_TRANSLATE_NOOP("Engine", "critical"),
    "unknown": QT_TRANSLATE_NOOP("Engine", "unknown"),
}


WINDOW_SOURCES = {
    "api": QT_TRANSLATE_NOOP("Engine", "reported by the provider's API"),
    "catalog": QT_TRANSLATE_NOOP("Engine", "the built-in model catalog"),
    "learned": QT_TRANSLATE_NOOP("Engine", "learned from a context-overflow error"),
    "override": QT_TRANSLATE_NOOP("Engine", "your override in Settings"),
    "env": "PRECIS_CONTEXT_WINDOW",
    "unknown": QT_TRANSLATE_NOOP("Engine", "unknown"),
}


def _tok(n: int) -> str:
    return f"{n:,}"


def context_report(snap: ContextSnapshot) -> str:
    """Plain-text report shared by /context in the window and `precis context`: English, and each line a
    typed message the window and the CLI word in the user's language."""
    say = M.say
    pct = f"{snap.percent:.1f}%" if snap.percent is not None else "—"
    nxt = f"{_tok(snap.next_turn)}" + (f" ({snap.next_turn_percent:.1f}%)" if snap.next_turn_percent else "")
    lines: list[str] = [
        say(QT_TRANSLATE_NOOP("Engine", "Model        {model}"), model=snap.model),
        say(QT_TRANSLATE_NOOP("Engine", "Window       {window}"), window=_tok(snap.window))
        if snap.window
        else say(QT_TRANSLATE_NOOP("Engine", "Window       capacity unknown")),
        say(QT_TRANSLATE_NOOP("Engine", "Used         {used} ({pct})"), used=_tok(snap.used), pct=pct),
        say(QT_TRANSLATE_NOOP("Engine", "Next turn    ~{next}"), next=nxt),
        say(
            QT_TRANSLATE_NOOP("Engine", "State        {state}"),
            state=say(_STATES.get(snap.state, snap.state)),
        ),
        say(QT_TRANSLATE_NOOP("Engine", "Source       {source}"), source=say(_SOURCES[snap.source])),
        say(
            QT_TRANSLATE_NOOP("Engine", "Window from  {source}"),
            source=say(WINDOW_SOURCES.get(snap.window_source, snap.window_source)),
        ),
    ]
    if snap.compact_at_tokens and snap.compact_capped:
        lines.append(
            say(QT_TRANSLATE_NOOP("Engine", "Compacts at  {at} (your cap)"), at=_tok(snap.compact_at_tokens))
        )
    elif snap.compact_at_tokens and snap.compact_percent is not None:
        lines.append(
            say(
                QT_TRANSLATE_NOOP("Engine", "Compacts at  {at} ({pct:.0f}% of the input room)"),
                at=_tok(snap.compact_at_tokens),
                pct=snap.compact_percent,
            )
        )
    if snap.last_usage:
        u = snap.last_usage
        lines.append(
            say(
                QT_TRANSLATE_NOOP(
                    "Engine",
                    "Last turn    cache read {read} · cache write {write} · input {input} · output {output}",
                ),
                read=_tok(u.cache_read_input_tokens),
                write=_tok(u.cache_creation_input_tokens),
                input=_tok(u.input_tokens),
                output=_tok(u.output_tokens),
            )
        )
    if snap.cost_session is not None:
        last = f"${snap.cost_last_turn:.4f}" if snap.cost_last_turn is not None else "—"
        lines.append(
            say(
                QT_TRANSLATE_NOOP("Engine", "Cost         last turn {last} · session {session}"),
                last=last,
                session=f"${snap.cost_session:.4f}",
            )
        )
        if snap.cost_compaction:
            lines.append(
                say(
                    QT_TRANSLATE_NOOP("Engine", "             of which compaction {cost}"),
                    cost=f"${snap.cost_compaction:.4f}",
                )
            )
    lines.extend(_bill_lines(snap))
    if snap.summary_active:
        lines.append(
            say(QT_TRANSLATE_NOOP("Engine", "Summary      active (1 compaction)"))
            if snap.compactions == 1
            else say(QT_TRANSLATE_NOOP("Engine", "Summary      active ({n} compactions)"), n=snap.compactions)
        )
    if snap.breaker_open:
        lines.append(
            say(
                QT_TRANSLATE_NOOP(
                    "Engine",
                    "Auto-compaction paused after 3 consecutive summary failures (Compact now resets it)",
                )
            )
        )
    lines.append("")
    lines.append(say(QT_TRANSLATE_NOOP("Engine", "Breakdown")))
    total = sum(snap.breakdown.values()) or 1
    for key in CATEGORIES:
        value = snap.breakdown.get(key, 0)
        if value:
            # The name last: its width differs by language (CJK characters are two columns wide).
            lines.append(
                say(
                    "  {tokens:>10}  {share:5.1f}%  {label}",
                    label=say(LABELS[key]),
                    tokens=_tok(value),
                    share=100 * value / total,
                )
            )
    return M.Lines(tuple(lines))


def cold_words(turn: TurnBill) -> str:
    """Why a cold request re-wrote the cache, in words ("" for a warm one)."""
    if turn.cold is None:
        return ""
    if turn.cold == Cold.EXPIRED:
        return M.say(REASONS[turn.cold], minutes=turn.idle_minutes or 0)
    return M.say(REASONS[turn.cold])


def _money(bill: Bill) -> dict[str, str]:
    return {
        "read": f"${bill.cache_read:.4f}",
        "write": f"${bill.cache_write:.4f}",
        "input": f"${bill.input:.4f}",
        "output": f"${bill.output:.4f}",
    }


def _bill_lines(snap: ContextSnapshot) -> list[str]:
    say = M.say
    lines: list[str] = []
    turn = snap.last_turn
    if turn is not None and turn.bill is not None:
        lines.append(
            say(
                QT_TRANSLATE_NOOP(
                    "Engine",
                    "Last turn $  cache read {read} · cache write {write} · input {input} · output {output}",
                ),
                **_money(turn.bill),
            )
        )
    if turn is not None and turn.compaction is not None and turn.compaction.total:
        lines.append(
            say(
                QT_TRANSLATE_NOOP("Engine", "             and its compaction {cost}"),
                cost=f"${turn.compaction.total:.4f}",
            )
        )
    if turn is not None and turn.cold is not None:
        lines.append(say(QT_TRANSLATE_NOOP("Engine", "Cold turn    {reason}"), reason=cold_words(turn)))
    if snap.session_bill is not None:
        lines.append(
            say(
                QT_TRANSLATE_NOOP(
                    "Engine",
                    "Session $    cache read {read} · cache write {write} · input {input} · output {output}",
                ),
                **_money(snap.session_bill),
            )
        )
    return lines
