"""uuidkit.parse: the strict/lenient accept/reject table, constructors, and properties.

References: RFC 9562 §4 (ABNF, Figures 1-4), RFC 5234 §2.3.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit.errors import InvalidField, InvalidUUID
from uuidkit.parse import from_bytes, from_bytes_le, from_fields, from_int, parse

#: RFC 9562 §4 Figure 1 (and Figures 3 and 4 for its integer and URN forms).
FIGURE_1 = "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
FIGURE_1_INT = 329800735698586629295641978511506172918
HEX = FIGURE_1.replace("-", "")

# (text, accepted when strict, accepted when lenient)
ACCEPTED = [
    pytest.param(FIGURE_1, True, True, id="canonical-lower"),
    pytest.param(FIGURE_1.upper(), True, True, id="canonical-upper"),
    pytest.param("F81d4FAE-7dec-11D0-a765-00A0c91e6bf6", True, True, id="canonical-mixed"),
    pytest.param("{" + FIGURE_1 + "}", False, True, id="braced"),
    pytest.param("{" + FIGURE_1.upper() + "}", False, True, id="braced-upper"),
    pytest.param("urn:uuid:" + FIGURE_1, False, True, id="urn"),
    pytest.param("URN:UUID:" + FIGURE_1, False, True, id="urn-upper-prefix"),
    pytest.param("Urn:Uuid:" + FIGURE_1.upper(), False, True, id="urn-mixed"),
    pytest.param(HEX, False, True, id="hex32"),
    pytest.param(HEX.upper(), False, True, id="hex32-upper"),
]


@pytest.mark.parametrize(("text", "strict_ok", "lenient_ok"), ACCEPTED)
def test_accepted_forms(text: str, strict_ok: bool, lenient_ok: bool) -> None:
    assert parse(text) == uuid.UUID(FIGURE_1)
    assert parse(text).int == FIGURE_1_INT
    if strict_ok:
        assert parse(text, strict=True) == uuid.UUID(FIGURE_1)
    else:
        with pytest.raises(InvalidUUID):
            parse(text, strict=True)
    assert lenient_ok


def test_result_is_a_plain_standard_library_uuid() -> None:
    value = parse(FIGURE_1)
    assert type(value) is uuid.UUID
    assert value.is_safe is uuid.SafeUUID.unknown
    assert str(value) == FIGURE_1
    assert hash(value) == hash(uuid.UUID(FIGURE_1))


# (text, strict, message, position): rejected in the given mode with exactly this error.
REJECTED = [
    # characters int(s, 16) lets through (signs, underscores, whitespace, non-ASCII digits)
    ("+81d4fae-7dec-11d0-a765-00a0c91e6bf6", False, "invalid character '+' at 0", 0),
    ("f81d4fae-7dec-11d0-a765-00a0c91e6bf_", False, "invalid character '_' at 35", 35),
    ("f81d_fae-7dec-11d0-a765-00a0c91e6bf6", True, "invalid character '_' at 4", 4),
    ("0x1d4fae-7dec-11d0-a765-00a0c91e6bf6", False, "invalid character 'x' at 1", 1),
    ("0x" + HEX[2:], False, "invalid character 'x' at 1", 1),
    (" " + FIGURE_1[1:], False, "invalid character ' ' at 0", 0),
    (FIGURE_1[:35] + "\n", False, "invalid character '\\n' at 35", 35),
    (FIGURE_1 + "\n", False, "invalid character '\\n' at 36", 36),
    (FIGURE_1[:14] + "g" + FIGURE_1[15:], False, "invalid character 'g' at 14", 14),
    (FIGURE_1[:34] + "\u0966\u0966", False, "invalid character '\u0966' at 34", 34),
    (FIGURE_1[:34] + "\uff16\uff16", True, "invalid character '\uff16' at 34", 34),
    (HEX[:31] + "\u0663", False, "invalid character '\u0663' at 31", 31),
    (FIGURE_1[:28] + "\u3000" + FIGURE_1[29:], False, "invalid character '\\u3000' at 28", 28),
    # lengths and groups (groups numbered from 0, as Rust's uuid crate does)
    (FIGURE_1 + "a", False, "group 4: expected 12 hex digits, found 13", 36),
    (FIGURE_1[:-1], True, "group 4: expected 12 hex digits, found 11", 35),
    ("f81d4fa-7dec-11d0-a765-00a0c91e6bf6", False, "group 0: expected 8 hex digits, found 7", 7),
    (
        "f81d4fae-7dec-11d0-a765",
        False,
        "expected 5 hyphen-separated groups (8-4-4-4-12), found 4 ending at 23",
        23,
    ),
    ("", False, "empty string: expected a UUID such as 8-4-4-4-12 hex digits", None),
    ("", True, "empty string: expected a UUID such as 8-4-4-4-12 hex digits", None),
    ("abc", True, "expected 36 characters (8-4-4-4-12 hex digits and hyphens), found 3", None),
    (HEX[:31], False, "expected 32 hex digits, found 31", 31),
    (HEX + "0", False, "expected 32 hex digits, found 33", 32),
    # hyphens
    (
        "f81d4fae7-dec-11d0-a765-00a0c91e6bf6",
        False,
        "misplaced hyphen at 9: expected hyphens at 8, 13, 18, 23",
        9,
    ),
    (
        "f81d4fa-e7dec-11d0-a765-00a0c91e6bf6",
        True,
        "misplaced hyphen at 7: expected hyphens at 8, 13, 18, 23",
        7,
    ),
    (FIGURE_1 + "-", False, "unexpected hyphen at 36: a UUID has 5 groups", 36),
    ("f81d4fae--7dec-11d0-a765-00a0c91e6bf6", False, "group 1: expected 4 hex digits, found 0", 9),
    ("-" + FIGURE_1, False, "group 0: expected 8 hex digits, found 0", 0),
    (HEX, True, "missing hyphens: strict mode accepts only RFC 9562 §4's 8-4-4-4-12 form", 8),
    # braces
    ("{" + FIGURE_1, False, "missing closing brace '}' at 37", 37),
    (FIGURE_1 + "}", False, "invalid character '}' at 36", 36),
    ("{{" + FIGURE_1 + "}}", False, "invalid character '{' at 1", 1),
    (
        "{" + HEX + "}",
        False,
        "expected a hyphen at 9: braces and urn:uuid: wrap only the 8-4-4-4-12 form",
        9,
    ),
    (
        "{" + FIGURE_1 + "}",
        True,
        "braces are not accepted in strict mode: expected only RFC 9562 §4's 8-4-4-4-12 form",
        0,
    ),
    ("{", False, "missing closing brace '}' at 1", 1),
    # the URN prefix
    (
        "urn:uuid:" + FIGURE_1,
        True,
        "the urn:uuid: prefix is not accepted in strict mode: "
        "expected only RFC 9562 §4's 8-4-4-4-12 form",
        0,
    ),
    ("urn:uuid:urn:uuid:" + FIGURE_1, False, "invalid character 'u' at 9", 9),
    ("uuid:" + FIGURE_1, False, "invalid character 'u' at 0", 0),
    ("urn:uuid:{" + FIGURE_1 + "}", False, "invalid character '{' at 9", 9),
    (
        "urn:uuid:" + HEX,
        False,
        "expected a hyphen at 17: braces and urn:uuid: wrap only the 8-4-4-4-12 form",
        17,
    ),
    ("urn:uuid: " + FIGURE_1, False, "invalid character ' ' at 9", 9),
    ("URN:UUID:", False, "group 0: expected 8 hex digits, found 0", 9),
    (
        "urn:uuid:f81d4fae",
        False,
        "expected 5 hyphen-separated groups (8-4-4-4-12), found 1 ending at 17",
        17,
    ),
    ("{}", False, "group 0: expected 8 hex digits, found 0", 1),
    ("{abc}", False, "group 0: expected 8 hex digits, found 3", 4),
]


@pytest.mark.parametrize(("text", "strict", "message", "position"), REJECTED)
def test_rejected_forms(text: str, strict: bool, message: str, position: int | None) -> None:
    with pytest.raises(InvalidUUID) as caught:
        parse(text, strict=strict)
    assert str(caught.value) == message
    assert caught.value.position == position
    if not strict:
        # Whatever lenient mode rejects, strict mode rejects as well.
        with pytest.raises(InvalidUUID):
            parse(text, strict=True)


@pytest.mark.parametrize(
    ("value", "name"),
    [(None, "NoneType"), (FIGURE_1.encode(), "bytes"), (FIGURE_1_INT, "int"), ([], "list")],
)
def test_non_str_input_raises_invalid_uuid(value: Any, name: str) -> None:
    with pytest.raises(InvalidUUID, match=f"^expected a str, found {name}$") as caught:
        parse(value)
    assert caught.value.position is None


def test_str_subclass_is_read_as_its_characters() -> None:
    class Text(str):
        pass

    assert parse(Text(FIGURE_1), strict=True) == uuid.UUID(FIGURE_1)
    with pytest.raises(InvalidUUID, match="at 35"):
        parse(Text(FIGURE_1[:35] + "z"))


def test_errors_are_value_errors() -> None:
    with pytest.raises(ValueError):
        parse("nope")


# --- constructors -----------------------------------------------------------------------------


def test_constructors_agree_with_the_standard_library() -> None:
    expected = uuid.UUID(FIGURE_1)
    assert from_bytes(expected.bytes) == expected
    assert from_bytes(bytearray(expected.bytes)) == expected
    assert from_bytes(memoryview(expected.bytes)) == expected
    assert from_bytes_le(expected.bytes_le) == expected
    assert from_int(FIGURE_1_INT) == expected
    assert from_fields(expected.fields) == expected
    assert from_fields(list(expected.fields)) == expected


#: The constructors without their static types, to call them with wrong types on purpose.
loose: Any = {"from_bytes": from_bytes, "from_int": from_int, "from_fields": from_fields}


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: from_bytes(b"\x00" * 15), InvalidUUID, "bytes: expected 16 bytes, found 15"),
        (lambda: loose["from_bytes"](FIGURE_1), InvalidUUID, "bytes: expected 16 bytes, found str"),
        (lambda: loose["from_bytes"](16), InvalidUUID, "bytes: expected 16 bytes, found int"),
        (lambda: from_bytes_le(b"\x00" * 17), InvalidUUID, "bytes_le: expected 16 bytes, found 17"),
        (lambda: from_int(-1), InvalidUUID, "int: expected 0 <= int < 2**128, found -1"),
        (
            lambda: from_int(1 << 128),
            InvalidUUID,
            f"int: expected 0 <= int < 2**128, found {1 << 128}",
        ),
        (lambda: from_int(True), InvalidUUID, "int: expected an int, found bool"),
        (lambda: loose["from_int"]("1"), InvalidUUID, "int: expected an int, found str"),
        (lambda: from_fields((1, 2, 3)), InvalidField, "fields: expected 6 integers, found 3"),
        (
            lambda: loose["from_fields"]("abcdef"),
            InvalidField,
            "fields: expected 6 integers, found str",
        ),
        (
            lambda: from_fields((0, 0, 0, 0, 256, 0)),
            InvalidField,
            "clock_seq_low: expected 0 <= clock_seq_low < 2**8, found 256",
        ),
        (
            lambda: from_fields((1 << 32, 0, 0, 0, 0, 0)),
            InvalidField,
            "time_low: expected 0 <= time_low < 2**32, found 4294967296",
        ),
        (
            lambda: from_fields((0, 0, 0, 0, 0, -1)),
            InvalidField,
            "node: expected 0 <= node < 2**48, found -1",
        ),
    ],
)
def test_constructor_errors(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value) == message


def test_field_error_names_the_field() -> None:
    with pytest.raises(InvalidField) as caught:
        from_fields((0, 1 << 16, 0, 0, 0, 0))
    assert caught.value.field == "time_mid"


# --- properties -------------------------------------------------------------------------------

uuids = st.integers(min_value=0, max_value=(1 << 128) - 1).map(lambda i: uuid.UUID(int=i))


def _mixed_case(text: str, flips: list[bool]) -> str:
    return "".join(c.upper() if flip else c for c, flip in zip(text, flips, strict=False))


@settings(max_examples=200, deadline=None)
@given(uuids, st.lists(st.booleans(), min_size=45, max_size=45))
def test_every_accepted_form_round_trips(value: uuid.UUID, flips: list[bool]) -> None:
    canonical = str(value)
    for text in (canonical, _mixed_case(canonical, flips)):
        assert parse(text, strict=True) == value
    for text in ("{" + canonical + "}", _mixed_case("urn:uuid:" + canonical, flips), value.hex):
        assert parse(text) == value
    assert from_bytes(value.bytes) == value
    assert from_bytes_le(value.bytes_le) == value
    assert from_int(value.int) == value
    assert from_fields(value.fields) == value


#: Every code point, lone surrogates included (not valid UTF-8, but valid in a str).
_any_char = st.characters(exclude_categories=())

_near_uuid_text = st.builds(
    lambda value, index, char: (lambda s: s[:index] + char + s[index + 1 :])(str(value)),
    uuids,
    st.integers(min_value=0, max_value=37),
    _any_char,
)


#: Short strings over the characters the forms are made of, with and without a wrapper.
_form_char = st.sampled_from(list("0123456789abcdefABCDEF-{}:urnidURNID x+_"))
_wrapped_text = st.builds(
    lambda prefix, body, suffix: prefix + body + suffix,
    st.sampled_from(["", "{", "urn:uuid:", "URN:UUID:"]),
    st.text(_form_char, max_size=40),
    st.sampled_from(["", "}"]),
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(_any_char), _near_uuid_text, _wrapped_text), st.booleans())
def test_parse_raises_only_invalid_uuid_for_any_str(text: str, strict: bool) -> None:
    try:
        result = parse(text, strict=strict)
    except InvalidUUID as error:
        assert error.position is None or 0 <= error.position <= len(text)
    else:
        # Whatever parse accepts spells out the UUID's 32 hex digits.
        assert result.hex in text.lower().replace("-", "")


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.none(), st.integers(), st.binary(), st.floats(), st.lists(st.integers())))
def test_parse_raises_only_invalid_uuid_for_any_object(value: object) -> None:
    with pytest.raises(InvalidUUID):
        parse(value)  # type: ignore[arg-type]
