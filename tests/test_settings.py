"""Settings, paths and the API key: environment first, then the OS keyring; never plain text on disk."""

from __future__ import annotations

import json

import keyring
import pytest
from keyring.backends import fail

from desktop.engine.config import secrets
from desktop.engine.config.settings import Paths, Settings
from desktop.engine.turn.chat import ChatEngine
from desktop.store import Store

KEY = "sk-ant-test-very-secret-0123456789"


def test_precis_home_relocates_everything(tmp_path):
    paths = Paths.resolve({"PRECIS_HOME": str(tmp_path / "portable")})
    for d in (paths.config_dir, paths.data_dir, paths.cache_dir, paths.database):
        assert str(d).startswith(str(tmp_path / "portable"))


def test_environment_names_win_over_the_settings_file(tmp_path):
    paths = Paths.resolve({"PRECIS_HOME": str(tmp_path)}).ensure()
    Settings(model="from-file", base_url="http://file").save(paths)
    env = {
        "ANTHROPIC_MODEL": "from-env",
        "ANTHROPIC_BASE_URL": "http://env",
        "ANTHROPIC_SMALL_FAST_MODEL": "small",
    }
    s = Settings.load(paths, env)
    assert (s.model, s.base_url, s.small_model, s.summary_model) == (
        "from-env",
        "http://env",
        "small",
        "small",
    )
    assert Settings.load(paths, {}).model == "from-file"


def test_corrupt_settings_file_falls_back_to_defaults(tmp_path):
    paths = Paths.resolve({"PRECIS_HOME": str(tmp_path)}).ensure()
    paths.settings_file.write_text("{not json", "utf-8")
    assert Settings.load(paths, {}).model == Settings().model


def test_credentials_precedence(memory_keyring):
    memory_keyring.set_password(secrets.SERVICE, secrets.ACCOUNT, "from-keyring")
    assert secrets.load_credentials({}).api_key == "from-keyring"
    assert secrets.load_credentials({"ANTHROPIC_API_KEY": "env"}).source == "env"
    token = secrets.load_credentials({"ANTHROPIC_AUTH_TOKEN": "bearer"})
    assert token.auth_token == "bearer" and token.api_key is None


@pytest.mark.qt
async def test_saving_a_key_uses_the_keyring_and_nothing_else(memory_keyring, precis_home, qtbot):
    from desktop.ui.bridge import Bridge
    from desktop.ui.settings.settings_dialog import ProviderChoice

    paths = Paths.resolve().ensure()
    store = await Store.open(paths.database)
    engine = ChatEngine(store, paths, Settings.load(paths))
    bridge = Bridge(engine)
    error = await bridge.apply_provider_choice(ProviderChoice(Settings(model="claude-haiku-4-5"), KEY, False))
    assert error is None
    assert memory_keyring.get_password(secrets.SERVICE, secrets.ACCOUNT) == KEY
    await bridge.close()
    await engine.close()
    await store.close()
    on_disk = b"".join(p.read_bytes() for p in precis_home.rglob("*") if p.is_file())
    assert KEY.encode() not in on_disk
    assert json.loads(paths.settings_file.read_text())["model"] == "claude-haiku-4-5"


@pytest.mark.qt
async def test_without_a_keyring_the_key_is_refused_or_kept_for_this_run_only(precis_home, qtbot):
    from desktop.ui.bridge import Bridge
    from desktop.ui.settings.settings_dialog import ProviderChoice, ProviderForm

    keyring.set_keyring(fail.Keyring())
    reason = secrets.keyring_status()
    assert reason and "for this run only" in reason
    form = ProviderForm(Settings(), reason, "none")
    qtbot.addWidget(form)
    assert not form.keyring_note.isHidden() and not form.run_only.isEnabled()
    # Issue 36: the private file is offered first (checked); unticked, the key is kept for this run only.
    assert form.in_file.isChecked() and not form.run_only.isChecked()
    form.in_file.setChecked(False)
    assert form.run_only.isChecked()

    paths = Paths.resolve().ensure()
    store = await Store.open(paths.database)
    engine = ChatEngine(store, paths, Settings.load(paths))
    bridge = Bridge(engine)
    assert "keyring" in (await bridge.apply_provider_choice(ProviderChoice(Settings(), KEY, False)) or "")
    assert not secrets.load_credentials({}).present
    assert await bridge.apply_provider_choice(ProviderChoice(Settings(), KEY, True)) is None
    creds = secrets.load_credentials({})
    assert creds.api_key == KEY and creds.source == "session"
    await bridge.close()
    await engine.close()
    await store.close()
    on_disk = b"".join(p.read_bytes() for p in precis_home.rglob("*") if p.is_file())
    assert KEY.encode() not in on_disk


async def test_bearer_token_works_against_a_compatible_provider(fake_api, monkeypatch):
    from desktop.engine.config.secrets import Credentials

    fake_api.api_key = "bearer-token"
    paths = Paths.resolve().ensure()
    store = await Store.open(paths.database)
    engine = ChatEngine(
        store, paths, Settings.load(paths), Credentials(auth_token="bearer-token", source="env")
    )
    sid = (await store.create_session("t", "claude-sonnet-4-6")).id
    fake_api.queue_text("authorised")
    reply = await engine.send(sid, "hello")
    assert reply is not None and reply.content[0]["text"] == "authorised"
    assert fake_api.message_requests()[-1].headers.get("authorization") == "Bearer bearer-token"
    await engine.close()
    await store.close()


@pytest.mark.qt
async def test_settings_show_the_prices_date_and_reload_the_users_prices_json(window, qtbot):
    from PySide6.QtWidgets import QCheckBox, QDialogButtonBox, QLabel

    from tests.conftest import engine_of
    from tests.test_window import until

    engine = engine_of(window)
    # The engine's start-up read of its learned facts (and of prices.json) runs with the window's first measure;
    # once it is done, only saving the settings reads the file again.
    await until(lambda: window.gauge.snapshot() is not None)
    dialog = window.open_settings()
    note = dialog.findChild(QLabel, "prices_note")
    assert note.isVisible() and "Prices as of 2026-12-01" in note.text() and "prices.json" in note.text()
    tiers = dialog.findChild(QCheckBox, "allow_price_tiers")
    assert not tiers.isChecked()
    dialog.reject()
    # The user updates prices.json; saving the settings reads it again, and the dialog shows its date.
    (engine.paths.config_dir / "prices.json").write_text(
        json.dumps({"date": "2027-02-01", "models": {"claude-opus-5-5": {"input": 3.5}}})
    )
    dialog = window.open_settings()
    dialog.findChild(QCheckBox, "allow_price_tiers").setChecked(True)
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()
    await until(lambda: engine.catalog.prices_date == "2027-02-01")
    assert engine.catalog.info("claude-opus-5-5").input_price == 3.5 and engine.settings.allow_price_tiers
    assert "Prices as of 2027-02-01" in window.open_settings().findChild(QLabel, "prices_note").text()


@pytest.mark.qt
async def test_settings_look_for_the_kept_key_off_the_window_thread(window, memory_keyring, monkeypatch):
    """On main, opening Settings read the kept key on the UI thread: a desktop's secret service (which may ask to be
    unlocked first) held the whole window until it answered."""
    import threading

    from tests.conftest import engine_of
    from tests.test_window import until

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    profile = engine_of(window).active_profile
    memory_keyring.set_password(secrets.SERVICE, profile.keyring_account if profile else secrets.ACCOUNT, KEY)
    read_on: list[str] = []
    real = memory_keyring.get_password

    def get_password(service: str, username: str) -> str | None:
        read_on.append(threading.current_thread().name)
        return real(service, username)

    monkeypatch.setattr(memory_keyring, "get_password", get_password)
    dialog = window.open_settings()
    await until(lambda: "system keyring" in dialog.form.api_key.placeholderText())
    assert read_on and threading.main_thread().name not in read_on


@pytest.mark.qt
async def test_settings_fit_the_screen_with_save_in_view_and_no_text_cut(window, memory_keyring, monkeypatch):
    """On main the dialog was as tall as its fields (Save below a laptop screen's edge), the prices note was
    squeezed to less than its lines and the key-file choice was cut at the right edge (no keyring here, so it
    shows)."""
    from keyring.backends import fail
    from PySide6.QtCore import QPoint, QRect
    from PySide6.QtWidgets import QCheckBox, QDialogButtonBox, QLabel

    from tests.test_window import until

    keyring.set_keyring(fail.Keyring())
    dialog = window.open_settings()
    await until(lambda: dialog.form.in_file.isVisible())
    screen = dialog.screen().availableGeometry()
    assert dialog.frameGeometry().height() <= screen.height()
    save = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save)
    assert dialog.rect().contains(QRect(save.mapTo(dialog, QPoint(0, 0)), save.size()))
    for label in dialog.findChildren(QLabel):
        if label.isVisibleTo(dialog) and label.wordWrap() and label.text():
            assert label.height() >= label.heightForWidth(label.width()), label.objectName() or label.text()
            assert label.mapTo(dialog, QPoint(label.width(), 0)).x() <= dialog.width(), label.objectName()
    for box in dialog.findChildren(QCheckBox):
        if box.isVisibleTo(dialog):
            assert box.width() >= box.sizeHint().width(), box.text()
            assert box.mapTo(dialog, QPoint(box.width(), 0)).x() <= dialog.width(), box.text()


@pytest.mark.qt
@pytest.mark.parametrize("dark", [False, True])
def test_settings_notes_are_readable_on_both_pages(qtbot, dark):
    """On main a failed Test connection and a profile problem were #b42318 on the dark page too: 2.2:1, under the
    4.5:1 body text needs."""
    import re

    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication

    from desktop.ui.look.theme import palette_for
    from desktop.ui.settings.settings_dialog import SettingsDialog
    from tests.test_focus_ring import contrast

    previous = QApplication.palette()
    QApplication.setPalette(palette_for(dark))  # as the theme sets it, before any dialog opens
    try:
        dialog = SettingsDialog(Settings(), None, "keyring")
        qtbot.addWidget(dialog)
        page = palette_for(dark).color(QPalette.ColorRole.Window)
        for ok in (True, False):
            dialog.form.show_test_result(ok, "Connected." if ok else "The provider refused the key.")
            found = re.search(r"color:\s*(#[0-9a-fA-F]{6})", dialog.form.test_result.styleSheet())
            assert found and contrast(QColor(found.group(1)), page) >= 4.5, (ok, found and found.group(1))
        found = re.search(r"color:\s*(#[0-9a-fA-F]{6})", dialog.form.profile_problem.styleSheet())
        assert found and contrast(QColor(found.group(1)), page) >= 4.5, found and found.group(1)
    finally:
        QApplication.setPalette(previous)
