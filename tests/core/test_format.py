"""uuidkit.format: every text, integer and byte form, read back by uuidkit.parse.

References: RFC 9562 §4 (Figures 1-4).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit.encodings import SCHEMES, decode
from uuidkit.errors import InvalidField, InvalidUUID
from uuidkit.format import (
    FORMAT_STYLES,
    format_uuid,
    to_braced,
    to_bytes,
    to_bytes_le,
    to_hex,
    to_hyphenated,
    to_int,
    to_upper,
    to_urn,
)
from uuidkit.parse import from_bytes, from_bytes_le, from_int, parse

#: RFC 9562 §4 Figure 1; its integer is Figure 3 and its URN Figure 4.
FIGURE_1 = uuid.UUID("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")


def test_figure_1_in_every_form() -> None:
    assert to_hyphenated(FIGURE_1) == "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
    assert to_upper(FIGURE_1) == "F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6"
    assert to_urn(FIGURE_1) == "urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6"  # Figure 4
    assert to_braced(FIGURE_1) == "{f81d4fae-7dec-11d0-a765-00a0c91e6bf6}"
    assert to_hex(FIGURE_1) == "f81d4fae7dec11d0a76500a0c91e6bf6"
    assert to_int(FIGURE_1) == 329800735698586629295641978511506172918  # Figure 3
    assert to_bytes(FIGURE_1) == bytes.fromhex("f81d4fae7dec11d0a76500a0c91e6bf6")
    assert to_bytes_le(FIGURE_1) == bytes.fromhex("ae4f1df8ec7dd011a76500a0c91e6bf6")


def test_figure_2_binary_form() -> None:
    figure_2 = (
        "111110000001110101001111101011100111110111101100000100011101000"
        "01010011101100101000000001010000011001001000111100110101111110110"
    )
    assert format(to_int(FIGURE_1), "0128b") == figure_2


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("hyphenated", "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"),
        ("upper", "F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6"),
        ("urn", "urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6"),
        ("braced", "{f81d4fae-7dec-11d0-a765-00a0c91e6bf6}"),
        ("hex", "f81d4fae7dec11d0a76500a0c91e6bf6"),
        ("int", "329800735698586629295641978511506172918"),
        ("bytes_le", "ae4f1df8ec7dd011a76500a0c91e6bf6"),
    ],
)
def test_format_styles(style: str, expected: str) -> None:
    assert format_uuid(FIGURE_1, style) == expected


def test_default_style_is_hyphenated() -> None:
    assert format_uuid(FIGURE_1) == str(FIGURE_1)


def test_unknown_style_lists_the_styles() -> None:
    with pytest.raises(InvalidField) as caught:
        format_uuid(FIGURE_1, "no-such-style")
    styles = ", ".join(FORMAT_STYLES)
    assert str(caught.value) == f"style: expected one of {styles}, found 'no-such-style'"
    assert caught.value.field == "style" and styles.startswith("hyphenated, upper, urn")


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("base58btc", "Xe22UfxT3rxcKJEAfL5373"),  # Bitcoin's Base58 of the integer
        ("base32hex", "V0EKVBJTTG8T19R502GCI7JBUO"),  # the uuidrev draft's §3 example
        ("base64url", "-B1Prn3sEdCnZQCgyR5r9g"),  # the same, without its '=='
    ],
)
def test_short_encodings_are_styles(style: str, expected: str) -> None:
    assert format_uuid(FIGURE_1, style) == expected


@pytest.mark.parametrize("style", [["hex"], None, b"hex"])
def test_non_string_style_is_uuidkit_error_not_type_error(style: object) -> None:
    with pytest.raises(InvalidField, match=r"^style: expected one of"):
        format_uuid(FIGURE_1, style)  # type: ignore[arg-type]


FORMATTERS = [
    to_hyphenated,
    to_upper,
    to_urn,
    to_braced,
    to_hex,
    to_int,
    to_bytes,
    to_bytes_le,
    format_uuid,
]


@pytest.mark.parametrize("formatter", FORMATTERS)
@pytest.mark.parametrize("value", [5, str(FIGURE_1), FIGURE_1.bytes, None, FIGURE_1.int, 1.5])
def test_a_value_that_is_not_a_uuid_is_rejected(formatter: Any, value: object) -> None:
    # to_urn(5) once returned 'urn:uuid:5'.
    with pytest.raises(InvalidUUID, match=r"^expected a uuid\.UUID, found "):
        formatter(value)


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=(1 << 128) - 1))
def test_every_form_reads_back(value: int) -> None:
    u = uuid.UUID(int=value)
    assert parse(to_hyphenated(u), strict=True) == u
    assert parse(to_upper(u), strict=True) == u
    for text in (to_urn(u), to_braced(u), to_hex(u)):
        assert parse(text) == u
    assert from_int(to_int(u)) == u
    assert from_bytes(to_bytes(u)) == u
    assert from_bytes_le(to_bytes_le(u)) == u
    assert from_int(int(format_uuid(u, "int"))) == u
    assert from_bytes_le(bytes.fromhex(format_uuid(u, "bytes_le"))) == u
    text_styles = {"hyphenated", "upper", "urn", "braced", "hex", "int", "bytes_le"}
    assert set(FORMAT_STYLES) == text_styles | set(SCHEMES)
    for scheme in SCHEMES:
        assert decode(format_uuid(u, scheme), scheme) == u


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=(1 << 128) - 1))
def test_the_fast_canonical_form_is_the_standard_librarys(value: int) -> None:
    # format_uuid and to_hyphenated write the common case themselves (RFC 9562 §4 Figure 1),
    # to_bytes computes the octets itself: each must equal what uuid.UUID returns.
    u = uuid.UUID(int=value)
    spelled = "".join(["hyphen", "ated"])  # equal to the default, but not the same object
    assert format_uuid(u) == format_uuid(u, spelled) == to_hyphenated(u) == str(u)
    assert to_bytes(u) == u.bytes


class _OwnStr(uuid.UUID):
    """A subclass that writes its text its own way (without the base class's __str__, whose
    route differs by version: CPython 3.14 builds it from ``hex``, which it builds from
    ``bytes``; 3.11-3.13 from ``int``)."""

    def __str__(self) -> str:
        digits = f"{self.int:032x}"
        return f"odd:{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


class _OwnBytes(uuid.UUID):
    """A subclass that gives its own octets, and inherits every text form."""

    @property
    def bytes(self) -> bytes:
        return b"odd" + self.int.to_bytes(16, "big")


class _OwnBoth(_OwnStr, _OwnBytes):
    """Both: its own text and its own octets."""


def test_a_subclass_keeps_its_own_str_and_bytes() -> None:
    odd = _OwnBoth(int=FIGURE_1.int)
    assert to_hyphenated(odd) == format_uuid(odd) == "odd:" + str(FIGURE_1)
    assert to_urn(odd) == "urn:uuid:odd:" + str(FIGURE_1)
    assert to_bytes(odd) == b"odd" + FIGURE_1.bytes


#: What each style is for any uuid.UUID, written from the instance's own methods as this
#: interpreter's uuid module defines them (so a subclass's __str__ and bytes count, on every
#: version, however that version derives hex, urn and bytes_le from them).
_STYLE_FROM_ITS_OWN_METHODS: dict[str, Any] = {
    "hyphenated": str,
    "upper": lambda u: str(u).upper(),
    "urn": lambda u: "urn:uuid:" + str(u),
    "braced": lambda u: "{" + str(u) + "}",
    "hex": lambda u: u.hex,
    "int": lambda u: str(u.int),
    "bytes_le": lambda u: u.bytes_le.hex(),
}


@settings(max_examples=200)
@given(
    value=st.integers(min_value=0, max_value=2**128 - 1),
    cls=st.sampled_from([uuid.UUID, _OwnStr, _OwnBytes, _OwnBoth]),
    style=st.sampled_from(sorted(_STYLE_FROM_ITS_OWN_METHODS)),
)
def test_every_style_respects_a_subclass(value: int, cls: type[uuid.UUID], style: str) -> None:
    u = cls(int=value)
    expected = _STYLE_FROM_ITS_OWN_METHODS[style](u)
    assert format_uuid(u, style) == FORMAT_STYLES[style](u) == expected
    assert to_bytes(u) == u.bytes
    assert to_bytes_le(u) == u.bytes_le
    assert to_int(u) == value


def test_a_style_that_only_equals_hyphenated_is_hyphenated() -> None:
    class Style(str):
        pass

    assert format_uuid(FIGURE_1, Style("hyphenated")) == str(FIGURE_1)
