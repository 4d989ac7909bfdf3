"""No keyring (minimal desktops, WSL, containers): the key can be kept in a private file the user chose, and the
chats show without a key."""

from __future__ import annotations

import os
import stat

import keyring
import pytest
from keyring.backends import fail

from tests.cli_faults import env_for, run
from tests.conftest import _open_engine
from tests.test_window import until

KEY = "sk-ant-file-kept-0123456789"


@pytest.fixture
def no_keyring():
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


def test_the_key_file_is_private_and_read_after_env_and_keyring(
    no_keyring, precis_home, fake_api, monkeypatch
):
    from desktop.engine.config import secrets

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert secrets.keyring_status() is not None and not secrets.load_credentials().present
    path = secrets.save_api_key_to_file(KEY)
    assert path.parent == precis_home / "config" and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    creds = secrets.load_credentials()
    assert creds.api_key == KEY and creds.source == "file"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    assert secrets.load_credentials().source == "env"  # the environment still wins
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    # Another process (the CLI) finds it at its next start: the key is not typed again.
    fake_api.api_key = KEY  # the server accepts only the key in the file
    fake_api.queue_text("hello from the file's key")
    env = env_for(precis_home, fake_api.base_url)
    env.pop("ANTHROPIC_API_KEY")
    res = run(["chat", "hi"], env, timeout=60)
    assert res.returncode == 0 and "hello from the file's key" in res.stdout, res.stderr


@pytest.mark.qt
async def test_settings_offer_the_private_file_without_a_keyring_and_the_chats_show_without_a_key(
    qtbot, fake_api, monkeypatch, no_keyring, precis_home
):
    from desktop.engine.config import secrets

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    async with _open_engine(credentials=False) as engine:
        sid = await _a_chat(engine)
        win = await _started_window(qtbot, engine)
        bridge = win.bridge
        # No key, but a chat to read: the chat list and the chat show, not the first-run page.
        assert win.stack.currentWidget() is win.splitter
        await until(lambda: win.session_id == sid)
        await until(win.welcome.start_button.isEnabled)  # the keyring's answer, from a worker thread
        form = win.welcome.form
        # Issue 36: where no keyring works, the private file is the choice offered (its note says what it is and
        # that unticking it keeps the key for this run only); it used to be shown but never chosen.
        assert form.in_file.isVisibleTo(form) and form.in_file.isChecked()
        assert form.in_file_note.isVisibleTo(form) and not form.run_only.isChecked()
        form.api_key.setText(KEY)
        choice = form.choice()
        assert choice.in_file and not choice.run_only
        assert await bridge.apply_provider_choice(choice) is None
        path = secrets.key_file()
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and KEY in path.read_text()
        assert secrets.load_credentials().source == "file"
        await bridge.close()
        win.close()


def test_a_returning_start_paints_before_looking_for_its_kept_key(precis_home, fake_api, tmp_path):
    """On main the window asked the keyring while it was being built: the keyring stack (keyring, secretstorage,
    cryptography, jeepney: ~100 ms here) loaded on the UI thread, and a locked secret service could hold the window
    before it was shown. Now a returning start (settings saved, no key in the environment) paints first."""
    import json

    from desktop.engine.config.settings import Paths, Settings

    paths = Paths.resolve()
    paths.ensure()
    Settings().save(paths)
    (paths.config_dir / "keys.json").write_text(json.dumps({"anthropic-api-key": KEY}))
    started = _keyless_start_report(precis_home, fake_api, tmp_path)
    assert KEYRING_STACK & set(started["packages"]) == set()
    assert (
        "desktop.ui.settings.settings_dialog" not in started["desktop_modules"]
    )  # the first-run page was not built


@pytest.mark.qt
@pytest.mark.parametrize("chats", [True, False])
async def test_a_returning_start_without_its_key_says_so_once_the_window_has_painted(
    qtbot, fake_api, monkeypatch, no_keyring, precis_home, chats
):
    from desktop.engine.config.settings import Settings

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    async with _open_engine(credentials=False) as engine:
        Settings().save(engine.paths)  # set up before; the key has gone since
        if chats:
            await _a_chat(engine)
        win = await _started_window(qtbot, engine)
        assert win.stack.currentWidget() is win.splitter  # painted before the key was looked for
        if chats:  # the chats show; the toast says sending needs a key
            await until(lambda: "No API key" in win.toast.text())
            assert win.stack.currentWidget() is win.splitter
        else:
            await until(lambda: win.stack.currentWidget() is win._welcome)
        await win.bridge.close()
        win.close()


async def _a_chat(engine) -> int:  # noqa: ANN001
    sid = await engine.new_session()
    await engine.store.add_message(sid, "user", [{"type": "text", "text": "an earlier question"}])
    return sid


async def _started_window(qtbot, engine):  # noqa: ANN001, ANN202
    """The window over ``engine``, shown and started as a launch does."""
    from desktop.ui.bridge import Bridge
    from desktop.ui.window.main_window import MainWindow

    win = MainWindow(Bridge(engine), engine.paths.config_dir / "window.ini")
    qtbot.addWidget(win)
    win.show()
    await win.start()
    return win


def test_a_first_run_shows_its_form_before_asking_the_keyring(precis_home, fake_api, tmp_path):
    """On main the first-run page asked the keyring while the window was built (the keyring stack on the UI thread
    before the first paint)."""
    started = _keyless_start_report(precis_home, fake_api, tmp_path)
    assert (
        "desktop.ui.settings.settings_dialog" in started["desktop_modules"]
    )  # the first-run page is what shows
    assert KEYRING_STACK & set(started["packages"]) == set()


@pytest.mark.qt
async def test_the_first_run_form_learns_about_the_keyring_from_a_worker_thread(
    qtbot, fake_api, monkeypatch, no_keyring, precis_home
):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    async with _open_engine(credentials=False) as engine:
        win = await _started_window(qtbot, engine)
        page = win._welcome
        assert win.stack.currentWidget() is page
        await until(page.start_button.isEnabled)  # Start waits for the answer
        form = page.form
        assert form.keyring_note.isVisibleTo(form) and form.keyring_note.text()  # why there is no keyring
        assert form.in_file.isVisibleTo(form) and form.in_file.isChecked() and not form.run_only.isChecked()
        await win.bridge.close()
        win.close()


KEYRING_STACK = {"keyring", "secretstorage", "jeepney"}


def _keyless_start_report(home, fake_api, tmp_path) -> dict:  # noqa: ANN001
    """What ``python -m desktop`` reports of itself at its first paint with no key in the environment."""
    import json

    report = tmp_path / "startup.json"
    env = env_for(
        home,
        fake_api.base_url,
        QT_QPA_PLATFORM="offscreen",
        PRECIS_QUIT_AFTER="0",
        PRECIS_STARTUP_REPORT=str(report),
    )
    env.pop("ANTHROPIC_API_KEY")
    res = run([], env, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(report.read_text("utf-8"))


async def test_a_chats_first_request_reads_its_kept_key_off_the_loop(
    no_keyring, precis_home, fake_api, monkeypatch
):
    """On main the client was made on the loop (the window's UI thread) with the key read there: the keyring stack
    and a desktop's secret service (which may ask to be unlocked) held the window at the first send."""
    import threading

    from desktop.engine.config import secrets
    from desktop.engine.turn import chat

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    secrets.save_api_key_to_file(KEY)
    fake_api.api_key = KEY  # the server accepts only the kept key
    read_on: list[str] = []

    def load_credentials(**kwargs):  # noqa: ANN003, ANN202 - the real lookup, noting where it ran
        read_on.append(threading.current_thread().name)
        return secrets.load_credentials(**kwargs)

    monkeypatch.setattr(chat, "load_credentials", load_credentials)
    fake_api.queue_text("hello from the kept key")
    async with _open_engine(credentials=False) as engine:
        sid = await engine.new_session()
        await engine.send(sid, "hi")
        assert (await engine.store.messages(sid))[-1].content[0]["text"] == "hello from the kept key"
    assert read_on and threading.main_thread().name not in read_on
