"""Keys go as configured: an API key as the x-api-key header only, a bearer token as Authorization only, a keyless
profile neither; Test connection says what was sent. The real SDK against loopback servers that accept one header
only, as compatible providers do."""

from __future__ import annotations

import json

import pytest

from desktop.engine.config.profiles import AuthKind, Profile
from desktop.engine.config.settings import Settings
from tests.conftest import _open_engine
from tests.fakeapi import FakeAnthropic

KEY = "sk-configured-key"


def _sent(server: FakeAnthropic) -> set[tuple[str | None, str | None]]:
    """Every request's (x-api-key, authorization) pair, as the server saw it."""
    return {(r.headers.get("x-api-key"), r.headers.get("authorization")) for r in server.requests}


async def _chat_and_count(engine) -> None:  # noqa: ANN001 - the runtime's engine
    """A turn (streamed), a token count and a model list: every kind of request the engine makes."""
    sid = await engine.new_session()
    reply = await engine.send(sid, "hello")
    assert reply is not None and reply.status == "complete"
    session = await engine.store.get_session(sid)
    assert session is not None
    provider = engine.provider_for(session)
    assert (
        await provider.count_tokens({"model": session.model, "messages": [{"role": "user", "content": "hi"}]})
        is not None
    )
    assert await provider.models()


async def test_the_environment_api_key_goes_as_the_x_api_key_header_only(monkeypatch):
    with FakeAnthropic(api_key=KEY, accepts="x-api-key") as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        async with _open_engine(credentials=False) as engine:
            await _chat_and_count(engine)
        assert _sent(server) == {(KEY, None)}


async def test_the_environment_auth_token_goes_as_a_bearer_header_only(monkeypatch):
    with FakeAnthropic(api_key=KEY, accepts="bearer") as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", KEY)
        async with _open_engine(credentials=False) as engine:
            await _chat_and_count(engine)
        assert _sent(server) == {(None, f"Bearer {KEY}")}


@pytest.mark.parametrize(
    ("auth", "expected", "words"),
    [
        ("x-api-key", (KEY, None), "API key (x-api-key header)"),
        ("bearer", (None, f"Bearer {KEY}"), "Bearer token (Authorization header)"),
    ],
)
async def test_a_profile_sends_its_key_the_way_it_is_set_and_test_connection_says_so(
    auth: AuthKind, expected, words, memory_keyring
):  # noqa: ANN001
    from desktop.engine.config import secrets
    from desktop.engine.providers.probe import probe

    with FakeAnthropic(api_key=KEY, accepts=auth) as server:
        profile = Profile("Compatible", server.base_url, auth, "claude-test")
        secrets.save_api_key(KEY, profile.keyring_account)
        result = await probe(Settings(), profile, secrets.load_credentials({}, profile=profile))
        assert result.ok, result.text
        assert f"the {words} was accepted" in result.lines[0]
        assert _sent(server) == {expected}
        async with _open_engine(
            {
                "profiles": [profile],
                "profile": profile.name,
                "base_url": profile.base_url,
                "model": profile.model,
            },
            credentials=False,
        ) as engine:
            await _chat_and_count(engine)
        assert _sent(server) == {expected}


async def test_test_connection_names_the_header_that_was_sent_not_the_one_the_profile_names(monkeypatch):
    """The environment's token wins over the profile's key: the report says a bearer token went."""
    from desktop.engine.config import secrets
    from desktop.engine.providers.probe import probe

    with FakeAnthropic(api_key=KEY, accepts="bearer") as server:
        monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", KEY)
        profile = Profile("Says x-api-key", server.base_url, "x-api-key", "claude-test")
        result = await probe(Settings(), profile, secrets.load_credentials(profile=profile))
        assert result.ok, result.text
        assert "the Bearer token (Authorization header) was accepted" in result.lines[0]
        assert _sent(server) == {(None, f"Bearer {KEY}")}


async def test_a_keyless_profile_sends_neither_header_even_with_a_token_cache_on_the_machine(
    tmp_path, monkeypatch
):
    """A keyless local profile sends no key, whatever else the SDK could find on the machine (here: an
    ANTHROPIC_PROFILE config the SDK would otherwise load and sign requests with)."""
    from desktop.engine.config.secrets import load_credentials
    from desktop.engine.providers.probe import probe

    config = tmp_path / "anthropic-config"
    (config / "configs").mkdir(parents=True)
    token = config / "work-token.json"
    token.write_text(
        '{"type": "oauth_token", "access_token": "sk-from-the-sdk-profile", "expires_at": 4102444800}'
    )
    token.chmod(0o600)
    (config / "configs" / "work.json").write_text(
        json.dumps({"authentication": {"type": "user_oauth", "credentials_path": str(token)}})
    )
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(config))
    monkeypatch.setenv("ANTHROPIC_PROFILE", "work")
    with FakeAnthropic(api_key=None) as server:
        profile = Profile("Local", server.base_url, "none", "claude-test")
        credentials = load_credentials({}, profile=profile)
        assert credentials.source == "not_needed"
        result = await probe(Settings(), profile, credentials)
        assert result.ok and "no key was needed" in result.lines[0]
        async with _open_engine(
            {
                "profiles": [profile],
                "profile": profile.name,
                "base_url": profile.base_url,
                "model": profile.model,
            },
            credentials=False,
        ) as engine:
            await _chat_and_count(engine)
        assert _sent(server) == {(None, None)}


def test_the_cli_chats_through_a_keyless_profile_with_no_key_anywhere(precis_home):
    """`precis chat` with a keyless local profile active and no key in the environment or the keyring."""
    import os
    import subprocess
    import sys

    from desktop.engine.config.settings import Paths

    with FakeAnthropic(api_key=None) as server:
        profile = Profile("Local", server.base_url, "none", "claude-test")
        paths = Paths.resolve().ensure()
        Settings(profile=profile.name, profiles=[profile]).save(paths)
        server.queue_text("keyless hello")
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env["PRECIS_HOME"] = str(precis_home)
        res = subprocess.run(
            [sys.executable, "-m", "desktop", "chat", "--new", "hi"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert res.returncode == 0, res.stderr
        assert res.stdout == "keyless hello\n"
        assert _sent(server) == {(None, None)}


async def test_a_keyless_profile_asks_its_provider_for_an_unknown_models_window():
    """Keyless is not "no credentials": the window of a model the catalog does not know is asked for."""
    with FakeAnthropic(api_key=None, window=32_000, models=["local-llama"]) as server:
        profile = Profile("Local", server.base_url, "none", "local-llama")
        async with _open_engine(
            {
                "profiles": [profile],
                "profile": profile.name,
                "base_url": profile.base_url,
                "model": profile.model,
            },
            credentials=False,
        ) as engine:
            sid = await engine.new_session()
            snapshot = await engine.publish_context(sid)
        assert any(r.path == "/v1/models/local-llama" for r in server.requests)
        assert snapshot.window == 32_000
        assert _sent(server) == {(None, None)}
