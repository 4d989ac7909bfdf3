"""Pure building blocks of staged compaction and request assembly (no I/O except spill files, no Qt).

Cheapest layer first: ``ingest`` caps huge content, ``microcompact`` clears old tool results and truncates old
long texts in horizon batches, ``tail``/``pins``/``summary_prompt`` prepare an LLM summary, ``snip`` drops the
oldest groups (or, in one long turn, the oldest tool rounds) as a last resort; ``cut_points`` lists where a
history may be cut behind a summary; ``media``, ``request_shape`` and ``cache_breakpoints`` make the final request
valid and cache-friendly. Every function takes lists and returns new lists; inputs are never mutated (unchanged
messages may be shared between input and output: treat them as read-only).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.engine.compaction._shared import (
        cut_points,
        extend_cuts,
        text_of,
        tool_names,
        tool_result_text,
    )
    from desktop.engine.compaction.cache_breakpoints import (
        canonical,
        canonical_copy,
        count_breakpoints,
        mark_breakpoints,
        place_breakpoints,
    )
    from desktop.engine.compaction.ingest import LIMIT as INGEST_LIMIT
    from desktop.engine.compaction.ingest import cap_content
    from desktop.engine.compaction.media import CapReport, MediaError, cap_media, prepare_attachment
    from desktop.engine.compaction.microcompact import (
        OLD_LIMIT,
        RECENT_LIMIT,
        apply_clear,
        apply_truncate,
        clear_message,
        min_clear_for,
        plan_clear,
        plan_truncate,
        truncate_message,
    )
    from desktop.engine.compaction.normalize import flatten
    from desktop.engine.compaction.pins import pinned_instructions, render_pins
    from desktop.engine.compaction.request_shape import Repairer, problems, repair
    from desktop.engine.compaction.snip import snip_to_fit, trimmed_summary
    from desktop.engine.compaction.summary_prompt import (
        build_summary_request,
        drop_oldest_groups,
        extract_summary,
        validate_summary,
    )
    from desktop.engine.compaction.tail import split_tail

# Each name's module and its name there. Loaded on first use (PEP 562): a chat's first measurement or request
# needs these, the window's first paint does not, and the summary, snip and request-shape modules are most of
# the engine's import time.
_WHERE: dict[str, tuple[str, str]] = {
    "cut_points": ("_shared", "cut_points"),
    "extend_cuts": ("_shared", "extend_cuts"),
    "text_of": ("_shared", "text_of"),
    "tool_names": ("_shared", "tool_names"),
    "tool_result_text": ("_shared", "tool_result_text"),
    "canonical": ("cache_breakpoints", "canonical"),
    "canonical_copy": ("cache_breakpoints", "canonical_copy"),
    "count_breakpoints": ("cache_breakpoints", "count_breakpoints"),
    "mark_breakpoints": ("cache_breakpoints", "mark_breakpoints"),
    "place_breakpoints": ("cache_breakpoints", "place_breakpoints"),
    "INGEST_LIMIT": ("ingest", "LIMIT"),
    "cap_content": ("ingest", "cap_content"),
    "CapReport": ("media", "CapReport"),
    "MediaError": ("media", "MediaError"),
    "cap_media": ("media", "cap_media"),
    "prepare_attachment": ("media", "prepare_attachment"),
    "OLD_LIMIT": ("microcompact", "OLD_LIMIT"),
    "RECENT_LIMIT": ("microcompact", "RECENT_LIMIT"),
    "apply_clear": ("microcompact", "apply_clear"),
    "apply_truncate": ("microcompact", "apply_truncate"),
    "clear_message": ("microcompact", "clear_message"),
    "min_clear_for": ("microcompact", "min_clear_for"),
    "plan_clear": ("microcompact", "plan_clear"),
    "plan_truncate": ("microcompact", "plan_truncate"),
    "truncate_message": ("microcompact", "truncate_message"),
    "flatten": ("normalize", "flatten"),
    "pinned_instructions": ("pins", "pinned_instructions"),
    "render_pins": ("pins", "render_pins"),
    "Repairer": ("request_shape", "Repairer"),
    "problems": ("request_shape", "problems"),
    "repair": ("request_shape", "repair"),
    "snip_to_fit": ("snip", "snip_to_fit"),
    "trimmed_summary": ("snip", "trimmed_summary"),
    "build_summary_request": ("summary_prompt", "build_summary_request"),
    "drop_oldest_groups": ("summary_prompt", "drop_oldest_groups"),
    "extract_summary": ("summary_prompt", "extract_summary"),
    "validate_summary": ("summary_prompt", "validate_summary"),
    "split_tail": ("tail", "split_tail"),
}


def __getattr__(name: str) -> object:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{where[0]}"), where[1])
    globals()[name] = value  # the next lookup is a plain attribute
    return value


__all__ = [
    "INGEST_LIMIT",
    "OLD_LIMIT",
    "RECENT_LIMIT",
    "Repairer",
    "canonical_copy",
    "clear_message",
    "extend_cuts",
    "mark_breakpoints",
    "text_of",
    "tool_names",
    "tool_result_text",
    "truncate_message",
    "CapReport",
    "MediaError",
    "apply_clear",
    "apply_truncate",
    "build_summary_request",
    "canonical",
    "cap_content",
    "cap_media",
    "count_breakpoints",
    "cut_points",
    "drop_oldest_groups",
    "extract_summary",
    "flatten",
    "min_clear_for",
    "pinned_instructions",
    "place_breakpoints",
    "plan_clear",
    "plan_truncate",
    "prepare_attachment",
    "problems",
    "render_pins",
    "repair",
    "snip_to_fit",
    "trimmed_summary",
    "split_tail",
    "validate_summary",
]
