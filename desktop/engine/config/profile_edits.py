"""Saving an edited list of provider profiles: keys and chats follow a renamed profile, a duplicate gets the key
of its original when the user asked, and a deleted profile's key leaves the keyring and the key file while its
chats (their messages kept) move to the profile in use."""

from __future__ import annotations

import asyncio

from desktop.engine.config import secrets
from desktop.engine.config.profiles import Profile, ProfileEdits
from desktop.engine.history.storage import Storage


def account(name: str) -> str:
    return Profile(name).keyring_account


def _move_keys(edits: ProfileEdits) -> None:
    """Read every key a copy or a rename takes first: a deleted or renamed profile's name may be reused."""
    taken = {name: secrets.stored_key(account(name)) for name in (*edits.copy_keys.values(), *edits.renamed)}
    for name in (*edits.deleted, *edits.renamed):
        secrets.forget_key(account(name))
    for new, source in (*edits.copy_keys.items(), *((new, old) for old, new in edits.renamed.items())):
        if (found := taken.get(source)) is not None:
            secrets.put_key(account(new), *found)


async def apply(store: Storage, edits: ProfileEdits, in_use: Profile) -> None:
    """Carry out ``edits`` after settings.json was written with the new list; ``in_use``: the active profile.
    Raises KeyringUnavailable or OSError (in words) when a key could not be written."""
    if not edits:
        return
    await asyncio.to_thread(_move_keys, edits)
    for name in edits.deleted:
        await store.move_profile(name, in_use.name, in_use.model or None)
    # Through a name no profile can have (a control character): two profiles that swap names keep their chats.
    for old in edits.renamed:
        await store.move_profile(old, "\x00" + old)
    for old, new in edits.renamed.items():
        await store.move_profile("\x00" + old, new)
