"""docs/architecture.md's "Where to change what" table names only paths that exist, and each name it gives in
brackets is in the file named before it: a newcomer who follows it lands where the thing is."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
# Short forms the table uses, each relative to the folder it names.
SHORT = {
    "engine/": "desktop/",
    "ui/": "desktop/",
    "cli/": "desktop/",
    "tools/": "desktop/",
    "store/": "desktop/",
    "compaction/": "desktop/engine/",
    "i18n/": "desktop/",
}
ROOTS = ("desktop/", "packaging/", ".ci/", "tests/", "docs/")
_TICK = re.compile(r"`([^`]+)`")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")


def _rows() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    table = text.split("## Where to change what", 1)[1].split("\n## ", 1)[0]
    rows = [
        line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| to change")
    ]
    assert len(rows) > 30
    return [row.strip().strip("|").split("|")[-1] for row in rows]  # the "look in" column


def _path(token: str, folder: Path | None) -> Path | None:
    if token.startswith(ROOTS):
        return ROOT / token
    for short, base in SHORT.items():
        if token.startswith(short):
            return ROOT / base / token
    if folder is not None and (token.endswith((".py", "/"))):
        return folder / token
    return None


def _places(column: str) -> tuple[list[Path], list[tuple[str, Path | None]]]:
    """The paths a row names, and each bracketed name with the file named last before it."""
    paths: list[Path] = []
    names: list[tuple[str, Path | None]] = []
    folder: Path | None = None
    last: Path | None = None
    for token in _TICK.findall(column):
        if "/" in token or token.endswith(".py"):
            path = _path(token, folder)
            assert path is not None, token
            paths.append(path)
            folder = path if token.endswith("/") else path.parent
            last = path if path.suffix == ".py" else last
        elif _NAME.match(token):
            names.append((token, last))
    return paths, names


def test_every_path_in_the_where_to_change_what_table_exists():
    missing = [str(p.relative_to(ROOT)) for column in _rows() for p in _places(column)[0] if not p.exists()]
    assert missing == []


def test_every_name_the_table_gives_is_in_the_file_it_follows():
    absent = []
    for column in _rows():
        for name, path in _places(column)[1]:
            if path is None or not path.is_file():
                continue
            if not re.search(rf"\b{re.escape(name.split('.')[-1])}\b", path.read_text(encoding="utf-8")):
                absent.append(f"{name} in {path.relative_to(ROOT)}")
    assert absent == []


def test_the_check_catches_a_wrong_path_and_a_wrong_name():
    paths, names = _places(
        "`desktop/engine/no_such_module.py` (`run_turn`); `engine/turn/chat.py` (`NoSuchName`)"
    )
    assert not paths[0].exists()
    assert names[1][1] is not None and "NoSuchName" not in names[1][1].read_text(encoding="utf-8")
