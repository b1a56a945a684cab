"""Shortcuts of the decoder, forwarder and engine give exactly what the slow way gives.

* :func:`decode` builds its message without re-running ``Message`` validation: the result
  equals the validated message, and public construction still validates.
* :func:`with_hop_limit` patches Type and Hop Limit in octets that :func:`encode` made:
  equal to re-encoding the changed message (UIAP §2.4.3 forwarding, §4.3.1 denying).
* :func:`as_encoded` reuses received octets only when re-encoding would give the same
  octets; reserved fields set by a sender are cleared on the way out (UIAP §4.1: "MUST be
  set 0 by sender and ignored by receiver").
* The engine forwards and denies with these, and the bytes it sends are those of
  ``encode(message.forwarded())`` / ``encode(message.deny())``.
* The engine compares a Claim-Attempt with its claims by intervals it keeps per claim,
  and forgets them when the claim ends.
"""

from __future__ import annotations

import random

import pytest
from engine_wire import DOMAIN, attempt, run_timers, span, unique
from hypothesis import given, settings
from hypothesis import strategies as st
from test_codec import messages

from uuidkit.errors import DecodeError, InvalidField
from uuidkit.uiap import Engine, Message, MessageType, decode, encode
from uuidkit.uiap.codec import as_encoded, with_hop_limit
from uuidkit.uiap.constants import UIAP_HOP_LIMIT
from uuidkit.uiap.engine import EngineConfig

#: The draft's behaviour only: these tests pin the draft's mechanics (docs/uiap.md).
DRAFT = EngineConfig.draft_only()

#: (offset, mask) of every bit a receiver ignores in a unique or prefix message (UIAP §4.1):
#: octet 1 bits 12-13, octet 2, octet 32, BA2, UID Len 2. The reserved flag bits of the DID
#: are not among them: they are part of the DID (§2.2) and kept.
IGNORED_BITS = ((1, 0x0C), (2, 0xFF), (32, 0xFF), (33, 0x1C), (35, 0xFF))
#: In a range BA2 and UID Len 2 are fields, not ignored.
RANGE_IGNORED_BITS = IGNORED_BITS[:3]


def _noisy(message: Message, noise: list[int]) -> bytes:
    data = bytearray(encode(message))
    ignored = RANGE_IGNORED_BITS if message.space.second is not None else IGNORED_BITS
    for (offset, mask), value in zip(ignored, noise, strict=False):
        data[offset] |= value & mask
    return bytes(data)


@settings(max_examples=200, deadline=None)
@given(messages(), st.integers(0, 255), st.sampled_from([None, *MessageType]))
def test_patching_type_and_hop_limit_equals_re_encoding(
    message: Message, hop_limit: int, message_type: MessageType | None
) -> None:
    new_type = message.type if message_type is None else message_type
    changed = message.replace(hop_limit=hop_limit, type=new_type)
    assert with_hop_limit(encode(message), hop_limit, message_type) == encode(changed)


@settings(max_examples=200, deadline=None)
@given(messages())
def test_forwarded_and_deny_copies_are_byte_identical(message: Message) -> None:
    data = encode(message)
    received = as_encoded(decode(data), data)
    assert received is data  # nothing to clear: the octets are reused
    if message.can_forward:
        forwarded = with_hop_limit(received, message.hop_limit - 1)
        assert forwarded == encode(message.forwarded())
    if message.is_attempt:
        deny = with_hop_limit(received, UIAP_HOP_LIMIT, MessageType.CLAIM_DENY)
        assert deny == encode(message.deny())


@settings(max_examples=200, deadline=None)
@given(messages(), st.lists(st.integers(0, 255), min_size=5, max_size=5))
def test_ignored_bits_are_cleared_before_reuse(message: Message, noise: list[int]) -> None:
    noisy = _noisy(message, noise)
    decoded = decode(noisy)
    assert decoded == message
    assert as_encoded(decoded, noisy) == encode(message)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.binary(min_size=35, max_size=300).map(lambda tail: b"\x01" + tail),
        messages().map(encode),
    ),
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 255)), max_size=4),
)
def test_as_encoded_is_encode_for_anything_that_decodes(
    data: bytes, edits: list[tuple[int, int]]
) -> None:
    mutable = bytearray(data)
    for position, value in edits:
        if position < len(mutable):
            mutable[position] = value
    try:
        message = decode(bytes(mutable))
    except DecodeError:
        return
    assert as_encoded(message, bytes(mutable)) == encode(message)


@settings(max_examples=100, deadline=None)
@given(messages())
def test_decoded_message_equals_a_validated_one(message: Message) -> None:
    decoded = decode(encode(message))
    rebuilt = Message(
        decoded.type,
        decoded.device_id,
        decoded.sequence,
        decoded.domain,
        decoded.space,
        lifetime=decoded.lifetime,
        hop_limit=decoded.hop_limit,
        claim_reference=decoded.claim_reference,
        proxy=decoded.proxy,
        reclaim=decoded.reclaim,
        version=decoded.version,
    )
    assert decoded == rebuilt and hash(decoded) == hash(rebuilt)


def test_public_construction_still_validates() -> None:
    message = attempt(1, 100, unique(5))
    with pytest.raises(InvalidField):
        message.replace(hop_limit=256)
    with pytest.raises(InvalidField):
        message.replace(device_id=0)


def _engine() -> Engine:
    engine = Engine(9, random.Random(0), DRAFT)
    engine.add_interface("a")
    engine.add_interface("b")
    return engine


def test_engine_forwards_noisy_attempt_with_reserved_fields_cleared() -> None:
    message = attempt(1, 100, unique(5), hop_limit=7)
    noisy = _noisy(message, [0xFF] * 5)
    engine = _engine()
    engine.receive_datagram(noisy, "a", 1, 0.0)
    (forwarded,) = engine.datagrams_to_send()
    assert forwarded.interface == "b"
    assert forwarded.data == encode(message.forwarded())


def test_engine_denies_and_relays_denies_with_the_encoded_octets() -> None:
    engine = _engine()
    engine.claim(DOMAIN, unique(7), 60, 0.0)
    engine.handle_timer(5.0)
    engine.datagrams_to_send()
    conflicting = attempt(1, 100, unique(7), hop_limit=3)
    engine.receive_datagram(_noisy(conflicting, [0xFF] * 5), "a", 1, 5.0)
    (deny,) = engine.datagrams_to_send()
    assert (deny.interface, deny.destination) == ("a", 1)
    assert deny.data == encode(conflicting.deny())
    passing = attempt(2, 200, unique(9), hop_limit=5)
    engine.receive_datagram(encode(passing), "a", 2, 5.1)
    engine.datagrams_to_send()
    denied_further_out = passing.deny().replace(hop_limit=4)
    engine.receive_datagram(_noisy(denied_further_out, [0xFF] * 5), "b", 3, 5.2)
    (relayed,) = engine.datagrams_to_send()
    assert (relayed.interface, relayed.destination) == ("a", 2)
    assert relayed.data == encode(denied_further_out.forwarded())


def test_claims_compare_by_kept_intervals_until_they_end() -> None:
    # §4.2.2.1: a new Claim-Attempt is compared with every claim the device defends; the
    # engine keeps each claim's interval while the claim lasts, and forgets it after.
    engine = _engine()
    held = engine.claim(DOMAIN, unique(7), 60, 0.0)
    engine.claim(DOMAIN, span(20, 30), 60, 0.0)
    run_timers(engine, 5.0)
    engine.datagrams_to_send()
    for sequence, space in ((100, unique(7)), (101, unique(25)), (102, span(0, 9))):
        engine.receive_datagram(encode(attempt(1, sequence, space)), "a", 1, 5.0)
        (deny,) = engine.datagrams_to_send()
        assert decode(deny.data).is_deny
    engine.release(held, 6.0)
    engine.receive_datagram(encode(attempt(1, 103, unique(7))), "a", 1, 6.0)
    (forwarded,) = engine.datagrams_to_send()
    assert forwarded.interface == "b" and decode(forwarded.data).is_attempt
    assert held not in engine._own_intervals
