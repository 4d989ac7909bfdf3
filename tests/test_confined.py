"""The confinement layer at its own layer (``desktop/tools/confined.py``): names that climb, links, FIFOs and
devices, descriptors counted before and after, a failed write's temporary file, atomic replacement, the walk;
each in the race-free mode (descriptor-relative calls) and in the fallback used where those are missing, forced
here with ``RACE_FREE``. Real files, FIFOs, devices and a child process whose write the kernel stops.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import stat
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from desktop.tools import confined

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="FIFOs, /dev and /proc/self/fd are Linux's")
SECRET = "top secret outside"


@pytest.fixture(params=["race-free", "fallback"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of reaching files: descriptors walked from the folder, or full paths checked one by one."""
    if request.param == "fallback":
        monkeypatch.setattr(confined, "RACE_FREE", False)
    return str(request.param)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace beside a secret (tmp_path/secret.txt), with a file, nested folders and links to outside."""
    (tmp_path / "secret.txt").write_text(SECRET)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(SECRET)
    root = tmp_path / "ws"
    (root / "a" / "b").mkdir(parents=True)
    (root / "f.txt").write_text("hello")
    (root / "a" / "b" / "deep.txt").write_text("deep")
    (root / "out").symlink_to(tmp_path / "outside")
    (root / "a" / "out").symlink_to(tmp_path / "outside")
    (root / "leak.txt").symlink_to(tmp_path / "secret.txt")
    return root


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_the_race_free_calls_are_there_on_linux():
    assert confined.RACE_FREE is True


def test_a_file_is_read_whole(ws, mode):
    assert confined.read_bytes(ws, ["f.txt"]) == b"hello"
    assert confined.read_bytes(ws, ["a", "b", "deep.txt"]) == b"deep"
    big = os.urandom(3 * (1 << 20) + 17)  # more than one read's chunk
    (ws / "big.bin").write_bytes(big)
    assert confined.read_bytes(ws, ["big.bin"]) == big


CLIMBING = [
    ["..", "secret.txt"],
    ["../secret.txt"],
    ["a", "..", "..", "secret.txt"],
    ["a/../../secret.txt"],
    [".", "f.txt"],
    ["", "f.txt"],
    ["a", "."],
    ["a", ".."],
    ["a", "b/../../../secret.txt"],
    ["out/secret.txt"],
]


@pytest.mark.parametrize("parts", CLIMBING, ids=lambda p: "|".join(p) or "empty")
def test_a_name_that_climbs_or_is_not_one_entry_is_refused(ws, mode, parts):
    with pytest.raises(OSError) as refused:
        confined.read_bytes(ws, parts)
    assert not isinstance(refused.value, FileNotFoundError)  # refused for what it is, not looked up
    with pytest.raises(OSError):
        confined.write_atomic(ws, parts, b"pwned")
    assert (ws.parent / "secret.txt").read_text() == SECRET
    assert (ws.parent / "outside" / "secret.txt").read_text() == SECRET
    assert sorted(p.name for p in ws.parent.iterdir()) == ["outside", "secret.txt", "ws"]


def test_a_plain_name_is_refused_only_when_it_is_not_one(ws, mode):
    for name in ("..", ".", "", "a/b", "/etc"):
        with pytest.raises(OSError) as refused:
            confined.read_bytes(ws, [name])
        assert refused.value.errno == errno.EINVAL
    (ws / "..x").write_text("dots")  # a name that only starts with dots is a plain name
    (ws / "a" / "...").mkdir()
    (ws / "a" / "..." / "f").write_text("three")
    assert confined.read_bytes(ws, ["..x"]) == b"dots"
    assert confined.read_bytes(ws, ["a", "...", "f"]) == b"three"


@pytest.mark.parametrize(
    ("parts", "error"),
    [
        (["out", "secret.txt"], errno.ENOTDIR),
        (["a", "out", "secret.txt"], errno.ENOTDIR),
        (["leak.txt"], errno.ELOOP),
    ],
    ids=["top", "nested", "file"],
)
def test_a_link_is_refused_as_a_folder_and_as_the_file(ws, mode, parts, error):
    with pytest.raises(OSError) as refused:
        confined.read_bytes(ws, parts)
    assert refused.value.errno == error  # a link met as a folder is not one; as the file, a loop
    with pytest.raises(OSError) as refused:
        confined.write_atomic(ws, parts, b"pwned")
    assert refused.value.errno == error
    assert (ws.parent / "outside" / "secret.txt").read_text() == SECRET
    assert (ws.parent / "secret.txt").read_text() == SECRET
    assert sorted(p.name for p in (ws.parent / "outside").iterdir()) == ["secret.txt"]
    assert (ws / "leak.txt").is_symlink()


def _without_blocking(call: Callable[[], object], unblock: Callable[[], None]) -> BaseException | None:
    """What ``call`` raised (None: it returned), failing if it blocks; ``unblock`` frees it if it does."""
    seen: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            seen.append(exc)
        else:
            seen.append(None)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(5)
    if thread.is_alive():
        unblock()
        thread.join(5)
        pytest.fail("the call blocked")
    return seen[0]


def _open_writer(fifo: Path) -> None:
    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_a_fifo_is_refused_without_blocking(ws, mode):
    fifo = ws / "pipe"
    os.mkfifo(fifo)
    raised = _without_blocking(lambda: confined.read_bytes(ws, ["pipe"]), lambda: _open_writer(fifo))
    assert isinstance(raised, confined.NotRegular)
    with pytest.raises(confined.NotRegular):
        confined.write_atomic(ws, ["pipe"], b"x")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_device_and_a_folder_are_refused(ws, mode):
    with pytest.raises(confined.NotRegular):
        confined.read_bytes(Path("/dev"), ["null"])
    with pytest.raises(confined.NotRegular):
        confined.read_bytes(Path("/dev"), ["zero"], limit=10)  # never read forever
    with pytest.raises(IsADirectoryError):
        confined.read_bytes(ws, ["a"])
    with pytest.raises(IsADirectoryError):
        confined.read_bytes(ws, [])
    with pytest.raises(IsADirectoryError):
        confined.write_atomic(ws, ["a"], b"x")
    with pytest.raises(IsADirectoryError):
        confined.write_atomic(ws, [], b"x")
    assert (ws / "a").is_dir() and (ws / "a" / "b" / "deep.txt").read_text() == "deep"


def test_an_opened_file_is_blocking_again(ws, mode):
    with confined.open_regular(ws, ["f.txt"]) as (fd, st):
        assert os.get_blocking(fd) is True
        assert st.st_size == 5 and stat.S_ISREG(st.st_mode)
        assert os.read(fd, 10) == b"hello"


def test_the_limit_refuses_a_file_too_large_or_grown_since_its_stat(ws, mode):
    assert confined.read_bytes(ws, ["f.txt"], limit=5) == b"hello"
    with pytest.raises(ValueError) as large:
        confined.read_bytes(ws, ["f.txt"], limit=4)
    assert large.value.args == (5,)
    with open(ws / "sparse.bin", "wb") as sparse:  # refused from its size, before a byte is read
        sparse.truncate(8 << 20)
    with pytest.raises(ValueError) as huge:
        confined.read_bytes(ws, ["sparse.bin"], limit=10)
    assert huge.value.args == (8 << 20,)
    # /proc files say size 0 and then hold more: the count while reading catches them.
    status = confined.read_bytes(Path("/proc/self"), ["status"])
    assert b"Name:" in status
    with pytest.raises(ValueError) as grown:
        confined.read_bytes(Path("/proc/self"), ["status"], limit=10)
    assert grown.value.args[0] > 10
    assert confined.read_bytes(Path("/proc/self"), ["status"], limit=len(status) + 4096).startswith(b"Name:")


def test_a_write_creates_folders_and_a_file_with_the_usual_modes(ws, mode):
    previous = os.umask(0o022)
    try:
        confined.write_atomic(ws, ["new", "deeper", "n.txt"], b"made")
        confined.write_atomic(ws, ["a", "b", "deep.txt"], b"again")  # folders already there
    finally:
        os.umask(previous)
    assert (ws / "new" / "deeper" / "n.txt").read_bytes() == b"made"
    assert (ws / "a" / "b" / "deep.txt").read_bytes() == b"again"
    assert stat.S_IMODE((ws / "new" / "deeper" / "n.txt").stat().st_mode) == 0o644
    assert (
        stat.S_IMODE((ws / "new").stat().st_mode)
        == stat.S_IMODE((ws / "new" / "deeper").stat().st_mode)
        == 0o755
    )
    assert [p.name for p in (ws / "new" / "deeper").iterdir()] == ["n.txt"]  # no temporary file left


def test_a_write_replaces_the_file_in_one_step_and_keeps_its_mode(ws, mode):
    target = ws / "f.txt"
    target.chmod(0o640)
    (ws / "held.txt").hardlink_to(target)  # the old file, still open elsewhere, keeps its content
    before = target.stat().st_ino
    confined.write_atomic(ws, ["f.txt"], b"replaced")
    assert target.read_bytes() == b"replaced" and (ws / "held.txt").read_bytes() == b"hello"
    assert target.stat().st_ino != before
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    confined.write_atomic(ws, ["f.txt"], b"")
    assert target.read_bytes() == b"" and target.exists()


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(ws, mode):
    names = sorted(p.name for p in ws.iterdir())
    with pytest.raises(TypeError):
        confined.write_atomic(ws, ["f.txt"], "text, not bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        confined.write_atomic(ws, ["fresh.txt"], 12)  # type: ignore[arg-type]
    assert sorted(p.name for p in ws.iterdir()) == names
    assert (ws / "f.txt").read_text() == "hello"


# The kernel stops the write itself past this size (EFBIG, SIGXFSZ ignored): a failure mid-write.
FULL_DISK = textwrap.dedent("""
    import resource, signal, sys
    from pathlib import Path
    from desktop.tools import confined
    confined.RACE_FREE = sys.argv[2] == "race-free"
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
    try:
        confined.write_atomic(Path(sys.argv[1]), ["f.txt"], b"x" * 5000)
    except OSError as exc:
        print(exc.errno)
""")


def test_a_write_the_disk_refuses_leaves_the_old_file_and_no_temporary_file(ws, mode):
    names = sorted(p.name for p in ws.iterdir())
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(ws), mode],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == str(errno.EFBIG), done.stderr
    assert sorted(p.name for p in ws.iterdir()) == names
    assert (ws / "f.txt").read_text() == "hello"


def _entries(ws: Path, parts: list[str], limit: int, skip: frozenset[str] = frozenset()) -> dict[str, tuple]:
    return {
        "/".join(entry.parts): (entry.is_dir, entry.is_link)
        for entry, _folder in confined.walk(ws, parts, limit, skip)
    }


def test_the_walk_lists_everything_once_never_through_a_link(ws, mode):
    assert _entries(ws, [], 100) == {
        "a": (True, False),
        "f.txt": (False, False),
        "out": (False, True),
        "leak.txt": (False, True),
        "a/b": (True, False),
        "a/out": (False, True),
        "a/b/deep.txt": (False, False),
    }
    assert _entries(ws, ["a"], 100, frozenset({"b"})) == {
        "out": (False, True)
    }  # a skipped folder: not even named
    assert _entries(ws, ["a", "b"], 100) == {"deep.txt": (False, False)}


def test_the_walk_stops_at_its_limit_and_hands_a_folder_to_open_files_in(ws, mode):
    assert len(_entries(ws, [], 3)) == 3
    assert len(_entries(ws, [], 7)) == 7 and len(_entries(ws, [], 6)) == 6
    assert _entries(ws, [], 0) == {}
    read = {}
    for entry, where in confined.walk(ws, [], 100):
        if not entry.is_dir and not entry.is_link:
            with confined.open_regular_in(where, entry.parts[-1]) as (fd, _st):
                read["/".join(entry.parts)] = os.read(fd, 100)
            assert abs(entry.mtime - (ws.joinpath(*entry.parts)).lstat().st_mtime) < 1e-6
    assert read == {"f.txt": b"hello", "a/b/deep.txt": b"deep"}


def test_an_entry_gone_since_its_folder_was_listed_is_left_out(ws, mode):
    names = {"x1", "x2", "x3"}
    (ws / "gone").mkdir()
    for name in names:
        (ws / "gone" / name).write_text(name)
    seen = []
    for entry, _where in confined.walk(ws, ["gone"], 100):
        seen.append(entry.parts[-1])
        for other in names - set(seen):  # the rest vanish after the listing, before their turn
            (ws / "gone" / other).unlink(missing_ok=True)
    assert len(seen) == 1


def test_the_walk_refuses_a_link_a_climb_or_a_file_as_its_start(ws, mode):
    for parts in (["out"], [".."], ["a", "out"], ["f.txt"]):
        with pytest.raises(OSError):
            list(confined.walk(ws, parts, 100))
    with pytest.raises(NotADirectoryError):
        list(confined.walk(ws / "f.txt", [], 100))


def test_an_open_folder_and_an_entry_cannot_be_changed(ws, mode):
    with confined.folder(ws, ["a"]) as where:
        with pytest.raises(AttributeError):
            where.fd = 0  # type: ignore[misc]
        with pytest.raises(AttributeError):
            where.path = Path("/")  # type: ignore[misc]
    entry = next(e for e, _f in confined.walk(ws, [], 10))
    with pytest.raises(AttributeError):
        entry.parts = ("..",)  # type: ignore[misc]


def test_a_folder_is_opened_name_by_name_and_made_when_asked(ws, mode):
    with confined.folder(ws, ["a", "b"]) as where:
        assert where.path == ws / "a" / "b"
        name, fd = where.name("deep.txt")
        if mode == "race-free":
            assert (name, fd) == ("deep.txt", where.fd) and where.fd is not None
            assert os.readlink(f"/proc/self/fd/{where.fd}") == str(ws / "a" / "b")
        else:
            assert (name, fd) == (ws / "a" / "b" / "deep.txt", None) and where.fd is None
        assert stat.S_ISREG(where.lstat("deep.txt").st_mode)
    with confined.folder(ws, ["x", "y"], create=True) as made:
        assert made.path == ws / "x" / "y" and (ws / "x" / "y").is_dir()
    with pytest.raises(FileNotFoundError):
        confined.folder(ws, ["missing"]).__enter__()
    with pytest.raises(NotADirectoryError):
        confined.folder(ws, ["f.txt"]).__enter__()
    with pytest.raises(NotADirectoryError):
        confined.folder(ws, ["f.txt"], create=True).__enter__()


# --- descriptors: none left behind, whatever the outcome ---------------------------------------------------------
def _calls(ws: Path) -> Iterator[Callable[[], object]]:
    os.mkfifo(ws / "pipe")
    yield lambda: confined.read_bytes(ws, ["f.txt"])
    yield lambda: confined.read_bytes(ws, ["a", "b", "deep.txt"])
    yield lambda: confined.read_bytes(ws, ["a", "b", "missing.txt"])
    yield lambda: confined.read_bytes(ws, ["a", "missing", "x"])
    yield lambda: confined.read_bytes(ws, ["pipe"])
    yield lambda: confined.read_bytes(ws, ["a", ".."])
    yield lambda: confined.read_bytes(ws, ["a", "out", "secret.txt"])
    yield lambda: confined.read_bytes(ws, ["a"])
    yield lambda: confined.read_bytes(ws, ["f.txt"], limit=1)
    yield lambda: confined.write_atomic(ws, ["a", "w.txt"], b"w")
    yield lambda: confined.write_atomic(ws, ["a", "w.txt"], "not bytes")  # type: ignore[arg-type]
    yield lambda: confined.write_atomic(ws, ["a"], b"x")
    yield lambda: confined.write_atomic(ws, ["pipe"], b"x")
    yield lambda: confined.write_atomic(ws, ["leak.txt"], b"x")
    yield lambda: list(confined.walk(ws, [], 100))
    yield lambda: list(confined.walk(ws, [], 2))
    yield lambda: next(iter(confined.walk(ws, ["a"], 100)))  # a walk dropped half-way


def test_no_descriptor_is_left_open_whatever_a_call_does(ws, mode):
    for call in _calls(ws):
        for _ in range(3):  # first, so that what loads lazily is loaded
            with contextlib.suppress(OSError, ValueError, TypeError):
                call()
        gc.collect()
        before = fds()
        for _ in range(10):
            with contextlib.suppress(OSError, ValueError, TypeError):
                call()
        gc.collect()
        assert fds() == before
