"""The daemon end to end on an in-process site: API, claims, restarts, renewal, merges.

References: UIAP §2.1.1, §2.1.2, §2.4.1, §4.4, §4.5.2.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest
from daemon_site import DOMAIN, WAIT_S, next_event, running, until

from uuidkit.daemon.state import read_state
from uuidkit.uiap.events import ClaimLost, LossReason
from uuidkit.uiap.space import UIDSpace
from uuidkit.uiapd.api import APIError, ErrorCode

X = UIDSpace.unique(b"\x2a")
Y = UIDSpace.unique(b"\x2b")


def test_three_daemons_claim_deny_list_status_release(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a", "b", "c"]) as (_, hosts):
            a, b = hosts["a"].client(), hosts["b"].client()
            granted = await a.claim(DOMAIN, X, 60)
            assert granted.granted and granted.claim is not None and granted.expires
            # UIAP §2.4.2: the holder denies the same space from another host.
            denied = await b.claim(DOMAIN, X, 60)
            assert (denied.granted, denied.reason, denied.claim) == (False, "denied", None)
            assert (await hosts["c"].client().claim(DOMAIN, Y, 60)).granted
            [listed] = await a.list_claims()
            assert (listed["claim"], listed["state"], listed["uid"]) == (
                granted.claim,
                "held",
                "2a",
            )
            status = await a.status()
            assert status["claims"] == {"held": 1, "unverified": 0, "proxied": 0}
            assert status["counters"]["engine"]["denied"] >= 1
            assert status["version"] == 1 and len(status["device_id"]) == 16
            # Release ends the defense: the same space is now granted elsewhere.
            await a.release(granted.claim)
            assert await a.list_claims() == []
            assert (await b.claim(DOMAIN, X, 60)).granted
            for client in (a, b):
                await client.close()

    asyncio.run(main())


def test_restart_reclaims_and_reports_a_collision(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a", "b"]) as (_, hosts):
            a = hosts["a"].client()
            kept = await a.claim(DOMAIN, X, 600)
            lost = await a.claim(DOMAIN, Y, 600)
            await a.close()
            hosts["a"].crash()
            # Meanwhile nobody defends Y: another host claims it (UIAP §2.1.2).
            assert (await hosts["b"].client().claim(DOMAIN, Y, 600)).granted
            restarted = time.time()
            await hosts["a"].start()
            a = hosts["a"].client()
            status = await a.status()
            while any(entry["result"] == "pending" for entry in status["restored"]):
                await asyncio.sleep(0.01)
                status = await a.status()
            settled = time.time()
            outcomes = {entry["claim"]: entry["result"] for entry in status["restored"]}
            # §4.4: the restart reclaims; B's Claim-Deny turns Y into a collision.
            assert outcomes == {kept.claim: "granted", lost.claim: "collision"}
            [held] = await a.list_claims()
            assert (held["claim"], held["state"], held["outcome"]) == (
                kept.claim,
                "held",
                "reclaimed",
            )
            # UIAP §4.5.2: the reclaim asks for what is left of the stored lifetime, in whole
            # seconds, from the moment of the restart: never more than the reclaim took
            # beyond the stored expiry, never a second or more short of it.
            assert kept.expires is not None
            assert kept.expires - 1 <= held["expires"] <= kept.expires + (settled - restarted)
            assert status["device_id"] == (await a.status())["device_id"]
            await a.close()

    asyncio.run(main())


def test_the_device_id_survives_a_restart(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            before = (await hosts["a"].client().status())["device_id"]
            await hosts["a"].stop()
            await hosts["a"].start()
            assert (await hosts["a"].client().status())["device_id"] == before

    asyncio.run(main())


def test_renewal_keeps_a_short_claim_for_several_lifetimes(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a", "b"]) as (_, hosts):
            a = hosts["a"].client()
            events = a.watch()
            result = await a.claim(DOMAIN, X, 1, renew=True)
            assert result.granted
            renewals = 0
            while renewals < 3:  # three lifetimes of 1 s
                event = await next_event(
                    events, lambda e: e.name in ("granted", "expired", "collision"), "renewal"
                )
                assert event.name == "granted", event
                renewals += event.fields["how"] == "renewal"
            [held] = await a.list_claims()
            # A claim being renewed is still held and defended (UIAP §4.4).
            assert (held["state"], held["outcome"]) == ("held", "renewed")
            assert not (await hosts["b"].client().claim(DOMAIN, X, 60)).granted
            await events.aclose()
            await a.close()

    asyncio.run(main())


def test_without_renewal_a_claim_expires(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            a = hosts["a"].client()
            events = a.watch()
            result = await a.claim(DOMAIN, X, 1)
            event = await next_event(events, lambda e: e.name == "expired", "expiry")
            assert event.fields == {"claim": result.claim}
            assert await a.list_claims() == []
            await events.aclose()

    asyncio.run(main())


def test_a_partition_and_merge_makes_the_renewal_fail(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a", "b"]) as (site, hosts):
            site.partition([site.nodes[0]], [site.nodes[1]])
            a, b = hosts["a"].client(), hosts["b"].client()
            events = a.watch()
            mine = await a.claim(DOMAIN, X, 2, renew=True)
            # Each side sees no conflict: both are granted (UIAP §2.1.2).
            assert mine.granted and (await b.claim(DOMAIN, X, 600)).granted
            site.merge()
            event = await next_event(events, lambda e: e.name == "collision", "a collision")
            assert event.fields["claim"] == mine.claim
            assert (event.fields["how"], event.fields["reason"]) == ("renewal", "denied")
            assert await a.list_claims() == []
            await events.aclose()

    asyncio.run(main())


def test_local_conflict_and_release_rules(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            a = hosts["a"].client()
            held = await a.claim(DOMAIN, UIDSpace.range(b"\x00", b"\x10"), 60)
            conflict = await a.claim(DOMAIN, UIDSpace.unique(b"\x05"), 60)
            assert (conflict.granted, conflict.reason) == (False, "local-conflict")
            # An application's reclaim of a held space re-verifies that claim (§4.4).
            again = await a.claim(DOMAIN, UIDSpace.range(b"\x00", b"\x10"), 60, reclaim=True)
            assert (again.granted, again.claim) == (True, held.claim)
            with pytest.raises(APIError) as caught:
                await a.release("0000000000000000")
            assert caught.value.code is ErrorCode.NOT_FOUND
            with pytest.raises(APIError) as caught:
                await a.claim(DOMAIN, X, 0 + 0, renew=True)
            assert (caught.value.code, caught.value.field) == (ErrorCode.BAD_PARAMS, "lifetime")

    asyncio.run(main())


def test_release_on_disconnect(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            session, observer = hosts["a"].client(), hosts["a"].client()
            assert (await session.claim(DOMAIN, X, 60, release_on_disconnect=True)).granted
            assert len(await observer.list_claims()) == 1
            state = read_state(str(hosts["a"].directory / "state"))
            assert state["claims"] == []  # a session's claim is not kept across restarts
            await session.close()
            for _ in range(int(WAIT_S / 0.01)):
                if not await observer.list_claims():
                    break
                await asyncio.sleep(0.01)
            assert await observer.list_claims() == []

    asyncio.run(main())


def test_stop_abandons_claims_in_progress(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a"], claim_period=5.0, claim_timeout=5.0) as (_, hosts):
            pending = asyncio.create_task(hosts["a"].client().claim(DOMAIN, X, 60))
            service = hosts["a"].service
            await until(
                lambda: any(r.state == "claiming" for r in service.claims.values()),
                "started the claim",
            )
            await hosts["a"].stop()
            with pytest.raises(APIError) as caught:
                await pending
            assert caught.value.code is ErrorCode.STOPPING
            assert "abandoned" in str(caught.value)
            assert not Path(hosts["a"].socket).exists()

    asyncio.run(main())


def test_a_reply_means_the_state_is_on_disk(tmp_path: Path) -> None:
    """A granted claim is in state.json before the reply, a released one gone before its
    reply: a crash right after either reply restarts with what the application was told."""

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            state = str(hosts["a"].directory / "state")
            a = hosts["a"].client()
            results = await asyncio.gather(
                *(a.claim(DOMAIN, UIDSpace.unique(bytes([n])), 60) for n in range(1))
            )
            clients = [hosts["a"].client() for _ in range(10)]
            results += await asyncio.gather(
                *(
                    c.claim(DOMAIN, UIDSpace.unique(bytes([9, n])), 60)
                    for n, c in enumerate(clients)
                )
            )
            saved = {claim["id"] for claim in read_state(state)["claims"]}
            assert saved == {result.claim for result in results}
            await a.release(str(results[0].claim))
            saved = {claim["id"] for claim in read_state(state)["claims"]}
            assert results[0].claim not in saved and len(saved) == 10
            for client in (a, *clients):
                await client.close()

    asyncio.run(main())


def test_interface_down_and_up_are_events(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a"]) as (site, hosts):
            events = hosts["a"].client().watch()
            first = asyncio.create_task(
                next_event(events, lambda e: e.name.startswith("interface"), "down")
            )
            daemon = hosts["a"].daemon
            assert daemon is not None and daemon.service is not None
            service = daemon.service
            while not service._subscribers:  # the watch request has arrived
                await asyncio.sleep(0.01)
            site.nodes[0].link_up = False
            down = await first
            site.nodes[0].link_up = True
            up = await next_event(events, lambda e: e.name.startswith("interface"), "up")
            assert (down.name, down.fields, up.name) == (
                "interface-down",
                {"interface": "site0"},
                "interface-up",
            )
            await events.aclose()

    asyncio.run(main())


def test_a_lost_announcement_is_a_collision(tmp_path: Path) -> None:
    """The engine's ClaimLost (a denied proxy-defense announcement, UIAP §5.1) ends the
    claim and reaches the application as a collision."""

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            a = hosts["a"].client()
            events = a.watch()
            result = await a.claim(DOMAIN, X, 60)
            collision = asyncio.create_task(
                next_event(events, lambda e: e.name == "collision", "collision")
            )
            daemon = hosts["a"].daemon
            assert daemon is not None and daemon.service is not None
            service = daemon.service
            while not service._subscribers:  # the watch request has arrived
                await asyncio.sleep(0.01)
            record = service.claims[str(result.claim)]
            assert record.handle is not None
            lost = ClaimLost(record.handle, LossReason.ANNOUNCEMENT_DENIED, record.params.domain, X)
            service._on_event(lost)
            event = await collision
            assert event.fields["claim"] == result.claim
            assert event.fields["reason"] == "announcement-denied"
            assert await a.list_claims() == []
            await events.aclose()

    asyncio.run(main())


def test_the_watch_and_list_commands(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
            command = [sys.executable, "-m", "uuidkit", "uiap"]
            watch = await asyncio.create_subprocess_exec(
                *command, "watch", "--socket", hosts["a"].socket,
                stdout=asyncio.subprocess.PIPE, env=env,
            )  # fmt: skip
            daemon = hosts["a"].daemon
            assert daemon is not None and daemon.service is not None
            while not daemon.service._subscribers:  # the watch request has arrived
                await asyncio.sleep(0.01)
            result = await hosts["a"].client().claim(DOMAIN, X, 60)
            assert watch.stdout is not None
            line = await asyncio.wait_for(watch.stdout.readline(), WAIT_S)
            assert json.loads(line) | {"expires": None} == {
                "event": "granted", "claim": result.claim, "domain": DOMAIN, "uid": "2a",
                "expires": None, "how": "claim",
            }  # fmt: skip
            watch.terminate()
            await watch.wait()
            listing = await asyncio.create_subprocess_exec(
                *command, "list", "--socket", hosts["a"].socket, "--json",
                stdout=asyncio.subprocess.PIPE, env=env,
            )  # fmt: skip
            out, _ = await listing.communicate()
            assert [claim["claim"] for claim in json.loads(out)] == [result.claim]

    asyncio.run(main())
