"""The built-in workspace tools on a temporary workspace: confinement, and each tool doing its job."""

from __future__ import annotations

import base64
import io
import os

import pytest

from desktop.tools.builtin import DEFINITIONS, BuiltinTools
from desktop.tools.run_command import run_command
from desktop.tools.workspace import Workspace


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    (root / "notes.md").write_text("parse_config is called here\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret\n")
    (root / "link_out").symlink_to(outside)
    (root / "dir_out").symlink_to(tmp_path)
    return BuiltinTools(Workspace.at(root), spill_dir=tmp_path / "spill")


def _outside(path: str, tmp_path) -> str:
    """``abs:NAME``: the absolute path of NAME beside the workspace (a real file outside it, on this machine)."""
    return str(tmp_path / path.removeprefix("abs:")) if path.startswith("abs:") else path


@pytest.mark.parametrize(
    "path",
    ["../secret.txt", "src/../../secret.txt", "link_out", "dir_out/secret.txt", "abs:secret.txt", "~/x"],
)
async def test_reading_outside_the_workspace_is_refused(ws, path, tmp_path):
    out = await ws.call("read", {"file_path": _outside(path, tmp_path)})
    assert out.is_error and "top secret" not in out.text()
    if not path.startswith("abs:"):  # no absolute path of the machine the model did not give itself
        assert str(tmp_path) not in out.text()


@pytest.mark.parametrize("path", ["../evil.txt", "abs:evil.txt", "link_out", "dir_out/evil.txt"])
async def test_writing_outside_the_workspace_is_refused(ws, path, tmp_path):
    out = await ws.call("write", {"file_path": _outside(path, tmp_path), "content": "x"})
    assert out.is_error
    assert not (tmp_path / "evil.txt").exists() and (tmp_path / "secret.txt").read_text() == "top secret\n"


async def test_an_absolute_path_inside_the_workspace_is_refused_too(ws):
    out = await ws.call("read", {"file_path": str(ws.workspace.root / "notes.md")})
    assert out.is_error and "absolute" in out.text()


async def test_read_with_a_line_range(ws):
    out = await ws.call("read", {"file_path": "src/app.py", "view_range": [3, 5]})
    assert not out.is_error and out.text() == "line 3\nline 4\nline 5"


async def test_read_an_image_gives_an_image_block(ws):
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(buf, format="PNG")
    (ws.workspace.root / "pic.png").write_bytes(buf.getvalue())
    out = await ws.call("read", {"file_path": "pic.png"})
    assert not out.is_error and isinstance(out.content, list)
    block = out.content[0]
    assert block["type"] == "image" and base64.b64decode(block["source"]["data"]) == buf.getvalue()


async def test_glob_and_grep_print_workspace_relative_paths(ws):
    listed = await ws.call("glob", {"pattern": "**/*.py"})
    assert listed.text() == "src/app.py"
    found = await ws.call("grep", {"pattern": "parse_config"})
    assert not found.is_error and found.text().startswith("notes.md:1:")
    assert str(ws.workspace.root) not in found.text() + listed.text()
    escape = await ws.call("glob", {"pattern": "../*"})
    assert escape.is_error


async def test_write_then_edit_by_exact_string(ws):
    assert not (await ws.call("write", {"file_path": "new/hello.txt", "content": "hello world\n"})).is_error
    diff = ws.diff("edit", {"file_path": "new/hello.txt", "old_string": "world", "new_string": "there"})
    assert diff is not None and "-hello world" in diff and "+hello there" in diff
    done = await ws.call("edit", {"file_path": "new/hello.txt", "old_string": "world", "new_string": "there"})
    assert not done.is_error and (ws.workspace.root / "new/hello.txt").read_text() == "hello there\n"
    assert done.text() == "edited new/hello.txt (1 replacement)"  # main: "(1 replacement(s))" on every card
    every = await ws.call(
        "edit", {"file_path": "new/hello.txt", "old_string": "l", "new_string": "L", "replace_all": True}
    )
    assert every.text() == "edited new/hello.txt (2 replacements)"
    missing = await ws.call("edit", {"file_path": "new/hello.txt", "old_string": "absent", "new_string": "x"})
    assert missing.is_error and "not found" in missing.text()


async def test_run_prints_output_and_exit_code_in_the_workspace(ws, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-must-not-leak")
    out = await ws.call("run", {"command": "pwd; echo key=$ANTHROPIC_API_KEY; exit 3"})
    assert out.is_error and out.exit_code == 3
    assert "[exit code 3]" in out.text() and "sk-must-not-leak" not in out.text()
    assert os.path.realpath(out.text().splitlines()[0]) == str(ws.workspace.root)


async def test_run_times_out_and_kills_the_command(tmp_path):
    out = await run_command("sleep 30 & echo started; wait", tmp_path, timeout=1)
    assert out.is_error and "timed out after 1 s" in out.text() and "started" in out.text()


async def test_spilled_output_is_read_through_its_virtual_path(ws, tmp_path):
    (tmp_path / "spill").mkdir()
    (tmp_path / "spill" / "m5-b0.txt").write_text("".join(f"row {i}\n" for i in range(1, 1001)))
    out = await ws.call("read", {"file_path": "@spill/m5-b0.txt", "view_range": [500, 501]})
    assert not out.is_error and out.text() == "row 500\nrow 501"
    assert (await ws.call("read", {"file_path": "@spill/../ws/notes.md"})).is_error


def test_definitions_are_in_a_fixed_order_with_compact_schemas():
    assert [d["name"] for d in DEFINITIONS] == ["read", "glob", "grep", "write", "edit", "run"]
    assert all(set(d) == {"name", "description", "input_schema"} for d in DEFINITIONS)
