"""The Message value, the derived messages (deny, forward, reclaim), Message IDs, constants."""

from __future__ import annotations

import dataclasses

import pytest

from uuidkit.errors import InvalidField, UIAPError
from uuidkit.uiap import (
    DEFAULT_MULTICAST,
    MAX_DATAGRAM_OCTETS,
    UIAP_CLAIM_PERIOD_S,
    UIAP_CLAIM_TIMEOUT_S,
    UIAP_HOP_LIMIT,
    UIAP_NEW_CLAIM_ATTEMPTS,
    UIAP_RECLAIM_ATTEMPTS,
    UIAP_VERSION,
    UID,
    DomainID,
    Fmt,
    Message,
    MessageID,
    MessageType,
    UIDSpace,
    decode,
    encode,
    next_sequence,
    sequence_distance,
)

DOMAIN = DomainID.parse("0fff:0:6:0")
RIGHT = DomainID.parse("0fff:0:1:80")


def attempt(**changes: object) -> Message:
    message = Message.claim_attempt(
        0x021122FFFE334455, 41, DOMAIN, UIDSpace.unique(b"\x00\x11\x22\x33\x44\x55"), 600
    )
    return dataclasses.replace(message, **changes)  # type: ignore[arg-type]


def test_claim_attempt_defaults() -> None:
    message = attempt()
    assert message.type is MessageType.CLAIM_ATTEMPT and message.is_attempt
    assert (message.version, message.hop_limit) == (UIAP_VERSION, 32)
    assert not (message.proxy or message.reclaim or message.is_reclaim or message.proxiable)
    assert message.message_id == MessageID(0x021122FFFE334455, 41)


def test_reclaim_is_an_attempt_with_r_set() -> None:
    # §4.4: "a Claim-Attempt message (message type 0x0) with the Reclaim flag set".
    reclaim = Message.claim_attempt(5, 1, DOMAIN, UIDSpace.unique(b"a"), 60, reclaim=True)
    assert reclaim.type is MessageType.CLAIM_ATTEMPT and reclaim.is_reclaim
    assert encode(reclaim)[1] == 0b0000_00_0_1  # Type 0 | 0 | X 0 | R 1
    # §5.1: only X and R together may be proxied.
    assert not dataclasses.replace(reclaim, reclaim=False, proxy=True).proxiable
    assert dataclasses.replace(reclaim, proxy=True).proxiable


def test_deny_is_a_copy_with_type_1_and_hop_limit_32() -> None:
    # §4.3.1: "a copy of the Claim-Attempt message being denied, except that the Type field
    # is set to 0x1 and the Hop Limit field is reset to 32."
    received = attempt(hop_limit=7, proxy=True, reclaim=True, claim_reference=99)
    deny = received.deny()
    assert deny.type is MessageType.CLAIM_DENY and deny.is_deny
    assert deny.hop_limit == UIAP_HOP_LIMIT
    assert dataclasses.replace(deny, type=received.type, hop_limit=7) == received
    assert not deny.is_reclaim  # "The X and R fields are ignored on Claim-Deny messages"
    assert encode(deny)[4:] == encode(received.replace(hop_limit=32))[4:]


def test_deny_may_zero_the_lifetime() -> None:
    # §4.5.2: deniers "MAY choose not to copy the lifetime ... and set it to 0 instead".
    assert attempt().deny(zero_lifetime=True).lifetime == 0
    assert attempt().deny().lifetime == 600


def test_only_an_attempt_is_denied() -> None:
    with pytest.raises(UIAPError, match="only a Claim-Attempt"):
        attempt().deny().deny()


def test_forwarded_copy_decrements_the_hop_limit() -> None:
    # §2.4.3 / §2.4.5: "Forwarding a Claim-Deny message is similar to sending one, except
    # that the hop limit is decremented rather than being reset."
    message = attempt()
    assert message.forwarded().hop_limit == 31
    assert message.deny().forwarded().hop_limit == 31
    assert message.forwarded().message_id == message.message_id


def test_hop_limit_0_is_never_forwarded() -> None:
    # §4.1: "Messages with a hop limit of 0 SHOULD be processed but MUST NOT be forwarded."
    last = attempt(hop_limit=0)
    assert not last.can_forward and attempt(hop_limit=1).can_forward
    with pytest.raises(UIAPError, match="hop limit 0"):
        last.forwarded()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"device_id": 0}, "Originating Device ID"),  # §4.1 MUST NOT appear
        ({"device_id": 1 << 64}, "Originating Device ID"),
        ({"device_id": -1}, "Originating Device ID"),
        ({"sequence": 1 << 32}, "Sequence Number"),
        ({"lifetime": 1 << 32}, "Lifetime"),
        ({"hop_limit": 256}, "Hop Limit"),
        ({"claim_reference": -1}, "Claim Reference Number"),
        ({"version": 256}, "Version"),
        ({"type": 1}, "Type"),
        ({"domain": "1:2:3:0"}, "Domain ID"),
        ({"space": b"abc"}, "UID"),
        ({"sequence": True}, "Sequence Number"),
    ],
)
def test_field_checks_name_the_field(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidField) as caught:
        attempt(**changes)
    assert caught.value.field == field
    assert field in str(caught.value)


def test_wire_rules_that_depend_on_j_are_checked_on_construction() -> None:
    # So encode() never produces what decode() rejects.
    with pytest.raises(InvalidField, match="left-justified") as caught:
        attempt(domain=RIGHT, space=UIDSpace.prefix(b"\x01"))
    assert caught.value.field == "Fmt"
    with pytest.raises(InvalidField, match="insignificant") as caught:
        attempt(space=UIDSpace.unique(UID(b"\x0a\x11", 4)))
    assert caught.value.field == "UID"
    with pytest.raises(InvalidField, match="insignificant") as caught:
        attempt(domain=RIGHT, space=UIDSpace.range(b"\x01", UID(b"\xff", 4)))
    assert caught.value.field == "UID 2"


def test_replace_validates() -> None:
    assert attempt().replace(hop_limit=3).hop_limit == 3
    with pytest.raises(InvalidField):
        attempt().replace(hop_limit=-1)


def test_derived_wire_fields() -> None:
    message = attempt(space=UIDSpace.range(UID(b"\x0a", 7), b"\x0b\x00"))
    assert (message.fmt, message.ba, message.ba2) == (Fmt.RANGE, 7, 0)
    assert (message.uid_len, message.uid_len2) == (1, 2)
    unique = attempt()
    assert (unique.ba2, unique.uid_len2) == (0, 0)  # "MUST be set 0" when not a range


def test_message_id_is_96_bits() -> None:
    # §1.1: "A 96 bit number, being a combination of the device ID of the originating
    # device and a sequence number".
    message_id = MessageID((1 << 64) - 1, (1 << 32) - 1)
    assert message_id.value == (1 << 96) - 1
    assert MessageID(1, 2).value == (1 << 32) | 2
    assert str(MessageID(0xAB, 7)) == "00000000000000ab/7"
    assert len({MessageID(1, 2), MessageID(1, 2), MessageID(2, 1)}) == 2


def test_sequence_numbers_wrap() -> None:
    # §4.5.1: "0 is the sequence number that follows 2^32-1."
    assert next_sequence((1 << 32) - 1) == 0
    assert next_sequence(41) == 42
    assert sequence_distance((1 << 32) - 2, 1) == 3
    assert sequence_distance(5, 5) == 0


def test_constants_and_defaults() -> None:
    # §10 suggested defaults, in seconds; §2.4.1 three attempts; §4.4 one for a reclaim.
    assert (UIAP_CLAIM_PERIOD_S, UIAP_CLAIM_TIMEOUT_S) == (0.5, 1.0)
    assert (UIAP_NEW_CLAIM_ATTEMPTS, UIAP_RECLAIM_ATTEMPTS, UIAP_HOP_LIMIT) == (3, 1, 32)
    assert MAX_DATAGRAM_OCTETS == 36 + 255 + 255
    # Multicast and ports: IANA experiment values (RFC 4727), since §8.1's were never assigned.
    assert DEFAULT_MULTICAST.ipv6_group == "ff02::114"
    assert DEFAULT_MULTICAST.ipv4_group == "224.0.0.254"
    assert (DEFAULT_MULTICAST.claim_port, DEFAULT_MULTICAST.reply_port) == (1021, 1022)


def test_largest_message_round_trips() -> None:
    space = UIDSpace.range(b"\x00" * 255, b"\xff" * 255)
    message = attempt(space=space)
    data = encode(message)
    assert len(data) == MAX_DATAGRAM_OCTETS
    assert decode(data) == message
