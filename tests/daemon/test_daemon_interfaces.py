"""Interface changes and suspected conflicts, on the daemon's in-process site.

A link that goes down leaves held claims held but unverified; a link that comes up makes the
daemon re-verify every claim it holds at once (a reclaim, UIAP §4.4), announced by
``suspect`` and ended by ``granted`` (how ``verify``) or ``collision``. A device that
defends a space against another's attempt suspects a conflict too, and re-verifies once
that attempt has ended.

References: UIAP §2.1.2 (merges), §4.2.2.2, §4.4.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from daemon_site import DOMAIN, Host, next_event, running

from uuidkit.daemon.admission import reclaim_seconds
from uuidkit.daemon.service import ClaimService
from uuidkit.daemon.status import DeviceIDConflicts
from uuidkit.uiap.events import ClaimDefended, ClaimLost, DeviceIDConflictSuspected, LossReason
from uuidkit.uiap.space import UIDSpace
from uuidkit.uiapd.client import Event

X = UIDSpace.unique(b"\x51")
Y = UIDSpace.unique(b"\x52")


async def _watching(host: Host) -> tuple[AsyncIterator[Event], ClaimService]:
    """A watch stream of ``host``, subscribed once this returns."""
    daemon = host.daemon
    assert daemon is not None and daemon.service is not None
    service = daemon.service
    subscribed = len(service._subscribers)
    events = host.client().watch()
    first = asyncio.ensure_future(events.__anext__())
    while len(service._subscribers) == subscribed:
        await asyncio.sleep(0.01)
    return _prepend(first, events), service


async def _prepend(
    first: asyncio.Future[Event], rest: AsyncIterator[Event]
) -> AsyncIterator[Event]:
    yield await first
    async for event in rest:
        yield event


def _cli_status(socket: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "uuidkit", "uiap", "status", "--socket", socket],
        capture_output=True, text=True, timeout=60, check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")},
    )  # fmt: skip
    return done.stdout


def _named(name: str, claim: Any = None) -> Any:
    return lambda e: e.name == name and (claim is None or e.fields.get("claim") == claim)


def test_a_link_down_leaves_claims_held_but_unverified_and_up_reverifies_them(
    tmp_path: Path,
) -> None:
    """Down: no claim is dropped; each is reported ``unverified`` (``list``: verified false;
    ``status``: counted as unverified). Up: every held claim is re-verified at once, and a
    success makes it verified again. Removing the re-verification on interface-up in
    ClaimService._poll_interfaces makes this test fail."""

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (site, hosts):
            client = hosts["a"].client()
            held = [await client.claim(DOMAIN, space, 600) for space in (X, Y)]
            events, _ = await _watching(hosts["a"])
            site.nodes[0].link_up = False
            await next_event(events, _named("interface-down"), "interface-down")
            for result in held:
                event = await next_event(events, _named("unverified", result.claim), "unverified")
                assert event.fields["reason"] == "interface-down"
            listed = await client.list_claims()
            assert sorted(c["claim"] for c in listed) == sorted(str(r.claim) for r in held)
            assert {(c["state"], c["verified"]) for c in listed} == {("held", False)}
            assert (await client.status())["claims"] == {"held": 2, "unverified": 2, "proxied": 0}
            site.nodes[0].link_up = True
            await next_event(events, _named("interface-up"), "interface-up")
            for result in held:
                event = await next_event(events, _named("suspect", result.claim), "suspect")
                assert event.fields["reason"] == "interface-up"
            verified: set[str] = set()
            while len(verified) < 2:
                event = await next_event(events, _named("granted"), "a verification")
                assert event.fields["how"] == "verify"
                verified.add(event.fields["claim"])
            assert verified == {r.claim for r in held}
            assert (await client.status())["claims"] == {"held": 2, "unverified": 0, "proxied": 0}
            assert {c["verified"] for c in await client.list_claims()} == {True}
            await client.close()

    asyncio.run(main())


def test_a_link_up_during_a_renewal_is_verified_by_another_reclaim(tmp_path: Path) -> None:
    """A renewal's reclaim that went out before a link came up proves nothing about that
    link: once it ends, another reclaim follows at once, and the watchers hear ``suspect``
    and only the second one's verdict (how ``verify``), never a ``granted`` that would let
    the application resume early. Removing ``recheck`` makes one reclaim the verdict, and
    this test fail."""

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            client = hosts["a"].client()
            held = await client.claim(DOMAIN, X, 600, renew=True)
            events, service = await _watching(hosts["a"])
            record = service.claims[str(held.claim)]
            reclaims = 0
            claim = service.node.claim

            def counting_claim(*args: Any, **kwargs: Any) -> int:
                nonlocal reclaims
                reclaims += bool(kwargs.get("reclaim"))
                return claim(*args, **kwargs)

            service.node.claim = counting_claim  # type: ignore[method-assign]
            service._renew(record)  # a renewal is running ...
            assert record.state == "renewing"
            service._suspect(record, "interface-up")  # ... when a link comes up
            await next_event(events, _named("suspect", held.claim), "suspect")
            verdict = await next_event(events, _named("granted", held.claim), "verdict")
            assert verdict.fields["how"] == "verify"
            assert reclaims == 2 and record.verified
            await client.close()

    asyncio.run(main())


def test_a_merge_through_a_link_coming_up_leaves_exactly_one_holder(tmp_path: Path) -> None:
    """While a's link is down, b is granted the space a holds (nobody could deny it). When
    the link comes back, a re-verifies at once; b defends, so a gets ``collision`` (how
    ``verify``) and b keeps the space. Never both, never neither."""

    async def main() -> None:
        async with running(tmp_path, ["a", "b"]) as (site, hosts):
            a, b = hosts["a"].client(), hosts["b"].client()
            mine = await a.claim(DOMAIN, X, 600)
            a_events, _ = await _watching(hosts["a"])
            site.nodes[0].link_up = False
            await next_event(a_events, _named("unverified", mine.claim), "unverified")
            theirs = await b.claim(DOMAIN, X, 600)
            assert theirs.granted  # two holders now (UIAP §2.1.2)
            b_events, b_service = await _watching(hosts["b"])
            site.nodes[0].link_up = True
            await next_event(a_events, _named("suspect", mine.claim), "a suspects")
            lost = await next_event(a_events, _named("collision", mine.claim), "a collision")
            assert lost.fields["how"] == "verify"
            # Defending a's reclaim told b that another device claims its space: b suspects
            # its own claim and re-verifies it; its verdict (kept) may come after a's.
            if not b_service.claims[str(theirs.claim)].verified:
                verdict = await next_event(b_events, _named("granted", theirs.claim), "b's verdict")
                assert verdict.fields["how"] == "verify"
            assert await a.list_claims() == []
            assert [c["claim"] for c in await b.list_claims()] == [theirs.claim]
            # Both report the conflict: a lost (its re-verification was denied), b kept it
            # and names a, whose reclaim it denied.
            a_status, b_status = await a.status(), await b.status()
            a_seen, b_seen = a_status["conflicts"], b_status["conflicts"]
            assert (a_seen["count"], a_seen["lost"], b_seen["kept"]) == (1, 1, 1)
            assert a_seen["last"][0]["claim"] == mine.claim
            assert a_seen["last"][0]["outcome"] == "lost"
            assert b_seen["last"][0]["peer"] == a_status["device_id"]
            assert b_seen["last"][0]["uid"] == "51"
            suspicions = a_status["verification"]["suspicions"]
            assert suspicions == {"started": 1, "confirmed": 0, "conflicts": 1}
            # ... and so does the command an operator types.
            shown = await asyncio.to_thread(_cli_status, hosts["b"].socket)
            assert "conflicts: 1 seen (kept 1, lost 0)" in shown
            assert f"peer {a_status['device_id']}" in shown
            assert "held 1 (unverified 0)" in shown
            for client in (a, b):
                await client.close()

    asyncio.run(main())


def test_defending_against_a_reclaim_is_a_suspected_conflict(tmp_path: Path) -> None:
    """A Claim-Deny sent against a reclaim (R flag) means another device held the space
    too: the defender reports ``suspect`` (reason ``attempted``) at once, and re-verifies
    only after that reclaim has surely ended (two reclaims that meet both fail, UIAP
    §4.2.2.2), ending with ``granted`` (how ``verify``). A plain claim denied is no such
    sign: nothing is reported."""

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            client = hosts["a"].client()
            held = await client.claim(DOMAIN, X, 600)
            events, service = await _watching(hosts["a"])
            record = service.claims[str(held.claim)]
            assert record.handle is not None
            service._on_event(ClaimDefended(record.handle, 0x1234, 7))
            assert record.verified and not record.verifying
            loop = asyncio.get_running_loop()
            defended_at = loop.time()
            service._on_event(ClaimDefended(record.handle, 0x1234, 8, reclaim=True))
            suspected = await next_event(events, _named("suspect", held.claim), "suspect")
            assert suspected.fields["reason"] == "attempted"
            verified = await next_event(events, _named("granted", held.claim), "verified")
            assert verified.fields["how"] == "verify"
            # Not before the other device's reclaim (one attempt and the timeout) could end.
            assert loop.time() - defended_at >= reclaim_seconds(service.engine_config)
            assert record.verified
            status = await client.status()
            suspicions = status["verification"]["suspicions"]
            assert suspicions == {"started": 1, "confirmed": 1, "conflicts": 0}
            seen = status["conflicts"]
            assert (seen["count"], seen["kept"], seen["lost"]) == (1, 1, 0)
            assert seen["last"][0] | {"at": None} == {
                "claim": held.claim, "domain": DOMAIN, "uid": "51",
                "outcome": "kept", "reason": "defended", "peer": f"{0x1234:016x}", "at": None,
            }  # fmt: skip
            await client.close()

    asyncio.run(main())


@pytest.mark.parametrize(
    ("reason", "winner", "how"),
    [
        (LossReason.YIELDED, 0x99, "verify"),
        (LossReason.VERIFICATION_DENIED, None, "verify"),
        (LossReason.ANNOUNCEMENT_DENIED, None, "announcement"),
    ],
)
def test_a_held_claim_lost_to_the_engine_is_a_collision_naming_how_and_whom(
    tmp_path: Path, reason: LossReason, winner: int | None, how: str
) -> None:
    """The engine's own findings (a periodic re-verification denied, a tie-break lost to a
    larger device ID, a proxy announcement denied) end the claim: the watchers hear
    ``collision`` with the engine's reason, ``how`` and, after a tie-break, the ``winner``;
    ``status`` lists the conflict with that peer."""

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            client = hosts["a"].client()
            held = await client.claim(DOMAIN, X, 600)
            events, service = await _watching(hosts["a"])
            record = service.claims[str(held.claim)]
            assert record.handle is not None
            service._on_event(ClaimLost(record.handle, reason, record.params.domain, X, winner))
            lost = await next_event(events, _named("collision", held.claim), "collision")
            assert (lost.fields["reason"], lost.fields["how"]) == (reason.value, how)
            peer = None if winner is None else f"{winner:016x}"
            assert lost.fields.get("winner") == peer
            seen = (await client.status())["conflicts"]
            assert (seen["lost"], seen["last"][0]["peer"]) == (1, peer)
            assert await client.list_claims() == []
            await client.close()

    asyncio.run(main())


def test_a_stop_tells_watchers_before_the_claims_lose_their_defense(tmp_path: Path) -> None:
    """A node-bound generator stops when its daemon goes: a stopping daemon reports each
    ``release_on_disconnect`` claim ``released`` (by ``stopping``) before it stops its node,
    so the application need not wait for its connection to close."""

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            client = hosts["a"].client()
            session = await client.claim(DOMAIN, X, 600, release_on_disconnect=True)
            events, service = await _watching(hosts["a"])
            node = service.node
            seen: list[tuple[str, Any, bool]] = []
            service.subscribe(lambda name, fields: seen.append((name, fields, node.running)))  # type: ignore[attr-defined]
            stopping = asyncio.ensure_future(hosts["a"].stop())
            event = await next_event(events, _named("released", session.claim), "released")
            assert event.fields["by"] == "stopping"
            await stopping
            # Told while the node still defended the claim, not after.
            assert seen == [("released", {"claim": session.claim, "by": "stopping"}, True)]
            await client.close()

    asyncio.run(main())


def test_a_device_id_conflict_found_at_run_time_is_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two daemons started from copies of one state directory share a device ID. When one
    floods a claim, the other receives a message with its own ID that it never sent (UIAP
    §9): the engine applies the draft's remedy (a new random sequence number when the
    other's is close), and the daemon reports it: a ``device-id-conflict`` event,
    ``status.device_id_conflicts`` and a warning naming the likely cause."""
    shared = '{"version": 1, "device_id": "0123456789abcdef", "claims": []}'
    for name in ("a", "b"):
        (tmp_path / name / "state").mkdir(parents=True, mode=0o700)
        (tmp_path / name / "state" / "state.json").write_text(shared)

    async def main() -> None:
        async with running(tmp_path, ["a", "b"]) as (_, hosts):
            events, _ = await _watching(hosts["b"])
            async with hosts["a"].client() as client:
                await client.claim(DOMAIN, X, 600)
            event = await next_event(events, _named("device-id-conflict"), "a conflict")
            assert event.fields["device_id"] == "0123456789abcdef"
            assert event.fields["interface"] == "site0" and event.fields["source"] == "fe80::1"
            async with hosts["b"].client() as client:
                reported = (await client.status())["device_id_conflicts"]
            assert reported["count"] >= 1 and reported["last"]["source"] == "fe80::1"

    with caplog.at_level(logging.WARNING, logger="uuidkit.daemon"):
        asyncio.run(main())
    warnings = [r.getMessage() for r in caplog.records if "device ID" in r.getMessage()]
    assert warnings and "0123456789abcdef" in warnings[0] and "state directory" in warnings[0]


def test_device_id_conflict_warnings_are_rate_limited(caplog: pytest.LogCaptureFixture) -> None:
    """A flood of them is one warning a minute, saying how many were left out."""
    conflicts = DeviceIDConflicts(0x0123456789ABCDEF, log_every_s=60.0)
    with caplog.at_level(logging.WARNING, logger="uuidkit.daemon"):
        for second in (0.0, 1.0, 59.0, 60.0):
            conflicts.record(DeviceIDConflictSuspected(5, "e0", "fe80::9", True), second, 0.0)
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 2 and "(2 more since the last warning)" in logged[1]
    assert conflicts.summary()["count"] == 4 and conflicts.summary()["resequenced"] == 4
