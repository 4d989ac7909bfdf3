"""Settings' provider profiles: the user's own list with Add (a preset or Custom), Duplicate (the key only when
asked) and Delete (asks, removes the key, moves the chats that used it); picking and saving never adds one."""

from __future__ import annotations

import json

import pytest

from desktop.engine.config import profiles as P
from desktop.engine.config import secrets
from desktop.engine.config.profiles import Profile
from desktop.engine.config.settings import Paths, Settings
from tests.conftest import _open_engine, engine_of
from tests.test_window import until

KEY = "sk-test-deleted-profile-key-0123456789"
OTHER = "sk-test-kept-profile-key-9876543210"


def saved_names(paths: Paths) -> list[str]:
    return [p["name"] for p in json.loads(paths.settings_file.read_text()).get("profiles", [])]


@pytest.mark.qt
async def test_picking_a_preset_in_settings_and_saving_adds_no_profile(window, qtbot):
    from PySide6.QtWidgets import QDialogButtonBox

    engine = engine_of(window)
    before = [p.name for p in engine.settings.profiles] or [engine.settings.profile or P.ANTHROPIC]
    dialog = window.open_settings()
    box = dialog.form.profile_box
    listed = [box.itemText(i) for i in range(box.count())]
    if (
        box.findText("OpenRouter") >= 0
    ):  # main listed every preset here: picking one made it a profile on Save
        box.setCurrentText("OpenRouter")
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()
    await until(lambda: engine.paths.settings_file.exists() and saved_names(engine.paths))
    assert saved_names(engine.paths) == before
    assert listed == before  # Settings lists the user's profiles; presets come through Add
    assert len(listed) == 1  # a lone profile cannot be deleted: Delete opens disabled, its tooltip says why
    again = window.open_settings()
    assert not again.form.delete_button.isEnabled() and again.form.delete_button.toolTip()
    again.reject()


def test_profile_list_rules_names_unique_copies_without_the_key_and_one_left():
    saved = [Profile("Work", "https://a.example"), Profile("Home")]
    items = P.drafts(saved, saved[0])
    added = P.added(items, "DeepSeek")
    again = P.added(items, "DeepSeek")
    custom = P.added(items, P.CUSTOM)
    assert (added.profile.name, again.profile.name, custom.profile.name) == (
        "DeepSeek",
        "DeepSeek 2",
        "Custom",
    )
    assert custom.profile.base_url == "" and custom.profile.model == ""
    plain = P.duplicated(items, 0, with_key=False)
    keyed = P.duplicated(items, 0, with_key=True)
    assert (plain.profile.name, keyed.profile.name) == ("Work copy", "Work copy 2")
    assert plain.key_from is None and keyed.key_from == "Work"
    assert plain.profile.base_url == "https://a.example" and plain.profile is not saved[0]
    items[-1].profile.name = "Home"
    assert "Home" in (P.name_problem(items) or "")
    items[-1].profile.name = "Home 2"
    assert P.name_problem(items) is None
    items[0].profile.name = "Office"  # a rename keeps its origin: key and chats follow it
    items.remove(next(d for d in items if d.origin == "Home"))  # Home deleted
    edits = P.edits(saved, items)
    assert edits.renamed == {"Work": "Office"} and edits.deleted == ("Home",)
    assert edits.copy_keys == {"Work copy 2": "Work"}
    assert P.removal_problem(items[:1]) and P.removal_problem(items) is None
    # After a delete the profile in use stays shown (its chats move there), else the next one.
    names = [d.profile.name for d in items]
    at = names.index("Work copy")
    assert [d.profile.name for i, d in enumerate(items) if i != at][
        P.successor(items, at, "Work")
    ] == "Office"
    assert P.successor(items, 0, "Work") == 0  # the active one deleted: the next one takes its place


@pytest.mark.qt
async def test_add_and_duplicate_in_settings_save_what_the_list_shows_and_copy_a_key_only_when_asked(
    qtbot, memory_keyring, precis_home
):
    from desktop.ui.bridge import Bridge
    from desktop.ui.settings.settings_dialog import SettingsDialog

    paths = Paths.resolve().ensure()
    Settings(profile="Work", profiles=[Profile("Work", "https://work.example", "bearer", "m1")]).save(paths)
    memory_keyring.set_password(secrets.SERVICE, "profile:Work", OTHER)
    dialog = SettingsDialog(Settings.load(paths, {}), None, "keyring")
    qtbot.addWidget(dialog)
    form = dialog.form
    assert [form.profile_box.itemText(i) for i in range(form.profile_box.count())] == ["Work"]
    form.add_profile(P.CUSTOM)
    assert form.profile_box.currentText() == "Custom" and form.base_url.text() == ""
    form.base_url.setText("https://custom.example/anthropic")
    form.model.setText("custom-model")
    form.profile_box.setCurrentIndex(0)
    assert form.base_url.text() == "https://work.example"  # the other profile's edits are kept, not lost
    form.duplicate_profile(with_key=False)
    form.profile_box.setCurrentIndex(0)
    form.duplicate_profile(with_key=True)
    names = [form.profile_box.itemText(i) for i in range(form.profile_box.count())]
    assert names == ["Work", "Work copy 2", "Work copy", "Custom"]
    async with _open_engine(credentials=False) as engine:
        bridge = Bridge(engine)
        assert await bridge.apply_provider_choice(dialog.choice()) is None
        await bridge.close()
    assert saved_names(paths) == names
    loaded = Settings.load(paths, {})
    assert loaded.profile == "Work copy 2"  # the one shown when saving is the one in use
    custom = next(p for p in loaded.profiles if p.name == "Custom")
    assert (custom.base_url, custom.model) == ("https://custom.example/anthropic", "custom-model")
    assert memory_keyring.get_password(secrets.SERVICE, "profile:Work copy 2") == OTHER  # asked for
    assert memory_keyring.get_password(secrets.SERVICE, "profile:Work copy") is None  # not asked for


@pytest.mark.qt
async def test_two_profiles_with_one_name_are_not_saved_and_the_form_says_why(qtbot, precis_home):
    from desktop.ui.settings.settings_dialog import SettingsDialog

    paths = Paths.resolve().ensure()
    Settings(profile="A", profiles=[Profile("A"), Profile("B")]).save(paths)
    dialog = SettingsDialog(Settings.load(paths, {}), None, "keyring")
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.form.profile_name.setText("B")
    dialog.form.profile_name.textEdited.emit("B")
    dialog.accept()
    assert dialog.isVisible() and dialog.result() == 0
    assert "B" in dialog.form.profile_problem.text() and dialog.form.profile_problem.isVisible()
    assert saved_names(paths) == ["A", "B"]


@pytest.mark.qt
async def test_deleting_a_profile_a_chat_uses_asks_then_removes_its_key_and_moves_the_chat(
    qtbot, memory_keyring, precis_home
):
    from PySide6.QtWidgets import QMessageBox

    from desktop.ui.bridge import Bridge
    from desktop.ui.settings.settings_dialog import SettingsDialog

    paths = Paths.resolve().ensure()
    Settings(
        profile="Main",
        profiles=[
            Profile("Main", "", "x-api-key", "claude-main"),
            Profile("Old", "https://old.example", "bearer", "old-model"),
            Profile("Spare", "http://localhost:8080", "none", "local"),
        ],
    ).save(paths)
    memory_keyring.set_password(secrets.SERVICE, "profile:Old", KEY)
    memory_keyring.set_password(secrets.SERVICE, "profile:Main", OTHER)
    secrets.save_api_key_to_file(KEY, "profile:Old")  # a copy in the key file too: both go
    async with _open_engine(credentials=False) as engine:
        chat = await engine.store.create_session("On the old provider", "old-model", "Old")
        await engine.store.add_message(chat.id, "user", [{"type": "text", "text": "keep me"}])
        bridge = Bridge(engine)
        await bridge.refresh_sessions()
        dialog = SettingsDialog(Settings.load(paths, {}), None, "keyring", chats=bridge.chats_per_profile())
        qtbot.addWidget(dialog)
        dialog.show()
        form = dialog.form
        form.profile_box.setCurrentText("Old")
        box = form.ask_delete()
        assert box is not None and box.isVisible()
        text = box.text()
        assert "“Old”" in text and "key is removed" in text
        assert "used by 1 chat:" in text and "keep their messages" in text and "“Main”" in text
        delete = next(b for b in box.buttons() if box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole)
        delete.click()
        assert [form.profile_box.itemText(i) for i in range(form.profile_box.count())] == ["Main", "Spare"]
        assert (
            form.profile_box.currentText() == "Main"
        )  # the profile the question named, not the next in line
        form.profile_box.setCurrentText("Spare")
        form.delete_current()  # what Delete in the question does
        assert not form.delete_button.isEnabled() and form.ask_delete() is None  # the last profile stays
        assert await bridge.apply_provider_choice(dialog.choice()) is None
        moved = await engine.store.get_session(chat.id)
        assert (moved.profile, moved.model) == ("Main", "claude-main")
        assert [m.content[0]["text"] for m in await engine.store.messages(chat.id)] == ["keep me"]
        await bridge.close()
    assert saved_names(paths) == ["Main"]  # Spare deleted too (it had no key and no chat)
    assert memory_keyring.get_password(secrets.SERVICE, "profile:Old") is None
    assert "profile:Old" not in secrets._key_file_entries()
    assert memory_keyring.get_password(secrets.SERVICE, "profile:Main") == OTHER


@pytest.mark.qt
async def test_a_renamed_profile_keeps_its_key_and_its_chats(qtbot, memory_keyring, precis_home):
    from desktop.ui.bridge import Bridge
    from desktop.ui.settings.settings_dialog import SettingsDialog

    paths = Paths.resolve().ensure()
    Settings(profile="Lab", profiles=[Profile("Lab", "https://lab.example", "bearer", "lab-model")]).save(
        paths
    )
    memory_keyring.set_password(secrets.SERVICE, "profile:Lab", KEY)
    async with _open_engine(credentials=False) as engine:
        chat = await engine.store.create_session("Lab chat", "lab-model", "Lab")
        bridge = Bridge(engine)
        dialog = SettingsDialog(Settings.load(paths, {}), None, "keyring")
        qtbot.addWidget(dialog)
        dialog.form.profile_name.setText("Research")
        dialog.form.profile_name.textEdited.emit("Research")
        assert await bridge.apply_provider_choice(dialog.choice()) is None
        assert (await engine.store.get_session(chat.id)).profile == "Research"
        await bridge.close()
    assert memory_keyring.get_password(secrets.SERVICE, "profile:Research") == KEY
    assert memory_keyring.get_password(secrets.SERVICE, "profile:Lab") is None


async def test_two_profiles_that_swap_names_keep_their_own_chats_and_keys(memory_keyring, precis_home):
    from desktop.engine.config import profile_edits

    memory_keyring.set_password(secrets.SERVICE, "profile:A", "key-of-a-0123456789")
    memory_keyring.set_password(secrets.SERVICE, "profile:B", "key-of-b-0123456789")
    async with _open_engine(credentials=False) as engine:
        on_a = await engine.store.create_session("on A", "m", "A")
        on_b = await engine.store.create_session("on B", "m", "B")
        edits = P.ProfileEdits(renamed={"A": "B", "B": "A"})
        await profile_edits.apply(engine.store, edits, Profile("B"))
        assert (await engine.store.get_session(on_a.id)).profile == "B"
        assert (await engine.store.get_session(on_b.id)).profile == "A"
    assert memory_keyring.get_password(secrets.SERVICE, "profile:B") == "key-of-a-0123456789"
    assert memory_keyring.get_password(secrets.SERVICE, "profile:A") == "key-of-b-0123456789"
