"""The engine's projects: made, edited and deleted here, kept in memory for the requests of their chats (which
read a project's text on every request, so it must be at hand without a database round trip)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from desktop.engine import messages as M
from desktop.engine.events import EngineEvent, ProjectsChanged, SessionsChanged
from desktop.engine.history.storage import Storage
from desktop.engine.metering.tokens import Family, estimate_text
from desktop.engine.projects.context import ProjectContext, project_context
from desktop.engine.projects.records import Knowledge, Project, ProjectHit
from desktop.engine.types import one_line


class UnknownProject(ValueError):
    """No project of that name or id: one sentence for the user."""


class Projects:
    """Every project with its knowledge, read once and kept in step with the edits made here. ``emit`` is the
    engine's event bus: each edit says the projects (and, when chats move or go, the chats) changed."""

    def __init__(self, store: Storage, emit: Callable[[EngineEvent], None]) -> None:
        self._store = store
        self._emit = emit
        self._projects: dict[int, Project] = {}
        self._knowledge: dict[int, list[Knowledge]] = {}
        self._contexts: dict[tuple[int, int | None, str], ProjectContext] = {}  # cleared by every edit

    async def load(self) -> None:
        """Read every project and its knowledge (again: another process may have changed them)."""
        projects = await self._store.projects()
        knowledge = await asyncio.gather(*(self._store.knowledge(p.id) for p in projects))
        self._projects = {p.id: p for p in projects}
        self._knowledge = {p.id: k for p, k in zip(projects, knowledge, strict=True)}
        self._contexts.clear()

    # --- reads ------------------------------------------------------------------------------------------
    def all(self) -> list[Project]:
        return sorted(self._projects.values(), key=lambda p: (p.name.casefold(), p.id))

    def get(self, project_id: int) -> Project | None:
        return self._projects.get(project_id)

    def named(self, name_or_id: str) -> Project:
        """The project of that name (or id); UnknownProject otherwise."""
        for project in self._projects.values():
            if project.name == name_or_id or str(project.id) == name_or_id.strip():
                return project
        raise UnknownProject(M.say(M.PROJECT_UNKNOWN, name=name_or_id))

    def recalls(self, project_id: int) -> bool:
        """Recall reaches across this project (its knowledge and its other chats)."""
        project = self._projects.get(project_id)
        return project is not None and project.recall

    def knowledge(self, project_id: int) -> list[Knowledge]:
        return list(self._knowledge.get(project_id, []))

    def context(self, project_id: int, window: int | None, family: Family) -> ProjectContext | None:
        """What requests of the project's chats carry on a model of ``window`` tokens (None: no such project)."""
        project = self._projects.get(project_id)
        if project is None:
            return None
        key = (project_id, window, family)
        if key not in self._contexts:
            self._contexts[key] = project_context(
                project,
                self._knowledge.get(project_id, []),
                window,
                lambda t: estimate_text(t, family=family),
            )
        return self._contexts[key]

    def text(self, project_id: int, window: int | None, family: Family) -> str:
        context = self.context(project_id, window, family)
        return context.text if context is not None else ""

    async def search(self, project_id: int, query: str, limit: int, besides: int | None) -> list[ProjectHit]:
        """The project's knowledge and its other chats (recall across the project; [] when the user turned it
        off for this project)."""
        project = self._projects.get(project_id)
        if project is None or not project.recall:
            return []
        return await self._store.search_project(project_id, query, limit, besides)

    # --- edits ------------------------------------------------------------------------------------------
    async def create(
        self,
        name: str,
        instructions: str = "",
        profile: str | None = None,
        model: str | None = None,
        workspace: str | None = None,
    ) -> Project:
        name = one_line(name)
        if not name:
            raise ValueError(M.say(M.PROJECT_NEEDS_NAME))
        project = await self._store.create_project(name, instructions.strip(), profile, model, workspace)
        return await self._changed(project.id)

    async def update(self, project_id: int, **changes: str | bool | None) -> Project:
        if "name" in changes:
            changes["name"] = one_line(str(changes["name"] or ""))
            if not changes["name"]:
                raise ValueError(M.say(M.PROJECT_NEEDS_NAME))
        await self._store.update_project(project_id, dict(changes))
        return await self._changed(project_id)

    async def delete(self, project_id: int, chats: Literal["keep", "delete"]) -> list[int]:
        """Delete a project; its chats stay (out of any project) or are deleted too, as the user chose: never
        without the choice. The ids of the chats deleted."""
        deleted = await self._store.delete_project(project_id, chats)
        self._projects.pop(project_id, None)
        self._knowledge.pop(project_id, None)
        self._emit(ProjectsChanged(0))
        self._emit(SessionsChanged(0))
        return deleted

    async def add_text(self, project_id: int, name: str, text: str) -> Knowledge:
        if not text.strip():
            raise ValueError(M.say(M.PROJECT_TEXT_EMPTY))
        piece = await self._store.add_knowledge(project_id, one_line(name) or "Pasted text", "text", text)
        await self._changed(project_id)
        return piece

    async def add_file(self, project_id: int, path: str | Path) -> Knowledge:
        """A text file's contents as the project has them from now on (a later change to the file is not
        followed: add it again). AttachmentRefused (one sentence) for what is not a text file."""
        from desktop.engine.history.attachments import read_text_file

        path = Path(path)
        text = await asyncio.to_thread(read_text_file, path)
        piece = await self._store.add_knowledge(project_id, path.name, "file", text, str(path))
        await self._changed(project_id)
        return piece

    async def remove(self, project_id: int, name_or_id: str) -> Knowledge:
        """Remove a piece of knowledge by its name or id; ValueError when the project has none such."""
        for piece in self._knowledge.get(project_id, []):
            if piece.name == name_or_id or str(piece.id) == name_or_id.strip():
                await self._store.remove_knowledge(piece.id)
                await self._changed(project_id)
                return piece
        raise ValueError(M.say(M.PROJECT_NO_KNOWLEDGE, name=name_or_id))

    async def move_chat(self, session_id: int, project_id: int | None) -> None:
        """Put a chat in a project (or, with None, out of any)."""
        await self._store.set_session_project(session_id, project_id)
        self._emit(SessionsChanged(session_id))

    async def _changed(self, project_id: int) -> Project:
        project = await self._store.get_project(project_id)
        if project is None:
            raise UnknownProject(M.say(M.PROJECT_UNKNOWN, name=str(project_id)))
        self._projects[project_id] = project
        self._knowledge[project_id] = await self._store.knowledge(project_id)
        self._contexts.clear()
        self._emit(ProjectsChanged(project_id))
        return project
