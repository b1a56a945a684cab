"""A state write that fails is written again on its own, with a bounded backoff.

A release, an expiry or a renewal changes what ``state.json`` must hold even though no
request waits on it; when that write fails (a full disk, EIO) the daemon keeps trying,
``uuidkit uiap status`` says so, the log says so once per episode, and a stop makes a last
attempt. The retry delays come from an injected sleep, so nothing here waits on a real clock.

References: UIAP §4.4 (claims reclaimed after a restart: the state must be current).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from daemon_site import DOMAIN, WAIT_S, running

from uuidkit._safefile import FileSystem
from uuidkit.daemon.state import RetryPolicy, StateStore, StateWriter, read_state
from uuidkit.uiap.space import UIDSpace
from uuidkit.uiapd.api import APIError

ROOT = Path(__file__).resolve().parents[2]
X = UIDSpace.unique(b"\x5a")


class Disk(FileSystem):
    """The injected file system: writes fail with ENOSPC while ``full``; counts every write
    attempt (one per file written: the state is far smaller than one ``write`` takes)."""

    def __init__(self) -> None:
        self.full = False
        self.attempts = 0

    def write(self, descriptor: int, data: memoryview) -> int:
        self.attempts += 1
        if self.full:
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().write(descriptor, data)


class SleepGate:
    """An injected sleep: records each delay asked for; a sleep ends only when the test
    releases it (or the writer abandons it)."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self._sleeping: asyncio.Queue[asyncio.Future[None]] = asyncio.Queue()

    async def sleep(self, delay: float) -> None:
        self.delays.append(delay)
        done = asyncio.get_running_loop().create_future()
        await self._sleeping.put(done)
        await done

    async def next_sleep(self) -> asyncio.Future[None]:
        """The next sleep the writer starts (waits for it)."""
        return await asyncio.wait_for(self._sleeping.get(), WAIT_S)

    async def release(self) -> None:
        done = await self.next_sleep()
        if not done.done():
            done.set_result(None)


def _saved(path: Path) -> Any:
    return read_state(str(path))["claims"]


def _errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_failed_write_is_retried_alone_with_a_bounded_backoff(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Nothing asks again, yet the state reaches the disk once it can be written: every
    retry waits its delay first (first, doubling, capped at most: no busy loop), the
    episode is logged once however many writes fail, and the retries stop once one
    succeeds."""
    caplog.set_level(logging.INFO, logger="uuidkit.daemon")
    disk, gate = Disk(), SleepGate()
    store = StateStore(str(tmp_path), disk)
    state = {"claims": ["old"]}

    async def main() -> None:
        writer = StateWriter(
            store, lambda: dict(state), retry=RetryPolicy(first=1, most=4), sleep=gate.sleep
        )
        writer.save()
        await writer.persisted()
        assert _saved(tmp_path) == ["old"]
        disk.full, state["claims"] = True, ["new"]
        writer.save()  # no waiter: e.g. a claim expired
        for _ in range(5):
            await gate.release()
        sixth = await gate.next_sleep()
        assert gate.delays == [1, 2, 4, 4, 4, 4]
        # The first write (a snapshot and its journal's header), then one per ended delay
        # (each fails at the snapshot).
        assert disk.attempts == 2 + 6
        assert (writer.pending, writer.errors) == (True, 6)
        assert writer.last_error == "No space left on device"
        assert _saved(tmp_path) == ["old"]
        assert len(_errors(caplog)) == 1
        disk.full = False
        sixth.set_result(None)
        assert writer._task is not None
        await asyncio.wait_for(writer._task, WAIT_S)  # the loop ends: nothing is pending
        assert _saved(tmp_path) == ["new"]
        assert (writer.pending, writer.failures, len(gate.delays)) == (False, 0, 6)
        assert [r.levelno for r in caplog.records].count(logging.WARNING) == 1
        # A second episode is logged again.
        disk.full = True
        writer.save()
        await gate.next_sleep()
        assert len(_errors(caplog)) == 2

    asyncio.run(main())


def test_a_waiter_is_answered_without_waiting_out_the_delay(tmp_path: Path) -> None:
    """A change someone waits on (a claim's grant, a release's reply) is tried at once
    during a retry delay, so a request is answered promptly whatever the delay."""
    disk, gate = Disk(), SleepGate()
    store = StateStore(str(tmp_path), disk)

    async def main() -> None:
        writer = StateWriter(store, lambda: {"claims": [1]}, sleep=gate.sleep)
        disk.full = True
        writer.save()
        await gate.next_sleep()  # never released
        disk.full = False
        told: list[OSError | None] = []
        writer.save(then=told.append)
        assert await asyncio.wait_for(writer.persisted(), WAIT_S) is None
        assert told == [None] and not writer.pending
        assert _saved(tmp_path) == [1]

    asyncio.run(main())


@pytest.mark.parametrize("recovers", [True, False])
def test_a_stop_makes_a_last_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, recovers: bool
) -> None:
    """A stop during a retry delay does not wait it out: it writes once more. If that write
    fails too, the loss is logged."""
    disk, gate = Disk(), SleepGate()
    store = StateStore(str(tmp_path), disk)

    async def main() -> None:
        writer = StateWriter(store, lambda: {"claims": [2]}, sleep=gate.sleep)
        disk.full = True
        writer.save()
        await gate.next_sleep()  # never released
        disk.full = not recovers
        failure = await asyncio.wait_for(writer.close(), WAIT_S)
        assert (failure is None) == recovers
        assert writer.pending == (not recovers)
        stopping = [m for m in _errors(caplog) if m.startswith("stopping")]
        if recovers:
            assert _saved(tmp_path) == [2] and stopping == []
        else:
            assert not (tmp_path / "state.json").exists() and len(stopping) == 1

    asyncio.run(main())


def test_a_release_whose_write_failed_reaches_the_disk_and_status_says_so(
    tmp_path: Path,
) -> None:
    """The daemon: a release whose write fails is answered ``state-write-failed``; while
    the disk is full, ``status`` (the API and ``uuidkit uiap status``) reports the pending
    write and its error; once the disk recovers the retry removes the claim from
    ``state.json`` with no further request, and ``status`` is clear again."""

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            daemon = hosts["a"].daemon
            assert daemon is not None and daemon.service is not None
            writer = daemon.service.writer
            disk, gate = Disk(), SleepGate()
            writer.sleep = gate.sleep
            daemon.service.store.fs = disk
            state = hosts["a"].directory / "state"
            async with hosts["a"].client() as client:
                held = await client.claim(DOMAIN, X, 60)
                disk.full = True
                with pytest.raises(APIError) as caught:
                    await client.release(str(held.claim))
                assert caught.value.code.value == "state-write-failed"
                waiting = await gate.next_sleep()
                status = await client.status()
                assert status["state_write_pending"] is True
                assert status["state_write_last_error"] == "No space left on device"
                shown = await asyncio.to_thread(_cli_status, hosts["a"].socket)
                assert "state: NOT WRITTEN, retrying (No space left on device" in shown
                assert [c["id"] for c in _saved(state)] == [held.claim]
                disk.full = False
                waiting.set_result(None)
                assert writer._task is not None
                await asyncio.wait_for(writer._task, WAIT_S)
                assert _saved(state) == []
                status = await client.status()
                assert status["state_write_pending"] is False
                assert "state: written" in await asyncio.to_thread(_cli_status, hosts["a"].socket)

    asyncio.run(main())


def _cli_status(socket: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "uuidkit", "uiap", "status", "--socket", socket],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=60,
        check=True,
    )
    return done.stdout


def test_a_change_after_the_stop_is_written_at_once(tmp_path: Path) -> None:
    """A change that arrives after the stop's last write (a request answered late) is
    written at once, and a waiter hears whether that write failed."""
    disk = Disk()
    store = StateStore(str(tmp_path), disk)
    state = {"claims": [1]}

    async def main() -> None:
        writer = StateWriter(store, lambda: dict(state))
        assert await writer.close() is None
        state["claims"] = [2]
        writer.save()
        assert _saved(tmp_path) == [2] and await writer.persisted() is None
        disk.full, state["claims"] = True, [3]
        writer.save()
        failure = await writer.persisted()
        assert isinstance(failure, OSError) and failure.errno == errno.ENOSPC

    asyncio.run(main())
