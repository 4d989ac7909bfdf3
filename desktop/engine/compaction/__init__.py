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
_MODULES: dict[str, tuple[str, ...]] = {
    "_shared": ("cut_points", "extend_cuts", "text_of", "tool_names", "tool_result_text"),
    "cache_breakpoints": (
        "canonical",
        "canonical_copy",
        "count_breakpoints",
        "mark_breakpoints",
        "place_breakpoints",
    ),
    "ingest": ("cap_content",),
    "media": ("CapReport", "MediaError", "cap_media", "prepare_attachment"),
    "microcompact": (
        "OLD_LIMIT",
        "RECENT_LIMIT",
        "apply_clear",
        "apply_truncate",
        "clear_message",
        "min_clear_for",
        "plan_clear",
        "plan_truncate",
        "truncate_message",
    ),
    "normalize": ("flatten",),
    "pins": ("pinned_instructions", "render_pins"),
    "request_shape": ("Repairer", "problems", "repair"),
    "snip": ("snip_to_fit", "trimmed_summary"),
    "summary_prompt": ("build_summary_request", "drop_oldest_groups", "extract_summary", "validate_summary"),
    "tail": ("split_tail",),
}
_WHERE: dict[str, tuple[str, str]] = {
    name: (module, name) for module, names in _MODULES.items() for name in names
}
_WHERE["INGEST_LIMIT"] = ("ingest", "LIMIT")


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
