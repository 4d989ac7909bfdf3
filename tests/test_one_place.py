"""One place per rule: the text of a rule that lived in several modules now lives in one; these scans keep a
second copy from coming back."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = {p.relative_to(ROOT).as_posix(): p.read_text("utf-8") for p in (ROOT / "desktop").rglob("*.py")}


def where(pattern: str) -> list[str]:
    rx = re.compile(pattern)
    return sorted(name for name, text in SOURCES.items() if rx.search(text))


def test_million_is_defined_once_and_prices_divide_by_it():
    assert where(r"(?m)^\s*\w*M\w* = 1_000_000\b") == ["desktop/engine/config/catalog.py"]
    assert where(r"price\w* / 1_000_000|/ 1_000_000\)") == []


def test_the_usage_price_formula_is_written_once():
    assert where(r"cache_creation_input_tokens \*") == ["desktop/engine/config/catalog.py"]


def test_the_boundary_is_computed_in_one_function():
    assert where(r"\[-1\]\.covers_through_message_id") == ["desktop/engine/types.py"]


def test_the_sendable_statuses_are_listed_once():
    assert where(r"""["']complete["'],\s*(["']cut["'],\s*)?["']interrupted["']""") == [
        "desktop/engine/types.py"
    ]


def test_the_threshold_ranges_are_written_once():
    assert where(r"5\.0,\s*99\.0") == ["desktop/engine/compaction/threshold.py"]
    assert where(r"1_000,\s*10_000_000") == ["desktop/engine/compaction/threshold.py"]


def test_a_chat_without_a_title_has_one_stored_name():
    assert where(r"""title=[^\n]*or ["']Untitled["']""") == []


# The store's writes to the rows inside a chat, and to a chat as a whole.
ROW_WRITES = (
    r"store\.(add_message|add_user_message|update_message|delete_message|truncate_from|clear_history"
    r"|branch_at|restore_branch|switch_version|add_compaction|delete_compaction|update_state)\("
)
CHAT_WRITES = r"store\.(create_session|delete_session|set_pinned|import_session|update_session)\("


def test_a_chats_rows_have_one_writer_and_chats_are_made_and_deleted_in_the_library():
    """The conversation writes its chat's rows (through its reply recorder and the compaction policy it runs)
    and keeps its cached view coherent; the library makes, renames, pins, imports and deletes chats. The engine's
    registry writes neither, and no view or command reaches the store."""
    engine_and_views = ("desktop/engine/", "desktop/ui/", "desktop/cli/")
    rows = [n for n in where(ROW_WRITES) if n.startswith(engine_and_views)]
    chats = [n for n in where(CHAT_WRITES) if n.startswith(engine_and_views)]
    assert rows == [
        "desktop/engine/compaction/executor.py",
        "desktop/engine/turn/conversation.py",
        "desktop/engine/turn/reply.py",
    ]
    # The conversation changes its own chat's model and profile (set_model); nothing else outside the library.
    assert chats == [
        "desktop/engine/history/importer.py",
        "desktop/engine/history/library.py",
        "desktop/engine/turn/conversation.py",
    ]
