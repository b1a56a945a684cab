"""Text encodings: literal vectors from each specification, round trips, order, strictness.

References: RFC 4648 §5-§7 and §10 (test vectors); the ULID specification; the TypeID
specification v0.3.0 (spec/valid.yml, spec/invalid.yml); draft-davis-uuidrev-alt-uuid-
encoding-methods-01 Appendix "Test Vectors"; RFC 9562 §4, §6.11.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import uuidkit
from uuidkit.encodings import ORDER_PRESERVING, SCHEMES, decode, encode
from uuidkit.errors import InvalidField, InvalidUUID

VECTORS = Path(__file__).resolve().parent.parent / "vectors"
WIDTH = {
    "base32-crockford": 26,
    "base32hex": 26,
    "base32": 26,
    "base64url": 22,
    "base58btc": 22,
    "base62": 22,
    "typeid": 26,
}
#: The draft's column for each scheme whose packing and alphabet the draft states as ours.
DRAFT_COLUMN = {
    "base32": "base32",
    "base32hex": "base32hex",
    "base64url": "base64url",
    "base58btc": "base58btc",
    "base62": "base62-sort",
}
#: The zero digit each fixed-width radix scheme pads with on the left.
ZERO_DIGIT = {"base58btc": "1", "base62": "0"}
#: Rows where the draft's vector contradicts its own alphabet and packing (docs/encodings.md).
DRAFT_ERRATA = {
    ("RFC 9562 §4 example", "base58btc"),  # 23 characters: a 133-bit value, not this UUID
    ("A.3 UUIDv4", "base62-sort"),  # a copy of the A.2 row
}

uuids = st.integers(min_value=0, max_value=(1 << 128) - 1).map(lambda n: uuid.UUID(int=n))


def _load(name: str) -> Any:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def test_scheme_names_are_exactly_the_documented_ones() -> None:
    assert set(SCHEMES) == set(WIDTH)
    assert uuidkit.encode is encode and uuidkit.decode is decode


# --- literal vectors ----------------------------------------------------------------------------


def test_typeid_readme_example() -> None:
    # TypeID spec valid.yml "valid-uuidv7" with the prefix of the example.
    value = uuid.UUID("01890a5d-ac96-774b-bcce-b302099a8057")
    assert encode(value, "typeid", prefix="user") == "user_01h455vb4pex5vsknk084sn02q"
    assert decode("user_01h455vb4pex5vsknk084sn02q", "typeid") == value
    assert decode("user_01h455vb4pex5vsknk084sn02q", "typeid", prefix="user") == value


@pytest.mark.parametrize("case", _load("typeid_valid.json")["cases"], ids=lambda c: c["name"])
def test_typeid_valid_conformance_cases(case: dict[str, str]) -> None:
    value = uuid.UUID(case["uuid"])
    assert decode(case["typeid"], "typeid") == value
    assert decode(case["typeid"], "typeid", prefix=case["prefix"]) == value
    assert encode(value, "typeid", prefix=case["prefix"]) == case["typeid"]


@pytest.mark.parametrize("case", _load("typeid_invalid.json")["cases"], ids=lambda c: c["name"])
def test_typeid_invalid_conformance_cases(case: dict[str, str]) -> None:
    with pytest.raises(InvalidUUID):
        decode(case["typeid"], "typeid")


@pytest.mark.parametrize(
    ("text", "position", "reason"),
    [
        ("PREFIX_00000000000000000000000000", 0, "invalid character 'P'"),
        ("pre.fix_00000000000000000000000000", 3, "invalid character '.'"),
        ("prefix__00000000000000000000000000", 6, "start and end with a-z"),
        ("_00000000000000000000000000", 0, "empty prefix"),
        ("prefix_8zzzzzzzzzzzzzzzzzzzzzzzzz", 7, "exceeds 128 bits"),
        ("prefix_0123456789ABCDEFGHJKMNPQRS", 17, "invalid character 'A'"),
        ("prefix_1234567890123456789012345", 7, "25 characters"),
    ],
)
def test_typeid_errors_name_position_and_reason(text: str, position: int, reason: str) -> None:
    with pytest.raises(InvalidUUID, match=reason) as caught:
        decode(text, "typeid")
    assert caught.value.position == position


def test_typeid_prefix_mismatch_and_bad_prefix_argument() -> None:
    with pytest.raises(InvalidUUID, match="'user' where 'team'"):
        decode("user_01h455vb4pex5vsknk084sn02q", "typeid", prefix="team")
    with pytest.raises(InvalidUUID, match="'' where 'user'"):
        decode("01h455vb4pex5vsknk084sn02q", "typeid", prefix="user")
    for bad in ["User", "_user", "user_", "a" * 64, "us3r"]:
        with pytest.raises(InvalidField):
            encode(uuidkit.NIL, "typeid", prefix=bad)
    assert encode(uuidkit.NIL, "typeid", prefix="a" * 63).startswith("a" * 63 + "_")
    assert encode(uuidkit.NIL, "typeid") == "0" * 26


def test_ulid_specification_examples() -> None:
    # ULID spec "Overflow Errors": the largest valid ULID is 7ZZZZZZZZZZZZZZZZZZZZZZZZZ.
    assert decode("7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "base32-crockford") == uuidkit.MAX
    assert encode(uuidkit.MAX, "base32-crockford") == "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"
    with pytest.raises(InvalidUUID, match="exceeds 128 bits") as caught:
        decode("80000000000000000000000000", "base32-crockford")
    assert caught.value.position == 0
    # ULID spec "Monotonicity": 01BX5ZZKBKACTAV9WEVGEMMVRZ + 1 = 01BX5ZZKBKACTAV9WEVGEMMVS0.
    low = decode("01BX5ZZKBKACTAV9WEVGEMMVRZ", "base32-crockford")
    high = decode("01BX5ZZKBKACTAV9WEVGEMMVS0", "base32-crockford")
    assert high.int == low.int + 1


def test_crockford_reads_case_and_substitutions_but_writes_one_spelling() -> None:
    canonical = "01H455VB4PEX5VSKNK084SN02Q"
    value = decode(canonical, "base32-crockford")
    # Crockford's Base32: lower case accepted; i, l -> 1 and o -> 0 when decoding.
    assert decode(canonical.lower(), "base32-crockford") == value
    assert decode("OIH455VB4PEX5VSKNK084SNO2Q", "base32-crockford") == value
    assert decode("0lH455VB4PEX5VSKNK084SN02Q", "base32-crockford") == value
    assert encode(value, "base32-crockford") == canonical
    for bad, position in [("01H455VB4PEX5VSKNK084SN02U", 25), ("01H455VB-PEX5VSKNK084SN02Q", 8)]:
        with pytest.raises(InvalidUUID) as caught:
            decode(bad, "base32-crockford")
        assert caught.value.position == position


DRAFT_CASES = [
    pytest.param(vector, scheme, id=f"{vector['name']}-{scheme}")
    for vector in _load("uuidrev_alt_encodings.json")["vectors"]
    for scheme in sorted(DRAFT_COLUMN)
    if DRAFT_COLUMN[scheme] in vector["encodings"]
]


@pytest.mark.parametrize(("vector", "scheme"), DRAFT_CASES)
def test_uuidrev_draft_vectors(vector: dict[str, Any], scheme: str) -> None:
    published = vector["encodings"][DRAFT_COLUMN[scheme]]
    value = uuid.UUID(vector["uuid"])
    # The draft writes base58/base62 without leading zero digits and base64url padded; our
    # fixed width pads on the left with the zero digit and omits '='.
    expected = published.rstrip("=").rjust(WIDTH[scheme], ZERO_DIGIT.get(scheme, "0"))
    if (vector["name"], DRAFT_COLUMN[scheme]) in DRAFT_ERRATA:
        assert encode(value, scheme) != expected
        return
    assert encode(value, scheme) == expected
    assert decode(expected, scheme) == value


def test_uuidrev_draft_base32_for_humans_column_is_bit_string_packed() -> None:
    # The draft's "Base32 for Humans" column packs the 16 bytes like RFC 4648 (bits 0-127 then
    # two zero bits), not as ULID's right-aligned integer: same alphabet, different digits.
    table = str.maketrans("0123456789ABCDEFGHIJKLMNOPQRSTUV", "0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    for vector in _load("uuidrev_alt_encodings.json")["vectors"]:
        value = uuid.UUID(vector["uuid"])
        human = vector["encodings"]["base32-human"]
        assert encode(value, "base32hex").translate(table) == human
        assert encode(value, "base32-crockford") != human


def test_rfc4648_section_10_prefixes() -> None:
    # RFC 4648 §10: BASE32("foo") = "MZXW6===", BASE32-HEX("foo") = "CPNMU===",
    # BASE64("foo") = "Zm9v": a UUID starting with b"foo" starts with those digits.
    value = uuid.UUID(bytes=b"foo" + bytes(13))
    assert encode(value, "base32").startswith("MZXW6")
    assert encode(value, "base32hex").startswith("CPNMU")
    assert encode(value, "base64url").startswith("Zm9v")


# --- properties --------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", SCHEMES)
@given(value=uuids)
def test_round_trip_and_fixed_width(scheme: str, value: uuid.UUID) -> None:
    text = encode(value, scheme)
    assert len(text) == WIDTH[scheme]
    assert decode(text, scheme) == value


@pytest.mark.parametrize("scheme", sorted(ORDER_PRESERVING))
@given(a=uuids, b=uuids)
def test_order_preserving_schemes_sort_like_the_uuids(
    scheme: str, a: uuid.UUID, b: uuid.UUID
) -> None:
    assert (encode(a, scheme) < encode(b, scheme)) == (a < b)


@pytest.mark.parametrize(("scheme", "first_digit"), [("base32", 26), ("base64url", 62)])
def test_non_order_preserving_schemes_have_a_counterexample(scheme: str, first_digit: int) -> None:
    # RFC 4648 §6 puts '2'-'7' after 'Z' and §5 puts '-' and '_' after '9': a larger UUID can
    # spell a smaller string, which is why these two are left out of ORDER_PRESERVING.
    bits = 5 if scheme == "base32" else 6
    low, high = uuidkit.NIL, uuid.UUID(int=first_digit << (128 - bits))
    assert scheme not in ORDER_PRESERVING
    assert low < high and encode(low, scheme) > encode(high, scheme)


@pytest.mark.parametrize("scheme", ["base32", "base32hex", "base64url"])
@given(value=uuids, noise=st.integers(min_value=1, max_value=15))
def test_non_zero_pad_bits_are_a_second_spelling_and_rejected(
    scheme: str, value: uuid.UUID, noise: int
) -> None:
    text = encode(value, scheme)
    alphabet = {
        "base32": "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
        "base32hex": "0123456789ABCDEFGHIJKLMNOPQRSTUV",
        "base64url": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
    }[scheme]
    pad_mask = 3 if len(text) == 26 else 15
    last = alphabet.index(text[-1]) | (noise & pad_mask or 1)
    with pytest.raises(InvalidUUID, match="pad bits") as caught:
        decode(text[:-1] + alphabet[last], scheme)
    assert caught.value.position == len(text) - 1


@pytest.mark.parametrize("scheme", ["base32", "base32hex", "base64url", "base58btc", "base62"])
@given(value=uuids)
def test_strict_schemes_reject_lower_case_or_padding(scheme: str, value: uuid.UUID) -> None:
    text = encode(value, scheme)
    with pytest.raises(InvalidUUID, match="characters"):
        decode(text + "=", scheme)
    if scheme in ("base32", "base32hex") and text.lower() != text:
        with pytest.raises(InvalidUUID, match="invalid character"):
            decode(text.lower(), scheme)


@pytest.mark.parametrize("scheme", ["base58btc", "base62"])
def test_radix_overflow_is_rejected(scheme: str) -> None:
    largest = "z" * 22
    with pytest.raises(InvalidUUID, match="exceeds 128 bits"):
        decode(largest, scheme)


def test_argument_errors() -> None:
    with pytest.raises(InvalidField, match="unknown encoding 'base36'"):
        encode(uuidkit.NIL, "base36")
    with pytest.raises(InvalidField, match="only the typeid scheme"):
        encode(uuidkit.NIL, "base62", prefix="user")
    with pytest.raises(InvalidUUID, match="expected a str"):
        decode(b"0" * 22, "base62")  # type: ignore[arg-type]
    with pytest.raises(InvalidUUID, match=r"expected a uuid\.UUID"):
        encode("00000000-0000-0000-0000-000000000000", "base62")  # type: ignore[arg-type]
    with pytest.raises(InvalidUUID, match="expected exactly 22") as caught:
        decode("0" * 21, "base62")
    assert caught.value.position is None


@given(st.text(alphabet="abyz_AZ0é-", max_size=70))
def test_typeid_prefix_rule_is_the_spec_expression(prefix: str) -> None:
    """TypeID spec, "Type Prefix": at most 63 characters matching
    ``[a-z]([a-z_]{0,61}[a-z])?`` (or empty); the check runs without ``re``."""
    import re

    valid = len(prefix) <= 63 and re.fullmatch(r"([a-z]([a-z_]*[a-z])?)?", prefix) is not None
    value = uuid.UUID(int=0x0190B6A44A9E7C7A8E4E2F6D3B8D1C55)
    if valid:
        assert decode(encode(value, "typeid", prefix=prefix), "typeid", prefix=prefix) == value
    else:
        with pytest.raises(InvalidField, match="prefix"):
            encode(value, "typeid", prefix=prefix)
