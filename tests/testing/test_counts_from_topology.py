"""A seeded run's report follows from its topology: every count derived, none recorded.

Claims by distinct devices for distinct UIDs, far enough apart that their floods never
meet, on links without loss, so every claim is granted and every flood reaches every
device. Then, from UIAP alone:

* A flood (UIAP §2.4.3) is sent by its originator out every interface and forwarded by
  every other device, on first receipt, out every interface but the arrival one; a
  device with one interface forwards nothing. So the transmissions of one flood are
  ``sum(degree) - (devices - 1)``, and each reaches the other members of its link.
  Every device but the originator records the first copy to arrive; every other copy,
  the originator's own flood coming back included, is dropped by Message ID
  (§4.2.2.1 "MUST be discarded").
* A new claim sends ``UIAP_NEW_CLAIM_ATTEMPTS`` floods ``UIAP_CLAIM_PERIOD`` apart and
  succeeds ``UIAP_CLAIM_TIMEOUT`` after the last period (§2.4.1), so its latency is
  ``3 * 0.5 + 1.0`` s, and its lifetime ends ``lifetime`` s later (§4.5.2).
* The simulator processes one entry per claim issued, per datagram copy delivered and
  per engine deadline it armed: the claimant's five (two further attempts, the end of the
  attempts, success, the end of the lifetime) and, with ``copies`` (beyond the draft),
  one per device per flood it sends, when its further copies go out. A holder that
  forwards a flood re-arms its lifetime's end after that copy deadline: the simulator
  skips the older entry as stale but processes it (docs/simulator.md, "Model").

These pin the report (and the engines' own counters) of the simulator and the real engine
to UIAP's rules, so a change that alters what any engine sends, or what the simulator
delivers, changes them.

References: UIAP §2.4.1, §2.4.3, §4.2.2.1, §4.5.2, §10.
"""

from __future__ import annotations

import pytest

from uuidkit.testing import ClaimOutcome, LinkConfig, Simulator, topologies
from uuidkit.testing.engines import engine_factory
from uuidkit.testing.topologies import Topology
from uuidkit.uiap import DomainID, EngineConfig, UIDSpace
from uuidkit.uiap.constants import (
    UIAP_CLAIM_PERIOD_S,
    UIAP_CLAIM_TIMEOUT_S,
    UIAP_NEW_CLAIM_ATTEMPTS,
)

DOMAIN = DomainID.parse("fff:0:1:0")
LIFETIME = 20
#: Seconds between claims: a claim's floods are over long before the next claim starts.
SPACING = 4.0
#: The claimant's deadlines per claim: attempts 2 and 3, the end of the attempts, success,
#: the end of the lifetime (UIAP §2.4.1, §4.5.2).
CLAIM_DEADLINES = UIAP_NEW_CLAIM_ATTEMPTS - 1 + 3
LATENCY = UIAP_NEW_CLAIM_ATTEMPTS * UIAP_CLAIM_PERIOD_S + UIAP_CLAIM_TIMEOUT_S

TOPOLOGIES = {
    "segment tree": topologies.segment_tree(40),
    "ring": topologies.ring(12),
    "grid": topologies.grid(16, columns=4),
}


def _flood_counts(topology: Topology) -> tuple[int, int]:
    """(transmissions, copies delivered) of one flood, from the links alone.

    The originator sends on every interface and every other device on every interface
    but its arrival one: ``sum(degree) - (devices - 1)`` transmissions whoever originates.
    Every link here has the same size, so each transmission reaches ``size - 1`` devices.
    """
    sizes = {len(members) for members in topology.links.values()}
    assert len(sizes) == 1, "every link of the same size"
    degree = [len(links) for links in topology.interfaces()]
    transmissions = sum(degree) - (topology.devices - 1)
    return transmissions, transmissions * (sizes.pop() - 1)


def _rearmed_lifetime_ends(claims: int) -> int:
    """Entries of a holder's lifetime end pushed again: a holder forwarding a flood has a
    copy deadline before its lifetime's end; when the copy goes out, the end is its next
    deadline again and the simulator arms it anew (the earlier entry is then stale and
    skipped, but processed). One per flood that passes a holder while it holds."""
    floods_at = [
        index * SPACING + attempt * UIAP_CLAIM_PERIOD_S
        for index in range(claims)
        for attempt in range(UIAP_NEW_CLAIM_ATTEMPTS)
    ]
    held = [
        (index * SPACING + LATENCY, index * SPACING + LATENCY + LIFETIME) for index in range(claims)
    ]
    return sum(1 for start, end in held for at in floods_at if start < at < end)


def _run(topology: Topology, config: EngineConfig, claims: int) -> Simulator:
    sim = Simulator(
        topology,
        seed=7,
        link=LinkConfig(delay=0.001),
        engine_factory=engine_factory(config),
    )
    for index in range(claims):
        # Device ``index`` claims UID ``index``: distinct claimants, nothing conflicts.
        sim.claim(
            index,
            DOMAIN,
            UIDSpace.unique(index.to_bytes(2, "big")),
            at=index * SPACING,
            lifetime=LIFETIME,
        )
    sim.run()
    return sim


@pytest.mark.parametrize("name", sorted(TOPOLOGIES))
@pytest.mark.parametrize("copies", [1, 2])
def test_a_runs_counts_follow_from_the_topology(name: str, copies: int) -> None:
    topology = TOPOLOGIES[name]
    claims = 5
    degree = [len(links) for links in topology.interfaces()]
    # Claimants 0 .. claims-1 all have two or more interfaces, so every device that sends
    # a flood is one with two or more (a device with one forwards nothing, §2.4.3).
    assert min(degree[:claims]) >= 2
    senders = sum(1 for links in degree if links >= 2)
    sim = _run(topology, EngineConfig.draft_only(copies=copies, drop_events=False), claims)
    report = sim.report()
    transmissions, copies_delivered = _flood_counts(topology)
    floods = claims * UIAP_NEW_CLAIM_ATTEMPTS
    first_copies = topology.devices - 1

    assert (report.claims, report.granted, report.pending) == (claims, claims, 0)
    assert (report.denied, report.lost, report.conflicting, report.wrongly_granted) == (0,) * 4
    assert all(record.outcome is ClaimOutcome.GRANTED for record in sim.records)
    assert report.latency_p50 == report.latency_p99 == pytest.approx(LATENCY)
    assert report.messages == floods * transmissions * copies
    # Every copy but the first to reach each device is dropped by its Message ID.
    duplicates = floods * (copies * copies_delivered - first_copies)
    assert report.drops == ({"engine: duplicate": duplicates} if duplicates else {})
    copy_deadlines = floods * senders * (copies - 1)
    assert report.events == (
        claims * (1 + CLAIM_DEADLINES)
        + floods * copies * copies_delivered
        + copy_deadlines
        + _rearmed_lifetime_ends(claims) * (copies - 1)
    )
    assert report.duration == pytest.approx((claims - 1) * SPACING + LATENCY + LIFETIME)

    stats = [device.engine.stats for device in sim.devices]
    assert sum(s.attempts_originated for s in stats) == floods
    assert sum(s.attempts_received for s in stats) == floods * first_copies
    # Forwarded: every transmission of a flood but the originator's own.
    originated = sum(UIAP_NEW_CLAIM_ATTEMPTS * degree[device] for device in range(claims))
    assert sum(s.forwarded for s in stats) == floods * transmissions - originated
