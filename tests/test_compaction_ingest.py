import os
import stat

from desktop.engine.compaction.ingest import cap_content


def _big(n: int) -> str:
    line = "0123456789abcdefghij" * 4 + "\n"  # 81 chars per line
    return (line * (n // len(line) + 1))[:n]


def test_small_content_is_returned_unchanged(tmp_path):
    content = [{"type": "text", "text": "hi"}, {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]
    assert cap_content(content, key="m1", spill_dir=tmp_path) == content
    assert not any(tmp_path.iterdir())


def test_tool_result_string_is_spilled_with_preview_and_marker(tmp_path):
    text = _big(123_456)
    block = {"type": "tool_result", "tool_use_id": "toolu_1", "content": text, "is_error": False}
    out = cap_content([block], key="toolu_1", spill_dir=tmp_path)
    new = out[0]["content"]
    path = tmp_path / "toolu_1-b0.txt"
    assert path.read_text() == text
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    lines = text.count("\n") + 1
    # The marker names a virtual path the read tool understands, never the machine's absolute path.
    assert new.endswith(
        f"[Output truncated: 123,456 characters; full text saved to @spill/toolu_1-b0.txt "
        f'({lines:,} lines): read more with the read tool, file_path "@spill/toolu_1-b0.txt" '
        "and a view_range]"
    )
    assert str(tmp_path) not in new
    preview = new.split("\n[Output truncated")[0]
    assert 1_000 <= len(preview) <= 2_000
    assert text.startswith(preview) and text[len(preview)] == "\n"  # cut at a line end
    assert out[0]["is_error"] is False and out[0]["tool_use_id"] == "toolu_1"
    assert block["content"] == text  # input untouched


def test_tool_result_text_sub_blocks_collapse_and_images_stay(tmp_path):
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    parts = [{"type": "text", "text": _big(30_000)}, image, {"type": "text", "text": _big(30_000)}]
    out = cap_content(
        [{"type": "tool_result", "tool_use_id": "t", "content": parts}], key="m", spill_dir=tmp_path
    )
    content = out[0]["content"]
    assert [b["type"] for b in content] == ["text", "image"]
    assert "60,001 characters" in content[0]["text"]


def test_user_text_block_is_spilled_and_result_is_idempotent(tmp_path):
    content = [{"type": "text", "text": "short"}, {"type": "text", "text": _big(60_000)}]
    first = cap_content(content, key="42", spill_dir=tmp_path)
    second = cap_content(content, key="42", spill_dir=tmp_path)
    assert first == second
    assert first[0] == content[0]
    assert "42-b1.txt" in first[1]["text"]
    assert len(list(tmp_path.iterdir())) == 1


def test_name_collision_with_other_content_does_not_overwrite(tmp_path):
    (tmp_path / "k-b0.txt").write_text("something else")
    out = cap_content(_big(60_000), key="k", spill_dir=tmp_path)
    assert (tmp_path / "k-b0.txt").read_text() == "something else"
    spilled = [p for p in tmp_path.iterdir() if p.name != "k-b0.txt"]
    assert len(spilled) == 1 and spilled[0].read_text() == _big(60_000)
    assert f"@spill/{spilled[0].name}" in out[0]["text"] and str(tmp_path) not in out[0]["text"]


def test_unsafe_key_is_sanitised(tmp_path):
    cap_content(_big(60_000), key="../../etc/passwd", spill_dir=tmp_path)
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].parent == tmp_path and "/" not in files[0].name


def test_none_text_and_none_content_do_not_raise(tmp_path):
    content = [
        {"type": "text", "text": None},
        {"type": "text"},
        {"type": "tool_result", "tool_use_id": "t", "content": None},
    ]
    assert cap_content(content, key="m1", spill_dir=tmp_path, limit=0) == content
    assert cap_content(None, key="m1", spill_dir=tmp_path) == []
