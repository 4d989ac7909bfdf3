"""The API key: environment first, then the OS keyring, then (only when the user chose it, where no keyring
works) a private file in the config folder, readable by its owner only. Never in settings.json or the database."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

from msgspec import Struct

from desktop.engine import messages as M
from desktop.engine import redact
from desktop.engine.config import files
from desktop.engine.config.profiles import Profile

SERVICE = "precis"
ACCOUNT = "anthropic-api-key"
# Backends that would store the key in plain text or not at all: refuse them.
log = logging.getLogger(__name__)
_UNSAFE_BACKENDS = ("keyrings.alt.file", "keyring.backends.fail", "keyring.backends.null")


class KeyringUnavailable(RuntimeError):
    """No usable OS keyring. The message is meant for the user."""


class Credentials(Struct, frozen=True):
    """The API key or token in use and where it came from."""

    api_key: str | None = None
    auth_token: str | None = None  # bearer token used by Anthropic-compatible providers
    source: str = "none"  # env | keyring | file | session | none | not_needed (a local server without keys)

    @property
    def present(self) -> bool:
        return bool(self.api_key or self.auth_token) or self.source == "not_needed"


_session_key: str | None = None


def _keyring() -> ModuleType:
    """The keyring package, imported when first asked: it and its backends (secretstorage, cryptography,
    jeepney) cost a fifth of a cold start, and a key in the environment never needs them."""
    import keyring
    import keyring.errors  # noqa: F401 - KeyringError, through the package

    return keyring


def keyring_status() -> str | None:
    """None when a safe keyring is usable, else a plain-words reason."""
    backend = _keyring().get_keyring()
    module = type(backend).__module__
    if module.startswith(_UNSAFE_BACKENDS) or "fail" in module.rsplit(".", 1)[-1]:
        return M.say(M.NO_KEYRING)
    if module == "keyring.backends.chainer":
        backends = getattr(backend, "backends", [])
        if not any(not type(b).__module__.startswith(_UNSAFE_BACKENDS) for b in backends):
            return M.say(M.NO_SAFE_KEYRING)
    return None


def load_credentials(env: Mapping[str, str] | None = None, profile: Profile | None = None) -> Credentials:
    """The credentials to use (for ``profile``: its own key, sent the way it authenticates); they are also
    remembered for redaction (errors and logs never show them)."""
    creds = _load_credentials(env, profile)
    redact.remember(creds.api_key, creds.auth_token)
    return creds


def at_hand(env: Mapping[str, str] | None = None, profile: Profile | None = None) -> Credentials | None:
    """The credentials that need no lookup (the environment, this run's key), or None: a kept key would have to be
    looked for in the keyring (its stack loads, a desktop's secret service may ask to be unlocked) or the key file."""
    environ: Mapping[str, str] = os.environ if env is None else env
    if environ.get("ANTHROPIC_API_KEY"):
        return Credentials(api_key=environ["ANTHROPIC_API_KEY"], source="env")
    if environ.get("ANTHROPIC_AUTH_TOKEN"):
        return Credentials(auth_token=environ["ANTHROPIC_AUTH_TOKEN"], source="env")
    bearer = profile is not None and profile.auth == "bearer"
    if _session_key:
        return Credentials(None if bearer else _session_key, _session_key if bearer else None, "session")
    return None


def _load_credentials(env: Mapping[str, str] | None, profile: Profile | None) -> Credentials:
    if (found := at_hand(env, profile)) is not None:
        return found
    bearer = profile is not None and profile.auth == "bearer"
    if keyring_status() is None:
        keyring = _keyring()
        try:
            stored = keyring.get_password(SERVICE, profile.keyring_account if profile else ACCOUNT)
        except keyring.errors.KeyringError:
            stored = None
        if stored:
            return Credentials(None if bearer else stored, stored if bearer else None, "keyring")
    if stored := _key_file_entries().get(profile.keyring_account if profile else ACCOUNT):
        return Credentials(None if bearer else stored, stored if bearer else None, "file")
    if profile is not None and profile.auth == "none":
        return Credentials(source="not_needed")
    return Credentials()


def save_api_key(key: str, account: str = ACCOUNT) -> None:
    """Store the key in the OS keyring, or raise KeyringUnavailable with a reason for the user."""
    redact.remember(key)
    reason = keyring_status()
    if reason:
        raise KeyringUnavailable(reason)
    keyring = _keyring()
    try:
        keyring.set_password(SERVICE, account, key)
    except keyring.errors.KeyringError as exc:
        raise KeyringUnavailable(M.say(M.KEYRING_REFUSED, error=redact.redact(str(exc), [key]))) from exc


# --- the private key file: the user's explicit choice where no keyring works ---------------------------------
KEY_FILE = "keys.json"


def key_file() -> Path:
    """Where keys are kept when the user chose a file: the config folder (0700), the file itself 0600."""
    from desktop.engine.config.settings import Paths

    return Paths.resolve().config_dir / KEY_FILE


def _key_file_entries() -> dict[str, str]:
    """Account -> key, from the key file (empty when there is none, or it is not a small JSON object)."""
    try:
        data = json.loads(files.decode_text(files.read_regular(key_file(), 64 * 1024)))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    keys = {str(k): v for k, v in data.items() if isinstance(v, str) and v}
    redact.remember(*keys.values())
    return keys


def _write_key_file(entries: dict[str, str]) -> None:
    path = key_file()
    files.private_dir(path.parent)
    files.write_private(path, json.dumps(entries, indent=2) + "\n")


def save_api_key_to_file(key: str, account: str = ACCOUNT) -> Path:
    """Keep the key in the private key file (for systems without a keyring; the user chose it). Returns the
    file's path; an OSError says why it could not be written."""
    redact.remember(key)
    entries = _key_file_entries()
    entries[account] = key
    _write_key_file(entries)
    return key_file()


def stored_key(account: str) -> tuple[str, bool] | None:
    """The key kept under ``account`` and whether it is in the key file (else the keyring); None: no key."""
    if keyring_status() is None:
        keyring = _keyring()
        try:
            if found := keyring.get_password(SERVICE, account):
                return found, False
        except keyring.errors.KeyringError:
            pass
    found = _key_file_entries().get(account)
    return (found, True) if found else None


def put_key(account: str, key: str, in_file: bool) -> None:
    """Keep ``key`` under ``account`` where its original was kept (the key file, else the keyring)."""
    if in_file:
        save_api_key_to_file(key, account)
    else:
        save_api_key(key, account)


def forget_key(account: str) -> None:
    """Remove the key kept under ``account`` from the keyring and the key file (nothing there: nothing to do)."""
    if keyring_status() is None:
        keyring = _keyring()
        try:
            if keyring.get_password(SERVICE, account) is not None:
                keyring.delete_password(SERVICE, account)
        except keyring.errors.KeyringError:
            log.warning("the keyring refused to delete a deleted profile's key")
    entries = _key_file_entries()
    if entries.pop(account, None) is not None:
        _write_key_file(entries)


def use_for_this_run(key: str | None) -> None:
    """Keep the key in memory only, for this process."""
    global _session_key
    redact.remember(key)
    _session_key = key or None
