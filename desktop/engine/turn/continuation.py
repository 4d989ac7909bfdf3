"""Continuing a reply the provider cut short (``max_tokens``, or the context window filled up).

The continuation is a linked row: a new assistant message (meta ``continues``: the cut reply's id) made by a
request whose last message is the cut reply itself, which the model resumes. Each row stays one model call with
its own usage, and the next requests merge the two rows into one assistant turn (adjacent text blocks), so the
content blocks stay valid.
"""

from __future__ import annotations

from desktop.engine.types import CUT_STOP_REASONS, Block, MessagesRequest, StoredMessage


class NothingToContinue(ValueError):
    """Continue was asked for, but the newest reply was not cut short."""


def is_cut(message: StoredMessage | None) -> bool:
    """A complete assistant reply the provider stopped early (output limit or full window)."""
    # Rows before the "cut" status were stored complete with the stop reason.
    return (
        message is not None
        and message.role == "assistant"
        and message.status in ("cut", "complete")
        and message.meta.get("stop_reason") in CUT_STOP_REASONS
    )


def as_continuation(request: MessagesRequest) -> MessagesRequest:
    """The request with the cut reply as its last message (a prefill the model resumes).

    The synthetic user turn request repair adds after a trailing assistant message goes; a tool call cut
    mid-input is never sent back, and the API rejects a final assistant text ending in whitespace.
    """
    messages = list(request["messages"])
    if len(messages) >= 2 and messages[-1]["role"] == "user" and messages[-2]["role"] == "assistant":
        messages.pop()
    if not messages or messages[-1]["role"] != "assistant":
        raise NothingToContinue("the newest message is not a reply to continue")
    last = messages[-1]["content"]
    content: list[Block] = (
        [{"type": "text", "text": last}] if isinstance(last, str) else [dict(b) for b in last]
    )
    while content and content[-1].get("type") in ("tool_use", "thinking", "redacted_thinking"):
        content.pop()
    if content and content[-1].get("type") == "text":
        text = str(content[-1].get("text", "")).rstrip()
        if text:
            content[-1] = {"type": "text", "text": text}
        else:
            content.pop()
    if not content:
        raise NothingToContinue("the cut reply has no text to continue from")
    messages[-1] = {"role": "assistant", "content": content}
    return {**request, "messages": messages}
