"""UIDs, UID spaces, the ordering rules of §3.2.4 and the overlap question the engine asks.

The comparison table has one row per rule of UIAP §3.2.4, each citing it. The overlap
properties are checked against a brute-force model: a small universe of UIDs, membership
taken straight from the definitions of §3.2.2 (a unique value, an inclusive range, "all
UIDs sharing a common prefix"), and two spaces overlapping when some UID of the universe
lies in both. The universe contains every UID the spaces are built from; when two spaces
overlap, the larger of their lower bounds is such a UID and lies in both, so the model is
exact for these spaces.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit.errors import SpaceError
from uuidkit.uiap import (
    UID,
    Alignment,
    DataType,
    DomainID,
    Fmt,
    Justification,
    NumberSpace,
    UIDSpace,
    spaces_overlap,
)
from uuidkit.uiap.space import insignificant_bits_clear

LEFT_DID = DomainID.parse("0fff:0:10:0")
RIGHT_DID = DomainID.parse("0fff:0:11:80")

#: Left-justified, zeros significant / not significant; right-justified, the same.
L_SIG = NumberSpace(LEFT_DID, alignment=Alignment.BIT, hierarchical=True)
L_PAD = NumberSpace(LEFT_DID, alignment=Alignment.BIT, hierarchical=True, significant_zeros=False)
R_SIG = NumberSpace(RIGHT_DID, alignment=Alignment.BIT)
R_PAD = NumberSpace(RIGHT_DID, alignment=Alignment.BIT, significant_zeros=False)

U = UID

#: (rule, number space, a, b, sign of compare(a, b))
COMPARISONS = [
    ("§3.2.4 left: a simple string comparison, octet by octet", L_SIG, U(b"abc"), U(b"abd"), -1),
    ("§3.2.4 left: string comparison, not length first", L_SIG, U(b"b"), U(b"abc"), 1),
    ("§3.2.4 left: zeros significant, longer UIDs larger", L_SIG, U(b"ab"), U(b"ab\0"), -1),
    ("§3.2.4 left: identical UIDs are equal", L_SIG, U(b"ab"), U(b"ab"), 0),
    ("§3.2.4 left: 255 octets vs 254", L_SIG, U(b"\xff" * 255), U(b"\xff" * 254), 1),
    ("§3.2.4 left: the empty UID is the smallest", L_SIG, U(b""), U(b"\0"), -1),
    ("§3.2.4 left: zeros not significant, shorter zero-padded", L_PAD, U(b"ab"), U(b"ab\0\0"), 0),
    ("§3.2.4 left: zero-padded, then octet by octet", L_PAD, U(b"ab"), U(b"ab\x01"), -1),
    ("§3.2.4 left: zero-padded, string order kept", L_PAD, U(b"b"), U(b"abc"), 1),
    ("§3.2.4 left: empty equals zeros when padded", L_PAD, U(b""), U(b"\0"), 0),
    ("§3.2.4 right: zeros significant, longer is larger", R_SIG, U(b"\x01\0"), U(b"\xff"), 1),
    ("§3.2.4 right: a leading zero octet is significant", R_SIG, U(b"\0\x05"), U(b"\x05"), 1),
    ("§3.2.4 right: same length, from the left end", R_SIG, U(b"\x02\x01"), U(b"\x01\xff"), 1),
    ("§3.2.4 right: zeros not significant, shorter padded", R_PAD, U(b"\0\x05"), U(b"\x05"), 0),
    ("§3.2.4 right: padded, then from the left end", R_PAD, U(b"\x01\0"), U(b"\xff"), 1),
    ("§3.2.4 right: padded, numeric order", R_PAD, U(b"\0\0\xff"), U(b"\x01\0"), -1),
    ("§3.2.4 right: empty equals zero when padded", R_PAD, U(b""), U(b"\0"), 0),
    ("§3.2.4 bits: octets equal, longer bit length larger", L_SIG, U(b"\x0a", 7), U(b"\x0a"), -1),
    ("§3.2.4 bits: 1 bit vs 2 bits of 0x80", L_SIG, U(b"\x80", 1), U(b"\x80", 2), -1),
    ("§3.2.4 bits: octets decide first", L_SIG, U(b"\x0a", 7), U(b"\x0b"), -1),
    ("§3.2.4 bits: right-justified 12 vs 13 bits", R_SIG, U(b"\x0a\xbc", 4), U(b"\x0a\xbc", 5), -1),
    ("§3.2.4 bits + padding (choice): equal", L_PAD, U(b"\x0a", 7), U(b"\x0a"), 0),
]


@pytest.mark.parametrize(
    ("space", "a", "b", "expected"),
    [row[1:] for row in COMPARISONS],
    ids=[r[0] for r in COMPARISONS],
)
def test_comparison_rules(space: NumberSpace, a: UID, b: UID, expected: int) -> None:
    assert space.compare(a, b) == expected
    assert space.compare(b, a) == -expected
    assert (space.key(a) < space.key(b)) == (expected < 0)
    assert (space.key(a) == space.key(b)) == (expected == 0)


def test_uids_of_different_domains_are_never_compared() -> None:
    # §3.2.4: "UIAP devices MUST NOT perform such a comparison."
    a, b = L_SIG.key(U(b"\x01")), R_SIG.key(U(b"\x01"))
    for compare in (a.__lt__, a.__le__, a.__gt__, a.__ge__):
        with pytest.raises(SpaceError, match="cannot be compared"):
            compare(b)
    assert a != b


class TestUID:
    def test_limits(self) -> None:
        assert U(b"\xff" * 255).bit_length == 2040
        with pytest.raises(SpaceError, match="at most 255 octets"):
            U(b"\0" * 256)
        with pytest.raises(SpaceError, match="1 to 8"):
            U(b"\0", 0)
        with pytest.raises(SpaceError, match="empty UID"):
            U(b"", 4)
        with pytest.raises(SpaceError, match="bytes"):
            U(bytearray(b"a"))  # type: ignore[arg-type]

    def test_ba_is_bits_mod_8(self) -> None:
        assert (U(b"\x10", 4).ba, U(b"\x10").ba, U(b"").ba) == (4, 0, 0)
        assert U.from_ba(b"\x10", 0) == U(b"\x10", 8)
        assert U(b"\x0a\xbc", 4).bit_length == 12

    def test_insignificant_bits_on_the_unjustified_side(self) -> None:
        # §3.2.1.1: the partial octet is "on the unjustified side"; §3.2.3: its
        # insignificant bits MUST be 0.
        assert insignificant_bits_clear(U(b"\x0a\x10", 4), Justification.LEFT)
        assert not insignificant_bits_clear(U(b"\x0a\x11", 4), Justification.LEFT)
        assert insignificant_bits_clear(U(b"\x0a\xbc", 4), Justification.RIGHT)
        assert not insignificant_bits_clear(U(b"\x1a\xbc", 4), Justification.RIGHT)

    def test_space_constructors(self) -> None:
        assert UIDSpace.range(b"\x01", b"\x02").uids == (U(b"\x01"), U(b"\x02"))
        assert UIDSpace.prefix(b"\x0a").fmt is Fmt.PREFIX
        with pytest.raises(SpaceError, match="two UIDs"):
            UIDSpace(Fmt.RANGE, U(b"\x01"))
        with pytest.raises(SpaceError, match="two UIDs"):
            UIDSpace(Fmt.UNIQUE, U(b"\x01"), U(b"\x02"))


class TestNumberSpaceChecks:
    def test_character_data_is_octet_aligned(self) -> None:
        with pytest.raises(SpaceError, match="octet aligned"):
            NumberSpace(LEFT_DID, data_type=DataType.CHARACTER, alignment=Alignment.BIT)

    def test_check_space(self) -> None:
        octets = NumberSpace(LEFT_DID, hierarchical=True, min_octets=4, max_octets=4)
        octets.check_space(UIDSpace.prefix(b"\x0a\0\0\0"))
        with pytest.raises(SpaceError, match="4 to 4 octets"):
            octets.check_space(UIDSpace.unique(b"\x0a"))
        with pytest.raises(SpaceError, match="octet aligned"):
            octets.check_space(UIDSpace.unique(U(b"\x0a\0\0\x80", 1)))
        with pytest.raises(SpaceError, match="not 0"):
            L_SIG.check_space(UIDSpace.unique(U(b"\x0a\x11", 4)))
        with pytest.raises(SpaceError, match="above upper"):
            R_PAD.check_space(UIDSpace.range(b"\x2a", b"\x0d"))
        with pytest.raises(SpaceError, match="left-justified and hierarchical"):
            R_SIG.check_space(UIDSpace.prefix(b"\x01"))


def _ipv4(*octets: int, bits: int = 8) -> UID:
    return U(bytes(octets), bits)


#: (what, number space, a, b, overlap?) — the edges named in the issue.
OVERLAPS = [
    ("touching ranges share their bound", R_PAD, UIDSpace.range(b"\x01", b"\x05"),
     UIDSpace.range(b"\x05", b"\x09"), True),
    ("adjacent ranges do not touch", R_PAD, UIDSpace.range(b"\x01", b"\x05"),
     UIDSpace.range(b"\x06", b"\x09"), False),
    ("a range's upper bound is inside it", R_PAD, UIDSpace.unique(b"\0\x05"),
     UIDSpace.range(b"\x01", b"\x05"), True),
    ("below a range", R_PAD, UIDSpace.unique(b""), UIDSpace.range(b"\x01", b"\x05"), False),
    ("the empty UID as a unique value", L_SIG, UIDSpace.unique(b""),
     UIDSpace.range(b"", b"\x01"), True),
    ("zero-length prefix: the whole space", L_SIG, UIDSpace.prefix(b""),
     UIDSpace.unique(b"\xff" * 255), True),
    ("zero-length prefix holds the empty UID", L_SIG, UIDSpace.prefix(b""),
     UIDSpace.unique(b""), True),
    ("255-octet UIDs at the top of a range", L_SIG, UIDSpace.unique(b"\xff" * 255),
     UIDSpace.range(b"\xff" * 254, b"\xff" * 255), True),
    ("a prefix holds itself", L_SIG, UIDSpace.prefix(b"\x0a"), UIDSpace.unique(b"\x0a"), True),
    ("a prefix does not hold a shorter bit string", L_SIG, UIDSpace.prefix(b"\x0a"),
     UIDSpace.unique(U(b"\x0a", 7)), False),
    ("10/8 vs a range ending at 10.0.0.0", L_SIG, UIDSpace.prefix(b"\x0a"),
     UIDSpace.range(_ipv4(9, 0, 0, 0), _ipv4(10, 0, 0, 0)), True),
    ("10/8 vs all of 9/8 as a range", L_SIG, UIDSpace.prefix(b"\x0a"),
     UIDSpace.range(_ipv4(9, 0, 0, 0), _ipv4(9, 255, 255, 255)), False),
    ("10/8 vs a range from 11.0.0.0", L_SIG, UIDSpace.prefix(b"\x0a"),
     UIDSpace.range(_ipv4(11, 0, 0, 0), _ipv4(12, 0, 0, 0)), False),
    ("10.1.16/20 holds 10.1.31/24", L_SIG, UIDSpace.prefix(_ipv4(10, 1, 0x10, bits=4)),
     UIDSpace.prefix(_ipv4(10, 1, 31)), True),
    ("10.1.16/20 vs 10.1.32/24", L_SIG, UIDSpace.prefix(_ipv4(10, 1, 0x10, bits=4)),
     UIDSpace.prefix(_ipv4(10, 1, 32)), False),
    ("IPv6 /56 inside its /48", L_SIG, UIDSpace.prefix(bytes.fromhex("20010db80001")),
     UIDSpace.prefix(bytes.fromhex("20010db8000101")), True),
    ("IPv6 /56 outside a sibling /48", L_SIG, UIDSpace.prefix(bytes.fromhex("20010db80002")),
     UIDSpace.prefix(bytes.fromhex("20010db8000101")), False),
    ("an inverted range is empty", L_SIG, UIDSpace.range(b"\x05", b"\x01"),
     UIDSpace.range(b"\0", b"\xff"), False),
    ("padded zeros: 0x0a00 is in prefix 0x0a", L_PAD, UIDSpace.prefix(b"\x0a\0"),
     UIDSpace.unique(b"\x0a"), True),
    ("right-justified, padded: 0x0005 is 5", R_PAD, UIDSpace.unique(b"\0\x05"),
     UIDSpace.unique(b"\x05"), True),
    ("right-justified, significant: 0x0005 is not 5", R_SIG, UIDSpace.unique(b"\0\x05"),
     UIDSpace.unique(b"\x05"), False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("space", "a", "b", "expected"), [row[1:] for row in OVERLAPS], ids=[r[0] for r in OVERLAPS]
)
def test_overlap_edges(space: NumberSpace, a: UIDSpace, b: UIDSpace, expected: bool) -> None:
    assert space.overlaps(a, b) is expected
    assert space.overlaps(b, a) is expected


def test_prefix_in_right_justified_space_is_refused() -> None:
    with pytest.raises(SpaceError, match="prefix"):
        R_SIG.overlaps(UIDSpace.prefix(b"\x01"), UIDSpace.unique(b"\x01"))


def test_spaces_overlap_with_only_a_domain_id_uses_the_generic_rules() -> None:
    # Generic rules: justification from J, "UIAP treats all data in a UID as significant".
    generic = NumberSpace.generic(RIGHT_DID)
    assert generic.justification is Justification.RIGHT and generic.significant_zeros
    assert not generic.allows_prefix and NumberSpace.generic(LEFT_DID).allows_prefix
    a, b = UIDSpace.unique(b"\0\x05"), UIDSpace.range(b"\x05", b"\xff")
    assert spaces_overlap(a, b, RIGHT_DID) is False  # 0x0005 is longer, so larger than 0xff
    assert spaces_overlap(a, b, R_PAD) is True  # zero-padded, 5 is in 5..255


# --- the brute-force model --------------------------------------------------------------

ALPHABET = (0x00, 0x01, 0x80, 0xFF)
BIT_COUNTS = (1, 7, 8)


def _universe(justification: Justification) -> list[UID]:
    found: set[UID] = {U(b"")}
    for length in (1, 2):
        for octets in itertools.product(ALPHABET, repeat=length):
            for bits in BIT_COUNTS:
                data = bytearray(octets)
                if justification is Justification.LEFT:
                    data[-1] &= 0xFF << (8 - bits) & 0xFF
                else:
                    data[0] &= (1 << bits) - 1
                found.add(U(bytes(data), bits))
    return sorted(found, key=lambda uid: (uid.data, uid.bits))


UNIVERSES = {j: _universe(j) for j in Justification}


def _bit_string(uid: UID) -> str:
    return "".join(f"{octet:08b}" for octet in uid.data)[: uid.bit_length]


def _starts_with(space: NumberSpace, uid: UID, prefix: UID) -> bool:
    """§3.2.2 "All UIDs sharing a common prefix", bit by bit (left-justified only)."""
    bits, wanted = _bit_string(uid), _bit_string(prefix)
    if not space.significant_zeros:
        bits = bits.ljust(len(wanted), "0")  # padded with insignificant zeros
    return bits[: len(wanted)] == wanted and len(bits) >= len(wanted)


def _member(space: NumberSpace, claim: UIDSpace, uid: UID) -> bool:
    if claim.fmt is Fmt.UNIQUE:
        return space.compare(uid, claim.first) == 0
    if claim.fmt is Fmt.RANGE:
        assert claim.second is not None
        return space.compare(claim.first, uid) <= 0 <= space.compare(claim.second, uid)
    return _starts_with(space, uid, claim.first)


def _brute_overlap(space: NumberSpace, a: UIDSpace, b: UIDSpace) -> bool:
    universe = UNIVERSES[space.justification]
    return any(_member(space, a, x) and _member(space, b, x) for x in universe)


SPACES = [L_SIG, L_PAD, R_SIG, R_PAD]


@st.composite
def number_space_and_claims(draw: st.DrawFn, count: int = 2) -> tuple[NumberSpace, list[UIDSpace]]:
    space = draw(st.sampled_from(SPACES))
    universe = UNIVERSES[space.justification]
    formats = [Fmt.UNIQUE, Fmt.RANGE] + ([Fmt.PREFIX] if space.allows_prefix else [])
    claims = []
    for _ in range(count):
        fmt = draw(st.sampled_from(formats))
        first = draw(st.sampled_from(universe))
        second = draw(st.sampled_from(universe)) if fmt is Fmt.RANGE else None
        claims.append(UIDSpace(fmt, first, second))
    return space, claims


@settings(max_examples=400, deadline=None)
@given(number_space_and_claims())
def test_overlap_matches_the_brute_force_model(case: tuple[NumberSpace, list[UIDSpace]]) -> None:
    space, (a, b) = case
    assert space.overlaps(a, b) == _brute_overlap(space, a, b)


@settings(max_examples=200, deadline=None)
@given(number_space_and_claims())
def test_overlap_is_symmetric(case: tuple[NumberSpace, list[UIDSpace]]) -> None:
    space, (a, b) = case
    assert space.overlaps(a, b) == space.overlaps(b, a)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SPACES), st.data())
def test_a_value_overlaps_every_range_containing_it(
    space: NumberSpace, data: st.DataObject
) -> None:
    universe = UNIVERSES[space.justification]
    low, value, high = sorted(
        (data.draw(st.sampled_from(universe)) for _ in range(3)), key=space.key
    )
    assert space.overlaps(UIDSpace.unique(value), UIDSpace.range(low, high))
    assert space.contains(UIDSpace.range(low, high), value)


@pytest.mark.parametrize("space", [L_SIG, L_PAD], ids=["zeros significant", "zeros padded"])
def test_a_prefix_overlaps_exactly_the_values_starting_with_it(space: NumberSpace) -> None:
    universe = UNIVERSES[Justification.LEFT]
    for prefix in universe:
        claim = UIDSpace.prefix(prefix)
        for uid in universe:
            expected = _starts_with(space, uid, prefix)
            assert space.overlaps(claim, UIDSpace.unique(uid)) == expected, (prefix, uid)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SPACES), st.data())
def test_the_order_is_a_total_preorder(space: NumberSpace, data: st.DataObject) -> None:
    universe = UNIVERSES[space.justification]
    a, b, c = (data.draw(st.sampled_from(universe)) for _ in range(3))
    assert space.compare(a, b) == -space.compare(b, a)
    if space.compare(a, b) <= 0 and space.compare(b, c) <= 0:
        assert space.compare(a, c) <= 0
