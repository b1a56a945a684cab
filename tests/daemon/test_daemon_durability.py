"""What the daemon answers when its state cannot be written or read back.

A grant is only a grant once it is on disk; a state file the daemon cannot use stops it with
one line naming the file and the key, never a traceback.

References: UIAP §4.1 (device ID), §4.4 (claims reclaimed after a restart).
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from daemon_site import DOMAIN, WAIT_S, running

from uuidkit._safefile import FileSystem
from uuidkit.daemon.state import read_state
from uuidkit.uiap.space import UIDSpace
from uuidkit.uiapd.api import APIError

ROOT = Path(__file__).resolve().parents[2]
X = UIDSpace.unique(b"\x3c")


class FullDisk(FileSystem):
    """The state directory's disk is full: every write fails with ENOSPC."""

    def write(self, descriptor: int, data: memoryview) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


async def _watch(path: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A watching connection, subscribed once this returns."""
    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(b'{"id": 1, "method": "watch"}\n')
    reply = json.loads(await asyncio.wait_for(reader.readline(), WAIT_S))
    assert reply["result"] == {"watching": True}
    return reader, writer


async def _next_event(reader: asyncio.StreamReader, name: str) -> dict[str, object]:
    while True:
        body = json.loads(await asyncio.wait_for(reader.readline(), WAIT_S))
        if body.get("event") == name:
            return dict(body)


def test_a_grant_that_cannot_be_written_is_an_error_and_released(tmp_path: Path) -> None:
    """The state write carrying a grant fails (an injected writer: a full disk): the claim
    is not reported granted, it is released (the space is free again), watchers hear
    ``released``, and no later write brings it back."""

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            daemon = hosts["a"].daemon
            assert daemon is not None and daemon.service is not None
            store = daemon.service.store
            reader, writer = await _watch(hosts["a"].socket)
            client = hosts["a"].client()
            store.fs = FullDisk()
            with pytest.raises(APIError) as caught:
                await client.claim(DOMAIN, X, 60)
            assert caught.value.code.value == "state-write-failed"
            assert "No space left on device" in str(caught.value)
            event = await _next_event(reader, "released")
            assert event == {
                "v": 1,
                "event": "released",
                "claim": event["claim"],
                "by": "state-write-failed",
            }
            assert await client.list_claims() == []
            assert daemon.service.state_write_errors >= 1
            # The disk recovers: the space was released, so a new claim is granted (a
            # claim still held here would fail at once with local-conflict) and is durable.
            store.fs = FileSystem()
            result = await client.claim(DOMAIN, X, 60)
            assert result.granted
            saved = read_state(str(hosts["a"].directory / "state"))
            assert [claim["id"] for claim in saved["claims"]] == [result.claim]
            await client.close()
            writer.close()

    asyncio.run(main())


@pytest.mark.parametrize(
    ("saved", "key"),
    [
        ({"device_id": "zz"}, "device_id"),
        ({"device_id": 5}, "device_id"),
        ({"device_id": "0" * 16}, "device_id"),  # UIAP §4.1: ID 0 MUST NOT appear
        ({"device_id": "1" * 17}, "device_id"),
        ({"device_id": "+" + "1" * 15}, "device_id"),
        ({"claims": 5}, "claims"),
        ({"claims": {"a": 1}}, "claims"),
    ],
)
def test_a_bad_state_file_is_one_line_naming_file_and_key(
    tmp_path: Path, saved: dict[str, object], key: str
) -> None:
    state_dir = tmp_path / "state"
    state_dir.mkdir(mode=0o700)
    (state_dir / "state.json").write_text(json.dumps({"version": 1, **saved}))
    done = subprocess.run(
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
            # Never a real network: if the state were accepted, this name stops the start.
            "--interface",
            "uuidkit-none0",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert str(state_dir / "state.json") in done.stderr and f"'{key}'" in done.stderr
    assert not (tmp_path / "api.sock").exists()


def test_a_renewal_that_cannot_be_written_releases_the_claim(tmp_path: Path) -> None:
    """The same rule for a grant nobody waits on: a renewal whose state write fails is
    released and reported, not kept undefended-after-restart."""

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            daemon = hosts["a"].daemon
            assert daemon is not None and daemon.service is not None
            reader, writer = await _watch(hosts["a"].socket)
            async with hosts["a"].client() as client:
                held = await client.claim(DOMAIN, X, 2, renew=True)
                assert held.granted
                daemon.service.store.fs = FullDisk()
                event = await _next_event(reader, "released")  # at the first renewal
                assert (event["claim"], event["by"]) == (held.claim, "state-write-failed")
                assert await client.list_claims() == []
            writer.close()

    asyncio.run(main())


def test_a_release_that_cannot_be_written_says_so(tmp_path: Path) -> None:
    """The reply to ``release`` comes once the release is on disk; when that write fails
    the reply says so (the claim is released, but a restart before the next successful
    write would reclaim it), and the next successful write removes it."""

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            daemon = hosts["a"].daemon
            assert daemon is not None and daemon.service is not None
            state = str(hosts["a"].directory / "state")
            async with hosts["a"].client() as client:
                held = await client.claim(DOMAIN, X, 60)
                daemon.service.store.fs = FullDisk()
                with pytest.raises(APIError) as caught:
                    await client.release(str(held.claim))
                assert caught.value.code.value == "state-write-failed"
                assert "released" in str(caught.value)
                assert await client.list_claims() == []
                assert [c["id"] for c in read_state(state)["claims"]] == [held.claim]
                daemon.service.store.fs = FileSystem()
                other = await client.claim(DOMAIN, UIDSpace.unique(b"\x3d"), 60)
                saved = [c["id"] for c in read_state(state)["claims"]]
                assert saved == [other.claim]

    asyncio.run(main())
