"""The safe-file module: atomic replace, safe reads, and the leftovers of killed writers.

Every fault is injected through :class:`~uuidkit._safefile.FileSystem`, the one seam. A
"killed" writer is one whose file system dies at a chosen call: that call and every later
one raise :class:`Killed` and do nothing (no cleanup runs, as under ``kill -9``); then the
test closes every descriptor the writer had open, as the kernel does for a dead process
(which drops its ``flock``).

References: RFC 9562 §6.3; RFC 4122 §4.2.1.3.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from uuidkit._safefile import (
    FileSystem,
    OversizedFileError,
    SafeFile,
    UnsafeStateError,
    check_directory,
)
from uuidkit.errors import StateFileError

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 30.0
OLD, NEW = b"old contents\n", b"new contents\n"
#: A name of the module's pattern for target ``f``: ``.f.<16 lowercase hex digits>.tmp``.
STALE = ".f.0123456789abcdef.tmp"


class Killed(BaseException):
    """The simulated ``kill -9``: nothing after it runs."""


class DiesAt(FileSystem):
    """A writer's file system that dies at its first call of ``method``."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.dead = False
        self.descriptors: set[int] = set()

    def open(self, path: str, flags: int, mode: int = 0o600) -> int:
        descriptor = super().open(path, flags, mode)
        self.descriptors.add(descriptor)
        return descriptor

    def close(self, descriptor: int) -> None:
        self.descriptors.discard(descriptor)
        super().close(descriptor)

    def exit(self) -> None:
        """What the kernel does when the process dies: close every descriptor."""
        for descriptor in self.descriptors:
            os.close(descriptor)
        self.descriptors.clear()

    def __getattribute__(self, name: str) -> object:
        attribute = super().__getattribute__(name)
        if name.startswith("_") or name in ("method", "dead", "exit") or not callable(attribute):
            return attribute
        if name == self.method:
            self.dead = True
        if self.dead:

            def killed(*args: object) -> object:
                raise Killed(name)

            return killed
        return attribute


def temporaries(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))


def killed_writer(path: Path, method: str, *, create: bool = False) -> None:
    fs = DiesAt(method)
    target = SafeFile(path, fs=fs)
    with pytest.raises(Killed):
        target.create(NEW) if create else target.replace(NEW)
    fs.exit()


# --- atomic replace ----------------------------------------------------------------------


def test_replace_writes_a_private_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "f"
    SafeFile(path).replace(OLD)
    SafeFile(path).replace(NEW)
    assert path.read_bytes() == NEW
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert os.listdir(tmp_path) == ["f"]


def test_file_fsync_then_rename_then_directory_fsync(tmp_path: Path) -> None:
    """Fails when any of the three is removed from SafeFile._publish (checked)."""
    calls: list[str] = []

    class Recording(FileSystem):
        def fsync(self, descriptor: int) -> None:
            kind = "dir" if os.path.isdir(f"/proc/self/fd/{descriptor}") else "file"
            calls.append(f"fsync-{kind}")
            super().fsync(descriptor)

        def replace(self, source: str, target: str) -> None:
            calls.append("rename")
            super().replace(source, target)

        def link(self, source: str, target: str) -> None:
            calls.append("link")
            super().link(source, target)

    SafeFile(tmp_path / "f", fs=Recording()).replace(OLD)
    assert calls == ["fsync-file", "rename", "fsync-dir"]
    calls.clear()
    assert SafeFile(tmp_path / "g", fs=Recording()).create(OLD)
    assert calls == ["fsync-file", "link", "fsync-dir"]


@pytest.mark.parametrize("method", ["write", "fsync", "replace"])
def test_a_writer_killed_before_the_rename_leaves_the_old_contents(
    tmp_path: Path, method: str
) -> None:
    path = tmp_path / "f"
    SafeFile(path).replace(OLD)
    killed_writer(path, method)
    assert path.read_bytes() == OLD
    assert len(temporaries(tmp_path)) == 1  # what kill -9 leaves (nothing removed it)


def test_create_never_replaces(tmp_path: Path) -> None:
    path = tmp_path / "f"
    assert SafeFile(path).create(OLD)
    assert not SafeFile(path).create(NEW)
    assert path.read_bytes() == OLD
    assert os.listdir(tmp_path) == ["f"]


# --- leftovers of killed writers ---------------------------------------------------------


def test_the_next_write_removes_what_a_killed_writer_left(tmp_path: Path) -> None:
    path = tmp_path / "f"
    for method in ("write", "fsync", "replace") * 3:
        killed_writer(path, method)
    assert len(temporaries(tmp_path)) == 9
    SafeFile(path).replace(NEW)
    assert temporaries(tmp_path) == []
    assert path.read_bytes() == NEW


def test_the_next_create_removes_what_a_killed_writer_left(tmp_path: Path) -> None:
    path = tmp_path / "f"
    killed_writer(path, "link", create=True)
    assert len(temporaries(tmp_path)) == 1
    assert SafeFile(path).create(NEW)
    assert temporaries(tmp_path) == []


def test_a_live_writers_temporary_file_is_never_removed(tmp_path: Path) -> None:
    """Writer A stops between its fsync and its rename; writer B writes meanwhile and sweeps.
    A's file must survive and A's rename succeed. Fails without the writer's flock on its
    temporary file (checked: B deletes it and A's rename raises FileNotFoundError)."""
    path = tmp_path / "f"
    paused, resume = threading.Event(), threading.Event()
    outcome: list[BaseException | None] = []

    class PausesBeforeRename(FileSystem):
        def replace(self, source: str, target: str) -> None:
            paused.set()
            assert resume.wait(WAIT_S)
            super().replace(source, target)

    def writer_a() -> None:
        try:
            SafeFile(path, fs=PausesBeforeRename()).replace(OLD)
            outcome.append(None)
        except BaseException as error:  # reported to the test's thread
            outcome.append(error)

    thread = threading.Thread(target=writer_a)
    thread.start()
    try:
        assert paused.wait(WAIT_S)
        (held,) = temporaries(tmp_path)
        assert SafeFile(path).remove_stale_temporaries() == []
        SafeFile(path).replace(NEW)  # B: writes, then sweeps
        assert temporaries(tmp_path) == [held]
    finally:
        resume.set()
        thread.join(WAIT_S)
    assert outcome == [None]
    assert path.read_bytes() == OLD and temporaries(tmp_path) == []


def test_a_cleaner_that_took_the_new_file_first_makes_the_writer_start_over(
    tmp_path: Path,
) -> None:
    """The window between O_EXCL and flock: a cleaner locks and unlinks the writer's new file
    first. The writer must notice (flock refused, or the file has no name) and use another."""
    path = tmp_path / "f"

    class CleanerFirst(FileSystem):
        def __init__(self) -> None:
            self.raced = 0

        def flock(self, descriptor: int, operation: int) -> None:
            if self.raced < 2:
                self.raced += 1
                (name,) = temporaries(tmp_path)
                if self.raced == 1:  # the cleaner still holds it: flock refused
                    cleaner = os.open(tmp_path / name, os.O_RDONLY)
                    super().flock(cleaner, operation)
                    try:
                        super().flock(descriptor, operation)
                    finally:
                        os.unlink(tmp_path / name)
                        os.close(cleaner)
                    return
                os.unlink(tmp_path / name)  # the cleaner is done: the file has no name
            super().flock(descriptor, operation)

    fs = CleanerFirst()
    SafeFile(path, fs=fs).replace(NEW)
    assert fs.raced == 2 and path.read_bytes() == NEW and temporaries(tmp_path) == []


def test_only_our_pattern_for_this_target_is_removed(tmp_path: Path) -> None:
    """Fails without the name check (checked: the near misses are deleted)."""
    near_misses = [
        ".f.0123456789abcde.tmp",  # 15 digits
        ".f.0123456789abcdef0.tmp",  # 17 digits
        ".f.0123456789ABCDEF.tmp",  # upper case: never made
        ".f.0123456789abcdeg.tmp",
        "f.0123456789abcdef.tmp",  # no leading dot
        ".f.0123456789abcdef.tmp.bak",
        ".g.0123456789abcdef.tmp",  # another target's
        ".ff.0123456789abcdef.tmp",
        ".f.abcdefgh.tmp",  # an older writer's mkstemp name
        "notes.txt",
    ]
    for name in [*near_misses, STALE]:
        (tmp_path / name).write_text("someone's")
    SafeFile(tmp_path / "f").replace(NEW)
    assert sorted(os.listdir(tmp_path)) == sorted([*near_misses, "f"])


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_another_users_file_of_our_pattern_is_never_removed(tmp_path: Path) -> None:
    """Fails without the owner check (checked)."""
    (tmp_path / STALE).write_text("theirs")
    os.chown(tmp_path / STALE, 65534, 65534)
    SafeFile(tmp_path / "f").replace(NEW)
    assert (tmp_path / STALE).read_text() == "theirs"


def test_a_symlink_fifo_or_directory_of_our_pattern_is_left_alone(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("the victim's")
    names = [".f.000000000000000a.tmp", ".f.000000000000000b.tmp", ".f.000000000000000c.tmp"]
    (tmp_path / names[0]).symlink_to(victim)
    os.mkfifo(tmp_path / names[1], 0o600)
    (tmp_path / names[2]).mkdir()
    SafeFile(tmp_path / "f").replace(NEW)  # must not block on the FIFO either
    assert sorted(os.listdir(tmp_path)) == sorted([*names, "f", "victim"])
    assert victim.read_text() == "the victim's"


def test_a_file_swapped_in_after_the_check_is_not_removed(tmp_path: Path) -> None:
    """The name is re-checked under the lock: a file renamed over the stale one after the
    cleaner opened it stays. Fails without the same-inode check (checked)."""
    (tmp_path / STALE).write_text("stale")
    replacement = tmp_path / "replacement"
    replacement.write_text("swapped in")

    class SwapOnLock(FileSystem):
        def flock(self, descriptor: int, operation: int) -> None:
            super().flock(descriptor, operation)
            if replacement.exists() and os.fstat(descriptor).st_nlink:
                os.replace(replacement, tmp_path / STALE)

    assert SafeFile(tmp_path / "f", fs=SwapOnLock()).remove_stale_temporaries() == []
    assert (tmp_path / STALE).read_text() == "swapped in"


# --- reads and refusals -----------------------------------------------------------------


def test_a_symlink_at_the_target_is_refused_and_never_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(OLD)
    path = tmp_path / "f"
    path.symlink_to(victim)
    with pytest.raises(UnsafeStateError, match="a symbolic link"):
        SafeFile(path).read()
    with pytest.raises(UnsafeStateError, match="a symbolic link"):
        SafeFile(path).replace(NEW)
    assert not SafeFile(path).create(NEW)
    assert path.is_symlink() and victim.read_bytes() == OLD


def test_a_fifo_at_the_target_is_refused_without_hanging(tmp_path: Path) -> None:
    path = tmp_path / "f"
    os.mkfifo(path, 0o600)
    outcome: list[BaseException | object] = []

    def read() -> None:
        try:
            outcome.append(SafeFile(path).read())
        except BaseException as error:
            outcome.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(WAIT_S)
    if reader.is_alive():  # blocked in open(): a writer lets it go, then the test fails
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(WAIT_S)
        pytest.fail("opening the file blocked on a FIFO")
    assert len(outcome) == 1 and isinstance(outcome[0], UnsafeStateError)
    assert "a FIFO, not a state file" in str(outcome[0])


@pytest.mark.parametrize(
    ("mode", "reason"), [(0o622, "open to other users"), (0o602, "open to other users")]
)
def test_a_file_others_may_write_is_refused(tmp_path: Path, mode: int, reason: str) -> None:
    path = tmp_path / "f"
    path.write_bytes(OLD)
    os.chmod(path, mode)
    with pytest.raises(UnsafeStateError, match=reason):
        SafeFile(path).read()


def test_a_read_only_file_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(OLD)
    os.chmod(path, 0o400)
    with pytest.raises(UnsafeStateError, match="read-only"):
        SafeFile(path).replace(NEW)
    assert path.read_bytes() == OLD


def test_directory_policies(tmp_path: Path) -> None:
    fs = FileSystem()
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    check_directory(str(shared), fs)  # like /tmp: the sticky bit protects names
    with pytest.raises(UnsafeStateError, match="writable by other users"):
        check_directory(str(shared), fs, private=True)
    os.chmod(shared, 0o777)
    with pytest.raises(UnsafeStateError, match="without the sticky bit"):
        check_directory(str(shared), fs)
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    check_directory(str(link), fs)
    with pytest.raises(UnsafeStateError, match="a symbolic link"):
        check_directory(str(link), fs, private=True)


def test_an_oversized_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 11)
    with pytest.raises(OversizedFileError, match="larger than 10 bytes"):
        SafeFile(path, max_octets=10).read()
    assert SafeFile(path, max_octets=11).read()[0] == b"x" * 11
    assert issubclass(OversizedFileError, StateFileError)


# --- real processes ----------------------------------------------------------------------

_WRITER = """
import sys
from uuidkit._safefile import SafeFile
target = SafeFile(sys.argv[1], durable=False)
target.replace(b"0")
print("ready", flush=True)
n = 0
while True:
    n += 1
    target.replace(str(n).encode() * 512)
"""


@pytest.mark.slow
def test_kill_9_during_writes_leaves_nothing_after_the_next_write(tmp_path: Path) -> None:
    """Real ``kill -9`` at whatever moment the writer is in: afterwards one write leaves the
    target and no temporary file (the leftovers are counted for the record, not asserted:
    how many there are depends on timing)."""
    path = tmp_path / "f"
    left = 0
    for _ in range(20):
        child = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path)],
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        )
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(WAIT_S)
        child.stdout.close()
        left = len(temporaries(tmp_path))
    SafeFile(path).replace(NEW)
    assert os.listdir(tmp_path) == ["f"], left
    assert path.read_bytes() == NEW
