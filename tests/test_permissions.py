"""History, settings, window state and exports are readable by their owner only (folders 0700, files 0600)."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading

import pytest

from desktop.engine.config.settings import Paths, Settings
from desktop.store import Store

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")


def mode(path) -> int:  # noqa: ANN001
    return stat.S_IMODE(os.stat(path).st_mode)


@contextlib.contextmanager
def umask(value: int):
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def text(t: str) -> list[dict]:
    return [{"type": "text", "text": t}]


def test_folders_are_private(tmp_path):
    with umask(0o022):
        paths = Paths.resolve({"PRECIS_HOME": str(tmp_path / "home")}).ensure()
    for d in (paths.config_dir, paths.data_dir, paths.cache_dir):
        assert mode(d) == 0o700, d


def test_database_and_its_wal_are_private(tmp_path):
    with umask(0o022):
        paths = Paths.resolve({"PRECIS_HOME": str(tmp_path / "home")}).ensure()
        store = Store.open_sync(paths.database)
        try:
            session = store.repo.create_session("secret")
            store.repo.add_message(session.id, "user", text("my private history"))
            db = paths.database
            files = [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
            assert all(p.exists() for p in files)
            for p in files:
                assert mode(p) == 0o600, (p.name, oct(mode(p)))
        finally:
            store.close_sync()


def test_files_left_world_readable_by_an_older_version_are_tightened(tmp_path):
    paths = Paths.resolve({"PRECIS_HOME": str(tmp_path / "home")})
    with umask(0o022):
        for d in (paths.config_dir, paths.data_dir, paths.cache_dir):
            d.mkdir(parents=True)
            d.chmod(0o755)
        Store.open_sync(paths.database).close_sync()
        paths.database.chmod(0o644)
        (paths.config_dir / "window.ini").write_text("[window]\n")
        (paths.config_dir / "window.ini").chmod(0o644)
        paths.ensure()
        Store.open_sync(paths.database).close_sync()
    assert mode(paths.data_dir) == mode(paths.config_dir) == 0o700
    assert mode(paths.database) == 0o600
    assert mode(paths.config_dir / "window.ini") == 0o600


def test_settings_file_is_private_and_saved_atomically(tmp_path):
    paths = Paths.resolve({"PRECIS_HOME": str(tmp_path / "home")})
    with umask(0o022):
        Settings(model="claude-haiku-4-5").save(paths)
        assert mode(paths.settings_file) == 0o600
        paths.settings_file.chmod(0o644)
        Settings(model="claude-opus-4-7").save(paths)
    assert mode(paths.settings_file) == 0o600
    assert sorted(p.name for p in paths.config_dir.iterdir()) == ["settings.json", "window.ini"]
    assert Settings.load(paths, {}).model == "claude-opus-4-7"


def test_window_state_written_by_qt_stays_private(tmp_path):
    from PySide6.QtCore import QSettings

    with umask(0o022):
        paths = Paths.resolve({"PRECIS_HOME": str(tmp_path / "home")}).ensure()
        qs = QSettings(str(paths.window_state), QSettings.Format.IniFormat)
        qs.setValue("window/geometry", b"\x01\x02")
        qs.sync()
    assert paths.window_state == paths.config_dir / "window.ini"
    assert mode(paths.window_state) == 0o600
    assert "geometry" in paths.window_state.read_text()


def test_write_private_creates_and_replaces_with_owner_only_bits(tmp_path):
    from desktop.engine.config.files import write_private

    out = tmp_path / "export.md"
    with umask(0o022):
        assert write_private(out, "# private\n") == out
        assert out.read_text("utf-8") == "# private\n" and mode(out) == 0o600
        out.chmod(0o644)
        write_private(out, "second")
    assert out.read_text("utf-8") == "second" and mode(out) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["export.md"]  # no temporary file left behind
    with umask(0o277):  # a stricter umask is honoured
        write_private(tmp_path / "strict.json", b"{}")
    assert mode(tmp_path / "strict.json") == 0o400


def test_write_private_follows_symlinks_and_writes_into_pipes(tmp_path):
    from desktop.engine.config.files import write_private

    target = tmp_path / "real.md"
    target.write_text("old")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    write_private(link, "new")
    assert link.is_symlink() and target.read_text() == "new" and mode(target) == 0o600

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_private(fifo, "through the pipe")
    reader.join(10)
    assert got == [b"through the pipe"] and stat.S_ISFIFO(os.stat(fifo).st_mode)
