"""The UIAP engine's harder rules, by hand: simultaneous claims (§2.4.6, §4.2.2.2), reclaim
(§4.4), merges (§2.1.2), proxy defense (§5.1) and device-ID conflicts (§9).
"""

from __future__ import annotations

import random

import pytest
from engine_wire import DOMAIN, StartAt, Wire, attempt, inject, span, unique

from uuidkit.uiap import (
    LIFETIME_INFINITE,
    ClaimDefended,
    ClaimFailed,
    ClaimLost,
    ClaimSucceeded,
    DeviceIDConflictSuspected,
    DropReason,
    Engine,
    EngineConfig,
    FailureReason,
    LossReason,
    ProxyDefended,
    ProxyDefenseEnded,
    ProxyDefenseStarted,
    decode,
)

#: The draft's behaviour only: these tests pin the draft's mechanics (docs/uiap.md).
DRAFT = EngineConfig.draft_only()

NEW, RECLAIM = False, True


def outcome(wire: Wire, device_id: int) -> FailureReason | str:
    """'succeeded', or the reason the device's (only) claim failed."""
    for event in wire.events(device_id):
        if isinstance(event, ClaimSucceeded):
            return "succeeded"
        if isinstance(event, ClaimFailed):
            return event.reason
    return "pending"


# ---------------------------------------------------------------- simultaneous claims


#: (first claimant's R, second claimant's R) -> (first's outcome, second's outcome).
#: §4.2.2.2: "If both ... are new claims (R not set) or re-claims (R set), then the
#: receiving UIAP device sends a Claim-Deny message and reports a failure"; "If one
#: Claim-Attempt is a re-claim and the other is not, then the re-claim takes precedence."
SIMULTANEOUS = {
    (NEW, NEW): (FailureReason.SIMULTANEOUS_CLAIM, FailureReason.SIMULTANEOUS_CLAIM),
    (RECLAIM, RECLAIM): (FailureReason.SIMULTANEOUS_CLAIM, FailureReason.SIMULTANEOUS_CLAIM),
    (RECLAIM, NEW): ("succeeded", FailureReason.PREEMPTED_BY_RECLAIM),
    (NEW, RECLAIM): (FailureReason.PREEMPTED_BY_RECLAIM, "succeeded"),
}


@pytest.mark.parametrize("path", [[1, 2], [1, 2, 3, 4, 5, 6]], ids=["neighbours", "5-hops"])
@pytest.mark.parametrize("flags", list(SIMULTANEOUS), ids=lambda f: f"R={int(f[0])}{int(f[1])}")
def test_simultaneous_claims_follow_the_r_flag_rules(
    flags: tuple[bool, bool], path: list[int]
) -> None:
    wire = Wire()
    for device_id in path:
        wire.device(device_id)
    wire.line(*path)
    first, last = path[0], path[-1]
    wire.engines[first].claim(DOMAIN, unique(5), 60, 0.0, reclaim=flags[0])
    wire.engines[last].claim(DOMAIN, span(4, 6), 60, 0.0, reclaim=flags[1])
    wire.run(10.0)
    assert (outcome(wire, first), outcome(wire, last)) == SIMULTANEOUS[flags]
    # §4.2.2.2: "Other UIAP devices receiving conflicting Claim-Attempts from multiple
    # sources SHOULD NOT attempt to resolve the Claim-Attempts, but SHOULD forward".
    for middle in path[1:-1]:
        assert wire.events(middle) == []
        assert wire.engines[middle].stats.denied == 0
    # A winner's deny reached the loser after its result: discarded there (§4.3.2).
    for device_id in (first, last):
        denies_received = wire.engines[device_id].stats.denies_received
        assert wire.engines[device_id].stats.dropped[DropReason.DENY_AFTER_RESULT] == (
            denies_received
        )


def test_the_winning_reclaim_reports_its_defense() -> None:
    wire = Wire.pair()
    winner = wire.engines[1].claim(DOMAIN, unique(5), 60, 0.0, reclaim=True)
    wire.engines[2].claim(DOMAIN, unique(5), 60, 0.0)
    wire.run(10.0)
    (defended,) = wire.of_type(1, ClaimDefended)
    assert isinstance(defended, ClaimDefended)
    assert (defended.claim, defended.originator) == (winner, 2)
    # A reclaim: one Claim-Attempt with R set, success after period + timeout (§4.4).
    assert wire.of_type(1, ClaimSucceeded) == [ClaimSucceeded(winner, DOMAIN, unique(5), 61.5)]
    assert wire.engines[1].stats.attempts_originated == 1


# ---------------------------------------------------------------- reclaim and merges


def test_reclaim_of_a_held_claim_continues_it_with_one_r_attempt() -> None:
    wire = Wire.pair()
    handle = wire.engines[1].claim(DOMAIN, unique(5), 60, 0.0)
    wire.run(10.0)
    assert wire.engines[1].claim(DOMAIN, unique(5), 100, 10.0, reclaim=True) == handle
    wire.run(20.0)
    reclaims = [d.message for d in wire.log if d.message.reclaim]
    assert len(reclaims) == 1 and reclaims[0].lifetime == 100
    assert wire.of_type(1, ClaimSucceeded)[-1] == ClaimSucceeded(handle, DOMAIN, unique(5), 111.5)


def test_a_claim_stays_defended_while_it_is_reclaimed() -> None:
    wire = Wire.pair()
    handle = wire.engines[1].claim(DOMAIN, unique(5), 60, 0.0)
    wire.run(10.0)
    wire.engines[1].claim(DOMAIN, unique(5), 60, 10.0, reclaim=True)
    wire.deliver(10.0)
    wire.engines[2].claim(DOMAIN, unique(5), 60, 10.2)
    wire.deliver(10.2)
    wire.run(20.0)
    assert outcome(wire, 2) == FailureReason.DENIED
    assert wire.of_type(1, ClaimSucceeded)[-1] == ClaimSucceeded(handle, DOMAIN, unique(5), 71.5)


def test_merged_sites_notice_a_collision_only_when_one_side_reclaims() -> None:
    # §2.1.2: "If two UIAP sites merge ... UIAP has no mechanism to detect this. The
    # collision will only be detected if one of the UIAP devices ... attempts to re-claim".
    wire = Wire()
    wire.device(1)
    wire.device(2)
    wire.engines[1].claim(DOMAIN, unique(5), 600, 0.0)
    late = wire.engines[2].claim(DOMAIN, unique(5), 600, 0.0)
    wire.run(5.0)
    wire.link("merge", 1, 2)
    wire.run(50.0)
    assert wire.log == []  # nothing detects it
    assert wire.engines[2].claim(DOMAIN, unique(5), 600, 50.0, reclaim=True) == late
    wire.run(60.0)
    # Device 1 holds the claim (not in progress), so it simply denies the reclaim; device
    # 2's claim, granted before the merge, is lost (§2.1.2 "Recovery after collision is
    # the responsibility of the application", which must hear of it).
    assert wire.events(2)[-2:] == [
        ClaimFailed(late, FailureReason.DENIED, DOMAIN, unique(5)),  # the reclaim's result
        ClaimLost(late, LossReason.RECLAIM_DENIED, DOMAIN, unique(5)),
    ]
    assert wire.engines[2].get_timer() is None  # nothing left to defend or expire
    assert isinstance(wire.events(1)[-1], ClaimDefended)


# ---------------------------------------------------------------- proxy defense (§5.1)


def proxy_site() -> Wire:
    """Claimant 1 and proxy 2 on link "a"; device 1 claims 5 with proxy defense at 0."""
    wire = Wire()
    wire.device(1)
    wire.device(2)
    wire.device(3)
    wire.link("a", 1, 2)
    wire.engines[1].claim(DOMAIN, unique(5), 30, 0.0, proxy=True)
    wire.run(5.0)
    return wire


def test_claimant_enables_proxy_defense_with_an_x_r_reclaim_after_success() -> None:
    wire = proxy_site()
    messages = [d.message for d in wire.log if d.sender == 1]
    # §5.1: "the claiming device immediately attempts a reclaim on the successful claim
    # with the proxy enabled flag set".
    assert [(m.proxy, m.reclaim) for m in messages] == [(False, False)] * 3 + [(True, True)]
    assert wire.of_type(2, ProxyDefenseStarted) == [
        ProxyDefenseStarted(1, DOMAIN, unique(5), 2.5 + 30)  # measured from receipt
    ]


def test_proxy_denies_others_until_the_lifetime_ends_then_the_space_is_free() -> None:
    wire = proxy_site()
    wire.engines[1].remove_interface("a")  # the claimant leaves the site
    wire.engines[2].remove_interface("a")
    wire.link("b", 2, 3)
    refused = wire.engines[3].claim(DOMAIN, unique(5), 30, 10.0)
    wire.run(20.0)
    assert wire.events(3) == [ClaimFailed(refused, FailureReason.DENIED, DOMAIN, unique(5))]
    first_attempt = next(d.message for d in wire.log if d.sender == 3)
    assert wire.of_type(2, ProxyDefended) == [ProxyDefended(1, 3, first_attempt.sequence)]
    wire.run(40.0)
    assert wire.of_type(2, ProxyDefenseEnded) == [ProxyDefenseEnded(1, DOMAIN, unique(5))]
    granted = wire.engines[3].claim(DOMAIN, unique(5), 30, 40.0)
    wire.run(50.0)
    assert wire.of_type(3, ClaimSucceeded) == [ClaimSucceeded(granted, DOMAIN, unique(5), 72.5)]


def test_proxy_never_defends_against_the_original_claimant_and_forwards_its_attempts() -> None:
    wire = proxy_site()
    wire.link("b", 2, 3)
    proxy = wire.engines[2]
    # §5.1: "MUST NOT defend the claim against the original claimant", and must forward
    # the claimant's further Claim-Attempts "as normal".
    inject(proxy, attempt(1, 77, span(4, 6)), "a", 1, 6.0)
    (forwarded,) = proxy.datagrams_to_send()
    assert forwarded.interface == "b" and decode(forwarded.data).sequence == 77
    assert proxy.stats.denied == 0


@pytest.mark.parametrize(
    ("proxy", "reclaim", "lifetime", "started"),
    [
        (True, False, 30, False),  # §5.1: "without both these flags set MUST NOT be proxied"
        (False, True, 30, False),
        (True, True, 0, False),  # §4.5.2: "A lifetime of 0 is valid": defended for 0 s
        (True, True, 30, True),
        (True, True, LIFETIME_INFINITE, True),
    ],
)
def test_only_x_and_r_attempts_are_proxied(
    proxy: bool, reclaim: bool, lifetime: int, started: bool
) -> None:
    engine = Engine(9, random.Random(0), EngineConfig.draft_only(max_proxy_lifetime=None))
    engine.add_interface("a")
    message = attempt(1, 5, unique(5), proxy=proxy, reclaim=reclaim, lifetime=lifetime)
    inject(engine, message, "a", 1, 1.0)
    events = [e for e in iter(engine.next_event, None) if isinstance(e, ProxyDefenseStarted)]
    assert len(events) == started
    if started:
        expires = None if lifetime == LIFETIME_INFINITE else 1.0 + lifetime
        assert events[0] == ProxyDefenseStarted(1, DOMAIN, unique(5), expires)


def test_a_later_attempt_of_the_claim_renews_or_ends_proxy_defense() -> None:
    engine = Engine(9, random.Random(0), DRAFT)
    engine.add_interface("a")
    inject(engine, attempt(1, 5, unique(5), proxy=True, reclaim=True, lifetime=10), "a", 1, 0.0)
    inject(engine, attempt(1, 6, unique(5), proxy=True, reclaim=True, lifetime=10), "a", 1, 8.0)
    engine.handle_timer(12.0)  # the first lifetime would have ended at 10.0
    kinds = [type(e) for e in iter(engine.next_event, None)]
    assert kinds == [ProxyDefenseStarted]
    assert engine.get_timer() == 18.0
    inject(engine, attempt(1, 7, unique(5), proxy=True, reclaim=True, lifetime=0), "a", 1, 13.0)
    assert engine.next_event() == ProxyDefenseEnded(1, DOMAIN, unique(5))
    assert engine.get_timer() is None


def test_proxy_defense_can_be_turned_off_and_proxied_spaces_conflict_locally() -> None:
    off = Engine(9, random.Random(0), EngineConfig.draft_only(proxy_defense=False))
    on = Engine(8, random.Random(0), DRAFT)
    for engine in (off, on):
        engine.add_interface("a")
        inject(engine, attempt(1, 5, unique(5), proxy=True, reclaim=True, lifetime=9), "a", 1, 0.0)
    assert off.next_event() is None
    on.next_event()
    handle = on.claim(DOMAIN, unique(5), 60, 1.0)
    # A space held only by proxy defense fails with its own reason, naming the claimant
    # (device 1), not as one of this device's own claims.
    failed = ClaimFailed(handle, FailureReason.PROXY_DEFENDED, DOMAIN, unique(5), holder=1)
    assert on.next_event() == failed


# ---------------------------------------------------------------- device-ID conflicts (§9)


@pytest.mark.parametrize(("sequence", "resequenced"), [(1005, True), (1000 + (1 << 20), False)])
def test_a_message_with_our_id_that_we_never_sent_is_reported(
    sequence: int, resequenced: bool
) -> None:
    engine = Engine(1, StartAt(1000), DRAFT)
    engine.add_interface("a")
    engine.add_interface("b")
    engine.claim(DOMAIN, unique(1), 60, 0.0)
    engine.datagrams_to_send()
    inject(engine, attempt(1, sequence, unique(9)), "a", 7, 0.1)
    # It is still another device's claim: processed and forwarded as normal.
    assert [t.interface for t in engine.datagrams_to_send()] == ["b"]
    assert engine.next_event() == DeviceIDConflictSuspected(sequence, "a", 7, resequenced)
    engine.handle_timer(0.5)
    next_sequence = decode(engine.datagrams_to_send()[0].data).sequence
    distance = min((next_sequence - sequence) % (1 << 32), (sequence - next_sequence) % (1 << 32))
    assert (distance >= 1 << 29) == resequenced
    inject(engine, attempt(1, sequence + 1, unique(9)).deny(), "a", 7, 0.6)
    assert isinstance(engine.next_event(), DeviceIDConflictSuspected)
    assert engine.stats.dropped[DropReason.DENY_UNMATCHED] == 1


def test_a_proxy_that_relays_a_deny_for_the_attempt_stops_defending_it() -> None:
    # §5.1: a proxy "MAY stop defending a claim at any earlier time"; a refused X+R
    # reclaim (a merge: someone else holds the space) is not defended on the way back.
    engine = Engine(9, random.Random(0), DRAFT)
    engine.add_interface("a")
    engine.add_interface("b")
    older = attempt(1, 4, unique(5), proxy=True, reclaim=True, lifetime=60)
    latest = attempt(1, 5, unique(5), proxy=True, reclaim=True, lifetime=60)
    inject(engine, older, "a", 1, 0.0)
    inject(engine, latest, "a", 1, 0.1)  # the same claim, renewed
    inject(engine, older.deny(), "b", 2, 0.2)  # refuses an attempt we no longer defend by
    assert [type(e) for e in iter(engine.next_event, None)] == [ProxyDefenseStarted]
    inject(engine, latest.deny(), "b", 2, 0.3)
    assert engine.next_event() == ProxyDefenseEnded(1, DOMAIN, unique(5))
    assert engine.get_timer() is None
    assert engine.stats.denies_forwarded == 2
