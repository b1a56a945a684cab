"""``uuidkit uiap daemon`` as a real process inside a namespace, with a service manager's
notify socket to learn when it is ready, and the CLI and client to talk to it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from netns_topology import ROOT, WAIT_S, Network

from uuidkit.uiapd.client import Client

DOMAIN = "0fff:0000:00d1:0000"
#: Fast timers: claims take tens of milliseconds. Outcomes are asserted, never timings.
FAST = ("--claim-period", "0.05", "--claim-timeout", "0.1")
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


class DaemonProcess:
    """One daemon in ``host``'s namespace; its socket and state live under ``directory``."""

    def __init__(self, network: Network, host: str, directory: Path, *extra: str) -> None:
        self.network, self.host, self.extra = network, host, extra
        self.directory = directory / host
        self.directory.mkdir(parents=True, exist_ok=True)
        self.socket = str(self.directory / "api.sock")
        self.process: subprocess.Popen[str] | None = None
        self.manager = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.manager.bind(str(self.directory / "notify"))
        self.manager.settimeout(WAIT_S)

    def start(self) -> None:
        command = [
            "ip", "netns", "exec", self.network.ns(self.host), sys.executable, "-m", "uuidkit",
            "uiap", "daemon", "--socket", self.socket, "--state-dir",
            str(self.directory / "state"), "--interface", "e0", *FAST, *self.extra,
        ]  # fmt: skip
        env = {**ENV, "NOTIFY_SOCKET": str(self.directory / "notify")}
        self.process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.manager.settimeout(0.1)
        try:
            for _ in range(int(WAIT_S / 0.1)):
                try:
                    message = self.manager.recv(4096).decode()
                except TimeoutError:
                    if self.process.poll() is not None:
                        break
                    continue
                assert message.startswith("READY=1"), message
                return
            raise RuntimeError(f"{self.host}: daemon never ready: {self.stderr()}")
        finally:
            self.manager.settimeout(WAIT_S)

    def client(self) -> Client:
        return Client(self.socket, timeout=WAIT_S)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "uuidkit", "uiap", args[0], "--socket", self.socket, *args[1:]],
            capture_output=True, text=True, env=ENV, timeout=WAIT_S,
        )  # fmt: skip

    def cli_json(self, *args: str) -> Any:
        done = self.cli(*args, "--json")
        return done.returncode, json.loads(done.stdout) if done.stdout else None

    def signal(self, signum: int) -> None:
        assert self.process is not None
        self.process.send_signal(signum)

    def notified(self) -> str:
        """The next message the daemon sent its service manager."""
        return self.manager.recv(4096).decode()

    def stop(self) -> int:
        """SIGTERM and wait; the exit status."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(timeout=WAIT_S)
        assert self.manager.recv(4096).decode().startswith("STOPPING=1")
        return status

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=WAIT_S)

    def stderr(self) -> str:
        assert self.process is not None and self.process.stderr is not None
        if self.process.poll() is None:
            self.kill()
        return self.process.stderr.read()

    def close(self) -> None:
        self.kill()
        if self.process is not None and self.process.stderr is not None:
            self.process.stderr.close()
        self.manager.close()
