"""The UIAP wire format: hand-written vectors from the §4.1 figure, every rejection, round trips.

Each vector is written out row by row from the figure of UIAP §4.1 (32 bits per row,
big-endian, bit 0 = the most significant bit of octet 0); the comment on each row gives the
bit arithmetic. The header is nine rows (36 octets); the UID data follows.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import fuzz_decode
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uuidkit.errors import DecodeError, UnsupportedVersion
from uuidkit.uiap import (
    UID,
    DomainID,
    Message,
    MessageType,
    NumberSpace,
    UIDSpace,
    decode,
    encode,
)
from uuidkit.uiap.numberspaces import INTEGERS, IPV4_ADDRESSES, IPV4_SUBNETS, UUID_NODE_IDS

LEFT_DOMAIN = DomainID.parse("0fff:0000:0002:0000")  # J = 0
RIGHT_DOMAIN = DomainID.parse("0fff:0000:0001:0080")  # J = 1 (flags octet 0x80)


@dataclass(frozen=True)
class Vector:
    name: str
    hex_rows: tuple[str, ...]
    message: Message

    @property
    def octets(self) -> bytes:
        return bytes.fromhex("".join(self.hex_rows).replace(" ", ""))


VECTORS = [
    Vector(
        "claim-attempt, unique IPv4 address",
        (
            "01 00 00 20",  # Version 1 | Type 0 (0000), 0 (00), X 0, R 0 -> 0x00 | 0 | Hop Limit 32
            "00 00 0e 10",  # Lifetime 3600 s = 0x0E10
            "02 11 22 ff",  # Originating Device ID 0x021122FFFE334455 (EUI-64 style) ...
            "fe 33 44 55",  # ... its low 32 bits
            "00 00 00 01",  # Sequence Number 1
            "00 00 00 2a",  # Claim Reference Number 42
            "0f ff 00 00",  # Domain ID 0fff:0000:0002:0000, octets 0-3
            "00 02 00 00",  # ... octets 4-6, flags octet: J 0 | 0000000
            "00 00 04 00",  # 0 | BA 000, BA2 000, Fmt 00 (unique) -> 0x00 | UID Len 4 | Len 2 0
            "c0 a8 01 14",  # UID 192.168.1.20
        ),
        Message(
            MessageType.CLAIM_ATTEMPT,
            0x021122FFFE334455,
            1,
            LEFT_DOMAIN,
            UIDSpace.unique(bytes([192, 168, 1, 20])),
            lifetime=3600,
            claim_reference=42,
        ),
    ),
    Vector(
        "reclaim with proxy enabled, bit-aligned prefix 10.1.16.0/20",
        (
            "01 03 00 20",  # Version 1 | Type 0000, 00, X 1, R 1 -> 0b00000011 | 0 | Hop 32
            "00 00 00 00",  # Lifetime 0 ("A lifetime of 0 is valid", §4.5.2)
            "00 00 00 00",  # Originating Device ID 1, high 32 bits
            "00 00 00 01",  # ... low 32 bits
            "ff ff ff ff",  # Sequence Number 2^32-1 (the last before the wrap)
            "00 00 00 00",  # Claim Reference Number 0
            "0f ff 00 00",  # Domain ID 0fff:0000:0003:0000
            "00 03 00 00",  # ... flags J 0
            "00 81 03 00",  # 0 | BA 100 (4 bits), BA2 000, Fmt 01 -> 0b10000001 | Len 3 | 0
            "0a 01 10",  # UID 10.1.1/20: 0x10 = 0001|0000, the low 4 bits insignificant, 0
        ),
        Message(
            MessageType.CLAIM_ATTEMPT,
            1,
            0xFFFFFFFF,
            IPV4_SUBNETS.domain_id,
            UIDSpace.prefix(UID(bytes([10, 1, 0x10]), 4)),
            proxy=True,
            reclaim=True,
        ),
    ),
    Vector(
        "claim-deny of the range 13..42 in a right-justified integer domain",
        (
            "01 10 00 20",  # Version 1 | Type 0001, 00, X 0, R 0 -> 0b00010000 | 0 | Hop 32
            "00 00 00 00",  # Lifetime 0 (a deny MAY zero it, §4.5.2)
            "01 23 45 67",  # Originating Device ID 0x0123456789ABCDEF
            "89 ab cd ef",
            "00 01 00 00",  # Sequence Number 65536
            "01 02 03 04",  # Claim Reference Number 0x01020304, preserved intact
            "0f ff 00 00",  # Domain ID 0fff:0000:0001:0080
            "00 01 00 80",  # ... flags J 1 | 0000000 -> 0x80
            "00 02 01 01",  # 0 | BA 000, BA2 000, Fmt 10 (range) -> 0x02 | Len 1 | Len 2 1
            "0d 2a",  # UID 13, then UID 2 = 42 "beginning the octet after the first"
        ),
        Message(
            MessageType.CLAIM_DENY,
            0x0123456789ABCDEF,
            0x00010000,
            RIGHT_DOMAIN,
            UIDSpace.range(b"\x0d", b"\x2a"),
            claim_reference=0x01020304,
        ),
    ),
    Vector(
        "forwarded claim-attempt, bit-aligned range of right-justified integers",
        (
            "01 00 00 1f",  # Version 1 | Type 0 | 0 | Hop Limit 31 (forwarded once)
            "00 01 51 80",  # Lifetime 86400 s = 0x00015180
            "ff ff ff ff",  # Originating Device ID 2^64-1
            "ff ff ff ff",
            "00 00 00 00",  # Sequence Number 0 (follows 2^32-1, §4.5.1)
            "00 00 00 07",  # Claim Reference Number 7
            "0f ff 00 00",  # Domain ID 0fff:0000:0001:0080
            "00 01 00 80",
            "00 96 02 02",  # 0 | BA 100 (4), BA2 101 (5), Fmt 10 -> 0b10010110 | 2 | 2
            "0a bc 1f ff",  # 0x0ABC in 12 bits (first octet's high 4 bits 0), 0x1FFF in 13 bits
        ),
        Message(
            MessageType.CLAIM_ATTEMPT,
            (1 << 64) - 1,
            0,
            RIGHT_DOMAIN,
            UIDSpace.range(UID(b"\x0a\xbc", 4), UID(b"\x1f\xff", 5)),
            lifetime=86400,
            hop_limit=31,
            claim_reference=7,
        ),
    ),
    Vector(
        "claim-attempt for the empty UID, hop limit 0",
        (
            "01 00 00 00",  # Version 1 | Type 0 | 0 | Hop Limit 0 (process, never forward)
            "ff ff ff ff",  # Lifetime 2^32-1 s
            "00 00 00 00",  # Originating Device ID 2
            "00 00 00 02",
            "12 34 56 78",  # Sequence Number
            "ff ff ff ff",  # Claim Reference Number 2^32-1
            "0f ff 00 00",  # Domain ID 0fff:0000:0002:0000
            "00 02 00 00",
            "00 00 00 00",  # 0 | BA 0, BA2 0, Fmt 00 | UID Len 0 | UID Len 2 0
        ),
        Message(
            MessageType.CLAIM_ATTEMPT,
            2,
            0x12345678,
            LEFT_DOMAIN,
            UIDSpace.unique(b""),
            lifetime=0xFFFFFFFF,
            hop_limit=0,
            claim_reference=0xFFFFFFFF,
        ),
    ),
]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_vector_decodes_and_reencodes(vector: Vector) -> None:
    assert decode(vector.octets) == vector.message
    assert encode(vector.message) == vector.octets


def test_vectors_cover_the_derived_fields() -> None:
    deny = VECTORS[2].message
    assert (deny.fmt, deny.ba, deny.ba2, deny.uid_len, deny.uid_len2) == (2, 0, 0, 1, 1)
    bit_range = VECTORS[3].message
    assert (bit_range.ba, bit_range.ba2) == (4, 5)


def _header(**octets: int) -> bytearray:
    """The first vector's octets with some octets replaced: ``_header(o1=0x10)``."""
    data = bytearray(VECTORS[0].octets)
    for key, value in octets.items():
        data[int(key[1:])] = value
    return data


def _range_vector() -> bytearray:
    return bytearray(VECTORS[2].octets)


REJECTIONS = [
    # (id, datagram, error class, field, offset)
    ("empty", b"", DecodeError, "Version", 0),
    ("version 2, 1 octet", b"\x02", UnsupportedVersion, "Version", 0),
    ("version 0, full length", bytes(_header(o0=0)), UnsupportedVersion, "Version", 0),
    ("truncated in device ID", VECTORS[0].octets[:10], DecodeError, "Originating Device ID", 8),
    ("truncated in Claim Ref", VECTORS[0].octets[:20], DecodeError, "Claim Reference Number", 20),
    ("35-octet header", VECTORS[0].octets[:35], DecodeError, "UID Len 2", 35),
    ("type 2", bytes(_header(o1=0x20)), DecodeError, "Type", 1),
    ("type 15", bytes(_header(o1=0xF0)), DecodeError, "Type", 1),
    ("device ID 0", bytes(_header(o8=0, o9=0, o10=0, o11=0, o12=0, o13=0, o14=0, o15=0)),
     DecodeError, "Originating Device ID", 8),
    ("Fmt 3", bytes(_header(o33=0x03)), DecodeError, "Fmt", 33),
    ("UID Len beyond the datagram", bytes(_header(o34=5)), DecodeError, "UID", 36),
    ("a second UID when Fmt is unique", VECTORS[0].octets + b"\x01", DecodeError, "UID 2", 40),
    ("UID Len 2 beyond the datagram", bytes(_range_vector()[:-1]), DecodeError, "UID 2", 37),
    ("trailing octet after a range", bytes(_range_vector() + b"\x00"), DecodeError,
     "UID Len 2", 38),
    ("BA on an empty UID", VECTORS[4].octets[:33] + b"\x20\x00\x00", DecodeError, "BA", 33),
    ("left-justified: low bit of last octet set", bytes(_header(o33=0xE0, o39=0x15)),
     DecodeError, "UID", 39),
    ("right-justified: high bit of first octet set",
     bytes(bytearray(VECTORS[3].octets[:36]) + b"\x8a\xbc\x1f\xff"), DecodeError, "UID", 36),
    ("right-justified: UID 2 high bits set",
     bytes(bytearray(VECTORS[3].octets[:36]) + b"\x0a\xbc\x3f\xff"), DecodeError, "UID 2", 38),
    ("prefix in a right-justified domain", bytes(_range_vector()[:33]) + b"\x01\x01\x00\x0d",
     DecodeError, "Fmt", 33),
]  # fmt: skip


@pytest.mark.parametrize(
    ("data", "error", "field", "offset"),
    [row[1:] for row in REJECTIONS],
    ids=[row[0] for row in REJECTIONS],
)
def test_rejections_name_field_and_offset(
    data: bytes, error: type[DecodeError], field: str, offset: int
) -> None:
    with pytest.raises(error) as caught:
        decode(data)
    assert type(caught.value) is error
    assert (caught.value.field, caught.value.offset) == (field, offset)
    assert str(offset) in str(caught.value)


def test_unsupported_version_is_a_countable_decode_error() -> None:
    # §4.1: "MAY silently discard": an engine catches DecodeError and can count this apart.
    with pytest.raises(DecodeError) as caught:
        decode(bytes(_header(o0=2)))
    assert isinstance(caught.value, UnsupportedVersion)


def test_non_bytes_input_is_a_decode_error() -> None:
    with pytest.raises(DecodeError):
        decode("not bytes")  # type: ignore[arg-type]


def test_bytearray_and_memoryview_are_accepted() -> None:
    vector = VECTORS[0]
    assert decode(bytearray(vector.octets)) == vector.message
    assert decode(memoryview(vector.octets)) == vector.message


def test_reserved_fields_are_ignored_on_receipt_and_zero_on_send() -> None:
    # §4.1: every reserved field "MUST be set 0 by sender and ignored by receiver": octet 1
    # bits 12-13, octet 2, octet 32; and for a non-range, BA2 and UID Len 2 (ignored "if
    # the UID space is not a range"). The DID's reserved flag bits are part of the DID.
    noisy = _header(o1=0x0C, o2=0xFF, o32=0xFF, o33=0b000_111_00, o35=0)
    assert decode(bytes(noisy)) == VECTORS[0].message
    assert encode(decode(bytes(noisy))) == VECTORS[0].octets
    stated_len2 = _header(o35=9)  # UID Len 2 names 9 octets that are not there: ignored
    assert decode(bytes(stated_len2)) == VECTORS[0].message


def test_reserved_did_flag_bits_survive_decode_and_encode() -> None:
    # §2.2: the flags octet is "always treated as part of the DID": a DID with reserved
    # bits set is another domain, and goes out exactly as it came in.
    noisy = _range_vector()
    noisy[31] |= 0x7F  # reserved flag bits beside J = 1
    message = decode(bytes(noisy))
    assert message.domain != RIGHT_DOMAIN and message.domain.right_justified
    assert message.domain.value == RIGHT_DOMAIN.value | 0x7F
    assert encode(message) == bytes(noisy)


class TestDomainRules:
    """Rules a domain's specification adds, applied when ``domains`` names the DID."""

    def test_octet_aligned_domain_rejects_ba(self) -> None:
        message = Message.claim_attempt(
            1, 1, UUID_NODE_IDS.domain_id, UIDSpace.unique(UID(b"\x00" * 5 + b"\x80", 1)), 0
        )
        with pytest.raises(DecodeError) as caught:
            decode(encode(message), domains={UUID_NODE_IDS.domain_id: UUID_NODE_IDS})
        assert (caught.value.field, caught.value.offset) == ("BA", 33)
        assert decode(encode(message)) == message  # without the domain's rules: legal

    def test_fixed_length_domain_rejects_other_lengths(self) -> None:
        message = Message.claim_attempt(1, 1, LEFT_DOMAIN, UIDSpace.unique(b"\x0a\x00\x00"), 0)
        with pytest.raises(DecodeError) as caught:
            decode(encode(message), domains={LEFT_DOMAIN: IPV4_ADDRESSES})
        assert (caught.value.field, caught.value.offset) == ("UID Len", 34)

    def test_inverted_range_rejected(self) -> None:
        message = Message.claim_attempt(1, 1, RIGHT_DOMAIN, UIDSpace.range(b"\x2a", b"\x0d"), 0)
        with pytest.raises(DecodeError) as caught:
            decode(encode(message), domains={RIGHT_DOMAIN: INTEGERS})
        assert (caught.value.field, caught.value.offset) == ("UID 2", 37)

    def test_prefix_needs_a_hierarchical_domain(self) -> None:
        flat = NumberSpace(LEFT_DOMAIN, hierarchical=False)
        message = Message.claim_attempt(1, 1, LEFT_DOMAIN, UIDSpace.prefix(b"\x0a"), 0)
        with pytest.raises(DecodeError) as caught:
            decode(encode(message), domains={LEFT_DOMAIN: flat})
        assert caught.value.field == "Fmt"

    def test_ba2_checked_for_octet_aligned_ranges(self) -> None:
        ipv4 = IPV4_ADDRESSES
        space = UIDSpace.range(b"\x0a\x00\x00\x00", UID(b"\x0a\x00\x00\x80", 1))
        message = Message.claim_attempt(1, 1, ipv4.domain_id, space, 0)
        with pytest.raises(DecodeError) as caught:
            decode(encode(message), domains={ipv4.domain_id: ipv4})
        assert (caught.value.field, caught.value.offset) == ("BA2", 33)


# --- hypothesis ------------------------------------------------------------------------


@st.composite
def uids(draw: st.DrawFn, right_justified: bool, max_size: int = 255) -> UID:
    data = bytearray(draw(st.binary(max_size=max_size)))
    if not data:
        return UID(b"")
    bits = draw(st.integers(1, 8))
    if right_justified:
        data[0] &= (1 << bits) - 1
    else:
        data[-1] &= 0xFF << (8 - bits) & 0xFF
    return UID(bytes(data), bits)


@st.composite
def messages(draw: st.DrawFn) -> Message:
    domain = DomainID(draw(st.integers(0, (1 << 64) - 1)) & ~0x7F)
    right = domain.right_justified
    kind = draw(
        st.sampled_from(["unique", "prefix", "range"] if not right else ["unique", "range"])
    )
    if kind == "range":
        space = UIDSpace.range(draw(uids(right)), draw(uids(right)))
    elif kind == "prefix":
        space = UIDSpace.prefix(draw(uids(right)))
    else:
        space = UIDSpace.unique(draw(uids(right)))
    return Message(
        draw(st.sampled_from(MessageType)),
        draw(st.integers(1, (1 << 64) - 1)),
        draw(st.integers(0, (1 << 32) - 1)),
        domain,
        space,
        lifetime=draw(st.integers(0, (1 << 32) - 1)),
        hop_limit=draw(st.integers(0, 255)),
        claim_reference=draw(st.integers(0, (1 << 32) - 1)),
        proxy=draw(st.booleans()),
        reclaim=draw(st.booleans()),
    )


@settings(max_examples=300, deadline=None)
@given(messages())
def test_every_valid_message_round_trips(message: Message) -> None:
    data = encode(message)
    assert decode(data) == message
    assert encode(decode(data)) == data


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=600),
        # Version 1 and a full header, so decoding gets past the first checks.
        st.binary(min_size=35, max_size=600).map(lambda tail: b"\x01" + tail),
    )
)
def test_arbitrary_bytes_raise_only_decode_error(data: bytes) -> None:
    try:
        message = decode(data)
    except DecodeError:
        return
    # Decoded: re-encoding differs at most in reserved fields, never in length.
    assert len(encode(message)) == len(data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages(), st.lists(st.tuples(st.integers(0, 600), st.integers(0, 255)), max_size=4))
def test_mutated_datagrams_raise_only_decode_error(
    message: Message, edits: list[tuple[int, int]]
) -> None:
    data = bytearray(encode(message))
    for position, value in edits:
        if position < len(data):
            data[position] = value
        else:
            data.append(value)
    with contextlib.suppress(DecodeError):
        decode(bytes(data))


def test_short_fuzz_pass() -> None:
    # The by-hand fuzz runner (tests/uiap/fuzz_decode.py), briefly, with a fixed seed.
    fuzz_decode.run_hypothesis(examples=300, seed=20020221)
