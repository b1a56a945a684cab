"""Reaching the daemon: the socket a client chooses, and its bounded wait for a daemon that is
starting (no socket file yet, or a socket that does not accept yet).

The waits run on a replaced clock and pause, so no test depends on real time passing: the
pause is where the "daemon" comes up, at a known attempt.

References: UIAP §2.1.1; docs/uiap-api.md (reaching the daemon).
"""

from __future__ import annotations

import asyncio
import errno
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_client import serve_on

from uuidkit.uiapd import client as client_module
from uuidkit.uiapd.api import DEFAULT_SOCKET, SOCKET_ENV, APIError, ErrorCode
from uuidkit.uiapd.client import DEFAULT_WAIT_S, AsyncClient, Client, socket_path


class FakeTime:
    """Time that passes only when the client pauses; ``on_pause`` runs at each pause."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.pauses: list[float] = []
        self.on_pause: list[object] = []

    def pause(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds
        if self.on_pause:
            action = self.on_pause.pop(0)
            assert callable(action)
            action()


@pytest.fixture
def fake_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeTime]:
    fake = FakeTime()
    monkeypatch.setattr(client_module, "_pause", fake.pause)
    yield fake


def test_the_socket_is_the_argument_then_the_environment_then_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(SOCKET_ENV, raising=False)
    assert socket_path() == Client().socket_path == DEFAULT_SOCKET == "/run/uuidkit/uiapd.sock"
    monkeypatch.setenv(SOCKET_ENV, "")  # set but empty: as if unset
    assert socket_path() == DEFAULT_SOCKET
    monkeypatch.setenv(SOCKET_ENV, "/tmp/site/a.sock")
    assert socket_path() == Client().socket_path == AsyncClient().socket_path == "/tmp/site/a.sock"
    assert socket_path("/x.sock") == Client("/x.sock").socket_path == "/x.sock"


def test_a_client_waits_for_the_socket_file_to_appear(tmp_path: Path, fake_time: FakeTime) -> None:
    path = str(tmp_path / "api.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    def daemon_comes_up() -> None:  # at the third pause, the socket is renamed into place
        listener.bind(path)
        listener.listen()
        serve_on(listener)

    fake_time.on_pause = [lambda: None, lambda: None, daemon_comes_up]
    try:
        assert Client(path, wait=1.0).status() == {"device_id": "00"}
    finally:
        listener.close()
    assert len(fake_time.pauses) == 3


def test_a_client_waits_for_a_socket_that_does_not_accept_yet(
    tmp_path: Path, fake_time: FakeTime
) -> None:
    path = str(tmp_path / "api.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)  # bound, not listening: a connect is refused (ECONNREFUSED)

    def daemon_listens() -> None:
        listener.listen()
        serve_on(listener)

    fake_time.on_pause = [daemon_listens]
    try:
        assert Client(path, wait=1.0).list_claims() == [{"claim": "c1"}]
    finally:
        listener.close()


def test_the_wait_is_bounded_and_then_unreachable(tmp_path: Path, fake_time: FakeTime) -> None:
    start = fake_time.now
    with pytest.raises(APIError) as caught:
        Client(str(tmp_path / "never.sock"), wait=2.0).status()
    assert caught.value.code is ErrorCode.UNREACHABLE
    # It tried for the whole wait and not longer: its pauses add up to exactly the wait.
    assert fake_time.now - start == pytest.approx(2.0)
    assert max(fake_time.pauses) <= client_module._RETRY_S


def test_no_wait_means_one_attempt(tmp_path: Path, fake_time: FakeTime) -> None:
    with pytest.raises(APIError):
        Client(str(tmp_path / "never.sock"), wait=0).status()
    assert fake_time.pauses == []


def test_an_error_waiting_cannot_cure_is_not_retried(fake_time: FakeTime) -> None:
    attempts = []

    def connect() -> None:
        attempts.append(1)
        raise PermissionError(errno.EACCES, "Permission denied")

    with pytest.raises(PermissionError):
        client_module._connect_waiting(connect, 10.0)
    assert (len(attempts), fake_time.pauses) == (1, [])


def test_the_default_wait_covers_a_starting_daemon() -> None:
    # A daemon's socket appears within about a second of its start; the default leaves room.
    assert 2.0 <= DEFAULT_WAIT_S <= 10.0
    assert Client("/x").wait == AsyncClient("/x").wait == DEFAULT_WAIT_S


def test_the_async_client_waits_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "api.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    real_sleep = asyncio.sleep

    async def pause(seconds: float) -> None:  # the first pause: the daemon starts listening
        if not getattr(pause, "done", False):
            pause.done = True  # type: ignore[attr-defined]
            listener.listen()
            serve_on(listener)
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", pause)

    async def main() -> list[dict[str, Any]]:
        async with AsyncClient(path, wait=30.0, timeout=5) as client:
            return await client.list_claims()

    try:
        assert asyncio.run(main()) == [{"claim": "c1"}]
    finally:
        listener.close()
    assert getattr(pause, "done", False)
