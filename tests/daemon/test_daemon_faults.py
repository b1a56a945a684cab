"""The daemon under faults: a second daemon on one state directory, planted FIFOs, a full
disk at restart, a client that never reads its replies.

References: UIAP §4.1 (one device ID per device), §4.4 (claims reclaimed after a restart).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from daemon_site import DOMAIN, WAIT_S, Host, running

from uuidkit._safefile import FileSystem
from uuidkit.daemon.config import ConfigError, DaemonConfig, load_config
from uuidkit.daemon.localsite import LocalSite
from uuidkit.daemon.main import Daemon
from uuidkit.daemon.state import StateError, StateStore
from uuidkit.uiap.space import UIDSpace

ROOT = Path(__file__).resolve().parents[2]
X = UIDSpace.unique(b"\x3c")


def _daemon_cli(tmp_path: Path, state_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "uuidkit",
            "uiap",
            "daemon",
            "--state-dir",
            str(state_dir),
            "--socket",
            str(tmp_path / "api.sock"),
            # Never a real network: a start that gets past the state directory stops here.
            "--interface",
            "uuidkit-none0",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=60,
    )


# ---------------------------------------------------------------------- one daemon per directory


def test_a_second_daemon_on_a_state_directory_refuses_to_start(tmp_path: Path) -> None:
    """Two daemons on one directory would share a device ID and erase each other's claims;
    the second stops before it reads or writes anything, naming the directory (removing
    the flock in StateStore.lock makes it start, and this test fail)."""

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (site, hosts):
            state = hosts["a"].directory / "state" / "state.json"
            before = state.read_bytes()
            second = Host(site, tmp_path, "b", state_dir=hosts["a"].settings["state_dir"])
            with pytest.raises(ConfigError) as caught:
                await second.start()
            assert caught.value.key == "state_dir"
            assert "in use by another running daemon" in str(caught.value)
            assert state.read_bytes() == before
            assert not Path(second.socket).exists()
            # The first one serves on; once it stops, the directory is free again.
            async with hosts["a"].client() as client:
                assert (await client.claim(DOMAIN, X, 60)).granted
            await hosts["a"].stop()
            await second.start()
            await second.stop()

    asyncio.run(main())


def test_the_command_line_refuses_a_locked_state_directory_in_one_line(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    holder = StateStore(str(state_dir))
    holder.lock()
    try:
        done = _daemon_cli(tmp_path, state_dir)
    finally:
        holder.close()
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "'state_dir'" in done.stderr and "in use by another running daemon" in done.stderr
    # Unlocked, the same start gets past the directory (and stops at the interface).
    done = _daemon_cli(tmp_path, state_dir)
    assert done.returncode == 2 and "state_dir" not in done.stderr, done.stderr


def test_a_killed_daemon_leaves_its_directory_free(tmp_path: Path) -> None:
    """The lock is the kernel's: a process that dies without stopping holds nothing."""
    state_dir = tmp_path / "state"
    StateStore(str(state_dir))
    script = (
        "import os, sys; from uuidkit.daemon.state import StateStore; "
        f"StateStore({str(state_dir)!r}).lock(); os._exit(0)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=60)
    store = StateStore(str(state_dir))
    store.lock()
    store.close()


# ---------------------------------------------------------------------- files never block


def _within(seconds: float, call: Callable[[], object]) -> BaseException | object:
    """Run ``call`` in a thread; its result or exception, or fail if it is still running
    after ``seconds`` (blocked in open(): the caller then lets it go)."""
    outcome: list[BaseException | object] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as error:
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    return outcome[0] if outcome else TimeoutError("still blocked")


def _release_fifo(path: Path) -> None:
    """Open the FIFO for writing, so a reader blocked in open() returns."""
    with contextlib.suppress(OSError):  # nobody reading: nothing blocked
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def test_a_fifo_as_the_configuration_file_is_refused_without_blocking(tmp_path: Path) -> None:
    """The configuration file used to be opened blocking: a FIFO at its path hung the
    start in open(). It is read through uuidkit._safefile now (O_NONBLOCK)."""
    fifo = tmp_path / "uiapd.toml"
    os.mkfifo(fifo, 0o600)
    outcome = _within(WAIT_S, lambda: load_config(str(fifo), {}))
    _release_fifo(fifo)
    assert isinstance(outcome, ConfigError), outcome
    assert outcome.key == "config" and "a FIFO, not a configuration file" in str(outcome)


def test_a_configuration_file_others_may_write_is_refused(tmp_path: Path) -> None:
    """It names the key file and the state directory: another user must not edit it."""
    path = tmp_path / "uiapd.toml"
    path.write_text("max_claims = 2\n")
    os.chmod(path, 0o646)
    with pytest.raises(ConfigError, match="open to other users"):
        load_config(str(path), {})
    os.chmod(path, 0o644)
    assert load_config(str(path), {}).max_claims == 2


def test_a_fifo_or_a_link_at_the_lock_file_is_refused_without_blocking(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    store = StateStore(str(state_dir))
    os.mkfifo(state_dir / "lock", 0o600)
    outcome = _within(WAIT_S, store.lock)
    _release_fifo(state_dir / "lock")
    assert isinstance(outcome, StateError), outcome
    assert "a FIFO, not a lock file" in str(outcome)
    os.unlink(state_dir / "lock")
    os.symlink(tmp_path / "elsewhere", state_dir / "lock")
    with pytest.raises(StateError, match="a symbolic link"):
        store.lock()
    assert not (tmp_path / "elsewhere").exists()


def test_every_file_the_daemon_start_reads_is_opened_without_blocking(tmp_path: Path) -> None:
    """A FIFO at the state file, the key file or the configuration file: the daemon's
    start ends with a clear error, never hangs (each reader goes through _safefile)."""

    def start(**settings: Any) -> BaseException | object:
        config = DaemonConfig(
            socket=str(tmp_path / "api.sock"), state_dir=str(tmp_path / "state"), **settings
        )
        daemon = Daemon(config, node_factory=LocalSite().factory, environ={})
        return asyncio.run(asyncio.wait_for(daemon.serve(), WAIT_S))

    state_dir = tmp_path / "state"
    StateStore(str(state_dir))
    os.mkfifo(state_dir / "state.json", 0o600)
    outcome = _within(WAIT_S, start)
    _release_fifo(state_dir / "state.json")
    assert isinstance(outcome, ConfigError) and outcome.key == "state_dir", outcome
    os.unlink(state_dir / "state.json")
    key = tmp_path / "site.key"
    os.mkfifo(key, 0o600)
    outcome = _within(WAIT_S, lambda: start(key_file=str(key)))
    _release_fifo(key)
    assert isinstance(outcome, ConfigError) and outcome.key == "key_file", outcome


# ---------------------------------------------------------------------- clients that never read


def test_a_client_that_never_reads_its_replies_is_dropped_and_frees_its_slot(
    tmp_path: Path,
) -> None:
    """It sends requests and reads nothing: once a reply has waited ``send_timeout`` the
    daemon drops it, so it cannot pin a connection slot (before, the reply's drain waited for
    ever and no read timeout ran). Removing the deadline in APIServer._send makes the flood
    below block until the test's deadline, and this test fail."""

    async def main() -> None:
        async with running(tmp_path, ["a"], send_timeout=0.5, max_clients=1) as (_, hosts):
            loop = asyncio.get_running_loop()
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.setblocking(False)
            await loop.sock_connect(sock, hosts["a"].socket)
            requests = b"".join(b'{"id": %d, "method": "status"}\n' % n for n in range(100))

            async def flood() -> int:
                """Send requests until the daemon drops the connection; the batches sent."""
                batches = 0
                while True:
                    try:
                        await loop.sock_sendall(sock, requests)
                    except (BrokenPipeError, ConnectionResetError):
                        return batches
                    batches += 1

            try:
                assert await asyncio.wait_for(flood(), WAIT_S) >= 1
            finally:
                sock.close()
            # The one slot is free again, and the drop is counted.
            async with hosts["a"].client() as client:
                status = await client.status()
            assert status["api"]["errors"].get("send-timeout") == 1

    asyncio.run(main())


# ---------------------------------------------------------------------- a full disk at restart


class FullDisk(FileSystem):
    """The state directory's disk is full: every write fails with ENOSPC (reads work)."""

    def write(self, descriptor: int, data: memoryview) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


def test_a_restart_on_a_full_disk_keeps_the_claims_state_json_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon restarts while its disk is full: it reclaims the five claims state.json
    holds, keeps all five although every write fails (the file already holds them), reports
    the write pending, and writes them once the disk recovers. Before, it released all five.
    Removing the restart case in ClaimService._succeeded makes this test fail."""
    spaces = [UIDSpace.unique(bytes([0x40 + n])) for n in range(5)]

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            host = hosts["a"]
            async with host.client() as client:
                held = sorted([str((await client.claim(DOMAIN, s, 600)).claim) for s in spaces])
            await host.stop()
            state = host.directory / "state" / "state.json"
            before = state.read_bytes()
            monkeypatch.setattr("uuidkit.daemon.state.FileSystem", FullDisk)
            daemon = await host.start()
            assert daemon.service is not None
            async with host.client() as client:
                deadline = asyncio.get_running_loop().time() + WAIT_S
                while any(r["result"] == "pending" for r in (await client.status())["restored"]):
                    assert asyncio.get_running_loop().time() < deadline
                    await asyncio.sleep(0.05)
                status = await client.status()
                assert sorted(r["result"] for r in status["restored"]) == ["granted"] * 5
                assert status["state_write_pending"] is True
                listed = await client.list_claims()
                assert sorted(c["claim"] for c in listed) == held
                assert {c["state"] for c in listed} == {"held"}
                assert state.read_bytes() == before  # nothing written, nothing lost
                # The disk recovers: the next write carries all five.
                daemon.service.store.fs = FileSystem()
                assert await daemon.service.writer.persisted() is None
                saved = json.loads(state.read_text())["claims"]
                assert sorted(c["id"] for c in saved) == held

    asyncio.run(main())
