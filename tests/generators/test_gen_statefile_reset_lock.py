"""``StateFile.remove()`` (``uuidkit state reset``) beside a generator waiting for the lock.

The lock is an ``flock`` on ``<state>.lock``. A reset that finds no lock file creates one,
holds it while it deletes the state file, and deletes the lock file it made, still holding
it. A generator that opened that lock file meanwhile then waits on a file that no longer
has a name: once it gets that lock it must notice and lock the file at the path instead, or
it and the next process to come would both hold "the" lock. A rendezvous makes the
interleaving exact.

References: RFC 4122 §4.2.1.4 ("obtain a system-wide global lock"); RFC 9562 §6.3.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from uuidkit._safefile import FileSystem
from uuidkit.errors import StateFileError
from uuidkit.generators.statefile import StateFile, StoredState

VALID = StoredState("v7", 1_767_225_600_000, 1_767_225_600_999, 42, None, 1_767_225_600 * 10**9)
WAIT_S = 30.0


class _Rendezvous(FileSystem):
    """The reset's file system: when it unlinks the state file (it holds the lock then), it
    starts ``on_unlink`` and waits for its go-ahead."""

    def __init__(self, state_path: Path, on_unlink: threading.Event, go: threading.Event):
        self.state_path = str(state_path)
        self.on_unlink = on_unlink
        self.go = go

    def unlink(self, path: str) -> None:
        if path == self.state_path:
            self.on_unlink.set()
            assert self.go.wait(WAIT_S)
        super().unlink(path)


class _Opened(FileSystem):
    """The generator's file system: says when it has opened the lock file."""

    def __init__(self, lock_path: Path, opened: threading.Event) -> None:
        self.lock_path = str(lock_path)
        self.opened = opened

    def open(self, path: str, flags: int, mode: int = 0o600) -> int:
        descriptor = super().open(path, flags, mode)
        if path == self.lock_path:
            self.opened.set()
        return descriptor


def test_a_reset_never_splits_the_lock_a_generator_waits_on(tmp_path: Path) -> None:
    path = tmp_path / "gen.state"
    path.write_text(VALID.to_text())  # a state file, and no lock file yet
    lock_path = Path(f"{path}.lock")
    in_reset, go, opened = threading.Event(), threading.Event(), threading.Event()
    holding, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def generator() -> None:
        # Opens the lock file the reset made, then waits for the lock the reset holds.
        try:
            with StateFile(path, filesystem=_Opened(lock_path, opened), lock_timeout_ms=30_000):
                holding.set()
                assert release.wait(WAIT_S)
        except BaseException as error:  # reported to the test's thread
            errors.append(error)
            holding.set()

    waiter = threading.Thread(target=generator)

    def start_generator() -> None:
        assert in_reset.wait(WAIT_S)
        waiter.start()
        assert opened.wait(WAIT_S)  # the generator has the lock file open, and waits
        go.set()

    starter = threading.Thread(target=start_generator)
    starter.start()
    assert StateFile(path, filesystem=_Rendezvous(path, in_reset, go)).remove() is True
    starter.join(WAIT_S)
    assert holding.wait(WAIT_S) and not errors, errors
    try:
        # The generator holds the lock: nobody else may take it, through any lock file.
        with pytest.raises(StateFileError, match="lock held elsewhere"):
            StateFile(path, lock_timeout_ms=0).__enter__()
    finally:
        release.set()
        waiter.join(WAIT_S)
    assert not path.exists()
    # Once the generator is done, the lock is free again.
    with StateFile(path, lock_timeout_ms=0) as state_file:
        state_file.write(VALID)
