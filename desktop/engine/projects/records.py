"""A project and its knowledge as stored, and what a search across a project finds."""

from __future__ import annotations

from typing import Literal

from msgspec import Struct

KnowledgeKind = Literal["file", "text"]


class Knowledge(Struct, frozen=True):
    """One piece of a project's knowledge: a file's text as it was added, or text the user pasted."""

    id: int
    project_id: int
    name: str
    kind: KnowledgeKind
    text: str
    source: str = ""  # the file it was read from ('' for pasted text)
    added_at: float = 0.0


class Project(Struct, frozen=True):
    """Chats grouped under shared instructions and knowledge, with the defaults a new chat of it takes."""

    id: int
    name: str
    instructions: str = ""
    profile: str | None = None  # a new chat's provider profile (None: the active one)
    model: str | None = None  # a new chat's model (None: the profile's)
    workspace: str | None = None  # a new chat's workspace folder
    recall: bool = True  # the recall tool also searches the knowledge and the project's other chats
    created_at: float = 0.0
    updated_at: float = 0.0
    chats: int = 0  # how many chats belong to it (as listed)


class ProjectHit(Struct, frozen=True):
    """What a search across a project found: a piece of knowledge, or a message of one of its chats."""

    source: Literal["knowledge", "chat"]
    title: str  # the knowledge's name, or the chat's title
    snippet: str
    rank: float  # bm25: lower is better
    session_id: int | None = None
    message_id: int | None = None
    knowledge_id: int | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"source": self.source, "title": self.title, "snippet": self.snippet}
        if self.session_id is not None:
            out |= {"chat": self.session_id, "message_id": self.message_id}
        if self.knowledge_id is not None:
            out["knowledge_id"] = self.knowledge_id
        return out
