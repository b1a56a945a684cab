"""State files in shared directories: nothing followed, planted, hijacked or silently replaced.

Each test plants what another local user could (a symlink, a FIFO, a loose mode, a foreign
owner, a held lock) and checks the refusal names the path and the reason, and that no file
outside the generator's own was touched.

References: RFC 9562 §6.3; RFC 4122 §4.2.1.4.
"""

from __future__ import annotations

import fcntl
import os
import stat
import warnings
from pathlib import Path

import pytest
from gen_fakes import NS_PER_MS, START_NS, FakeClock, seeded_bytes

from uuidkit import StateFileError
from uuidkit.generators import SharedConfig, SharedV7Generator, StateUnavailableWarning
from uuidkit.generators.statefile import StateFile, StoredState, UnsafeStateError, read_state_file

START_MS = START_NS // NS_PER_MS
VALID = StoredState("v7", START_MS, START_MS + 999, 1 << 30, None, START_NS)
VICTIM_TEXT = "the victim's data\n"


def shared(path: Path) -> SharedV7Generator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StateUnavailableWarning)
        return SharedV7Generator(
            path, SharedConfig(durable=False), clock=FakeClock(), random_bytes=seeded_bytes(1)
        )


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim.txt"
    path.write_text(VICTIM_TEXT)
    return path


def test_symlinked_state_path_is_refused_and_never_replaced(tmp_path: Path, victim: Path) -> None:
    path = tmp_path / "gen.state"
    path.symlink_to(victim)
    with pytest.raises(UnsafeStateError, match=f"{path}: a symbolic link, not a state file"):
        shared(path)
    with pytest.raises(UnsafeStateError, match="a symbolic link"):
        StateFile(path).write(VALID)
    assert path.is_symlink() and victim.read_text() == VICTIM_TEXT


def test_dangling_symlink_state_path_is_not_created_through(tmp_path: Path) -> None:
    path = tmp_path / "gen.state"
    target = tmp_path / "created-by-the-attacker's-choice"
    path.symlink_to(target)
    with pytest.raises(UnsafeStateError, match="a symbolic link"):
        shared(path)
    with pytest.raises(UnsafeStateError, match="a symbolic link"):
        StateFile(path).write(VALID)
    assert path.is_symlink() and not target.exists()


def test_symlinked_lock_file_is_refused(tmp_path: Path, victim: Path) -> None:
    path = tmp_path / "gen.state"
    Path(f"{path}.lock").symlink_to(victim)
    generator = shared(path)
    with pytest.raises(
        UnsafeStateError, match=r"gen\.state\.lock: unusable lock file: a symbolic link"
    ):
        generator()
    assert victim.read_text() == VICTIM_TEXT and not path.exists()


@pytest.mark.timeout(20)
@pytest.mark.parametrize("which", ["state", "lock"])
def test_a_fifo_is_refused_without_blocking(tmp_path: Path, which: str) -> None:
    path = tmp_path / "gen.state"
    os.mkfifo(path if which == "state" else f"{path}.lock", 0o600)
    with pytest.raises(UnsafeStateError, match="a FIFO, not a state file"):
        shared(path)() if which == "lock" else read_state_file(path)


def test_read_only_state_file_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "gen.state"
    path.write_text(VALID.to_text())
    path.chmod(0o400)
    generator = shared(path)
    with pytest.raises(UnsafeStateError, match=r"read-only \(mode 0400\): it is not replaced"):
        generator()
    assert path.read_text() == VALID.to_text() and stat.S_IMODE(path.stat().st_mode) == 0o400


@pytest.mark.parametrize(("mode", "reason"), [(0o666, "mode 0666"), (0o620, "mode 0620")])
def test_state_file_writable_by_others_is_refused(tmp_path: Path, mode: int, reason: str) -> None:
    path = tmp_path / "gen.state"
    path.write_text(VALID.to_text())
    path.chmod(mode)
    with pytest.raises(UnsafeStateError, match=f"{reason} is open to other users"):
        read_state_file(path)


def test_lock_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    # Anyone who can open the lock file can flock it and stall every generator.
    path = tmp_path / "gen.state"
    lock = Path(f"{path}.lock")
    lock.touch(0o644)
    lock.chmod(0o644)
    with pytest.raises(UnsafeStateError, match="lock: unusable lock file: unsafe: mode 0644"):
        shared(path)()


@pytest.mark.parametrize(("mode", "refused"), [(0o777, True), (0o770, True), (0o1777, False)])
def test_directory_writable_by_others(tmp_path: Path, mode: int, refused: bool) -> None:
    directory = tmp_path / "shared-dir"
    directory.mkdir()
    directory.chmod(mode)
    path = directory / "gen.state"
    if refused:
        with pytest.raises(UnsafeStateError, match="without the sticky bit"):
            shared(path)
        assert not path.exists()
    else:
        shared(path)()  # /tmp-like: sticky, so others cannot rename or delete our files
        assert StoredState.from_text(path.read_text()).kind == "v7"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_file_and_directory_owned_by_another_user_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "gen.state"
    path.write_text(VALID.to_text())
    os.chown(path, 65534, 65534)
    with pytest.raises(UnsafeStateError, match="owned by uid 65534"):
        read_state_file(path)
    directory = tmp_path / "theirs"
    directory.mkdir()
    os.chown(directory, 65534, 65534)
    with pytest.raises(UnsafeStateError, match="directory owned by uid 65534"):
        read_state_file(directory / "gen.state")


def test_files_are_created_private_with_unpredictable_temporary_names(
    tmp_path: Path, victim: Path
) -> None:
    path = tmp_path / "gen.state"
    # The old fixed temporary name, planted as a symlink: a predictable name would write
    # through it into the victim's file.
    Path(tmp_path / ".gen.state.tmp").symlink_to(victim)
    shared(path)()
    assert victim.read_text() == VICTIM_TEXT
    for created in (path, Path(f"{path}.lock")):
        info = created.lstat()
        assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
    # Only the state, its lock, the victim and the planted link: no temporary file left.
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [".gen.state.tmp", "gen.state", "gen.state.lock", "victim.txt"]
    )


def test_lock_wait_is_bounded_and_raises(tmp_path: Path) -> None:
    path = tmp_path / "gen.state"
    clock = FakeClock()
    state = StateFile(path, lock_timeout_ms=30, monotonic_ns=clock.monotonic, sleep_ns=clock.sleep)
    with state:  # creates the lock file; now another holder takes it
        pass
    holder = os.open(f"{path}.lock", os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(StateFileError, match="lock held elsewhere for more than 30 ms"), state:
            pass  # pragma: no cover - the lock is never taken
        # Waited on the injected monotonic clock: 30 ms in polls of at most 2 ms.
        assert clock.monotonic_ns >= 30 * NS_PER_MS and clock.sleeps == 15
    finally:
        os.close(holder)
    with state:  # released: taken at once
        pass


def test_remove_refuses_a_symlink(tmp_path: Path, victim: Path) -> None:
    path = tmp_path / "gen.state"
    path.symlink_to(victim)
    with pytest.raises(UnsafeStateError, match="a symbolic link"):
        StateFile(path).remove()
    assert path.is_symlink() and victim.read_text() == VICTIM_TEXT
