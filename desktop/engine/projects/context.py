"""What a project's chats carry of it: its instructions and the knowledge that fits its share of the window, as one
text that is byte for byte the same in every chat of the project on the same model, so a second chat reads it from
the prompt cache the first one wrote. Knowledge past the share is not inlined: the model searches it with recall.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from msgspec import Struct

from desktop.engine.projects.records import Knowledge, Project

# The part of a model's window that a project's inlined knowledge may take; the rest stays the conversation's.
KNOWLEDGE_SHARE = 0.25
# The window assumed when the model's is unknown (a local server that reports none).
UNKNOWN_WINDOW = 32_000


class ProjectContext(Struct, frozen=True):
    """A project as its chats' requests carry it (on one model)."""

    project: Project
    text: str  # the project's part of the system prompt ('' when it has nothing to say)
    inlined: tuple[str, ...]  # knowledge carried whole, in the order added
    searchable: tuple[str, ...]  # knowledge too large for the share: reached through recall
    tokens: int  # the estimate of ``text``


def _escaped(name: str) -> str:
    return name.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def project_context(
    project: Project, knowledge: Sequence[Knowledge], window: int | None, estimate: Callable[[str], int]
) -> ProjectContext:
    """The project's text for a model of ``window`` tokens: its instructions, then each piece of knowledge in the
    order it was added while the pieces so far fit ``KNOWLEDGE_SHARE`` of the window (a piece that does not fit is
    searchable instead, and later smaller ones may still fit), then the names of the searchable ones."""
    budget = int((window or UNKNOWN_WINDOW) * KNOWLEDGE_SHARE)
    parts = [f'<project name="{_escaped(project.name)}">']
    if project.instructions.strip():
        parts.append(f"<project-instructions>\n{project.instructions.strip()}\n</project-instructions>")
    used = estimate("\n\n".join(parts))
    inlined: list[str] = []
    searchable: list[str] = []
    for piece in knowledge:
        block = f'<knowledge name="{_escaped(piece.name)}">\n{piece.text.strip()}\n</knowledge>'
        cost = estimate(block)
        if used + cost <= budget:
            parts.append(block)
            inlined.append(piece.name)
            used += cost
        else:
            searchable.append(piece.name)
    if searchable:
        parts.append(
            "<searchable-knowledge>\nThese files of the project are too large to include here; search them "
            'with the recall tool (scope "project"): ' + ", ".join(searchable) + "\n</searchable-knowledge>"
        )
    if len(parts) == 1:  # no instructions and no knowledge: nothing to carry
        return ProjectContext(project, "", (), (), 0)
    parts.append("</project>")
    text = "\n\n".join(parts)
    return ProjectContext(project, text, tuple(inlined), tuple(searchable), estimate(text))
