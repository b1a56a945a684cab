"""Shared generators: warnings name the caller's line; close() leaves nothing it made behind.

The state file stays (it is the state the next generator resumes from); the ``.lock`` file
is deleted by ``close()`` when this generator created it, under its own lock, and never
when another process made it. Deleting a lock file is safe only because every locker
checks, after each ``flock``, that the path still names the file it locked: the last test
shows the lock is not split when a generator closes while another one keeps the old lock
file open.

References: RFC 9562 §6.3; RFC 4122 §4.2.1.1, §4.2.1.4.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest

from uuidkit.errors import GeneratorError, StateFileError
from uuidkit.generators import (
    SharedConfig,
    SharedV1Generator,
    SharedV6Generator,
    SharedV7Generator,
    StateUnavailableWarning,
)
from uuidkit.generators.statefile import StateFile

CONFIG = SharedConfig(durable=False)
KINDS = [SharedV7Generator, SharedV6Generator, SharedV1Generator]
Shared = SharedV7Generator | SharedV6Generator | SharedV1Generator


def _line_after() -> int:
    """The number of the caller's next line."""
    return sys._getframe(1).f_lineno + 1


@pytest.mark.parametrize("kind", KINDS)
def test_the_start_up_warning_names_the_line_that_made_the_generator(
    tmp_path: Path, kind: type[Shared]
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _line_after()
        kind(tmp_path / "new.state", CONFIG)  # no file yet: "missing"
    assert [w.category for w in caught] == [StateUnavailableWarning]
    assert "missing" in str(caught[0].message)
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)


@pytest.mark.parametrize("kind", KINDS)
def test_the_first_value_warning_names_the_line_that_asked_for_it(
    tmp_path: Path, kind: type[Shared]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")  # a file where the directory should be: unwritable
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        generator = kind(blocker / "x.state", CONFIG)
        line = _line_after()
        generator()
    assert len(caught) == 2
    assert "unwritable" in str(caught[1].message)
    assert (caught[1].filename, caught[1].lineno) == (__file__, line)


def _make(path: Path, kind: type[Shared] = SharedV7Generator) -> Shared:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StateUnavailableWarning)
        return kind(path, CONFIG)


@pytest.mark.parametrize("kind", KINDS)
def test_close_deletes_the_lock_file_it_created_and_nothing_else(
    tmp_path: Path, kind: type[Shared]
) -> None:
    (tmp_path / "unrelated").write_text("kept")
    path = tmp_path / "gen.state"
    generator = _make(path, kind)
    last = generator()
    assert sorted(os.listdir(tmp_path)) == ["gen.state", "gen.state.lock", "unrelated"]
    state = path.read_bytes()
    generator.close()
    assert sorted(os.listdir(tmp_path)) == ["gen.state", "unrelated"]
    assert path.read_bytes() == state  # the state stays: the next generator resumes from it
    resumed = _make(path, kind)
    assert resumed() != last
    resumed.close()
    assert sorted(os.listdir(tmp_path)) == ["gen.state", "unrelated"]


def test_close_leaves_a_lock_file_another_process_created(tmp_path: Path) -> None:
    path = tmp_path / "gen.state"
    lock_path = tmp_path / "gen.state.lock"
    descriptor = os.open(lock_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(descriptor)  # made by "another process": this generator only opens it
    identity = lock_path.stat().st_ino
    generator = _make(path)
    generator()
    generator.close()
    assert lock_path.stat().st_ino == identity
    assert sorted(os.listdir(tmp_path)) == ["gen.state", "gen.state.lock"]


def test_a_closed_generator_makes_no_more_values(tmp_path: Path) -> None:
    with _make(tmp_path / "gen.state") as generator:
        generator()
    with pytest.raises(GeneratorError, match="closed"):
        generator()
    with pytest.raises(GeneratorError, match="closed"):
        generator.generate(3)
    generator.close()  # twice: harmless
    assert os.listdir(tmp_path) == ["gen.state"]


def test_closing_never_splits_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "gen.state"
    first = _make(path)
    first()  # creates the lock file
    second = _make(path)
    second()  # opens the same lock file and keeps it open between reservations
    first.close()  # deletes it, holding its lock; second still has the deleted file open
    assert not (tmp_path / "gen.state.lock").exists()
    with second.file:
        # second locked the old, nameless file, noticed, and locked the file at the path;
        # anyone else must now wait for it.
        third = StateFile(path, lock_timeout_ms=0)
        with pytest.raises(StateFileError, match="lock held elsewhere"), third:
            pass
    with third:
        pass
    third.close()
    second.close()
    assert os.listdir(tmp_path) == ["gen.state"]
