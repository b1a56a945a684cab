"""The UIAP engine driven by hand: receiving, flooding and denying (UIAP §2.4.2 - §2.4.5,
§4.2.2.1, §4.3), and the boundary contract for datagrams that are not UIAP messages.
"""

from __future__ import annotations

import random

from engine_wire import (
    DOMAIN,
    Delivery,
    StartAt,
    Wire,
    attempt,
    inject,
    run_timers,
    span,
    unique,
)

from uuidkit.uiap import (
    MULTICAST,
    ClaimDefended,
    ClaimFailed,
    ClaimSucceeded,
    DropReason,
    Engine,
    EngineConfig,
    FailureReason,
    MessageDropped,
    MessageType,
    decode,
    encode,
)

#: The draft's behaviour only: these tests pin the draft's mechanics (docs/uiap.md).
DRAFT = EngineConfig.draft_only()

# ---------------------------------------------------------------- receiving, flooding (§2.4.2-3)


def test_attempt_is_forwarded_out_every_other_interface_with_hop_limit_decremented() -> None:
    engine = Engine(9, random.Random(0), DRAFT)
    for name in ("a", "b", "c"):
        engine.add_interface(name)
    inject(engine, attempt(1, 100, unique(5), hop_limit=7), "a", 1, 0.0)
    out = engine.datagrams_to_send()
    assert [(t.interface, t.destination) for t in out] == [("b", MULTICAST), ("c", MULTICAST)]
    forwarded = decode(out[0].data)
    assert forwarded == attempt(1, 100, unique(5), hop_limit=6)
    assert engine.stats.forwarded == 2


def test_hop_limit_zero_is_processed_but_never_forwarded() -> None:
    # §4.1: "Messages with a hop limit of 0 SHOULD be processed but MUST NOT be forwarded."
    engine = Engine(9, random.Random(0), DRAFT)
    engine.add_interface("a")
    engine.add_interface("b")
    engine.claim(DOMAIN, unique(7), 60, 0.0)
    engine.handle_timer(5.0)
    engine.datagrams_to_send()
    list(iter(engine.next_event, None))
    inject(engine, attempt(1, 100, unique(5), hop_limit=0), "a", 1, 5.0)
    assert engine.datagrams_to_send() == []
    assert engine.stats.hop_limit_reached == 1
    inject(engine, attempt(1, 101, unique(7), hop_limit=0), "a", 1, 5.0)  # conflicts
    (deny,) = engine.datagrams_to_send()
    assert decode(deny.data).type is MessageType.CLAIM_DENY and decode(deny.data).hop_limit == 32


def test_known_message_is_dropped_including_a_copy_on_a_second_interface() -> None:
    engine = Engine(9, random.Random(0), EngineConfig.draft_only(hop_limit=32))
    for name in ("a", "b", "c"):
        engine.add_interface(name)
    message = attempt(1, 100, unique(5))
    inject(engine, message, "a", 11, 0.0)
    engine.datagrams_to_send()
    inject(engine, message, "b", 12, 0.1)  # §4.2.2.1: "MUST be discarded"
    inject(engine, message, "a", 11, 0.2)
    assert engine.datagrams_to_send() == []
    assert engine.stats.dropped[DropReason.DUPLICATE] == 2
    assert engine.next_event() == MessageDropped(DropReason.DUPLICATE, "b", 12)


def test_the_first_sender_is_the_one_a_deny_goes_back_to() -> None:
    # §4.2.2.1: "A device receiving multiple copies of a message MUST remember the sender
    # of the first copy"; §4.3.2: the Claim-Deny goes "out the same interface that the
    # matching Claim-Attempt was first received", to the recorded sender.
    engine = Engine(9, random.Random(0), DRAFT)
    engine.add_interface("a")
    engine.add_interface("b")
    message = attempt(1, 100, unique(5))
    inject(engine, message, "b", 22, 0.0)
    inject(engine, message, "a", 11, 0.0)
    engine.datagrams_to_send()
    inject(engine, message.deny(), "a", 11, 0.1)
    (transmit,) = engine.datagrams_to_send()
    assert (transmit.interface, transmit.destination) == ("b", 22)
    assert decode(transmit.data).hop_limit == 31


def test_flood_records_are_forgotten_after_their_lifetime_from_the_last_copy() -> None:
    # §4.2.2.1: remember the Message ID "for X seconds"; §2.4.2 "Update last received time".
    engine = Engine(9, random.Random(0), EngineConfig.draft_only(flood_record_lifetime=10.0))
    engine.add_interface("a")
    engine.add_interface("b")
    message = attempt(1, 100, unique(5))
    inject(engine, message, "a", 11, 0.0)
    inject(engine, message, "a", 11, 9.0)  # a copy: the record now lives until 19.0
    inject(engine, message, "a", 11, 18.9)
    assert engine.stats.dropped[DropReason.DUPLICATE] == 2
    engine.datagrams_to_send()
    inject(engine, message, "a", 11, 30.0)  # forgotten: processed again
    assert len(engine.datagrams_to_send()) == 1
    assert engine.stats.attempts_received == 2


def test_own_flood_coming_back_is_never_taken_for_another_claim() -> None:
    # §4.2.2.3: "a device MUST remember Claim-Attempt messages that it originates, in
    # order to protect against loops" (a reflector would loop it back).
    wire = Wire()
    for device_id in (1, 2, 3):
        wire.device(device_id)
    wire.link("x", 1, 2)
    wire.link("y", 2, 3)
    wire.link("z", 3, 1)
    handle = wire.engines[1].claim(DOMAIN, unique(5), 60, 0.0)
    # Lose 1's copies on link z, so 3 first hears each flood from 2 and sends it round
    # the loop back to 1.
    wire.run(5.0, lose=lambda d: d.sender == 1 and d.link == "z")
    assert wire.events(1)[-1] == ClaimSucceeded(handle, DOMAIN, unique(5), 62.5)
    assert wire.engines[1].stats.dropped[DropReason.DUPLICATE] == 3
    assert wire.engines[1].stats.forwarded == wire.engines[1].stats.denied == 0
    # each device forwards each flood at most once per interface: 3 floods x 1 interface
    assert wire.engines[2].stats.forwarded == wire.engines[3].stats.forwarded == 3


def test_own_message_after_its_record_expired_is_dropped_quietly() -> None:
    engine = Engine(1, StartAt(500), DRAFT)
    engine.add_interface("a")
    engine.claim(DOMAIN, unique(5), 60, 0.0)
    (own,) = engine.datagrams_to_send()
    engine.handle_timer(100.0)
    list(iter(engine.next_event, None))
    engine.receive_datagram(own.data, "a", 7, 100.0)
    assert engine.stats.dropped[DropReason.OWN_MESSAGE] == 1
    assert engine.stats.device_id_conflicts == 0


# ---------------------------------------------------------------- denying (§2.4.4, §2.4.5, §4.3)


def test_neighbour_holding_the_space_denies_and_the_claim_fails() -> None:
    wire = Wire.pair()
    held = wire.engines[2].claim(DOMAIN, span(0, 9), 60, 0.0)
    wire.run(3.0)
    handle = wire.engines[1].claim(DOMAIN, unique(5), 60, 3.0)
    (attempt_, deny) = wire.deliver(3.0)
    assert deny == Delivery(2, 1, "L", attempt_.message.deny())
    assert wire.of_type(1, ClaimFailed) == [
        ClaimFailed(handle, FailureReason.DENIED, DOMAIN, unique(5))
    ]
    defended = ClaimDefended(held, 1, attempt_.message.sequence)
    assert wire.of_type(2, ClaimDefended) == [defended]
    wire.run(10.0)
    assert [
        d for d in wire.log if d.sender == 1 and d.message.type is MessageType.CLAIM_ATTEMPT
    ] == [attempt_]  # a failed claim sends no more attempts


def test_deny_retraces_the_path_hop_by_hop_from_five_hops_away() -> None:
    wire = Wire()
    for device_id in range(1, 7):
        wire.device(device_id)
    wire.line(1, 2, 3, 4, 5, 6)
    wire.engines[6].claim(DOMAIN, unique(5), 60, 0.0)
    wire.run(3.0)
    wire.log.clear()
    handle = wire.engines[1].claim(DOMAIN, unique(5), 60, 3.0)
    delivered = wire.deliver(3.0)
    hops = [(d.sender, d.receiver, d.message.type, d.message.hop_limit) for d in delivered]
    attempt_, deny = MessageType.CLAIM_ATTEMPT, MessageType.CLAIM_DENY
    assert hops == [
        (1, 2, attempt_, 32),
        (2, 3, attempt_, 31),
        (3, 4, attempt_, 30),
        (4, 5, attempt_, 29),
        (5, 6, attempt_, 28),
        (6, 5, deny, 32),  # §4.3.1: hop limit reset to 32
        (5, 4, deny, 31),  # §2.4.5: forwarding decrements it
        (4, 3, deny, 30),
        (3, 2, deny, 29),
        (2, 1, deny, 28),
    ]
    assert wire.of_type(1, ClaimFailed)[0] == ClaimFailed(
        handle, FailureReason.DENIED, DOMAIN, unique(5)
    )


def test_at_most_one_deny_per_attempt_and_unmatched_denies_are_dropped() -> None:
    engine = Engine(9, random.Random(0), DRAFT)
    engine.add_interface("a")
    engine.add_interface("b")
    message = attempt(1, 100, unique(5))
    inject(engine, message, "a", 11, 0.0)
    engine.datagrams_to_send()
    inject(engine, message.deny(), "b", 22, 0.1)
    inject(engine, message.deny(), "b", 23, 0.1)  # §4.3.2: "SHOULD be silently dropped"
    inject(engine, attempt(1, 101, unique(5)).deny(), "b", 22, 0.1)  # never seen
    assert len(engine.datagrams_to_send()) == 1
    assert engine.stats.denies_forwarded == 1
    assert engine.stats.dropped[DropReason.DENY_ALREADY_SENT] == 1
    assert engine.stats.dropped[DropReason.DENY_UNMATCHED] == 1


def test_deny_with_hop_limit_zero_or_towards_a_removed_interface_is_not_forwarded() -> None:
    engine = Engine(9, random.Random(0), DRAFT)
    for name in ("a", "b", "c"):
        engine.add_interface(name)
    inject(engine, attempt(1, 100, unique(5)), "a", 11, 0.0)
    inject(engine, attempt(1, 101, unique(6)), "c", 33, 0.0)
    engine.datagrams_to_send()
    inject(engine, attempt(1, 100, unique(5)).deny().replace(hop_limit=0), "b", 22, 0.1)
    engine.remove_interface("c")
    inject(engine, attempt(1, 101, unique(6)).deny(), "b", 22, 0.1)
    assert engine.datagrams_to_send() == []
    assert engine.stats.dropped[DropReason.DENY_HOP_LIMIT] == 1
    assert engine.stats.dropped[DropReason.DENY_INTERFACE_GONE] == 1


def test_deny_after_the_result_is_discarded() -> None:
    # §4.3.2: "If a result has already been returned to the application, the Claim-Deny
    # message MUST be discarded."
    engine = Engine(1, random.Random(0), DRAFT)
    engine.add_interface("a")
    handle = engine.claim(DOMAIN, unique(5), 60, 0.0)
    (first,) = engine.datagrams_to_send()
    run_timers(engine, 2.5)
    engine.receive_datagram(encode(decode(first.data).deny()), "a", 2, 3.0)
    assert [type(e) for e in iter(engine.next_event, None)] == [ClaimSucceeded, MessageDropped]
    assert engine.stats.dropped[DropReason.DENY_AFTER_RESULT] == 1
    assert handle == 1


def test_datagrams_on_unknown_interfaces_and_bad_bytes_are_counted_and_dropped() -> None:
    engine = Engine(9, random.Random(0), DRAFT)
    engine.add_interface("a")
    good = encode(attempt(1, 100, unique(5)))
    engine.receive_datagram(good, "nope", 1, 0.0)
    engine.receive_datagram(b"\x01\x00", "a", 1, 0.0)
    engine.receive_datagram(b"\x02" + good[1:], "a", 1, 0.0)
    engine.receive_datagram(b"", "a", 1, 0.0)
    drops = [e for e in iter(engine.next_event, None) if isinstance(e, MessageDropped)]
    assert [e.reason for e in drops] == [
        DropReason.UNKNOWN_INTERFACE,
        DropReason.MALFORMED,
        DropReason.UNSUPPORTED_VERSION,
        DropReason.MALFORMED,
    ]
    assert engine.stats.received == 4 and sum(engine.stats.dropped.values()) == 4


def test_drop_events_can_be_turned_off_but_counts_remain() -> None:
    engine = Engine(9, random.Random(0), EngineConfig.draft_only(drop_events=False))
    engine.add_interface("a")
    engine.receive_datagram(b"junk", "a", 1, 0.0)
    assert engine.next_event() is None
    assert engine.stats.dropped[DropReason.UNSUPPORTED_VERSION] == 1


def test_a_known_attempt_is_dropped_by_its_message_id_even_if_damaged_elsewhere() -> None:
    # §4.2.2.1: "MUST first check if it has already processed that Claim-Attempt
    # (identified by the Message ID)": a later copy is not decoded again.
    engine = Engine(9, random.Random(0), DRAFT)
    engine.add_interface("a")
    data = encode(attempt(1, 100, unique(5)))
    engine.receive_datagram(data, "a", 11, 0.0)
    engine.receive_datagram(data + b"\xff\xff", "a", 11, 0.1)  # UID Len no longer matches
    engine.receive_datagram(data[:36], "a", 11, 0.2)  # the UID is missing
    assert engine.stats.dropped == {DropReason.DUPLICATE: 2}
    engine.receive_datagram(encode(attempt(1, 101, unique(5)))[:36], "a", 11, 0.3)
    assert engine.stats.dropped[DropReason.MALFORMED] == 1


def test_datagrams_for_a_removed_interface_are_not_handed_out() -> None:
    engine = Engine(1, random.Random(0), DRAFT)
    engine.add_interface("a")
    engine.add_interface("b")
    engine.claim(DOMAIN, unique(5), 10, 0.0)
    engine.remove_interface("a")
    assert [t.interface for t in engine.datagrams_to_send()] == ["b"]
