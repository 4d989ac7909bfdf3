"""The permission policy: every call asks by default, and what the user answered decides the next ones.

Answers: Allow once / Allow for this chat / Always for this tool (saved, bound to a hash of the server's whole
definition: command, arguments, folder, environment, URL and headers, so it never carries to another server or
to the same one changed) / Deny. A server changed since it was allowed is asked about again, and the prompt names
what changed. No answer (closed prompt, timeout, nobody to ask) denies. Read-only tools are approved without
asking only when the user opted in.

A command that asks for the network (``"network": true``) is approved on its own: allowing commands for a chat
never lets one reach the network without the question. Where no sandbox can start, the run tool has an origin
of its own (``UNCONFINED``): --yes and --allow never run such a command unless the user also said
--allow-unsandboxed; only a prompt that warned, or that flag, lets it run with the user's access.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

# SavedApproval is re-exported: the policy's callers name it here.
from msgspec import Struct, field, structs

from desktop.engine.history.storage import SavedApproval as SavedApproval
from desktop.tools.types import BUILTIN, ToolSpec

ASK_TIMEOUT = 300.0  # seconds a prompt waits before it counts as Deny
log = logging.getLogger(__name__)
UNCONFINED = f"{BUILTIN}:unconfined"  # the run tool's origin without a sandbox: its approvals are its own
NETWORK = "network"  # the run tool's argument that asks for the network; its approvals are bound to it too
UNSANDBOXED_REFUSAL = (
    "the command was not run: no sandbox can start here, and --yes and --allow never run a command without it "
    "(add --allow-unsandboxed to run commands with your user's full access)"
)


def asks_network(tool: str, arguments: Mapping[str, object]) -> bool:
    """Whether a call of the built-in ``tool`` asks for the network (only ``run`` can)."""
    return tool == "run" and arguments.get(NETWORK) is True


# What an MCP approval is bound to, in this order. A saved origin is "<hash of all> <field>:<hash> ..."; the
# per-field hashes say what changed, and are short and salted with the field's name, so they keep no secret.
DEFINITION_FIELDS = ("command", "args", "cwd", "env", "url", "headers")
WHOLE_DEFINITION = "definition"  # what changed, when the saved approval predates the per-field hashes


def _digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def definition_origin(definition: Mapping[str, object]) -> str:
    """The origin an MCP server's approvals are bound to: its whole definition (``DEFINITION_FIELDS``)."""
    values = [definition.get(name) or None for name in DEFINITION_FIELDS]
    fields = " ".join(
        f"{name}:{_digest(name, value)[:12]}" for name, value in zip(DEFINITION_FIELDS, values, strict=True)
    )
    return f"{_digest(*values)[:32]} {fields}"


def _fields(origin: str) -> dict[str, str]:
    return dict(part.split(":", 1) for part in origin.split(" ")[1:] if ":" in part)


def changed_parts(approved: str, now: str) -> tuple[str, ...]:
    """What differs between the definition approved and the one now (``WHOLE_DEFINITION`` when the approval
    was saved before the parts were kept)."""
    before, after = _fields(approved), _fields(now)
    if not before or not after:
        return (WHOLE_DEFINITION,)
    return tuple(name for name in DEFINITION_FIELDS if before.get(name) != after.get(name)) or (
        WHOLE_DEFINITION,
    )


class Answer(StrEnum):
    ONCE = "once"
    CHAT = "chat"
    ALWAYS = "always"
    DENY = "deny"


class PermissionRequest(Struct, frozen=True):
    """What a prompt shows: server, tool and arguments (and the diff of a write or an edit)."""

    session_id: int
    tool_use_id: str
    spec: ToolSpec
    arguments: dict[str, Any]
    diff: str | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    changed: tuple[
        str, ...
    ] = ()  # the server was allowed before as it was: what changed since (DEFINITION_FIELDS)

    @property
    def server_label(self) -> str:
        return "built-in" if self.spec.server == BUILTIN else self.spec.server

    @property
    def asks_network(self) -> bool:
        """A built-in command that asks for the network: the prompt says what that opens."""
        return self.spec.server == BUILTIN and asks_network(self.spec.tool, self.arguments)

    def arguments_text(self, limit: int = 4_000) -> str:
        text = json.dumps(self.arguments, ensure_ascii=False, indent=2)
        return text if len(text) <= limit else text[:limit] + "\n…"


class ApprovalStore(Protocol):
    """Where "Always for this tool" answers live (the store implements it)."""

    async def approvals(self) -> list[SavedApproval]: ...
    async def save_approval(self, server: str, tool: str, origin: str) -> SavedApproval: ...
    async def revoke_approval(self, approval_id: int) -> bool: ...


@runtime_checkable
class ChatApprovalStore(Protocol):
    """Where "Allow for this chat" answers live, so they survive a restart (the store implements it)."""

    async def chat_approvals(self, session_id: int | None = None) -> list[SavedApproval]: ...
    async def save_chat_approval(self, session_id: int, server: str, tool: str, origin: str) -> None: ...
    async def revoke_chat_approval(self, approval_id: int) -> bool: ...


Asker = Callable[[PermissionRequest], Awaitable[Answer | None]]


class Verdict(Struct, frozen=True):
    """Whether a tool call may run, and how that was decided."""

    allowed: bool
    how: str  # asked:once | asked:chat | asked:always | saved | chat | allow-list | yes | read-only | denied | ...
    reason: str = ""


def _key(request: PermissionRequest) -> tuple[str, str, str]:
    spec = request.spec
    origin = f"{spec.origin} {NETWORK}" if request.asks_network else spec.origin
    return (spec.server, spec.tool, origin)


class PermissionPolicy:
    """One per process. ``allow``: tool names (or server:tool) approved up front (``precis chat --allow``);
    ``yes``: approve everything; ``auto_read_only``: the opt-in for read-only tools; ``allow_unsandboxed``:
    --yes and --allow cover commands where no sandbox can start too (``precis chat --allow-unsandboxed``)."""

    def __init__(
        self,
        approvals: ApprovalStore | None = None,
        *,
        allow: Iterable[str] = (),
        yes: bool = False,
        auto_read_only: bool = False,
        allow_unsandboxed: bool = False,
        timeout: float = ASK_TIMEOUT,
    ):
        self.approvals = approvals
        self.allow = frozenset(a.strip() for a in allow if a.strip())
        self.yes = yes
        self.auto_read_only = auto_read_only
        self.allow_unsandboxed = allow_unsandboxed
        self.timeout = timeout
        self._chat: dict[int, set[tuple[str, str, str]]] = {}  # read from the store once per chat
        self._saved: set[tuple[str, str, str]] | None = None
        self._ask_lock: dict[int, asyncio.Lock] = {}

    async def _saved_keys(self) -> set[tuple[str, str, str]]:
        if self._saved is None:
            saved = await self.approvals.approvals() if self.approvals else []
            self._saved = {(a.server, a.tool, a.origin) for a in saved}
        return self._saved

    def _chat_store(self) -> ChatApprovalStore | None:
        # An "Always" store without chat answers (tests, a plain CLI run) keeps them for the run only.
        return self.approvals if isinstance(self.approvals, ChatApprovalStore) else None

    async def _chat_keys(self, session_id: int) -> set[tuple[str, str, str]]:
        keys = self._chat.get(session_id)
        if keys is None:
            store = self._chat_store()
            saved = await store.chat_approvals(session_id) if store is not None else []
            keys = self._chat.setdefault(session_id, {(a.server, a.tool, a.origin) for a in saved})
        return keys

    def forget_saved(self) -> None:
        """Saved approvals changed elsewhere (revoked in Settings): read them again."""
        self._saved = None
        self._chat.clear()

    def _listed(self, spec: ToolSpec) -> bool:
        return bool({spec.name, spec.tool, f"{spec.server}:{spec.tool}", "*"} & self.allow)

    async def decide(self, request: PermissionRequest, asker: Asker | None) -> Verdict:
        spec = request.spec
        key = _key(request)
        unwarned = spec.origin == UNCONFINED and not self.allow_unsandboxed  # nothing said it runs unconfined
        if self.yes or self._listed(spec):
            if unwarned:
                return Verdict(False, "unsandboxed", UNSANDBOXED_REFUSAL)
            return Verdict(True, "yes" if self.yes else "allow-list")
        if spec.read_only and self.auto_read_only:
            return Verdict(True, "read-only")
        if key in await self._chat_keys(request.session_id):
            return Verdict(True, "chat")
        if key in await self._saved_keys():
            return Verdict(True, "saved")
        if asker is None:
            return Verdict(
                False,
                "denied",
                f"the tool {spec.name} needs approval and nobody can be asked "
                f"(run with --allow {spec.name} or --yes)",
            )
        # One prompt at a time per chat: answers given to the first may approve the next.
        lock = self._ask_lock.setdefault(request.session_id, asyncio.Lock())
        async with lock:
            if key in await self._chat_keys(request.session_id) or key in await self._saved_keys():
                return Verdict(True, "chat")
            request = await self._with_changes(request)
            try:
                answer = await asyncio.wait_for(asker(request), self.timeout)
            except TimeoutError:
                answer = None
        return await self._apply(request, answer)

    async def _with_changes(self, request: PermissionRequest) -> PermissionRequest:
        """The request, with what changed when this tool was allowed before for another definition of its server."""
        spec = request.spec
        if spec.server == BUILTIN:
            return request
        known = (await self._chat_keys(request.session_id)) | (await self._saved_keys())
        before = sorted(
            origin for server, tool, origin in known if (server, tool) == (spec.server, spec.tool)
        )
        if not before:
            return request
        changed = min((changed_parts(origin, spec.origin) for origin in before), key=len)
        return structs.replace(request, changed=changed)

    async def _apply(self, request: PermissionRequest, answer: Answer | None) -> Verdict:
        spec = request.spec
        key = _key(request)
        if answer is None:
            return Verdict(False, "timeout", f"no answer for {spec.name}: denied")
        if answer == Answer.DENY:
            return Verdict(False, "denied", f"the user denied {spec.name}")
        if answer == Answer.CHAT:
            (await self._chat_keys(request.session_id)).add(key)
            if (store := self._chat_store()) is not None:
                await store.save_chat_approval(request.session_id, *key)
        elif answer == Answer.ALWAYS:
            if self.approvals is not None:
                await self.approvals.save_approval(*key)
            (await self._saved_keys()).add(key)
        return Verdict(True, f"asked:{answer.value}")
