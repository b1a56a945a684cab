"""The issue's scenarios on the real engine: every path of UIAP §2.4, flooding, hop limit,
simultaneous claims, merges, proxy defense. Seeded; every outcome asserted exactly.

Links have the default 1 ms delay, so a deny from ``h`` hops away arrives ``2h`` ms after
the claim; a new claim succeeds 2.5 s after it starts (3 floods 0.5 s apart, then 1 s:
UIAP §2.4.1, §10) and a reclaim 1.5 s after (one flood, §4.4).
"""

from __future__ import annotations

import random

import pytest

from uuidkit.testing import ClaimOutcome, ClaimRecord, Simulator, topologies
from uuidkit.testing.engines import engine_factory
from uuidkit.testing.topologies import BRIDGE, Topology
from uuidkit.uiap import DomainID, UIDSpace
from uuidkit.uiap.engine import EngineConfig

#: The draft's behaviour only: these scenarios pin the draft's mechanics.
DRAFT_FACTORY = engine_factory(EngineConfig.draft_only(drop_events=False))

DOMAIN = DomainID.parse("fff:0:1:0")
SPACE = UIDSpace.unique(b"\x2a")
GRANTED, DENIED = ClaimOutcome.GRANTED, ClaimOutcome.DENIED


def result(record: ClaimRecord) -> tuple[ClaimOutcome | None, str | None, float | None]:
    decided = None if record.decided is None else round(record.decided, 9)
    return record.outcome, record.reason, decided


def two_sites() -> Simulator:
    """Devices 0-2 and 3-5, each site a line; the bridge joins 0 and 3 and starts down."""
    return Simulator(
        topologies.two_sites(topologies.line(3), topologies.line(3)),
        engine_factory=DRAFT_FACTORY,
        seed=1,
    )


# ---------------------------------------------------------------- §2.4 pseudo-code paths


def test_a_claim_nobody_denies_succeeds_after_the_timeout() -> None:
    sim = Simulator(topologies.line(3), engine_factory=DRAFT_FACTORY, seed=1)
    record = sim.claim(1, DOMAIN, SPACE)
    report = sim.run(until=10.0)
    assert result(record) == (GRANTED, None, 2.5)
    # 3 floods of one multicast per interface; the ends have no other interface to forward on.
    assert report.messages == 3 * 2
    assert [d.engine.stats.forwarded for d in sim.devices] == [0, 0, 0]


def test_a_neighbour_denies() -> None:
    sim = Simulator(topologies.line(2), engine_factory=DRAFT_FACTORY, seed=1)
    sim.claim(0, DOMAIN, SPACE)
    record = sim.claim(1, DOMAIN, SPACE, at=5.0)
    sim.run(until=10.0)
    assert result(record) == (DENIED, "denied", 5.002)


def test_a_device_five_hops_away_denies_and_the_deny_retraces_the_path() -> None:
    sim = Simulator(topologies.line(6), engine_factory=DRAFT_FACTORY, seed=1)
    sim.claim(0, DOMAIN, SPACE)
    record = sim.claim(5, DOMAIN, SPACE, at=5.0)
    sim.run(until=20.0)
    assert result(record) == (DENIED, "denied", 5.01)
    stats = [d.engine.stats for d in sim.devices]
    # The holder sends one deny; each device on the way forwards it once, hop by hop.
    assert [s.denied for s in stats] == [1, 0, 0, 0, 0, 0]
    assert [s.denies_forwarded for s in stats] == [0, 1, 1, 1, 1, 0]
    assert [s.denies_received for s in stats] == [0, 1, 1, 1, 1, 1]


def test_a_conflicting_claim_of_our_own_fails_at_once() -> None:
    sim = Simulator(topologies.line(2), engine_factory=DRAFT_FACTORY, seed=1)
    sim.claim(0, DOMAIN, SPACE)
    record = sim.claim(0, DOMAIN, UIDSpace.range(b"\x20", b"\x30"), at=5.0)
    report = sim.run(until=10.0)
    assert result(record) == (DENIED, "local-conflict", 5.0)
    assert report.messages == 3  # only the first claim's floods


# ---------------------------------------------------------------- flooding


def flood_once(topology: Topology, origin: int) -> Simulator:
    sim = Simulator(topology, engine_factory=DRAFT_FACTORY, seed=1)
    sim.claim(origin, DOMAIN, SPACE)
    sim.run(until=10.0)
    return sim


@pytest.mark.parametrize(
    "topology",
    [
        topologies.ring(7),
        topologies.grid(25),
        topologies.random_graph(20, 6.0, random.Random(5)),  # a dense mesh: 60 links
        topologies.segment_tree(13),
    ],
    ids=["ring", "grid", "dense-mesh", "segment_tree"],
)
def test_each_device_forwards_each_flood_once_out_every_other_interface(
    topology: Topology,
) -> None:
    sim = flood_once(topology, origin=3)
    interfaces = [len(links) for links in topology.interfaces()]
    forwarded = [d.engine.stats.forwarded for d in sim.devices]
    # 3 floods; a device forwards only the first copy, never back where it came from.
    expected = [0 if d == 3 else 3 * (n - 1) for d, n in enumerate(interfaces)]
    assert forwarded == expected
    assert sim.messages == 3 * interfaces[3] + sum(expected)
    # Every copy after the first on each device is a duplicate, dropped (no loops).
    received = sum(d.engine.stats.attempts_received for d in sim.devices)
    assert received == 3 * (topology.devices - 1)


def test_hop_limit_32_on_a_line_of_40() -> None:
    # UIAP §4.1: a Claim-Attempt starts with Hop Limit 32 and "Messages with a hop limit of
    # 0 SHOULD be processed but MUST NOT be forwarded": device 33 is the last to see it.
    sim = flood_once(topologies.line(40), origin=0)
    seen = [d.engine.stats.attempts_received for d in sim.devices]
    assert seen == [0] + [3] * 33 + [0] * 6
    assert [d.engine.stats.hop_limit_reached for d in sim.devices][33] == 3


@pytest.mark.parametrize(("holder", "outcome"), [(33, DENIED), (34, GRANTED)])
def test_a_holder_beyond_the_hop_limit_cannot_defend(holder: int, outcome: ClaimOutcome) -> None:
    # The documented limit (docs/simulator.md): a site wider than 32 hops is two sites.
    sim = Simulator(topologies.line(40), engine_factory=DRAFT_FACTORY, seed=1)
    sim.claim(holder, DOMAIN, SPACE)
    record = sim.claim(0, DOMAIN, SPACE, at=5.0)
    report = sim.run(until=20.0)
    assert record.outcome is outcome
    assert report.wrongly_granted == (outcome is GRANTED)


# ---------------------------------------------------------------- simultaneous claims

SIMULTANEOUS = [
    # (R of A, R of B, outcome of A, outcome of B): UIAP §4.2.2.2.
    (False, False, (DENIED, "simultaneous-claim"), (DENIED, "simultaneous-claim")),
    (True, True, (DENIED, "simultaneous-claim"), (DENIED, "simultaneous-claim")),
    (True, False, (GRANTED, None), (DENIED, "preempted-by-reclaim")),
    (False, True, (DENIED, "preempted-by-reclaim"), (GRANTED, None)),
]


@pytest.mark.parametrize("hops", [1, 7], ids=["neighbours", "far-apart"])
@pytest.mark.parametrize(("reclaim_a", "reclaim_b", "expect_a", "expect_b"), SIMULTANEOUS)
def test_simultaneous_claims(
    hops: int,
    reclaim_a: bool,
    reclaim_b: bool,
    expect_a: tuple[ClaimOutcome, str | None],
    expect_b: tuple[ClaimOutcome, str | None],
) -> None:
    sim = Simulator(topologies.line(hops + 1), engine_factory=DRAFT_FACTORY, seed=1)
    a = sim.claim(0, DOMAIN, SPACE, reclaim=reclaim_a)
    b = sim.claim(hops, DOMAIN, SPACE, reclaim=reclaim_b)
    report = sim.run(until=20.0)
    assert (a.outcome, a.reason) == expect_a and (b.outcome, b.reason) == expect_b
    # A loser learns when the other flood reaches it, ``hops`` ms after the start; a
    # winning reclaim succeeds after its one flood (§4.4).
    for record in (a, b):
        assert record.decided == pytest.approx(1.5 if record.outcome is GRANTED else hops / 1000)
    assert report.wrongly_granted == 0


def test_devices_that_are_not_claiming_forward_both_simultaneous_claims() -> None:
    sim = Simulator(topologies.line(3), engine_factory=DRAFT_FACTORY, seed=1)
    sim.claim(0, DOMAIN, SPACE)
    sim.claim(2, DOMAIN, SPACE)
    sim.run(until=20.0)
    middle = sim.devices[1].engine.stats
    assert (middle.attempts_received, middle.forwarded, middle.denied) == (2, 2, 0)


# ---------------------------------------------------------------- merging sites


def test_a_merge_of_conflicting_sites_goes_undetected() -> None:
    # UIAP §2.1.2: "If two UIAP sites merge ... UIAP has no mechanism to detect this."
    sim = two_sites()
    a, b = sim.claim(0, DOMAIN, SPACE), sim.claim(5, DOMAIN, SPACE)
    sim.merge(BRIDGE, at=5.0)
    before = sim.run(until=4.0).messages
    report = sim.run(until=60.0)
    assert a.outcome is b.outcome is GRANTED
    assert report.messages == before  # nothing is sent after the merge
    assert report.wrongly_granted == 1  # the two holds overlap in time
    assert [list(d.holds) for d in sim.devices] == [[1], [], [], [], [], [1]]


@pytest.mark.parametrize(("reclaimer", "keeper"), [(0, 5), (5, 0)])
def test_after_a_merge_a_reclaim_is_denied_by_the_other_holder(reclaimer: int, keeper: int) -> None:
    sim = two_sites()
    sim.claim(0, DOMAIN, SPACE)
    sim.claim(5, DOMAIN, SPACE)
    sim.merge(BRIDGE, at=5.0)
    reclaim = sim.claim(reclaimer, DOMAIN, SPACE, at=10.0, reclaim=True)
    newcomer = sim.claim(2, DOMAIN, SPACE, at=20.0)
    report = sim.run(until=40.0)
    # 3 hops out, 3 back; the reclaimer gives the space up, the keeper keeps defending it.
    assert result(reclaim) == (DENIED, "denied", 10.006)
    assert newcomer.outcome is DENIED
    assert [bool(d.holds) for d in sim.devices] == [d == keeper for d in range(6)]
    assert report.wrongly_granted == 1  # only the grant made before the merge


@pytest.mark.parametrize(("holder", "newcomer"), [(0, 4), (5, 1)])
def test_after_a_merge_a_reclaim_beats_a_new_claim(holder: int, newcomer: int) -> None:
    sim = two_sites()
    sim.claim(holder, DOMAIN, SPACE)
    sim.merge(BRIDGE, at=5.0)
    reclaim = sim.claim(holder, DOMAIN, SPACE, at=10.0, reclaim=True)
    new = sim.claim(newcomer, DOMAIN, SPACE, at=10.0)
    report = sim.run(until=40.0)
    assert result(reclaim) == (GRANTED, None, 11.5)
    assert (new.outcome, new.reason) == (DENIED, "preempted-by-reclaim")
    assert report.wrongly_granted == 0


def test_after_a_merge_simultaneous_reclaims_both_fail() -> None:
    sim = two_sites()
    sim.claim(0, DOMAIN, SPACE)
    sim.claim(5, DOMAIN, SPACE)
    sim.merge(BRIDGE, at=5.0)
    a = sim.claim(0, DOMAIN, SPACE, at=10.0, reclaim=True)
    b = sim.claim(5, DOMAIN, SPACE, at=10.0, reclaim=True)
    sim.run(until=40.0)
    assert result(a) == result(b) == (DENIED, "simultaneous-claim", 10.003)
    assert not any(d.holds for d in sim.devices)


# ---------------------------------------------------------------- proxy defense (§5.1)


def proxied_then_gone(claim_times: list[float], lifetime: int = 10) -> list[ClaimRecord]:
    """Device 0 claims with proxy enabled and leaves at 3 s; device 1 proxies; device 2 was
    cut off while the X+R reclaim went out (so it is not a proxy itself) and claims later."""
    sim = Simulator(topologies.line(3), engine_factory=DRAFT_FACTORY, seed=1)
    sim.partition("l1", at=0.0)
    held = sim.claim(0, DOMAIN, SPACE, lifetime=lifetime, proxy=True)
    sim.crash(0, at=3.0)
    sim.merge("l1", at=4.0)
    later = [sim.claim(2, DOMAIN, SPACE, at=t) for t in claim_times]
    report = sim.run(until=40.0)
    assert held.outcome is GRANTED and report.wrongly_granted == 0
    assert sim.devices[1].engine.stats.denied == sum(r.outcome is DENIED for r in later)
    return later


def test_a_proxy_denies_until_the_lifetime_ends_then_a_claim_is_granted() -> None:
    # The X+R reclaim leaves at 2.5 s and reaches the proxy at 2.501 s: it defends until
    # 12.501 s, "measured from the time the device receives the Claim-Attempt".
    early, last_moment, after = proxied_then_gone([5.0, 12.0, 13.0])
    assert result(early) == (DENIED, "denied", 5.002)
    assert result(last_moment) == (DENIED, "denied", 12.002)
    assert result(after) == (GRANTED, None, 15.5)


def test_a_proxied_claim_with_lifetime_zero_is_not_defended() -> None:
    # UIAP §4.5.2: "A lifetime of 0 is valid."
    (record,) = proxied_then_gone([5.0], lifetime=0)
    assert result(record) == (GRANTED, None, 7.5)


def test_a_proxy_never_denies_the_original_claimant() -> None:
    sim = Simulator(topologies.line(3), engine_factory=DRAFT_FACTORY, seed=1)
    held = sim.claim(0, DOMAIN, SPACE, lifetime=10, proxy=True)
    again = sim.claim(0, DOMAIN, SPACE, at=5.0, lifetime=10, reclaim=True)
    sim.run(until=40.0)
    assert held.outcome is GRANTED and result(again) == (GRANTED, None, 6.5)
    assert [d.engine.stats.denied for d in sim.devices] == [0, 0, 0]
    # The proxies forwarded the claimant's later attempt as normal.
    assert sim.devices[1].engine.stats.forwarded == 5
    assert sim.event_counts["ProxyDefenseStarted"] == 2


def test_a_shared_device_id_is_suspected() -> None:
    # UIAP §9: two devices with one ID; each sees the other's floods as its own ID.
    sim = Simulator(topologies.line(3), engine_factory=DRAFT_FACTORY, seed=1, device_ids=[7, 8, 7])
    sim.claim(0, DOMAIN, SPACE)
    sim.run(until=10.0)
    assert sim.event_counts["DeviceIDConflictSuspected"] >= 1
    assert sim.devices[2].engine.stats.device_id_conflicts >= 1


def test_releasing_a_reclaimed_claim_ends_the_hold() -> None:
    # The engine continues a reclaim of a held claim under the same handle (UIAP §4.4).
    sim = Simulator(topologies.line(2), engine_factory=DRAFT_FACTORY, seed=1)
    first = sim.claim(0, DOMAIN, SPACE)
    again = sim.claim(0, DOMAIN, SPACE, at=5.0, reclaim=True)
    sim.release(first, at=10.0)
    later = sim.claim(1, DOMAIN, SPACE, at=11.0)
    report = sim.run(until=20.0)
    assert again.handle == first.handle and result(again) == (GRANTED, None, 6.5)
    assert result(later) == (GRANTED, None, 13.5)
    assert report.wrongly_granted == 0


def test_a_reclaim_while_a_reclaim_is_in_progress() -> None:
    # The second reclaim finds no held claim (the first is in progress) and fails against
    # it locally (§2.4.1); the first must still report its result: no stuck claim.
    sim = Simulator(topologies.line(2), engine_factory=DRAFT_FACTORY, seed=1)
    sim.claim(0, DOMAIN, SPACE)
    first = sim.claim(0, DOMAIN, SPACE, at=5.0, reclaim=True)
    second = sim.claim(0, DOMAIN, SPACE, at=5.5, reclaim=True)
    report = sim.run(until=20.0)
    assert result(first) == (GRANTED, None, 6.5)
    assert result(second) == (DENIED, "local-conflict", 5.5)
    assert report.pending == 0 and [list(d.holds) for d in sim.devices] == [[1], []]


def test_a_reclaim_at_the_instant_the_claim_succeeds() -> None:
    # The engine runs the due success inside claim(); it belongs to the first claim.
    sim = Simulator(topologies.line(2), engine_factory=DRAFT_FACTORY, seed=1)
    first = sim.claim(0, DOMAIN, SPACE)
    again = sim.claim(0, DOMAIN, SPACE, at=2.5, reclaim=True)
    report = sim.run(until=20.0)
    assert result(first) == (GRANTED, None, 2.5)
    assert result(again) == (GRANTED, None, 4.0) and report.pending == 0
