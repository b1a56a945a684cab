"""Domain IDs: the 7 + 1 octet layout, the authority prefixes of §6, the text form of §6.1."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit.errors import DomainIDError
from uuidkit.uiap import AllocatingAuthority, DomainID, DomainIDPattern
from uuidkit.uiap.domain import authority_of

#: (text, canonical, abbreviated) — §6.1: "'0001:0002:0003:0000', or abbreviated to '1:2:3:0'".
TEXT_FORMS = [
    ("0001:0002:0003:0000", "0001:0002:0003:0000", "1:2:3:0"),
    ("1:2:3:0", "0001:0002:0003:0000", "1:2:3:0"),
    ("0FFF:ABcd:0:80", "0fff:abcd:0000:0080", "fff:abcd:0:80"),
    ("ffff:ffff:ffff:ff80", "ffff:ffff:ffff:ff80", "ffff:ffff:ffff:ff80"),
    ("0:0:0:0", "0000:0000:0000:0000", "0:0:0:0"),
]


@pytest.mark.parametrize(("text", "canonical", "abbreviated"), TEXT_FORMS)
def test_text_forms(text: str, canonical: str, abbreviated: str) -> None:
    did = DomainID.parse(text)
    assert str(did) == canonical
    assert did.abbreviated() == abbreviated
    assert DomainID.parse(abbreviated) == did


def test_layout_seven_octets_and_flags() -> None:
    # §2.2: "7 octets of arbitrary identifier and 1 octet of flags"; the last quad of the
    # text form is octet 6 followed by the flags octet.
    did = DomainID.parse("0fff:0000:0001:0080")
    assert did.to_bytes() == bytes.fromhex("0fff000000010080")
    assert did.identifier == bytes.fromhex("0fff0000000100")
    assert did.flags == 0x80 and did.right_justified
    assert DomainID.from_parts(did.identifier, right_justified=True) == did
    assert not DomainID.parse("1:2:3:0").right_justified


def test_reserved_flag_bits_are_part_of_the_did() -> None:
    # §2.2: the flags "are always treated as part of the DID"; §4.1: "UIAP devices treat
    # the Domain ID as an unformatted identifier". Only J changes how UIDs compare.
    noisy = DomainID.from_wire(bytes.fromhex("00010002000300ff"))
    assert noisy.to_bytes() == bytes.fromhex("00010002000300ff")
    assert noisy != DomainID.parse("1:2:3:80") and noisy.right_justified
    assert noisy.reserved_flags == 0x7F and DomainID.parse("1:2:3:80").reserved_flags == 0
    assert DomainID.parse("1:2:3:1") == DomainID(0x0001_0002_0003_0001)


@pytest.mark.parametrize(
    ("prefix", "authority"),
    [
        (0x0000, AllocatingAuthority.RESERVED),
        (0x0001, AllocatingAuthority.IANA),
        (0x0002, AllocatingAuthority.RESERVED),
        (0x0FFD, AllocatingAuthority.RESERVED),
        (0x0FFE, AllocatingAuthority.PRIVATE),
        (0x0FFF, AllocatingAuthority.EXPERIMENTAL),
        (0x1000, AllocatingAuthority.RESERVED),
        (0x1001, AllocatingAuthority.OTHER_AUTHORITY),
        (0xFFFF, AllocatingAuthority.OTHER_AUTHORITY),
    ],
)
def test_authority_table_of_section_6(prefix: int, authority: AllocatingAuthority) -> None:
    assert authority_of(prefix) is authority
    assert DomainID(prefix << 48).authority is authority
    assert DomainID(prefix << 48).authority_prefix == prefix


#: (text, error position, message fragment)
MALFORMED = [
    ("1:2:3", 5, "4 colon-separated quads"),
    ("1:2:3:0:5", 7, "4 colon-separated quads"),
    ("1:2::0", 4, "1 to 4 hex digits"),
    ("00001:2:3:0", 0, "1 to 4 hex digits"),
    ("1:2:3:g", 6, "invalid character 'g'"),
    ("1:+2:3:0", 2, "invalid character '+'"),
    ("1:2_0:3:0", 3, "invalid character '_'"),
    ("1: 2:3:0", 2, "invalid character ' '"),
    ("1:٢:3:0", 2, "invalid character"),  # ARABIC-INDIC DIGIT TWO, which int() accepts
    ("1:2:3:*", 6, "invalid character '*'"),
]


@pytest.mark.parametrize(("text", "position", "fragment"), MALFORMED)
def test_malformed_text_names_the_position(text: str, position: int, fragment: str) -> None:
    with pytest.raises(DomainIDError, match=fragment.replace("+", r"\+").replace("*", r"\*")) as e:
        DomainID.parse(text)
    assert e.value.position == position


def test_constructor_checks_range() -> None:
    with pytest.raises(DomainIDError, match="64-bit"):
        DomainID(1 << 64)
    with pytest.raises(DomainIDError, match="7 octets"):
        DomainID.from_parts(b"\0" * 8)
    with pytest.raises(DomainIDError, match="8 octets"):
        DomainID.from_wire(b"\0" * 7)
    with pytest.raises(DomainIDError, match="expected str"):
        DomainID.parse(b"1:2:3:0")  # type: ignore[arg-type]


#: (pattern, DID text, matches?) — §6.1 examples and their edges.
PATTERNS = [
    ("1:2:3:*", "1:2:3:0", True),
    ("1:2:3:*", "1:2:3:ff80", True),
    ("1:2:3:*", "1:2:4:0", False),
    ("1:*:*:*", "1:ffff:0:80", True),
    ("*:*:*:*", "ffff:ffff:ffff:ff80", True),
    ("1:2:3:0???", "1:2:3:0f80", True),
    ("1:2:3:0???", "1:2:3:1000", False),
    ("0001:0002:0003:??80", "1:2:3:ab80", True),
    ("0001:0002:0003:??80", "1:2:3:ab00", False),
    ("1:2:3:0", "1:2:3:0", True),
]


@pytest.mark.parametrize(("pattern", "did", "expected"), PATTERNS)
def test_patterns(pattern: str, did: str, expected: bool) -> None:
    parsed = DomainIDPattern.parse(pattern)
    assert parsed.matches(DomainID.parse(did)) is expected
    assert str(parsed) == pattern


@pytest.mark.parametrize(
    ("pattern", "position", "fragment"),
    [
        ("1:2:3:0??", 6, "must have 4 characters"),  # §6.1: "the quad must be fully expanded"
        ("1:2:3:?*??", 7, "must stand alone"),
        ("1:2:*", 5, "4 colon-separated quads"),
        ("1:2:3:**", 6, "must stand alone"),
        ("1:2:3:", 6, "'\\*' or 1 to 4 hex digits"),
    ],
)
def test_malformed_patterns(pattern: str, position: int, fragment: str) -> None:
    with pytest.raises(DomainIDError, match=fragment) as caught:
        DomainIDPattern.parse(pattern)
    assert caught.value.position == position


@settings(max_examples=200, deadline=None)
@given(st.integers(0, (1 << 64) - 1).map(lambda v: v & ~0x7F))
def test_text_round_trip(value: int) -> None:
    did = DomainID(value)
    assert DomainID.parse(str(did)) == did
    assert DomainID.parse(did.abbreviated()) == did
    assert DomainID.from_wire(did.to_bytes()) == did
    assert DomainIDPattern.parse(str(did)).matches(did)
    assert DomainIDPattern.parse("*:*:*:*").matches(did)
