"""State-file writes under injected faults and simulated power loss.

:class:`PowerLossModel` is a :class:`~uuidkit._safefile.FileSystem` (the one fault-injection
seam of uuidkit's files) that performs every call for real and also tracks what a power loss
would keep, the way POSIX allows a file system to behave: file contents survive only once
fsynced, directory entries (a new file, a rename, an unlink) only once the directory is
fsynced. Crashing after each step in turn proves that a crash leaves the old state or the
new one, never a torn one, and that once ``write()`` has returned the new state survives.
Each of the four mechanisms (the temporary file, its fsync, the rename, the directory fsync)
is required by a test below: remove one and a test fails.

References: RFC 9562 §6.3; RFC 4122 §4.2.1.3 (the stored timestamp must be durable before use).
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from gen_fakes import NS_PER_MS, START_NS

from uuidkit._safefile import FileSystem
from uuidkit.generators.statefile import StateFile, StoredState

START_MS = START_NS // NS_PER_MS
OLD = StoredState("v7", START_MS, START_MS + 999, 1 << 20, None, START_NS)
NEW = StoredState("v7", START_MS + 1_000, START_MS + 1_999, 1 << 21, None, START_NS + 10**9)


class PowerLoss(BaseException):
    """The simulated crash: nothing after it runs (not even cleanup)."""


@dataclass
class Inode:
    data: bytes = b""
    durable: bytes = b""
    #: Changed in place since its last fsync: a power loss may keep any part of the change.
    torn: bool = False


@dataclass
class PowerLossModel(FileSystem):
    """Real file-system calls plus a model of what survives a power loss (see the module)."""

    directory: str = ""
    crash_at: int | None = None
    steps: int = 0
    entries: dict[str, Inode] = field(default_factory=dict)
    durable_entries: dict[str, Inode] = field(default_factory=dict)
    descriptors: dict[int, Inode | None] = field(default_factory=dict)  # None: the directory

    def start(self, path: Path, text: str) -> None:
        """``path`` holds ``text``, durably (written, fsynced, its directory fsynced)."""
        path.write_text(text)
        path.chmod(0o600)
        self.directory = str(path.parent)
        inode = Inode(text.encode(), text.encode())
        self.entries = {path.name: inode}
        self.durable_entries = dict(self.entries)

    def after_power_loss(self, name: str) -> bytes | None:
        inode = self.durable_entries.get(name)
        if inode is None:
            return None
        # The adversarial outcome the file system is allowed: unsynced data of a new file is
        # lost; an unsynced change to an existing file survives as far as it got.
        return inode.data if inode.torn else inode.durable

    def _step(self) -> None:
        self.steps += 1
        if self.crash_at is not None and self.steps >= self.crash_at:
            raise PowerLoss

    def _name(self, path: str) -> str:
        return os.path.relpath(path, self.directory)

    def open(self, path: str, flags: int, mode: int = 0o600) -> int:
        if flags & os.O_CREAT:
            self._step()  # a crash before the temporary file exists
        descriptor = super().open(path, flags, mode)
        if os.path.samefile(path, self.directory):
            self.descriptors[descriptor] = None
        elif flags & (os.O_WRONLY | os.O_RDWR):
            inode = self.entries.setdefault(self._name(path), Inode())
            if flags & os.O_TRUNC:
                inode.data, inode.torn = b"", True
            self.descriptors[descriptor] = inode
        return descriptor

    def write(self, descriptor: int, data: memoryview) -> int:
        self._step()
        written = super().write(descriptor, data)
        inode = self.descriptors.get(descriptor)
        if inode is not None:
            inode.data += bytes(data[:written])
            inode.torn = inode.torn or bool(inode.durable)
        return written

    def fsync(self, descriptor: int) -> None:
        self._step()
        super().fsync(descriptor)
        inode = self.descriptors.get(descriptor, "other")
        if inode is None:
            self.durable_entries = dict(self.entries)
        elif isinstance(inode, Inode):
            inode.durable, inode.torn = inode.data, False

    def replace(self, source: str, target: str) -> None:
        self._step()
        super().replace(source, target)
        self.entries[self._name(target)] = self.entries.pop(self._name(source))

    def unlink(self, path: str) -> None:
        self._step()
        super().unlink(path)
        self.entries.pop(self._name(path), None)


def written_with_model(tmp_path: Path, crash_at: int | None) -> tuple[PowerLossModel, bool]:
    model = PowerLossModel(crash_at=crash_at)
    path = tmp_path / "gen.state"
    model.start(path, OLD.to_text())
    try:
        StateFile(path, filesystem=model).write(NEW)
    except PowerLoss:
        return model, False
    return model, True


def survivor(model: PowerLossModel) -> StoredState | None:
    data = model.after_power_loss("gen.state")
    return None if data is None else StoredState.from_text(data.decode())


def test_a_power_loss_after_any_step_leaves_the_old_or_the_new_state(tmp_path: Path) -> None:
    _, completed = written_with_model(tmp_path, None)
    assert completed
    total = PowerLossModel(crash_at=None)
    total.start(tmp_path / "count.state", OLD.to_text())
    StateFile(tmp_path / "count.state", filesystem=total).write(NEW)
    for crash_at in range(1, total.steps + 2):
        directory = tmp_path / f"crash-{crash_at}"
        directory.mkdir()
        model, completed = written_with_model(directory, crash_at)
        # Never missing, never torn: StoredState.from_text checks the whole text.
        assert survivor(model) in (OLD, NEW), f"power loss at step {crash_at}"
        if completed:
            # write() returned: the new state must survive (RFC 4122 §4.2.1.3: a reservation
            # is used only once it is stable).
            assert survivor(model) == NEW, f"write returned before step {crash_at} was durable"


def test_once_write_returns_the_new_state_survives(tmp_path: Path) -> None:
    # Fails without the directory fsync (the rename is lost) or the file fsync (the renamed
    # file is empty after the power loss).
    model, completed = written_with_model(tmp_path, None)
    assert completed and survivor(model) == NEW


def test_the_state_file_itself_is_never_written_in_place(tmp_path: Path) -> None:
    # Fails without the temporary file: a write into the state file (truncate, then data)
    # leaves a torn or empty file if the power fails in between.
    model, _ = written_with_model(tmp_path, None)
    original = model.durable_entries.get("gen.state")
    assert original is not None
    for crash_at in range(1, model.steps + 1):
        directory = tmp_path / f"in-place-{crash_at}"
        directory.mkdir()
        crashed, _ = written_with_model(directory, crash_at)
        assert survivor(crashed) in (OLD, NEW)


class FailingFileSystem(FileSystem):
    """Fails one kind of call with ``errno``, or makes every write short."""

    def __init__(self, fail: str, code: int = 0, short: bool = False) -> None:
        self.fail, self.code, self.short = fail, code, short

    def write(self, descriptor: int, data: memoryview) -> int:
        if self.fail == "write":
            if self.short:
                return super().write(descriptor, data[:3])
            raise OSError(self.code, os.strerror(self.code))
        return super().write(descriptor, data)

    def fsync(self, descriptor: int) -> None:
        if self.fail == "fsync":
            raise OSError(self.code, os.strerror(self.code))
        super().fsync(descriptor)

    def replace(self, source: str, target: str) -> None:
        if self.fail == "replace":
            raise OSError(self.code, os.strerror(self.code))
        super().replace(source, target)


@pytest.mark.parametrize(
    ("fail", "code"),
    [("write", errno.ENOSPC), ("write", errno.EIO), ("fsync", errno.EIO), ("replace", errno.EIO)],
)
def test_a_failed_write_keeps_the_previous_state_and_no_temporary_file(
    tmp_path: Path, fail: str, code: int
) -> None:
    path = tmp_path / "gen.state"
    StateFile(path).write(OLD)
    with pytest.raises(OSError) as caught:
        StateFile(path, filesystem=FailingFileSystem(fail, code)).write(NEW)
    assert caught.value.errno == code
    assert StateFile(path).load() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen.state"]


def test_short_writes_are_completed(tmp_path: Path) -> None:
    path = tmp_path / "gen.state"
    StateFile(path, filesystem=FailingFileSystem("write", short=True)).write(NEW)
    assert StateFile(path).load() == NEW


def test_a_write_that_makes_no_progress_is_an_error_not_a_loop(tmp_path: Path) -> None:
    class Stuck(FileSystem):
        def write(self, descriptor: int, data: memoryview) -> int:
            return 0

    path = tmp_path / "gen.state"
    StateFile(path).write(OLD)
    with pytest.raises(OSError, match="write made no progress"):
        StateFile(path, filesystem=Stuck()).write(NEW)
    assert StateFile(path).load() == OLD
