"""A throwaway etcd server for tests: loopback only, a private data directory, free ports.

The tests skip, naming the reason, when no ``etcd`` binary is installed (Debian's
``etcd-server``); with ``UUIDKIT_REQUIRE_ETCD=1`` (which ``.ci/run`` exports) they fail
instead, so CI never passes by skipping. :meth:`EtcdServer.stop` and :meth:`EtcdServer.start`
restart the server on the same ports and data, for the restart tests.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REQUIRED = os.environ.get("UUIDKIT_REQUIRE_ETCD") == "1"
START_TIMEOUT_S = 30.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class EtcdServer:
    """One etcd member on 127.0.0.1 (client and peer ports free at start)."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.directory = Path(tempfile.mkdtemp(prefix="uuidkit-etcd-"))
        self.client_port = _free_port()
        self.peer_port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.client_port}"

    def start(self) -> None:
        client, peer = self.endpoint, f"http://127.0.0.1:{self.peer_port}"
        log = (self.directory / "etcd.log").open("ab")
        self.process = subprocess.Popen(
            [self.binary, "--name", "t", "--data-dir", str(self.directory / "data"),
             "--listen-client-urls", client, "--advertise-client-urls", client,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", f"t={peer}"],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"etcd exited: {self.log_tail()}")
            if self._healthy():
                return
            time.sleep(0.05)
        raise RuntimeError(f"etcd did not answer within {START_TIMEOUT_S} s: {self.log_tail()}")

    def _healthy(self) -> bool:
        connection = http.client.HTTPConnection("127.0.0.1", self.client_port, timeout=1)
        try:
            connection.request("POST", "/v3/maintenance/status", "{}")
            return connection.getresponse().status == 200
        except OSError:
            return False
        finally:
            connection.close()

    def log_tail(self) -> str:
        log = self.directory / "etcd.log"
        return log.read_text(errors="replace")[-800:] if log.exists() else ""

    def pause(self) -> None:
        """SIGSTOP: the server keeps its ports but answers nothing (a hung or cut-off server)."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGCONT)
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


def throwaway_etcd() -> Iterator[EtcdServer]:
    """A running server for as long as the generator runs (skip, or under CI fail, if none)."""
    binary = shutil.which("etcd")
    if binary is None:
        reason = "no etcd binary (apt-get install etcd-server)"
        if REQUIRED:
            pytest.fail(f"UUIDKIT_REQUIRE_ETCD=1 but {reason}")
        pytest.skip(reason)
    server = EtcdServer(binary)
    try:
        server.start()
        yield server
    finally:
        server.remove()
