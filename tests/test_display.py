"""desktop.engine.history.display: stored messages -> the parts the transcript shows (pure Python, no Qt)."""

from __future__ import annotations

import base64

from desktop.engine.history import attachments, display
from desktop.engine.history.display import (
    Attachment,
    AttachmentKind,
    ClientCommand,
    Markdown,
    OtherBlock,
    RowKind,
    Thinking,
    ToolCall,
    ToolResult,
    ToolRun,
    ToolState,
)
from desktop.engine.types import StoredMessage


def msg(role: str, *blocks: dict, status: str = "complete", **meta: object) -> StoredMessage:
    return StoredMessage(7, 1, role, list(blocks), status=status, meta=dict(meta))  # type: ignore[arg-type]


def test_text_stays_markdown_and_empty_text_shows_nothing():
    parts = display.parts_of([{"type": "text", "text": "Hello **there**"}, {"type": "text", "text": ""}])
    assert parts == (Markdown("Hello **there**"),)


def test_client_command_records_become_commands_and_mentions_stay_text():
    record = (
        "<command-name>/review</command-name>\n<command-message>review</command-message>\n"
        "<command-args>167</command-args>"
    )
    assert display.parts_of([{"type": "text", "text": record}]) == (ClientCommand("/review 167"),)
    out = "<local-command-stdout>  Bye  </local-command-stdout>"
    assert display.parts_of([{"type": "text", "text": out}]) == (ClientCommand("Bye", output=True),)
    empty = "<local-command-stderr></local-command-stderr>"
    assert display.parts_of([{"type": "text", "text": empty}]) == (ClientCommand("", output=True),)
    mention = "Please explain <command-name> tags"
    assert display.parts_of([{"type": "text", "text": mention}]) == (Markdown(mention),)


def test_a_tool_call_names_its_most_telling_argument():
    read, custom, bare, listed, server = display.parts_of(
        [
            {
                "type": "tool_use",
                "id": "t1",
                "name": "Read",
                "input": {"limit": 50, "file_path": "src/app.py"},
            },
            {"type": "tool_use", "id": "t2", "name": "Custom", "input": {"x": 1, "ü": "é"}},
            {"type": "tool_use", "id": "t3", "input": {}},
            {"type": "tool_use", "id": "t4", "name": "Odd", "input": ["a"]},
            {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "précis"}},
        ]
    )
    assert read == ToolCall("t1", "Read", "src/app.py", expandable=True)
    assert custom.argument == '{"x":1,"ü":"é"}'  # compact JSON, not escaped
    assert (bare.name, bare.argument) == ("tool", "")
    assert listed.argument == "['a']"
    assert server == ToolCall("s1", "web_search", "précis")  # a server's call has no input to expand
    assert read.input_json() == '{\n  "limit": 50,\n  "file_path": "src/app.py"\n}'


def test_a_tool_result_keeps_its_first_line_and_counts_the_rest():
    plain, failed, empty, searched = display.parts_of(
        [
            {"type": "tool_result", "tool_use_id": "t1", "content": "\n  line one\n\nline two\nline three\n"},
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "is_error": True,
                "content": [{"type": "text", "text": "boom"}, {"type": "image", "source": {}}],
            },
            {"type": "tool_result", "tool_use_id": "t3", "content": []},
            {
                "type": "web_search_tool_result",
                "tool_use_id": "s1",
                "content": [{"type": "web_search_result"}],
            },
        ]
    )
    assert isinstance(plain, ToolResult)
    assert (plain.first_line, plain.more_lines, plain.media, plain.is_error, plain.expandable) == (
        "  line one",
        2,
        0,
        False,
        True,
    )
    assert (failed.text, failed.first_line, failed.more_lines, failed.media, failed.is_error) == (
        "boom",
        "boom",
        0,
        1,
        True,
    )
    assert (empty.text, empty.first_line, empty.more_lines, empty.media) == ("", "", 0, 0)
    assert (searched.media, searched.expandable) == (1, False)


def test_thinking_keeps_the_whole_thought_and_redacted_thinking_says_so():
    thought, redacted = display.parts_of(
        [
            {"type": "thinking", "thinking": "\n\n  First I look.\nThen I answer.\n"},
            {"type": "redacted_thinking", "data": "opaque"},
        ]
    )
    assert thought == Thinking("First I look.\nThen I answer.")
    assert thought.first_line == "First I look."
    assert redacted == Thinking("", redacted=True) and redacted.first_line == ""


def test_attachments_carry_name_kind_size_and_thumbnail_data():
    png = base64.b64encode(b"\x89PNG fake").decode()
    parts = display.parts_of(
        [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
            {"type": "image", "source": {"type": "url", "url": "https://example.org/a.png"}},
            attachments.text_document("a\nb\nc\n", "three.txt"),
            {"type": "document", "source": {"type": "text", "data": "one line, no newline"}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": ""}},
            {"type": "document", "source": {"type": "url", "url": "https://example.org/x"}},
        ],
        files=["photo.png", "linked.png"],
    )
    assert parts == (
        Attachment(AttachmentKind.IMAGE, "photo.png", media=png),
        Attachment(AttachmentKind.IMAGE, "linked.png"),  # not inline data: no thumbnail
        Attachment(AttachmentKind.TEXT, "three.txt", lines=3),  # the block's own title
        Attachment(AttachmentKind.TEXT, "", lines=1),  # the names ran out: none kept
        Attachment(AttachmentKind.PDF, ""),
        Attachment(AttachmentKind.DOCUMENT, ""),
    )


def test_an_unknown_block_is_named_not_dropped():
    assert display.parts_of([{"type": "container_upload"}, {"text": "no type"}]) == (
        OtherBlock("container_upload"),
        OtherBlock("None"),
    )


def test_rows_nobody_wrote_as_prose_are_tool_rows():
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}
    text = {"type": "text", "text": "hi"}
    assert display.row_kind(msg("user", result)) is RowKind.TOOL
    assert display.row_kind(msg("user", result, text)) is RowKind.MESSAGE
    assert display.row_kind(msg("assistant", {"type": "thinking", "thinking": "hm"}, call)) is RowKind.TOOL
    assert display.row_kind(msg("assistant", call, text)) is RowKind.MESSAGE
    assert display.row_kind(msg("assistant", {"type": "thinking", "thinking": "hm"})) is RowKind.MESSAGE
    assert display.row_kind(msg("user")) is RowKind.MESSAGE


def test_show_gives_the_row_its_text_calls_cut_reason_and_error():
    shown = display.show(
        msg(
            "assistant",
            {"type": "thinking", "thinking": "hm"},
            {"type": "text", "text": "A"},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "x"}},
            {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
            {"type": "text", "text": "B"},
            stop_reason="max_tokens",
        )
    )
    assert (shown.id, shown.role, shown.status, shown.kind) == (7, "assistant", "complete", RowKind.MESSAGE)
    assert (shown.text, shown.has_text, shown.has_thinking) == ("A\n\nB", True, True)
    assert shown.calls == frozenset({"t1"}) and shown.cut_reason == "max_tokens" and shown.error == ""
    assert (
        display.show(
            msg(
                "assistant",
                {"type": "text", "text": "A"},
                status="cut",
                stop_reason="model_context_window_exceeded",
            )
        ).cut_reason
        == "model_context_window_exceeded"
    )
    # Only a finished reply is cut; an ordinary stop or a failed reply is not.
    assert (
        display.show(msg("assistant", {"type": "text", "text": "A"}, stop_reason="end_turn")).cut_reason == ""
    )
    failed = display.show(msg("assistant", status="error", stop_reason="max_tokens", error="overloaded"))
    assert (failed.cut_reason, failed.error, failed.has_text, failed.text) == ("", "overloaded", False, "")
    assert display.show(
        msg("user", {"type": "text", "text": ""})
    ).has_text  # an empty block is still typed text


def test_a_user_message_names_its_files_and_a_reply_never_does():
    image = {"type": "image", "source": {"type": "base64", "data": "AAAA"}}
    (part,) = display.show(msg("user", image, files=["cat.png"])).parts
    assert isinstance(part, Attachment) and part.name == "cat.png"
    (part,) = display.show(msg("assistant", image, files=["cat.png"])).parts
    assert isinstance(part, Attachment) and part.name == ""
    assert display.file_names(msg("user", files="cat.png")) == []  # not a list: nothing to trust


def test_tool_runs_are_applied_to_the_calls_they_name():
    runs = {"t1": ToolRun(ToolState.OK, 0.25)}
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}
    other = {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls"}}
    shown = display.show(msg("assistant", call, other), runs)
    first, second = shown.parts
    assert isinstance(first, ToolCall) and first.run == ToolRun(ToolState.OK, 0.25) and first.run.finished
    assert isinstance(second, ToolCall) and second.run is None
    later = shown.with_runs({**runs, "t2": ToolRun(ToolState.RUNNING)})
    assert isinstance(later.parts[1], ToolCall) and later.parts[1].run == ToolRun(ToolState.RUNNING)
    assert not ToolRun(ToolState.ASKING).finished and not ToolRun(ToolState.RUNNING).finished
    assert shown.parts[1] == second  # the first view is unchanged: rows are values
    text_only = display.show(msg("assistant", {"type": "text", "text": "x"}))
    assert text_only.with_runs(runs) is text_only
    assert ToolState("denied") is ToolState.DENIED  # the tools' events name their states with these words


def test_streaming_text_goes_to_the_copy_never_the_engines_message():
    original = msg("assistant", {"type": "tool_use", "id": "t1", "name": "Read", "input": {}})
    copy = display.own_copy(original)
    display.append_text(copy, "Hel")
    display.append_text(copy, "lo")
    assert copy.content[-1] == {"type": "text", "text": "Hello"} and copy.status == "streaming"
    assert len(original.content) == 1 and original.status == "complete"
    assert display.show(copy).kind is RowKind.MESSAGE  # a tool-only turn that gained text is a message again
    interrupted = display.own_copy(msg("assistant", {"type": "text", "text": "A"}, status="interrupted"))
    display.append_text(interrupted, "B")
    assert interrupted.content == [{"type": "text", "text": "AB"}] and interrupted.status == "interrupted"


def test_a_typed_message_is_a_user_message_with_more_than_tool_results():
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}
    assert display.is_typed(msg("user", {"type": "text", "text": "hi"}))
    assert display.is_typed(msg("user", result, {"type": "image", "source": {}}))
    assert not display.is_typed(msg("user", result))
    assert not display.is_typed(msg("assistant", {"type": "text", "text": "hi"}))
