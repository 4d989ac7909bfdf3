""" "Allow for this chat" is stored with its chat: it survives a restart, stays in that chat only, is listed
with the saved approvals, revocable, and goes when the chat is deleted."""

from __future__ import annotations

from desktop.store import Store
from desktop.store.tool_log import ToolLog
from desktop.tools.permissions import Answer, PermissionPolicy, PermissionRequest
from desktop.tools.types import ToolSpec

RUN = ToolSpec("run", "builtin", "run", {"name": "run"}, origin="builtin-origin")


def req(session: int) -> PermissionRequest:
    return PermissionRequest(session, "toolu_1", RUN, {"command": "ls"})


class Asker:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.asked = 0

    async def __call__(self, _request: PermissionRequest) -> Answer:
        self.asked += 1
        return self.answer


async def test_allow_for_this_chat_survives_a_restart_in_that_chat_only(tmp_path):
    path = tmp_path / "precis.db"
    store = await Store.open(path)
    try:
        a = (await store.create_session("A", "m")).id
        b = (await store.create_session("B", "m")).id
        verdict = await PermissionPolicy(ToolLog(store)).decide(req(a), Asker(Answer.CHAT))
        assert verdict.allowed and verdict.how == "asked:chat"
    finally:
        await store.close()
    store = await Store.open(path)  # a restart: a new store and a new policy
    try:
        log = ToolLog(store)
        policy = PermissionPolicy(log)
        deny = Asker(Answer.DENY)
        again = await policy.decide(req(a), deny)
        assert again.allowed and again.how == "chat" and deny.asked == 0
        assert not (await policy.decide(req(b), deny)).allowed and deny.asked == 1  # another chat still asks
        listed = await log.chat_approvals()
        assert [(x.session_id, x.server, x.tool, x.origin) for x in listed] == [
            (a, "builtin", "run", "builtin-origin")
        ]
        assert await log.approvals() == []  # not an "Always" approval
        # Revoked in Settings: the policy reads them again and asks.
        assert await log.revoke_chat_approval(listed[0].id)
        policy.forget_saved()
        assert not (await policy.decide(req(a), deny)).allowed and deny.asked == 2
        # Answered again, then the chat is deleted: its approval goes with it.
        await policy.decide(req(a), Asker(Answer.CHAT))
        assert len(await log.chat_approvals()) == 1
        await store.delete_session(a)
        assert await log.chat_approvals() == []
    finally:
        await store.close()
