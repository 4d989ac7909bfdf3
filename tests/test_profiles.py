"""Provider profiles, keys per profile, Test connection, the per-chat model picker, and environment overrides
that never reach settings.json."""

from __future__ import annotations

import json

import pytest

from desktop.engine.config import secrets
from desktop.engine.config.profiles import PRESETS, Profile
from desktop.engine.config.settings import DEFAULT_MODEL, Paths, Settings
from tests.conftest import _open_engine, engine_of
from tests.fakeapi import FakeAnthropic
from tests.test_window import message_rows, until

KEY = "sk-test-profile-key-0123456789"


def test_presets_name_every_provider_with_its_documented_base_url():
    urls = {p.name: (p.base_url, p.auth) for p in PRESETS}
    assert urls == {
        "Anthropic": ("", "x-api-key"),
        "OpenRouter": ("https://openrouter.ai/api", "bearer"),
        "DeepSeek": ("https://api.deepseek.com/anthropic", "bearer"),
        "Zhipu GLM": ("https://api.z.ai/api/anthropic", "bearer"),
        "Moonshot Kimi": ("https://api.moonshot.ai/anthropic", "bearer"),
        "MiniMax": ("https://api.minimax.io/anthropic", "bearer"),
        "Ollama": ("http://localhost:11434", "none"),
        "llama.cpp server": ("http://localhost:8080", "none"),
    }
    assert all(p.model for p in PRESETS)


@pytest.mark.qt
async def test_the_settings_dialog_never_writes_environment_values_into_settings_json(
    qtbot, monkeypatch, precis_home
):
    from desktop.ui.settings.settings_dialog import ProviderForm

    paths = Paths.resolve().ensure()
    Settings(base_url="http://from-file", model="file-model").save(paths)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://from-env")
    monkeypatch.setenv("ANTHROPIC_MODEL", "env-model")
    settings = Settings.load(paths)
    assert (settings.base_url, settings.model) == ("http://from-env", "env-model")  # runtime overrides
    form = ProviderForm(settings, None, "none")
    qtbot.addWidget(form)
    assert form.base_url.text() == "http://from-env" and not form.base_url.isEnabled()
    form.max_output.setValue(4096)
    async with _open_engine(credentials=False) as engine:
        from desktop.ui.bridge import Bridge

        bridge = Bridge(engine)
        assert await bridge.apply_provider_choice(form.choice()) is None
        assert engine.settings.base_url == "http://from-env"  # still in force for this run
        await bridge.close()
    text = paths.settings_file.read_text()
    saved = json.loads(text)
    assert "from-env" not in text and "env-model" not in text
    assert saved["base_url"] == "http://from-file" and saved["model"] == "file-model"
    assert saved["max_output_tokens"] == 4096
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    monkeypatch.delenv("ANTHROPIC_MODEL")
    again = Settings.load(paths)
    assert (again.base_url, again.model, again.max_output_tokens) == ("http://from-file", "file-model", 4096)


@pytest.mark.qt
async def test_a_preset_fills_the_form_and_its_key_goes_to_its_own_keyring_entry(
    qtbot, memory_keyring, precis_home
):
    from desktop.ui.bridge import Bridge
    from desktop.ui.settings.settings_dialog import ProviderForm

    paths = Paths.resolve().ensure()
    form = ProviderForm(Settings.load(paths), None, "none")
    qtbot.addWidget(form)
    names = [form.profile_box.itemText(i) for i in range(form.profile_box.count())]
    assert set(names) == {p.name for p in PRESETS} | {"Custom"}  # the first-run page picks among presets
    form.profile_box.setCurrentText("DeepSeek")
    assert form.base_url.text() == "https://api.deepseek.com/anthropic"
    assert form.auth.currentData() == "bearer" and not form.long_ttl.isChecked()
    form.model.setText("deepseek-v4-pro")
    form.window_override.setValue(131_072)
    form.api_key.setText(KEY)
    async with _open_engine(credentials=False) as engine:
        bridge = Bridge(engine)
        assert await bridge.apply_provider_choice(form.choice()) is None
        assert engine.settings.base_url == "https://api.deepseek.com/anthropic"
        assert engine.catalog.info("deepseek-v4-pro").window == 131_072
        await bridge.close()
    assert memory_keyring.get_password(secrets.SERVICE, "profile:DeepSeek") == KEY
    assert memory_keyring.get_password(secrets.SERVICE, secrets.ACCOUNT) is None  # not the Anthropic key
    loaded = Settings.load(paths)
    assert loaded.profile == "DeepSeek" and loaded.base_url == "https://api.deepseek.com/anthropic"
    creds = secrets.load_credentials({}, profile=next(p for p in loaded.profiles if p.name == "DeepSeek"))
    assert creds.auth_token == KEY and creds.api_key is None  # sent as a bearer token
    assert KEY not in paths.settings_file.read_text()


async def test_test_connection_reports_models_window_and_auth_in_plain_words(fake_api, monkeypatch):
    from desktop.engine.config.secrets import Credentials
    from desktop.engine.providers.probe import probe

    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    profile = Profile("Local test", fake_api.base_url, "x-api-key", "claude-test")
    good = await probe(Settings(), profile, Credentials(api_key="test-key", source="typed"))
    assert good.ok and "Connected: claude-test answered" in good.text
    assert "Models offered: 4" in good.text and "200,000 tokens (from the provider)" in good.text
    assert good.window == 200_000 and "claude-test" in good.models
    assert len(fake_api.message_requests()) == 1  # one tiny request
    assert fake_api.message_requests()[0].body["max_tokens"] <= 8
    bad = await probe(Settings(), profile, Credentials(api_key="wrong-key", source="typed"))
    assert not bad.ok and bad.lines[0].startswith("The provider refused the credentials (API key")


async def test_a_local_profile_sends_no_key_and_a_chat_uses_its_own_profile(monkeypatch):
    from desktop.engine.config.secrets import Credentials
    from desktop.engine.providers.probe import probe

    with FakeAnthropic(api_key=None) as local, FakeAnthropic(api_key=None) as other:
        a = Profile("Local A", local.base_url, "none", "claude-test")
        b = Profile("Local B", other.base_url, "none", "claude-haiku-4-5")
        assert (await probe(Settings(), a, Credentials(source="not_needed"))).ok
        headers = local.message_requests()[-1].headers
        assert "x-api-key" not in headers and "authorization" not in headers
        async with _open_engine(
            {"profiles": [a, b], "profile": "Local A", "base_url": a.base_url, "model": a.model},
            credentials=False,
        ) as engine:
            mine = await engine.new_session()
            theirs = (await engine.store.create_session("B chat", "claude-haiku-4-5", "Local B")).id
            await engine.send(mine, "to A")
            await engine.send(theirs, "to B")
        assert [r.body["messages"][-1]["content"][0]["text"] for r in local.message_requests()[1:]] == [
            "to A"
        ]
        assert [r.body["model"] for r in other.message_requests()] == ["claude-haiku-4-5"]


@pytest.mark.qt
async def test_the_model_picker_lists_the_provider_and_the_catalog_and_the_choice_is_stored(
    window, fake_api, qtbot
):
    picker = window.model_picker
    await until(lambda: picker.count() > 0)  # the catalog at once: asking the provider needs the SDK
    picker.showPopup()  # opened: the SDK loads (in a worker thread) and the provider is asked
    await until(lambda: picker.findText("claude-test") >= 0)
    picker.hidePopup()
    items = [picker.itemText(i) for i in range(picker.count())]
    assert items[:4] == [
        "claude-sonnet-4-6",
        "claude-haiku-4-5",
        "claude-opus-4-8",
        "claude-test",
    ]  # provider
    assert "claude-opus-4-7" in items  # the catalog
    assert picker.currentText() == DEFAULT_MODEL
    assert picker.currentIndex() == items.index(
        DEFAULT_MODEL
    )  # the list opens on the chat's model, not the first
    picker.setCurrentIndex(items.index("claude-haiku-4-5"))
    picker.activated.emit(items.index("claude-haiku-4-5"))
    engine = engine_of(window)
    await until(lambda: window.toast.isVisible() and "claude-haiku-4-5" in window.toast.text())
    await until(
        lambda: window.gauge.snapshot() is not None and window.gauge.snapshot().model == "claude-haiku-4-5"
    )
    assert (await engine.store.get_session(window.session_id)).model == "claude-haiku-4-5"
    fake_api.queue_text("from haiku")
    window.composer.edit.setPlainText("hi")
    window.composer.send_button.click()
    await until(lambda: len(message_rows(window)) == 2 and message_rows(window)[1].status == "complete")
    assert fake_api.message_requests()[-1].body["model"] == "claude-haiku-4-5"
    first = window.session_id
    window.bridge.spawn(window.bridge.new_session())
    await until(lambda: window.session_id != first)
    assert picker.currentText() == engine.settings.model  # a new chat starts on the default model
    long_id = "claude-sonnet-4-5-20250929-with-a-long-provider-suffix"
    window._show_chat_model(long_id)
    assert picker.currentText() == long_id and picker.lineEdit().cursorPosition() == 0  # its start shows


@pytest.mark.qt
async def test_the_first_chat_uses_the_model_chosen_on_the_first_run_form(qtbot, fake_api, monkeypatch):
    from desktop.ui.bridge import Bridge
    from desktop.ui.window.main_window import MainWindow

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    async with _open_engine(credentials=False) as engine:
        bridge = Bridge(engine)
        win = MainWindow(bridge, engine.paths.config_dir / "window.ini")
        qtbot.addWidget(win)
        win.show()
        await win.start()
        assert win.stack.currentWidget() is win.welcome
        assert await engine.store.list_sessions() == []  # no chat made before the form is submitted
        form = win.welcome.form
        form.model.setText("claude-opus-4-8")
        form.api_key.setText(KEY)
        await until(win.welcome.start_button.isEnabled)  # once the keyring has answered (a worker thread)
        win.welcome.start_button.click()
        await until(lambda: win.session_id is not None)
        sessions = await engine.store.list_sessions()
        assert [s.model for s in sessions] == ["claude-opus-4-8"]
        assert win.model_picker.currentText() == "claude-opus-4-8"
        await bridge.close()
        win.close()
