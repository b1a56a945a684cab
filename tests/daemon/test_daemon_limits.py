"""The daemon's tables fed by clients have caps: claims per user and in total, and idle
connections. Over a cap is a clear error, never a daemon that cannot start or a ``list`` that
no client can read.

References: UIAP §2.1.1 (the service), §3.2.3 (UIDs of up to 255 octets).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from daemon_site import DOMAIN, WAIT_S, running, until

from uuidkit.daemon.config import MAX_CLAIMS_CEILING, ConfigError, DaemonConfig
from uuidkit.daemon.record import ClaimRecord
from uuidkit.daemon.state import MAX_STATE_OCTETS
from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.engine_types import LIFETIME_INFINITE
from uuidkit.uiap.space import UIDSpace
from uuidkit.uiapd.api import APIError, ClaimParams, encode_reply, parse_claim_params
from uuidkit.uiapd.client import MAX_REPLY_OCTETS, Client

ROOT = Path(__file__).resolve().parents[2]


def _largest_record() -> ClaimRecord:
    """The longest claim a daemon can hold: a range of two 255-octet UIDs (UIAP §3.2.3: UID
    Len is one octet), every number at its longest."""
    space = UIDSpace.range(b"\x00" * 255, b"\xff" * 255)
    params = ClaimParams(DomainID.parse("ffff:ffff:ffff:ffff"), space, LIFETIME_INFINITE - 1)
    record = ClaimRecord("f" * 16, params, 2**32 - 1, 99999999999.123456)
    record.state, record.expires, record.outcome = "renewing", 99999999999.123456, "reclaimed"
    return record


def test_a_full_list_fits_what_a_client_reads_and_a_full_state_what_the_daemon_reads() -> None:
    """The ceiling of ``max_claims`` is derived from the client's reply limit: ``list`` with
    that many of the longest claims is one reply line a client accepts, and their state file
    one the daemon reads back."""
    record = _largest_record()
    reply = encode_reply(2**53, {"claims": [record.describe()] * MAX_CLAIMS_CEILING})
    assert len(reply) <= MAX_REPLY_OCTETS
    state = json.dumps({"version": 1, "device_id": "f" * 16, "claims": [record.saved_form()]})
    assert len(state) * MAX_CLAIMS_CEILING <= MAX_STATE_OCTETS
    with pytest.raises(ConfigError, match="max_claims"):
        DaemonConfig(max_claims=MAX_CLAIMS_CEILING + 1)
    with pytest.raises(ConfigError, match="max_claims_per_uid"):
        DaemonConfig(max_claims_per_uid=0)


def _uid(number: int) -> UIDSpace:
    return UIDSpace.unique(number.to_bytes(2, "big"))


def test_claims_over_the_caps_are_refused_with_too_many_claims(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a"], max_claims=4, max_claims_per_uid=2) as (_, hosts):
            daemon = hosts["a"].daemon
            assert daemon is not None and daemon.service is not None
            service = daemon.service
            # A user other than root: at most max_claims_per_uid.
            for number in (1, 2):
                params = parse_claim_params({"domain": DOMAIN, "uid": f"{number:04x}"})
                assert (await service.claim(params, 1000, object()))["result"] == "granted"
            params = parse_claim_params({"domain": DOMAIN, "uid": "0003"})
            with pytest.raises(APIError) as caught:
                await service.claim(params, 1000, object())
            assert caught.value.code.value == "too-many-claims"
            assert "max_claims_per_uid" in str(caught.value)
            # Root is not held to the per-user cap, only to the total (the tests run as root).
            async with hosts["a"].client() as client:
                assert (await client.claim(DOMAIN, _uid(4), 60)).granted
                assert (await client.claim(DOMAIN, _uid(5), 60)).granted
                with pytest.raises(APIError) as caught:
                    await client.claim(DOMAIN, _uid(6), 60)
                assert caught.value.code.value == "too-many-claims"
                assert "max_claims" in str(caught.value)
                # The connection stays, and a released claim makes room.
                claims = await client.list_claims()
                assert len(claims) == 4
                await client.release(next(c["claim"] for c in claims if c["uid"] == "0004"))
                assert (await client.claim(DOMAIN, _uid(6), 60)).granted

    asyncio.run(main())


def _saved_claim(number: int, owner: int) -> dict[str, Any]:
    params = {"domain": DOMAIN, "uid": f"{number:04x}", "lifetime": 3600, "reclaim": False}
    params |= {"renew": False, "release_on_disconnect": False}
    return {"id": f"{number:016x}", "params": params, "owner_uid": owner, "created": 1.0}


def _start_daemon(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "uuidkit",
            "uiap",
            "daemon",
            "--state-dir",
            str(tmp_path / "state"),
            "--socket",
            str(tmp_path / "api.sock"),
            # Never a real network: if the state were accepted, this name stops the start.
            "--interface",
            "uuidkit-none0",
            *flags,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=60,
    )


@pytest.mark.parametrize(
    ("owners", "key"),
    [([0, 0, 0], "max_claims"), ([1000, 1000], "max_claims_per_uid")],
)
def test_a_state_file_over_the_caps_is_one_line(
    tmp_path: Path, owners: list[int], key: str
) -> None:
    (tmp_path / "state").mkdir(mode=0o700)
    claims = [_saved_claim(n, owner) for n, owner in enumerate(owners)]
    state = {"version": 1, "claims": claims}
    (tmp_path / "state" / "state.json").write_text(json.dumps(state))
    (tmp_path / "uiapd.toml").write_text("max_claims = 2\nmax_claims_per_uid = 1\n")
    done = _start_daemon(tmp_path, "--config", str(tmp_path / "uiapd.toml"))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"'{key}'" in done.stderr and str(tmp_path / "state" / "state.json") in done.stderr


def test_an_oversized_state_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir(mode=0o700)
    with (tmp_path / "state" / "state.json").open("wb") as file:
        file.truncate(MAX_STATE_OCTETS + 1)
    done = _start_daemon(tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "larger than" in done.stderr, done.stderr


def test_list_of_many_claims_through_the_command_line(tmp_path: Path) -> None:
    """Many of the longest claims, restored from a state file: ``uuidkit uiap list`` reads
    them all (the reply is one line within the client's limit, see the ceiling above)."""
    count = 2000  # the whole ceiling takes 10 s here; the encoding test above covers it
    longest = [_largest_record().saved_form() | {"id": f"{n:016x}"} for n in range(count)]
    for number, entry in enumerate(longest):
        low = number.to_bytes(2, "big") + b"\x00" * 253
        high = number.to_bytes(2, "big") + b"\xff" * 253
        entry["params"] = entry["params"] | {
            "domain": DOMAIN,
            "range": [low.hex(), high.hex()],
            "lifetime": 3600,
        }
        entry["expires"], entry["owner_uid"] = None, 0
    (tmp_path / "a" / "state").mkdir(parents=True, mode=0o700)
    state = {"version": 1, "claims": longest}
    (tmp_path / "a" / "state" / "state.json").write_text(json.dumps(state))

    async def main() -> None:
        async with running(tmp_path, ["a"], max_claims=count) as (_, hosts):
            done = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "uuidkit",
                "uiap",
                "list",
                "--json",
                "--socket",
                hosts["a"].socket,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
            )
            out, err = await asyncio.wait_for(done.communicate(), WAIT_S)
            assert done.returncode == 0, err
            listed = json.loads(out)
            assert sorted(c["claim"] for c in listed) == sorted(e["id"] for e in longest)

    asyncio.run(main())


def test_an_idle_connection_is_closed_and_frees_its_slot(tmp_path: Path) -> None:
    """A client that connects and sends nothing is closed after ``idle_timeout`` with
    ``idle-timeout``; a watcher, and a connection holding ``release_on_disconnect``
    claims, are not. One connection per user (not root) makes the slot visible."""

    async def main() -> None:
        settings = {"idle_timeout": 1.0, "max_clients": 3}
        async with running(tmp_path, ["a"], **settings) as (_, hosts):
            path = hosts["a"].socket
            watcher_r, watcher_w = await asyncio.open_unix_connection(path)
            watcher_w.write(b'{"id": 1, "method": "watch"}\n')
            assert json.loads(await watcher_r.readline())["result"] == {"watching": True}
            holder = hosts["a"].client()
            held = await holder.claim(DOMAIN, _uid(7), 60, release_on_disconnect=True)
            assert held.granted
            # With the third slot taken (by a second watcher, which no timeout closes, so
            # the machine's speed cannot free it early), a fourth connection is refused.
            blocker_r, blocker_w = await asyncio.open_unix_connection(path)
            blocker_w.write(b'{"id": 1, "method": "watch"}\n')
            assert json.loads(await blocker_r.readline())["result"] == {"watching": True}
            refused_r, _ = await asyncio.open_unix_connection(path)
            refusal = json.loads(await asyncio.wait_for(refused_r.readline(), WAIT_S))
            assert refusal["error"]["code"] == "too-many-clients"
            server = hosts["a"].server
            blocker_w.close()
            await until(lambda: len(server.clients) == 2, "freed the blocker's slot")
            # An idle connection in the third slot is closed, with a reason, and its slot
            # freed.
            idle_r, _idle_w = await asyncio.open_unix_connection(path)
            closing = json.loads(await asyncio.wait_for(idle_r.readline(), WAIT_S))
            assert closing["error"]["code"] == "idle-timeout"
            assert await asyncio.wait_for(idle_r.read(), WAIT_S) == b""
            await until(lambda: len(server.clients) == 2, "freed the idle connection's slot")
            async with hosts["a"].client() as fresh:
                assert len(await fresh.list_claims()) == 1
            # Well past the timeout, the watcher and the holder are still served.
            await asyncio.sleep(1.5)
            assert [c["claim"] for c in await holder.list_claims()] == [held.claim]
            watcher_w.write(b'{"id": 2, "method": "status"}\n')
            body = json.loads(await asyncio.wait_for(watcher_r.readline(), WAIT_S))
            while "event" in body:
                body = json.loads(await asyncio.wait_for(watcher_r.readline(), WAIT_S))
            assert body["ok"] is True
            await holder.close()
            watcher_w.close()

    asyncio.run(main())


def test_a_client_reconnects_after_an_idle_close(tmp_path: Path) -> None:
    """The daemon closed a client's idle connection before reading its next request, so
    the client may send it again on a new connection, and does (both clients)."""

    def sync_calls(path: str) -> None:
        with Client(path, timeout=WAIT_S) as client:
            assert len(client.list_claims()) == 1
            time.sleep(0.5)
            assert client.status()["api"]["errors"]["idle-timeout"] >= 1

    async def main() -> None:
        async with running(tmp_path, ["a"], idle_timeout=0.2) as (_, hosts):
            client = hosts["a"].client()
            assert await client.list_claims() == []
            await asyncio.sleep(0.5)
            assert (await client.claim(DOMAIN, _uid(8), 60)).granted
            await client.close()
            await asyncio.to_thread(sync_calls, hosts["a"].socket)

    asyncio.run(main())
