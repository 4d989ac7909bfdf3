"""Compaction hooks, the engine's side: a command the user set runs before a compaction and one after it.

The engine never starts a process: it builds the events and asks a ``CompactionHooks`` (the tools layer's
``desktop/tools/compaction_hooks.py`` runs the user's commands, sandboxed and timed; ``NoHooks`` when none is
wired). The rules every implementation shares are kept here, in ``pre_compact`` and ``post_compact``, the two
calls the compactor makes: a veto never stops a reactive compaction (the request is already too long for the
model: the chat must not break), the focus a hook adds is capped, and an implementation that raises is a hook
that failed — the compaction goes on as if there was no hook, with one sentence saying why.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from msgspec import Struct

from desktop.engine.config.settings import HOOK_DEFAULTS
from desktop.engine.types import StoredMessage

HookTrigger = Literal["manual", "auto", "background", "reactive"]
VETOABLE = frozenset({"manual", "auto", "background"})  # a reactive compaction is never stopped
FOCUS_CHARS = 2_000  # focus text a pre hook may add
REASON_CHARS = 1_000  # a veto's reason as shown
CUT_TEXT_CHARS = 2_000  # each cut message's text in the post hook's input
CUT_MESSAGES = 200  # cut messages in the post hook's input (the newest ones)
PRE, POST = "The pre-compaction hook", "The post-compaction hook"
log = logging.getLogger(__name__)


class HookSettings(Struct, frozen=True):
    """``settings.compaction_hooks`` as read (Settings.load checked it; anything odd here reads as its default)."""

    pre: str = ""
    post: str = ""
    pre_timeout: float = HOOK_DEFAULTS["pre_timeout"]
    post_timeout: float = HOOK_DEFAULTS["post_timeout"]
    allow_unsandboxed: bool = False

    @classmethod
    def of(cls, raw: Mapping[str, Any] | None) -> HookSettings:
        raw = raw if isinstance(raw, Mapping) else {}

        def text(key: str) -> str:
            value = raw.get(key)
            return value.strip() if isinstance(value, str) else ""

        def seconds(key: str) -> float:
            value = raw.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                return float(value)
            return float(HOOK_DEFAULTS[key])

        return cls(
            text("pre"),
            text("post"),
            seconds("pre_timeout"),
            seconds("post_timeout"),
            raw.get("allow_unsandboxed") is True,
        )


class PreCompact(Struct, frozen=True):
    """What the pre hook is told (``payload``: its JSON on stdin). ``workspace``: the chat's workspace folder
    (where the hook runs; not sent)."""

    session_id: int
    trigger: HookTrigger
    model: str
    tokens_before: int
    messages: int  # messages to be summarised
    focus: str | None = None  # the user's focus text
    workspace: str | None = None

    def payload(self) -> dict[str, Any]:
        return {
            "event": "pre_compact",
            "session_id": self.session_id,
            "trigger": self.trigger,
            "model": self.model,
            "tokens_before": self.tokens_before,
            "messages": self.messages,
            "focus": self.focus or None,
        }


class PreVerdict(Struct, frozen=True):
    """The pre hook's answer. ``blocked``: do not compact (``reason``: the hook's words, never empty then);
    ``focus``: text to add to the user's focus (None: none); ``note``: the one sentence to show, if any (a veto,
    or why the hook was skipped, failed or was overruled: the compaction then goes on as if there was no hook)."""

    blocked: bool = False
    reason: str = ""
    focus: str | None = None
    note: str | None = None

    def focus_with(self, focus: str | None) -> str | None:
        """The user's focus with the hook's added after it (a blank line between), or whichever there is."""
        parts = [p.strip() for p in (focus, self.focus) if p and p.strip()]
        return "\n\n".join(parts) if parts else None


GO_ON = PreVerdict()


class CutMessage(Struct, frozen=True):
    id: int
    role: str
    text: str


class PostCompact(Struct, frozen=True):
    """What the post hook is told (``payload``: its JSON on stdin). ``cut``: build it with ``cut_of``."""

    session_id: int
    trigger: HookTrigger
    model: str
    summary: str
    covers_through_message_id: int
    messages_summarised: int
    tokens_before: int
    tokens_after: int
    cut: tuple[CutMessage, ...] = ()
    workspace: str | None = None

    def payload(self) -> dict[str, Any]:
        return {
            "event": "post_compact",
            "session_id": self.session_id,
            "trigger": self.trigger,
            "model": self.model,
            "summary": self.summary,
            "covers_through_message_id": self.covers_through_message_id,
            "messages_summarised": self.messages_summarised,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "cut": [{"id": c.id, "role": c.role, "text": c.text} for c in self.cut],
        }


class CompactionHooks(Protocol):
    """Runs the user's hooks. Neither call may block a compaction for long: each has its own time limit."""

    async def before(self, event: PreCompact) -> PreVerdict: ...

    async def after(self, event: PostCompact) -> str | None:
        """None, or one sentence saying why the hook failed (its output is otherwise ignored)."""
        ...


class NoHooks:
    """No hook configured or wired: every compaction goes on unchanged."""

    async def before(self, event: PreCompact) -> PreVerdict:
        return GO_ON

    async def after(self, event: PostCompact) -> str | None:
        return None


def _block_text(block: Mapping[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text") or "")
    if kind == "tool_use":
        try:
            given = json.dumps(block.get("input"), ensure_ascii=False)
        except (TypeError, ValueError):
            given = "{}"
        return f"[tool call {block.get('name') or ''}: {given[:CUT_TEXT_CHARS]}]"
    if kind == "tool_result":
        inner = block.get("content")
        if isinstance(inner, str):
            return inner
        if isinstance(inner, list):
            return "\n".join(
                str(b.get("text") or "") if b.get("type") == "text" else f"[{b.get('type')}]"
                for b in inner
                if isinstance(b, dict)
            )
        return ""
    if kind in ("thinking", "redacted_thinking"):
        return ""
    return f"[{kind}]"


def message_text(msg: StoredMessage, limit: int = CUT_TEXT_CHARS) -> str:
    """A message as plain text for a hook: its text, tool calls and results (thinking left out), cut at ``limit``."""
    parts: list[str] = []
    size = 0
    for block in msg.content:
        text = _block_text(block) if isinstance(block, Mapping) else ""
        if text.strip():
            parts.append(text)
            size += len(text)
            if size > limit:
                break
    return "\n\n".join(parts)[:limit]


def cut_of(rows: Sequence[StoredMessage]) -> tuple[CutMessage, ...]:
    """The post hook's ``cut``: the newest CUT_MESSAGES of the summarised rows, each text cut at CUT_TEXT_CHARS."""
    return tuple(CutMessage(m.id, m.role, message_text(m)) for m in rows[-CUT_MESSAGES:])


def settled(event: PreCompact, verdict: PreVerdict) -> PreVerdict:
    """The shared rules applied to an implementation's verdict: a reactive compaction is never blocked, the
    added focus is capped and a veto always has a reason and a sentence."""
    focus = verdict.focus.strip()[:FOCUS_CHARS] if verdict.focus and verdict.focus.strip() else None
    if not verdict.blocked:
        return PreVerdict(False, "", focus, verdict.note)
    reason = " ".join(verdict.reason.split())[:REASON_CHARS] or "no reason given"
    if event.trigger not in VETOABLE:
        return PreVerdict(
            False,
            "",
            focus,
            f"{PRE} asked not to compact ({reason}), but the request is already "
            "too long for the model, so this compaction goes on.",
        )
    return PreVerdict(True, reason, focus, verdict.note or f"{PRE} stopped this compaction: {reason}")


async def pre_compact(hooks: CompactionHooks, event: PreCompact) -> PreVerdict:
    """Ask the pre hook (never raises but for a cancellation: a hook that breaks is a hook that is not there)."""
    try:
        verdict = await hooks.before(event)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken hook must never break a compaction
        log.warning("session %s: the pre-compaction hook failed", event.session_id, exc_info=True)
        return PreVerdict(note=f"{PRE} failed ({type(exc).__name__}); compacting without it.")
    return settled(event, verdict)


async def post_compact(hooks: CompactionHooks, event: PostCompact) -> str | None:
    """Tell the post hook; None, or one sentence saying why it failed (never raises but for a cancellation)."""
    try:
        return await hooks.after(event)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - the compaction is done whatever the hook does
        log.warning("session %s: the post-compaction hook failed", event.session_id, exc_info=True)
        return f"{POST} failed ({type(exc).__name__}); the compaction is kept."
