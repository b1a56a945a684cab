"""The device-ID file is read as safely as a generator state file: never blocking on a
planted FIFO, never through a symlink, never from a file or directory another user could
have written.

References: UIAP §4.1, §9 (a device ID must stay the device's own).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from uuidkit._safefile import UnsafeStateError
from uuidkit.errors import TransportError
from uuidkit.net import load_or_store_device_id

ID_TEXT = "00000000000000aa\n"


def _refused(directory: Path, reason: str) -> None:
    with pytest.raises(TransportError, match=reason) as caught:
        load_or_store_device_id(directory, lambda: 1)
    assert caught.value.field == "state_directory"
    assert isinstance(caught.value.__cause__, UnsafeStateError)


def test_a_planted_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "device-id"
    os.mkfifo(fifo, 0o600)
    outcome: list[BaseException | int] = []

    def read() -> None:
        try:
            outcome.append(load_or_store_device_id(tmp_path, lambda: 1))
        except BaseException as error:
            outcome.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # blocked in open(): a writer lets it go, then the test fails
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
        pytest.fail("opening the device-ID file blocked on a FIFO")
    assert len(outcome) == 1 and isinstance(outcome[0], TransportError), outcome
    assert "FIFO" in str(outcome[0]) and isinstance(outcome[0].__cause__, UnsafeStateError)
    assert fifo.is_fifo()  # refused, never replaced


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_a_directory_others_may_write_is_refused(tmp_path: Path, mode: int) -> None:
    directory = tmp_path / "state"
    directory.mkdir()
    (directory / "device-id").write_text(ID_TEXT)
    os.chmod(directory, mode)
    _refused(directory, "writable by other users")


def test_a_file_others_may_write_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "device-id"
    path.write_text(ID_TEXT)
    os.chmod(path, 0o622)
    _refused(tmp_path, "open to other users")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
@pytest.mark.parametrize("what", ["directory", "file"])
def test_another_users_file_or_directory_is_refused(tmp_path: Path, what: str) -> None:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o700)
    (directory / "device-id").write_text(ID_TEXT)
    os.chown(directory if what == "directory" else directory / "device-id", 65534, 65534)
    _refused(directory, "owned by uid 65534")


def test_a_safe_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "device-id"
    path.write_text(ID_TEXT)
    os.chmod(path, 0o600)
    assert load_or_store_device_id(tmp_path, lambda: 1) == 0xAA
