"""The permission policy on its own: the order of its rules, no answer denies, saved approvals are bound to
the server's origin."""

from __future__ import annotations

import asyncio

from desktop.tools.permissions import Answer, PermissionPolicy, PermissionRequest, SavedApproval
from desktop.tools.types import ToolSpec

RUN = ToolSpec("run", "builtin", "run", {"name": "run"})
READ = ToolSpec("read", "builtin", "read", {"name": "read"}, read_only=True)
MCP_A = ToolSpec("mcp__s__t", "s", "t", {"name": "mcp__s__t"}, origin="hash-of-command-a")
MCP_B = ToolSpec("mcp__s__t", "s", "t", {"name": "mcp__s__t"}, origin="hash-of-command-b")


class Approvals:
    def __init__(self) -> None:
        self.saved: list[SavedApproval] = []

    async def approvals(self) -> list[SavedApproval]:
        return list(self.saved)

    async def save_approval(self, server: str, tool: str, origin: str) -> SavedApproval:
        approval = SavedApproval(len(self.saved) + 1, server, tool, origin, 0.0)
        self.saved.append(approval)
        return approval

    async def revoke_approval(self, approval_id: int) -> bool:
        self.saved = [a for a in self.saved if a.id != approval_id]
        return True


def req(spec: ToolSpec, session: int = 1) -> PermissionRequest:
    return PermissionRequest(session, "toolu_1", spec, {})


async def test_no_answer_in_time_denies():
    async def never(_request):
        await asyncio.sleep(3600)

    verdict = await PermissionPolicy(timeout=0.05).decide(req(RUN), never)
    assert not verdict.allowed and verdict.how == "timeout"


async def test_a_closed_prompt_denies():
    async def closed(_request):
        return None

    assert not (await PermissionPolicy().decide(req(RUN), closed)).allowed


async def test_read_only_tools_run_unasked_only_when_opted_in():
    async def deny(_request):
        return Answer.DENY

    assert not (await PermissionPolicy().decide(req(READ), deny)).allowed
    assert (await PermissionPolicy(auto_read_only=True).decide(req(READ), deny)).how == "read-only"
    assert not (await PermissionPolicy(auto_read_only=True).decide(req(RUN), deny)).allowed


async def test_always_is_bound_to_the_servers_origin_and_revocable():
    store = Approvals()
    policy = PermissionPolicy(store)
    answers = [Answer.ALWAYS, Answer.DENY, Answer.DENY]

    async def ask(_request):
        return answers.pop(0)

    assert (await policy.decide(req(MCP_A), ask)).how == "asked:always"
    assert (await policy.decide(req(MCP_A, session=2), ask)).how == "saved"
    assert not (await policy.decide(req(MCP_B), ask)).allowed  # the same name on another command asks again
    await store.revoke_approval(store.saved[0].id)
    policy.forget_saved()
    assert not (await policy.decide(req(MCP_A), ask)).allowed
