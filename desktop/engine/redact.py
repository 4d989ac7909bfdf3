"""Keep credentials out of what the user and the logs see.

Providers sometimes echo the credential they rejected ("invalid x-api-key: Bearer sk-ant-…"), and an SDK or
transport exception can carry request headers. :func:`redact` removes the configured secrets (whatever their
shape) and anything shaped like a credential: ``sk-…`` keys, ``Bearer …`` tokens and the values of
``x-api-key`` / ``Authorization`` / ``api_key`` / ``auth_token`` fields.

The keys Précis loads are remembered here (``secrets.load_credentials`` calls :func:`remember`), so
``errors.classify`` and the log filter installed by :func:`install_log_filter` remove them even when a
provider's key has no recognisable shape.
"""

from __future__ import annotations

import logging
import re
import threading
import traceback
from collections.abc import Callable, Iterable
from typing import Any

from desktop.engine.lazy_re import LazyPattern

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 6  # shorter "secrets" (a stray "a", an empty field) would shred ordinary text

# "x-api-key: Bearer sk-…", '"authorization": "Bearer …"', "api_key=…&…": the name, its separator, an
# optional scheme, then the value (8+ characters, so "x-api-key: missing" stays readable).
_FIELD = LazyPattern(
    r"""(?ix)
    (?P<name>\b(?:x-api-key|api[-_]?key|anthropic[-_]api[-_]key|anthropic[-_]auth[-_]token
                 |auth[-_]?token|access[-_]?token|authorization)\b)
    (?P<sep>["']?\s*[:=]\s*["']?)
    (?:(?P<scheme>bearer|basic|token)\s+)?
    (?!\[redacted\])(?P<value>[^\s"',;&)}\]]{8,})
    """
)
_BEARER = LazyPattern(r"(?i)\b(?P<scheme>bearer)\s+[A-Za-z0-9._~+/=\-]{8,}")
_SK_KEY = LazyPattern(r"\bsk-[A-Za-z0-9_\-]{8,}")

_known: list[str] = []
_known_lock = threading.Lock()


def _usable(secrets: Iterable[str | None]) -> list[str]:
    found = {s.strip() for s in secrets if isinstance(s, str) and len(s.strip()) >= MIN_SECRET_LENGTH}
    return sorted(found, key=len, reverse=True)  # longest first: a key containing another is removed whole


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` without ``secrets`` and without anything that looks like a key or a bearer token."""
    if not text:
        return text
    for secret in _usable(secrets):
        text = text.replace(secret, REDACTED)

    def field(m: re.Match[str]) -> str:
        scheme = f"{m['scheme']} " if m["scheme"] else ""
        return f"{m['name']}{m['sep']}{scheme}{REDACTED}"

    text = _FIELD.sub(field, text)
    text = _BEARER.sub(lambda m: f"{m['scheme']} {REDACTED}", text)
    return _SK_KEY.sub(REDACTED, text)


def remember(*secrets: str | None) -> None:
    """Add credentials the app has loaded to the ones :func:`known_secrets` returns (kept in memory only)."""
    with _known_lock:
        for secret in _usable(secrets):
            if secret not in _known:
                _known.append(secret)


def known_secrets() -> tuple[str, ...]:
    """Every credential this process has loaded, for :func:`redact`."""
    with _known_lock:
        return tuple(_known)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts a record's message, exception text and stack in place (never drops it).

    ``install_log_filter`` applies it to every record as it is created; it can also be added to a handler.
    """

    def __init__(self, get_secrets: Callable[[], Iterable[str | None]] = known_secrets) -> None:
        super().__init__()
        self.get_secrets = get_secrets
        self.previous_factory: Callable[..., logging.LogRecord] | None = None
        self.factory: Callable[..., logging.LogRecord] | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        self.redact_record(record)
        return True

    def _secrets(self) -> list[str]:
        try:
            return [s for s in (*self.get_secrets(), *known_secrets()) if s]
        except Exception:  # a broken callback must not stop logging; the patterns still apply
            return list(known_secrets())

    def redact_record(self, record: logging.LogRecord) -> logging.LogRecord:
        secrets = self._secrets()
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: logging reports it itself when the record is emitted
            return record
        clean = redact(message, secrets)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
            text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
            clean = redact(text, secrets)
            if clean != text:
                record.exc_text = clean  # formatters use the cached text instead of formatting exc_info again
        if record.stack_info:
            record.stack_info = redact(record.stack_info, secrets)
        return record


_installed: RedactingFilter | None = None


def install_log_filter(get_secrets: Callable[[], Iterable[str | None]] = known_secrets) -> RedactingFilter:
    """Redact every log record of the process from now on, whichever logger or handler it goes to.

    ``get_secrets`` returns the credentials to remove (called for each record, so a key changed in Settings
    is covered); the keys remembered by :func:`remember` are always removed too. Installing again only
    replaces ``get_secrets``. Returns the filter (see :func:`uninstall_log_filter`).
    """
    global _installed
    if _installed is not None and logging.getLogRecordFactory() is _installed.factory:
        _installed.get_secrets = get_secrets
        return _installed
    flt = RedactingFilter(get_secrets)
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        return flt.redact_record(previous(*args, **kwargs))

    flt.previous_factory, flt.factory = previous, factory
    logging.setLogRecordFactory(factory)
    _installed = flt
    return flt


def uninstall_log_filter(flt: RedactingFilter) -> None:
    """Undo :func:`install_log_filter` (tests); a factory someone installed on top of it stays."""
    global _installed
    if flt.factory is not None and logging.getLogRecordFactory() is flt.factory and flt.previous_factory:
        logging.setLogRecordFactory(flt.previous_factory)
    if _installed is flt:
        _installed = None
