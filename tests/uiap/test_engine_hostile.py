"""The engine against input it must not trust or must not judge by its own configuration:
relayed claims its domain rules reject (§4.2.2.1, §3.2.1.1), comparison that depends only
on the wire (§3.2.4), Domain IDs kept as received (§2.2, §4.1), the hop limit of a
Claim-Deny (§2.4.5, §4.3.1), collisions of held claims (§2.1.2, §4.4, §5.1) and misuse of
``claim()``.
"""

from __future__ import annotations

import math
import random

import pytest
from engine_wire import DOMAIN, Delivery, Wire, attempt, inject, run_timers, unique
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from uuidkit.errors import EngineError, SpaceError
from uuidkit.uiap import (
    ClaimFailed,
    ClaimLost,
    ClaimSucceeded,
    DomainID,
    DropReason,
    Engine,
    EngineConfig,
    FailureReason,
    LossReason,
    Message,
    MessageType,
    UIDSpace,
    decode,
    encode,
)
from uuidkit.uiap.constants import UIAP_HOP_LIMIT
from uuidkit.uiap.numberspaces import INTEGERS, IPV4_ADDRESSES, ipv4_address_uid

#: The draft's behaviour only: these tests pin the draft's mechanics (docs/uiap.md).
DRAFT = EngineConfig.draft_only()

# ---------------------------------------------------------------- relayed claims (§4.2.2.1)


def test_a_relay_knowing_the_domain_forwards_a_claim_its_rules_reject() -> None:
    # §3.2.2's example: a prefix "everything beginning with 192.168 (i.e. subnet
    # 192.168/16)" claimed in the IPv4 address domain (4-octet UIDs) while device 1 holds
    # 192.168.1.1. Device 2 knows that domain's rules, which reject a 2-octet UID; it must
    # still record and forward the attempt (§4.2.2.1 "MUST forward"; §3.2.1.1 "there is
    # no mechanism to specify or enforce UID sizes within UIAP"), so the holder denies it.
    did = IPV4_ADDRESSES.domain_id
    known = {did: IPV4_ADDRESSES}
    wire = Wire()
    wire.device(1, domains=known)
    wire.device(2, domains=known)
    wire.device(3)  # knows nothing of the domain, so its claim() accepts the prefix
    wire.line(3, 2, 1)
    wire.engines[1].claim(did, UIDSpace.unique(ipv4_address_uid("192.168.1.1")), 600, 0.0)
    wire.run(5.0)
    subnet = UIDSpace.prefix(b"\xc0\xa8")
    handle = wire.engines[3].claim(did, subnet, 600, 5.0)
    wire.run(10.0)
    assert wire.of_type(3, ClaimFailed) == [ClaimFailed(handle, FailureReason.DENIED, did, subnet)]
    relay = wire.engines[2].stats
    assert relay.dropped[DropReason.MALFORMED] == 0
    assert relay.forwarded >= 1 and relay.denies_forwarded == 1
    # The rules still check the relay's own claims (§2.2: the application's job).
    with pytest.raises(SpaceError):
        wire.engines[2].claim(did, subnet, 600, 10.0)


# ---------------------------------------------------------------- comparison (§3.2.4)

#: Octets whose zero padding makes 0x05, 0x0005 and 0x000005 one integer (INTEGERS).
_OCTETS = st.lists(st.sampled_from([0, 5, 7]), max_size=3).map(bytes)


@st.composite
def integer_spaces(draw: st.DrawFn) -> UIDSpace:
    if draw(st.booleans()):
        return UIDSpace.unique(draw(_OCTETS))
    return UIDSpace.range(draw(_OCTETS), draw(_OCTETS))


def _hold_and_send(engine: Engine, space: UIDSpace) -> bytes | None:
    """``engine`` claims ``space`` and holds it; returns its Claim-Attempt as sent."""
    try:
        engine.claim(INTEGERS.domain_id, space, 60, 0.0)
    except SpaceError:
        return None
    first = engine.datagrams_to_send()[0].data
    engine.handle_timer(5.0)
    engine.datagrams_to_send()
    return first


def _denies(engine: Engine, datagram: bytes) -> bool:
    before = engine.stats.denied
    engine.receive_datagram(datagram, "L", 99, 5.0)
    return engine.stats.denied > before


@settings(max_examples=300, deadline=None)
@given(integer_spaces(), integer_spaces(), st.booleans(), st.booleans())
def test_two_devices_compare_a_pair_of_claims_alike(
    space_p: UIDSpace, space_q: UIDSpace, p_knows: bool, q_knows: bool
) -> None:
    # P holds its claim and receives Q's, Q holds its claim and receives P's: whatever
    # domain rules each device was configured with, both reach the same answer.
    engines = []
    for device_id, knows in ((1, p_knows), (2, q_knows)):
        domains = {INTEGERS.domain_id: INTEGERS} if knows else None
        engine = Engine(device_id, random.Random(device_id), DRAFT, domains=domains)
        engine.add_interface("L")
        engines.append(engine)
    p, q = engines
    sent_p, sent_q = _hold_and_send(p, space_p), _hold_and_send(q, space_q)
    assume(sent_p is not None and sent_q is not None)
    assert sent_p is not None and sent_q is not None
    assert _denies(p, sent_q) == _denies(q, sent_p)


def test_zero_padding_conflicts_both_ways_or_neither() -> None:
    # INTEGERS' zeros are not significant (0x05 == 0x0005), but only devices that know the
    # domain know it. A device that knows sends its canonical form; comparison uses the
    # wire's rules (all data significant, §3.2.1.1) on every device. P claims 0x05 (already
    # canonical), Q claims 0x0005 (sent as 0x05 only if Q knows the domain).
    known = {INTEGERS.domain_id: INTEGERS}
    cases = {(True, True): True, (False, True): True, (True, False): False, (False, False): False}
    for (p_knows, q_knows), conflict in cases.items():
        p = Engine(1, random.Random(1), DRAFT, domains=known if p_knows else None)
        q = Engine(2, random.Random(2), DRAFT, domains=known if q_knows else None)
        for engine in (p, q):
            engine.add_interface("L")
        sent_p = _hold_and_send(p, UIDSpace.unique(b"\x05"))
        sent_q = _hold_and_send(q, UIDSpace.unique(b"\x00\x05"))
        assert sent_p is not None and sent_q is not None
        assert (_denies(p, sent_q), _denies(q, sent_p)) == (conflict, conflict)


def test_a_claim_in_a_known_domain_is_sent_and_reported_in_canonical_form() -> None:
    engine = Engine(1, random.Random(1), DRAFT, domains={INTEGERS.domain_id: INTEGERS})
    engine.add_interface("L")
    handle = engine.claim(INTEGERS.domain_id, UIDSpace.range(b"\x00\x01", b"\x00\x00\x09"), 60, 0)
    canonical = UIDSpace.range(b"\x01", b"\x09")
    assert decode(engine.datagrams_to_send()[0].data).space == canonical
    run_timers(engine, 5.0)
    assert engine.next_event() == ClaimSucceeded(handle, INTEGERS.domain_id, canonical, 62.5)


# ---------------------------------------------------------------- Domain IDs (§2.2, §4.1)


def test_reserved_did_flag_bits_are_forwarded_as_received_and_are_another_domain() -> None:
    engine = Engine(9, random.Random(0), DRAFT)
    engine.add_interface("a")
    engine.add_interface("b")
    engine.claim(DOMAIN, unique(5), 60, 0.0)
    engine.handle_timer(5.0)
    engine.datagrams_to_send()
    noisy = DomainID(DOMAIN.value | 0x01)  # a reserved flag bit set
    message = Message(MessageType.CLAIM_ATTEMPT, 1, 100, noisy, unique(5), hop_limit=9)
    inject(engine, message, "a", 1, 5.0)
    (forwarded,) = engine.datagrams_to_send()  # not denied: another domain
    assert forwarded.interface == "b"
    assert forwarded.data == encode(message.forwarded())
    assert forwarded.data[24:32] == noisy.to_bytes()
    # A Claim-Deny relayed for it keeps the DID too.
    deny = message.deny().replace(hop_limit=4)
    engine.receive_datagram(encode(deny), "b", 2, 5.1)
    (relayed,) = engine.datagrams_to_send()
    assert decode(relayed.data).domain == noisy and relayed.data[24:32] == noisy.to_bytes()


# ---------------------------------------------------------------- Claim-Deny hop limit


@pytest.mark.parametrize("flood_hop_limit", [1, 4, 32, 200])
def test_a_deny_we_originate_starts_at_hop_limit_32(flood_hop_limit: int) -> None:
    # §2.4.5: "Reset hop limit to maximum (currently 32)"; §4.3.1: "reset to 32".
    engine = Engine(9, random.Random(0), EngineConfig.draft_only(hop_limit=flood_hop_limit))
    engine.add_interface("a")
    engine.claim(DOMAIN, unique(5), 60, 0.0)
    assert decode(engine.datagrams_to_send()[0].data).hop_limit == flood_hop_limit
    engine.handle_timer(5.0)
    engine.datagrams_to_send()
    inject(engine, attempt(1, 100, unique(5), hop_limit=2), "a", 1, 5.0)
    (deny,) = engine.datagrams_to_send()
    assert decode(deny.data).type is MessageType.CLAIM_DENY
    assert decode(deny.data).hop_limit == UIAP_HOP_LIMIT == 32


# ---------------------------------------------------------------- collisions of held claims


def test_a_deny_for_the_proxy_announcement_reports_the_claim_lost() -> None:
    # Device 2 holds 5. Device 1's three Claim-Attempts are lost, so its claim succeeds;
    # the X+R reclaim it then sends (§5.1) is denied by device 2: a collision the
    # application must hear of (§2.1.2), and the claim is no longer defended.
    wire = Wire.pair()
    wire.engines[2].claim(DOMAIN, unique(5), 600, 0.0)
    wire.run(3.0)
    handle = wire.engines[1].claim(DOMAIN, unique(5), 600, 3.0, proxy=True)

    def lose_new_attempts(delivery: Delivery) -> bool:
        return delivery.message.is_attempt and not delivery.message.reclaim

    wire.run(10.0, lose=lose_new_attempts)
    events = [e for e in wire.events(1) if isinstance(e, ClaimSucceeded | ClaimLost)]
    assert events == [
        ClaimSucceeded(handle, DOMAIN, unique(5), 605.5),
        ClaimLost(handle, LossReason.ANNOUNCEMENT_DENIED, DOMAIN, unique(5)),
    ]
    assert wire.engines[1].get_timer() is None
    inject(wire.engines[1], attempt(7, 1, unique(5)), "L", 7, 11.0)
    assert wire.engines[1].stats.denied == 0  # forwarded (nowhere), not defended


def test_simultaneous_reclaims_of_held_claims_are_both_lost() -> None:
    # After a merge (§2.1.2) both holders reclaim at once: both deny, both fail (§4.2.2.2).
    wire = Wire()
    wire.device(1)
    wire.device(2)
    first = wire.engines[1].claim(DOMAIN, unique(5), 600, 0.0)
    second = wire.engines[2].claim(DOMAIN, unique(5), 600, 0.0)
    wire.run(5.0)
    wire.link("merge", 1, 2)
    wire.engines[1].claim(DOMAIN, unique(5), 600, 6.0, reclaim=True)
    wire.engines[2].claim(DOMAIN, unique(5), 600, 6.0, reclaim=True)
    wire.run(10.0)
    for device_id, handle in ((1, first), (2, second)):
        results = [e for e in wire.events(device_id) if isinstance(e, ClaimFailed | ClaimLost)]
        assert results == [
            ClaimFailed(handle, FailureReason.SIMULTANEOUS_CLAIM, DOMAIN, unique(5)),
            ClaimLost(handle, LossReason.SIMULTANEOUS_RECLAIM, DOMAIN, unique(5)),
        ]
        assert wire.engines[device_id].get_timer() is None


# ---------------------------------------------------------------- claim() misuse

_BAD_CLAIMS = {
    "float lifetime": {"lifetime": 1.5},
    "string lifetime": {"lifetime": "60"},
    "bool lifetime": {"lifetime": True},
    "negative lifetime": {"lifetime": -1},
    "lifetime over 32 bits": {"lifetime": 1 << 32},
    "bytes space": {"space": b"\x05"},
    "no space": {"space": None},
    "text domain": {"domain": "0fff:0000:00e0:0000"},
    "int domain": {"domain": DOMAIN.value},
    "string time": {"now": "0"},
    "nan time": {"now": math.nan},
    "infinite time": {"now": math.inf},
    "string flag": {"reclaim": "yes"},
}


@pytest.mark.parametrize("change", list(_BAD_CLAIMS.values()), ids=list(_BAD_CLAIMS))
def test_claim_with_a_bad_argument_raises_engine_error_and_registers_nothing(
    change: dict[str, object],
) -> None:
    engine = Engine(9, random.Random(0), DRAFT)
    engine.add_interface("a")
    arguments: dict[str, object] = {
        "domain": DOMAIN, "space": unique(5), "lifetime": 60, "now": 0.0, **change
    }  # fmt: skip
    with pytest.raises(EngineError) as caught:
        engine.claim(**arguments)  # type: ignore[arg-type]
    assert isinstance(caught.value, ValueError)
    assert engine.get_timer() is None and engine.datagrams_to_send() == []
    assert engine.next_event() is None
    # Nothing is held: another device's claim of the space is forwarded, not denied.
    inject(engine, attempt(1, 100, unique(5)), "a", 1, 1.0)
    assert engine.stats.denied == 0
    # And the handle numbering is untouched.
    assert engine.claim(DOMAIN, unique(5), 60, 1.0) == 1


def test_release_with_a_bad_argument_raises_engine_error() -> None:
    engine = Engine(9, random.Random(0), DRAFT)
    handle = engine.claim(DOMAIN, unique(5), 60, 0.0)
    for bad in ("1", 1.0, True):
        with pytest.raises(EngineError):
            engine.release(bad, 0.0)  # type: ignore[arg-type]
    with pytest.raises(EngineError):
        engine.release(handle, math.nan)
    assert engine.get_timer() == 0.5  # still claiming
