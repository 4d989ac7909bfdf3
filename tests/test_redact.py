"""A credential echoed back by a provider (or found in a log record) never reaches the user or a log verbatim."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys

import anthropic
import httpx2 as httpx
import pytest

from desktop.engine.config import secrets
from desktop.engine.providers.errors import classify
from desktop.engine.redact import REDACTED, install_log_filter, redact, uninstall_log_filter
from tests.fakeapi import Fault

KEY = "sk-ant-api03-Zx9YwVu8TsRq7PoNm6LkJi5HgFe4DcBa-0123456789"
PLAIN_KEY = "prov7f3a9c2e11d04b8e55aa"  # an Anthropic-compatible provider's key: no recognisable shape


def status_error(cls, status: int, message: str):  # noqa: ANN001, ANN201
    request = httpx.Request("POST", "https://api.example.test/v1/messages")
    body = {"type": "error", "error": {"type": "authentication_error", "message": message}}
    response = httpx.Response(status, json=body, request=request)
    return cls(message, response=response, body=body)


@pytest.mark.parametrize(
    "text",
    [
        f"invalid x-api-key: Bearer {KEY}",
        f"invalid x-api-key: {KEY}",
        f"Authorization: Bearer {KEY}",
        f'{{"headers": {{"x-api-key": "{KEY}"}}}}',
        f"the key {KEY} is not valid",
        f"api_key={KEY}&model=claude",
    ],
)
def test_keys_and_bearer_tokens_are_removed(text):
    out = redact(text)
    assert KEY not in out and KEY[7:20] not in out and REDACTED in out


def test_configured_secrets_are_removed_whatever_their_shape():
    out = redact(f"invalid api key {PLAIN_KEY} for this account", [PLAIN_KEY, "", None])
    assert PLAIN_KEY not in out and out.startswith("invalid api key ") and out.endswith(" for this account")
    assert redact(f"Bearer {PLAIN_KEY}") == f"Bearer {REDACTED}"
    assert redact(f"x-api-key: {PLAIN_KEY}") == f"x-api-key: {REDACTED}"


def test_ordinary_text_is_left_alone():
    for text in (
        "Check the API key in Settings.",
        "task-force sk-ms",
        "invalid x-api-key",
        "The provider rejected the API key (401): invalid x-api-key. Check the key in Settings.",
        "Bearer of bad news",
        "sk-",
    ):
        assert redact(text) == text


def test_classify_never_words_the_key():
    exc = status_error(anthropic.AuthenticationError, 401, f"invalid x-api-key: Bearer {KEY}")
    err = classify(exc)
    assert err.kind == "auth" and KEY not in err.message and REDACTED in err.message
    err = classify(
        status_error(anthropic.BadRequestError, 400, f"unknown key {PLAIN_KEY}"), secrets=[PLAIN_KEY]
    )
    assert err.kind == "bad_request" and PLAIN_KEY not in err.message
    err = classify(RuntimeError(f"boom with {KEY}"))
    assert err.kind == "unknown" and KEY not in err.message


def test_classify_removes_the_key_the_app_loaded():
    creds = secrets.load_credentials({"ANTHROPIC_API_KEY": PLAIN_KEY})
    assert creds.api_key == PLAIN_KEY
    err = classify(
        status_error(anthropic.PermissionDeniedError, 403, f"key {PLAIN_KEY} may not use this model")
    )
    assert err.kind == "auth" and PLAIN_KEY not in err.message


async def test_an_echoed_key_does_not_reach_the_turn_error(engine, fake_api):
    from desktop.engine.events import TurnError

    sid = (await engine.store.create_session("t", "claude-sonnet-4-6")).id
    fake_api.queue_fault(Fault.custom(401, "authentication_error", f"invalid x-api-key: Bearer {KEY}"))
    assert await engine.send(sid, "hello") is None
    error = [e for e in engine.events if isinstance(e, TurnError)][-1]
    assert error.kind == "auth" and KEY not in error.message


def test_the_cli_does_not_print_an_echoed_key(fake_api, precis_home):
    env = dict(
        os.environ,
        PRECIS_HOME=str(precis_home),
        ANTHROPIC_BASE_URL=fake_api.base_url,
        ANTHROPIC_API_KEY=PLAIN_KEY,
    )
    fake_api.api_key = PLAIN_KEY
    fake_api.queue_fault(Fault.custom(401, "authentication_error", f"invalid api key {PLAIN_KEY}"))
    res = subprocess.run(
        [sys.executable, "-m", "desktop", "chat", "--new", "hi"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 1 and "API key" in res.stderr
    assert PLAIN_KEY not in res.stderr + res.stdout


def test_log_filter_redacts_messages_arguments_and_tracebacks():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("precis.test.redact")
    logger.addHandler(handler)
    logger.propagate = False
    installed = install_log_filter(lambda: [PLAIN_KEY])
    try:
        logger.warning("request failed: %s", f"invalid x-api-key: {PLAIN_KEY}")
        logger.warning(f"retrying with Bearer {KEY}")
        logger.warning("headers %r", {"authorization": f"Bearer {PLAIN_KEY}"})
        try:
            raise RuntimeError(f"provider said: key {PLAIN_KEY} is wrong")
        except RuntimeError:
            logger.exception("turn failed")
    finally:
        uninstall_log_filter(installed)
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert PLAIN_KEY not in text and KEY not in text
    assert text.count(REDACTED) >= 4 and "RuntimeError: provider said: key" in text
    # Uninstalled: records are left as they are again.
    assert logging.getLogRecordFactory() is installed.previous_factory
