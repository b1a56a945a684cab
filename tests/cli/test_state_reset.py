"""``uuidkit state reset PATH`` deletes only what provably is a uuidkit state file.

Everything else (text, a directory, a symbolic link, a FIFO, a device, a near miss of the
format) is refused with exit status 2, left exactly as it was, and no ``PATH.lock`` appears.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from uuidkit.cli import main
from uuidkit.errors import StateFileError
from uuidkit.generators.statefile import StateFile, StoredState

VALID = StoredState("v7", 1_767_225_600_000, 1_767_225_600_999, 42, None, 1_767_225_600 * 10**9)


def reset(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str, str]:
    status = main(["state", "reset", str(path)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def refused(capsys: pytest.CaptureFixture[str], path: Path, reason: str) -> None:
    status, out, err = reset(capsys, path)
    assert (status, out) == (2, "")
    assert err.startswith(f"uuidkit: error: state reset: refusing to delete: {path}: ")
    assert reason in err and err.count("\n") == 1
    assert not Path(f"{path}.lock").exists()
    assert not any(p.name.endswith(".lock") for p in path.parent.iterdir())


def test_a_text_file_is_refused_and_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("my notes\n")
    refused(capsys, path, "corrupted: not JSON")
    assert path.read_text() == "my notes\n"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"kind": "v7"}', "checksum"),
        (VALID.to_text().replace('"kind": "v7"', '"kind": "v8"'), "checksum"),
        ("[]", "expected a JSON object"),
        ("\xff\xfe", "corrupted"),
        (VALID.to_text() + " " * 4096, "larger than 4096 bytes"),
    ],
)
def test_near_misses_of_the_format_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, reason: str
) -> None:
    path = tmp_path / "x.state"
    path.write_bytes(text.encode("latin-1") if text.startswith("\xff") else text.encode())
    before = path.read_bytes()
    refused(capsys, path, reason)
    assert path.read_bytes() == before


def test_a_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "dir.state"
    path.mkdir()
    (path / "inside").write_text("kept")
    refused(capsys, path, "a directory, not a state file")
    assert (path / "inside").read_text() == "kept"


def test_a_symlink_to_a_valid_state_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "real.state"
    target.write_text(VALID.to_text())
    link = tmp_path / "link.state"
    link.symlink_to(target)
    refused(capsys, link, "a symbolic link, not a state file")
    assert link.is_symlink() and target.read_text() == VALID.to_text()
    dangling = tmp_path / "dangling.state"
    dangling.symlink_to(tmp_path / "nowhere")
    refused(capsys, dangling, "a symbolic link")
    assert dangling.is_symlink()


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    # A real process with a timeout: opening a FIFO for reading without O_NONBLOCK would
    # wait for a writer forever.
    path = tmp_path / "pipe.state"
    os.mkfifo(path)
    result = subprocess.run(
        [sys.executable, "-m", "uuidkit", "state", "reset", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert result.returncode == 2 and result.stdout == ""
    assert "a FIFO, not a state file" in result.stderr and "Traceback" not in result.stderr
    assert path.exists() and not Path(f"{path}.lock").exists()


def test_a_device_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = reset(capsys, Path("/dev/null"))
    assert status == 2 and "a character device, not a state file" in err
    assert Path("/dev/null").exists()


def test_a_missing_file_leaves_no_lock(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "none.state"
    assert reset(capsys, path) == (0, f"no state file at {path}\n", "")
    assert list(tmp_path.iterdir()) == []


def test_a_valid_state_file_is_removed_and_no_lock_is_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gen.state"
    path.write_text(VALID.to_text())
    assert reset(capsys, path) == (0, f"removed {path}\n", "")
    assert list(tmp_path.iterdir()) == []


def test_a_reset_also_removes_what_killed_writers_left_and_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gen.state"
    path.write_text(VALID.to_text())
    (tmp_path / ".gen.state.00000000000000aa.tmp").write_text("a killed writer's")
    (tmp_path / ".gen.state.notours.tmp").write_text("someone's")
    assert reset(capsys, path) == (0, f"removed {path}\n", "")
    assert [p.name for p in tmp_path.iterdir()] == [".gen.state.notours.tmp"]


def test_a_lock_file_a_generator_made_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A generator keeps its lock file open: deleting it would split the lock in two.
    path = tmp_path / "gen.state"
    with StateFile(path) as state_file:
        state_file.write(VALID)
    assert reset(capsys, path)[0] == 0
    assert [p.name for p in tmp_path.iterdir()] == ["gen.state.lock"]


def test_a_symlinked_lock_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gen.state"
    path.write_text(VALID.to_text())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("kept")
    Path(f"{path}.lock").symlink_to(elsewhere)
    status, _, err = reset(capsys, path)
    assert status == 2 and "unusable lock file" in err
    assert path.exists() and elsewhere.read_text() == "kept"


def test_the_check_is_repeated_under_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between the first check and the lock, the state file is replaced by a text file:
    # the second check under the lock must see it and keep the text file.
    path = tmp_path / "gen.state"
    path.write_text(VALID.to_text())
    real_flock = fcntl.flock

    def swap_then_lock(descriptor: int, operation: int) -> None:
        path.unlink()
        path.write_text("someone's notes\n")
        real_flock(descriptor, operation)

    monkeypatch.setattr(fcntl, "flock", swap_then_lock)
    with pytest.raises(StateFileError, match="corrupted"):
        StateFile(path).remove()
    assert path.read_text() == "someone's notes\n"


def test_the_inode_that_passed_the_check_is_the_one_unlinked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A valid state file swapped for another valid one after the check under the lock: the
    # path no longer names the inode that was checked, so nothing is deleted.
    path = tmp_path / "gen.state"
    path.write_text(VALID.to_text())
    real_lstat = os.lstat

    def swap_then_lstat(target: str | os.PathLike[str]) -> os.stat_result:
        if Path(target) == path:
            replacement = tmp_path / "other"
            replacement.write_text(VALID.to_text())
            os.replace(replacement, path)
        return real_lstat(target)

    monkeypatch.setattr(os, "lstat", swap_then_lstat)
    with pytest.raises(StateFileError, match="replaced while being removed"):
        StateFile(path).remove()
    assert path.exists()
