"""The API socket's path: a socket file is replaced only when it is provably dead.

Provably dead means a connect to it is refused (ECONNREFUSED) or it is gone (ENOENT). A
socket the caller may not connect to (EACCES), one whose queue is full, or anything that
is not a socket, is someone's and is kept. Two daemons starting on one path at once take
turns (a lock on the directory), so both cannot find the same stale file and replace it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from uuidkit.daemon.server import SocketError, bind_api_socket

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 30.0


def _identity(path: Path) -> tuple[int, int]:
    info = os.lstat(path)
    return info.st_dev, info.st_ino


def _accepts(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as probe:
        probe.settimeout(5)
        try:
            probe.connect(str(path))
        except OSError:
            return False
        return True


def _bind_in_background(path: Path) -> tuple[threading.Thread, list[BaseException | object]]:
    """Start bind_api_socket(path) in a thread; the list receives its result or its error."""
    outcome: list[BaseException | object] = []

    def bind() -> None:
        try:
            outcome.append(bind_api_socket(str(path)))
        except BaseException as error:
            outcome.append(error)

    binder = threading.Thread(target=bind, daemon=True)
    binder.start()
    return binder, outcome


def test_a_socket_whose_queue_is_full_is_kept_and_the_probe_is_bounded(tmp_path: Path) -> None:
    """A live daemon too busy to accept: the probe gives up after its timeout and the socket
    is kept (it cannot be proven dead), instead of blocking the start for ever."""
    path = tmp_path / "api.sock"
    busy = socket.socket(socket.AF_UNIX)
    busy.bind(str(path))
    busy.listen(0)
    queued = []
    while True:  # fill the queue: the next connect would block
        client = socket.socket(socket.AF_UNIX)
        client.setblocking(False)
        try:
            client.connect(str(path))
        except BlockingIOError:
            client.close()
            break
        queued.append(client)
    before = _identity(path)
    binder, outcome = _bind_in_background(path)
    binder.join(WAIT_S)
    try:
        assert not binder.is_alive(), "the probe of a busy socket never returned"
        assert len(outcome) == 1 and isinstance(outcome[0], SocketError), outcome
        assert "cannot be proven stale" in str(outcome[0])
        assert _identity(path) == before
    finally:
        for client in queued:
            client.close()
        busy.close()


_AS_NOBODY = """
import os, sys, tempfile, random
from uuidkit.daemon.server import SocketError, bind_api_socket
os.setgid(65534); os.setuid(65534)
try:
    bind_api_socket(sys.argv[1])
except SocketError as error:
    print("refused:", error)
else:
    print("replaced")
"""


@pytest.fixture
def shared_directory() -> Iterator[Path]:
    """A directory every user may write (no sticky bit), outside root's private tmp_path."""
    directory = Path(tempfile.mkdtemp(prefix="uuidkit-sock-"))
    os.chmod(directory, 0o777)
    try:
        yield directory
    finally:
        shutil.rmtree(directory)


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another uid needs root")
def test_a_socket_the_caller_may_not_connect_to_is_kept(shared_directory: Path) -> None:
    """Another user's live daemon behind a 0600 socket: the probe gets EACCES, which proves
    nothing, so the socket is kept and still served."""
    path = shared_directory / "api.sock"
    live = socket.socket(socket.AF_UNIX)
    live.bind(str(path))
    os.chmod(path, 0o600)
    live.listen(8)
    before = _identity(path)
    try:
        done = subprocess.run(
            [sys.executable, "-c", _AS_NOBODY, str(path)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
            timeout=60,
        )
        assert done.stdout.startswith("refused:"), (done.stdout, done.stderr)
        assert "Permission denied" in done.stdout
        assert _identity(path) == before and _accepts(path)
    finally:
        live.close()


def test_two_starts_on_one_path_take_turns(tmp_path: Path) -> None:
    """A stale socket, and another daemon mid-start holding the directory's lock: this
    start waits for it, then finds the other's live socket and refuses, instead of both
    finding the stale file and one replacing the other's socket."""
    path = tmp_path / "api.sock"
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))
    stale.close()
    lock = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(lock, fcntl.LOCK_EX)  # the other daemon is starting
    binder, outcome = _bind_in_background(path)
    binder.join(0.3)
    # The other daemon binds where nobody can reach it yet, listens, renames into place.
    other = socket.socket(socket.AF_UNIX)
    temporary = tmp_path / ".other.sock"
    other.bind(str(temporary))
    other.listen(8)
    os.rename(temporary, path)
    mine = _identity(path)
    fcntl.flock(lock, fcntl.LOCK_UN)
    os.close(lock)
    binder.join(WAIT_S)
    try:
        assert len(outcome) == 1 and isinstance(outcome[0], SocketError), outcome
        assert "another process is serving" in str(outcome[0])
        assert _identity(path) == mine and _accepts(path)
    finally:
        other.close()
        for result in outcome:
            if isinstance(result, tuple):
                result[0].close()


def test_nothing_but_a_socket_is_replaced(tmp_path: Path) -> None:
    for make in (
        lambda p: p.write_text("keep me"),
        lambda p: p.mkdir(),
        lambda p: os.mkfifo(p),
        lambda p: p.symlink_to(tmp_path / "nowhere"),
    ):
        path = tmp_path / "api.sock"
        make(path)
        before = _identity(path)
        with pytest.raises(SocketError, match="not a socket"):
            bind_api_socket(str(path))
        assert _identity(path) == before
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()
