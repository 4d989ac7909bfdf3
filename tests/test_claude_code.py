"""Claude Code transcript reader, run against every real transcript in the shared corpus."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from desktop.engine.history.claude_code import (
    NO_RESULT_TEXT,
    ImportedMessage,
    api_messages,
    parse_lines,
    read_transcript,
)
from tests.corpus import (
    CORPUS,
    corpus_files,
    corpus_params,
    corpus_required,  # noqa: F401 (the fixture behind @needs_corpus)
    needs_corpus,
)
from tests.corpus import relative_id as _rel

FILES = corpus_files()


def _raw_records(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _main_chain(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Oracle: conversation records on the chain of the file's first conversation record."""
    conv = [r for r in records if r.get("type") in ("user", "assistant")]
    side = bool(conv[0].get("isSidechain")) if conv else False
    return [r for r in conv if bool(r.get("isSidechain")) == side]


def assert_api_valid(msgs: list[dict[str, Any]]) -> None:
    """The structural rules the Messages API enforces on a ``messages`` list."""
    assert msgs, "no messages"
    assert msgs[0]["role"] == "user"
    seen_uses: set[str] = set()
    for i, m in enumerate(msgs):
        assert m["role"] in ("user", "assistant")
        assert m["content"], f"message {i} is empty"
        if i:
            assert m["role"] != msgs[i - 1]["role"], f"messages {i - 1},{i} share a role"
        for b in m["content"]:
            if b["type"] == "text":
                assert b["text"].strip(), f"empty text block in message {i}"
            if b["type"] == "thinking":
                assert m["role"] == "assistant" and len(b["signature"]) >= 64
        uses = [b["id"] for b in m["content"] if b["type"] == "tool_use"]
        assert not (set(uses) & seen_uses), "duplicate tool_use id"
        seen_uses.update(uses)
        results = [b for b in m["content"] if b["type"] == "tool_result"]
        if m["role"] == "assistant":
            assert not results
        if results:
            # tool_result blocks must come first and answer exactly the previous assistant's tool_uses.
            n = len(results)
            assert all(b["type"] == "tool_result" for b in m["content"][:n])
            prev_uses = [b["id"] for b in msgs[i - 1]["content"] if b["type"] == "tool_use"]
            assert sorted(b["tool_use_id"] for b in results) == sorted(prev_uses)
        if uses:
            assert i + 1 < len(msgs), "tool_use in the last message"
            answered = {b["tool_use_id"] for b in msgs[i + 1]["content"] if b["type"] == "tool_result"}
            assert answered == set(uses)


@needs_corpus
@pytest.mark.parametrize("path", corpus_params(FILES), ids=_rel)
def test_corpus_file(path: Path) -> None:
    start = time.perf_counter()
    t = read_transcript(path)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, f"{elapsed:.2f}s"  # generous bound; measured ~20 ms on the biggest file
    assert t.skipped_malformed == 0

    chain = _main_chain(_raw_records(path))
    api_ids = {
        r["message"]["id"]
        for r in chain
        if r["type"] == "assistant"
        and r["message"].get("model") != "<synthetic>"
        and r["message"].get("usage")
    }
    users = [r for r in chain if r["type"] == "user" and not r.get("isMeta") and r["message"].get("content")]
    roles = Counter(m.role for m in t.messages)
    assert roles["assistant"] == len(api_ids)
    assert roles["user"] == len(users)
    with_usage = [m for m in t.messages if m.role == "assistant" and m.usage is not None]
    assert len({m.api_message_id for m in with_usage}) == len(with_usage) == len(api_ids)
    assert all(m.usage is None for m in t.messages if m.role == "user")

    # Usage is the last line's: its output_tokens is never below any earlier line of the same response.
    last_out: dict[str, int] = {}
    for r in chain:
        if r["type"] == "assistant" and r["message"].get("id") in api_ids:
            last_out[r["message"]["id"]] = r["message"]["usage"].get("output_tokens", 0)
    assert {m.api_message_id: m.usage.output_tokens for m in with_usage} == last_out

    # Every block of the raw assistant lines survives, once, in its merged message.
    raw_blocks = Counter(
        (r["message"]["id"], json.dumps(b, sort_keys=True))
        for r in chain
        if r["type"] == "assistant" and r["message"].get("id") in api_ids
        for b in r["message"]["content"]
    )
    got_blocks = Counter(
        (m.api_message_id, json.dumps(b, sort_keys=True)) for m in with_usage for b in m.content
    )
    assert set(got_blocks) == set(raw_blocks)
    assert max(got_blocks.values()) == 1

    msgs = t.api_messages()
    assert_api_valid(msgs)
    raw_uses = {b["id"] for m in t.messages for b in m.content if b["type"] == "tool_use"}
    api_uses = {b["id"] for m in msgs for b in m["content"] if b["type"] == "tool_use"}
    assert api_uses == raw_uses
    assert t.title and len(t.title) <= 80
    assert t.models and "<synthetic>" not in t.models


# Max prompt tokens (input + cache read + cache creation) of each file, as the corpus's manifest records them.
MANIFEST_MAX_PROMPT = {
    "spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl": 164831,
    "spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl": 173514,
    "entire-cli/89/7eb280e769/12/full.jsonl": 155440,
    "claude-code-log/-Users-dain-workspace-claude-code-log-sample/37f83ec9-f2ea-42a9-925e-0d5c105cb6e8.jsonl": 104468,
    "repiq/04/42b8e65015/1/full.jsonl": 113943,
    "spotter/short.jsonl": 25353,
}


@needs_corpus
@pytest.mark.parametrize(("rel", "expected"), MANIFEST_MAX_PROMPT.items())
def test_max_prompt_tokens_matches_manifest(rel: str, expected: int) -> None:
    t = read_transcript(CORPUS / rel)
    assert max(m.usage.prompt_tokens for m in t.messages if m.usage) == expected


@needs_corpus
def test_compactions_and_summary() -> None:
    t = read_transcript(CORPUS / "entire-cli/cd/95adddad32/0/full.jsonl")
    assert [(c.trigger, c.pre_tokens) for c in t.compactions] == [
        ("auto", 156699),
        ("auto", 155241),
        ("auto", 155413),
    ]
    for c in t.compactions:
        assert t.messages[c.index].is_compact_summary
    assert sum(m.is_compact_summary for m in t.messages) == 3
    tail = t.api_messages(t.compactions[-1].index)
    assert_api_valid(tail)
    assert tail[0]["content"][0]["text"].startswith("This session is being continued")

    manual = read_transcript(CORPUS / "spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl")
    assert [(c.trigger, c.pre_tokens) for c in manual.compactions] == [("manual", 142431)]


@needs_corpus
def test_short_file_shape() -> None:
    """spotter/short.jsonl read by hand: one prompt, one 5-line response, two rejected tools, an interrupt."""
    t = read_transcript(CORPUS / "spotter/short.jsonl")
    assert [m.role for m in t.messages] == ["user", "assistant", "user", "user", "user"]
    reply = t.messages[1]
    assert [b["type"] for b in reply.content] == ["text", "thinking", "text", "tool_use", "tool_use"]
    assert reply.api_message_id == "msg_01MKH1ccEGrZGNPvu8pYiiQa"
    assert t.title == "mix phx.server doesnt seem to start"
    assert t.skipped == {"snapshot": 1, "progress": 3, "system": 2}
    msgs = t.api_messages()
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    # Whitespace-only text dropped; the real signature keeps the thinking block; tool_use loses nothing.
    assert [b["type"] for b in msgs[1]["content"]] == ["thinking", "text", "tool_use", "tool_use"]
    assert msgs[2]["content"][-1] == {"type": "text", "text": "[Request interrupted by user for tool use]"}
    assert [b["type"] for b in t.api_messages(keep_thinking=False)[1]["content"]] == [
        "text",
        "tool_use",
        "tool_use",
    ]


@needs_corpus
def test_redacted_signatures_are_dropped() -> None:
    t = read_transcript(CORPUS / "spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    raw = [b for m in t.messages for b in m.content if b["type"] == "thinking"]
    assert raw and all(b["signature"] == "[REDACTED_SIGNATURE]" for b in raw)  # data kept in the transcript
    assert not [b for m in t.api_messages() for b in m["content"] if b["type"] == "thinking"]


@needs_corpus
def test_subagent_file_is_its_own_main_chain() -> None:
    t = read_transcript(CORPUS / "spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl")
    assert t.messages and "sidechain" not in t.skipped
    assert t.models == ["claude-sonnet-4-5-20250929"]


def _line(**rec: Any) -> str:
    return json.dumps(rec) + "\n"


def _user(text: Any, **kw: Any) -> str:
    return _line(type="user", uuid="u", message={"role": "user", "content": text}, **kw)


def _asst(mid: str, blocks: list[dict[str, Any]], out: int = 1, **kw: Any) -> str:
    usage = {
        "input_tokens": 10,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 5,
        "output_tokens": out,
    }
    msg = {"id": mid, "role": "assistant", "model": "claude-opus-4-6", "content": blocks, "usage": usage}
    return _line(type="assistant", uuid=mid + "-line", message=msg, **kw)


def _tool_use(tid: str) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": tid,
        "name": "Bash",
        "input": {"command": "ls"},
        "caller": {"type": "direct"},
    }


def _tool_result(tid: str, content: Any = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tid, "content": content}


def test_malformed_lines_are_counted_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    lines = [
        _user("hello there"),
        "{not json\n",
        "[1, 2, 3]\n",  # valid JSON, not an object
        '"just a string"\n',
        "\n",  # blank: ignored, not counted
        _line(message={"role": "user", "content": "no type"}),
        _line(type="user", message="not a dict"),
        _line(type="user", message={"role": "user", "content": 42}),
        _line(type="assistant"),  # no message at all
        _asst("msg_1", [{"type": "text", "text": "hi"}], out=7),
        _line(type="progress", data={}),
        '{"type": "user", "message": {"role": "user", "content": "trunc',  # truncated last line, no newline
    ]
    path.write_text("".join(lines), encoding="utf-8")
    t = read_transcript(path)
    assert t.skipped_malformed == 8
    assert [m.role for m in t.messages] == ["user", "assistant"]
    assert t.messages[1].usage is not None and t.messages[1].usage.prompt_tokens == 115
    assert t.skipped == {"progress": 1}
    assert_api_valid(t.api_messages())


def test_binary_garbage_and_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(b"\xff\xfe\x00garbage\n\x89PNG\r\n")
    t = read_transcript(path)
    assert t.messages == [] and t.skipped_malformed == 2
    assert t.api_messages() == []
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert read_transcript(empty).messages == []


def test_split_response_merged_with_last_usage_and_dedup() -> None:
    text = {"type": "text", "text": "Let me look."}
    t = parse_lines(
        [
            _user("list files"),
            _asst("msg_A", [text], out=1),
            _asst("msg_A", [_tool_use("t1")], out=3),
            _user([_tool_result("t1")]),
            _asst("msg_A", [text], out=3),  # repeated line: no duplicate block
            _asst("msg_A", [_tool_use("t2")], out=88),
            _user(
                [
                    _tool_result(
                        "t2", [{"type": "text", "text": "a"}, {"type": "tool_reference", "tool_name": "X"}]
                    )
                ]
            ),
            _asst("msg_B", [{"type": "text", "text": "Done. \n"}], out=4),
        ]
    )
    assert [m.role for m in t.messages] == ["user", "assistant", "user", "user", "assistant"]
    a = t.messages[1]
    assert [b.get("id", b["type"]) for b in a.content] == ["text", "t1", "t2"]
    assert a.usage is not None and a.usage.output_tokens == 88
    msgs = t.api_messages()
    assert_api_valid(msgs)
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant"]
    assert msgs[1]["content"][1] == {
        "type": "tool_use",
        "id": "t1",
        "name": "Bash",
        "input": {"command": "ls"},
    }
    assert msgs[2]["content"][1]["content"] == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "[tool reference: X]"},
    ]
    assert msgs[-1]["content"][-1]["text"] == "Done."  # final assistant text may not end in whitespace


def test_unpaired_and_orphan_tools_are_repaired() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    t = parse_lines(
        [
            _user([_tool_result("ghost", "stray"), {"type": "text", "text": "start"}]),
            _asst("msg_A", [_tool_use("t1"), _tool_use("t2")]),
            _user([_tool_result("t1", [{"type": "text", "text": "shot"}, image])]),
            _user("[Request interrupted by user]"),
            _asst("msg_B", [{"type": "text", "text": "ok"}, _tool_use("t3")]),
            _user("   "),  # whitespace-only prompt: kept in the transcript, dropped from the API view
            _user([_tool_result("t2", "late")]),  # t2 answered two turns late: moved next to its call
            _asst("msg_C", [_tool_use("t4")]),  # session ended mid-tool
        ]
    )
    assert t.unpaired_tool_use_ids == ["t3", "t4"]
    assert t.orphan_tool_result_ids == ["ghost"]
    msgs = t.api_messages()
    assert_api_valid(msgs)
    first = msgs[0]["content"]
    assert first[0]["type"] == "text" and "ghost" in first[0]["text"] and "stray" in first[0]["text"]
    answers = {b["tool_use_id"]: b for b in msgs[2]["content"] if b["type"] == "tool_result"}
    assert answers["t1"]["content"][1] == image  # base64 image kept unchanged
    assert answers["t2"]["content"] == "late"
    for tid, where in (("t3", 4), ("t4", 6)):
        synthetic = msgs[where]["content"][0]
        assert synthetic == {
            "type": "tool_result",
            "tool_use_id": tid,
            "is_error": True,
            "content": NO_RESULT_TEXT,
        }
    assert len(msgs) == 7


def test_filters_sidechain_meta_synthetic_and_keeps_boundaries() -> None:
    t = parse_lines(
        [
            _user("<command-name>/review</command-name>\n<command-args>167</command-args>"),
            _user("Caveat: injected", isMeta=True),
            _user("subagent prompt", isSidechain=True),
            _asst("msg_S", [{"type": "text", "text": "sub"}], isSidechain=True),
            _asst("msg_A", [{"type": "text", "text": "reviewing"}]),
            _line(
                type="system",
                subtype="compact_boundary",
                compactMetadata={"trigger": "manual", "preTokens": 99},
            ),
            _user("Summary of before", isCompactSummary=True),
            _line(
                type="assistant",
                isApiErrorMessage=True,
                message={"id": "x", "model": "<synthetic>", "content": []},
            ),
            _line(type="file-history-snapshot", snapshot={}),
            _line(type="queue-operation"),
            _line(type="summary", summary="t"),
        ]
    )
    assert [m.content[0]["text"] for m in t.messages] == [
        "<command-name>/review</command-name>\n<command-args>167</command-args>",
        "reviewing",
        "Summary of before",
    ]
    assert t.title == "/review 167"
    assert t.skipped == {
        "meta": 1,
        "sidechain": 2,
        "system": 1,
        "synthetic": 1,
        "snapshot": 1,
        "queue": 1,
        "summary": 1,
    }
    assert [tuple(c) for c in t.compactions] == [(2, "manual", 99)]
    assert t.messages[2].is_compact_summary


def test_api_messages_starts_with_user_and_drops_unknown_server_blocks() -> None:
    msgs = api_messages(
        [
            ImportedMessage(
                "assistant", [{"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}]
            ),
            ImportedMessage("assistant", [{"type": "thinking", "thinking": "hmm", "signature": "short"}]),
            ImportedMessage("user", [{"type": "text", "text": "next"}]),
        ]
    )
    assert msgs == [
        {"role": "user", "content": [{"type": "text", "text": "[Imported conversation]"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "[server_tool_use block omitted]"}]},
        {"role": "user", "content": [{"type": "text", "text": "next"}]},
    ]


def test_unhashable_tool_use_id_does_not_raise():
    # read_transcript promises never to raise on bad content: a list where an id string belongs included.
    lines = [
        json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}),
        json.dumps(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": ["x"], "content": "a"},
                        {"type": "tool_result", "tool_use_id": {"id": "y"}, "content": "b"},
                    ],
                },
            }
        ),
    ]
    t = parse_lines(lines)
    assert len(t.messages) == 2
    assert t.orphan_tool_result_ids == ["['x']", "{'id': 'y'}"]
