"""base32-crockford against the python-ulid package (a ULID implementation listed by the ULID
specification), on random and edge values.

References: the ULID specification ("Canonical String Representation", "Encoding").
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uuidkit.encodings import decode, encode
from uuidkit.errors import InvalidUUID

ulid = pytest.importorskip("ulid", reason="python-ulid (the test extra) is not installed")

uuids = st.integers(min_value=0, max_value=(1 << 128) - 1).map(lambda n: uuid.UUID(int=n))
edges = st.sampled_from([0, 1, 31, 32, (1 << 80) - 1, 1 << 80, (1 << 128) - 1]).map(
    lambda n: uuid.UUID(int=n)
)


@given(value=uuids | edges)
def test_encoding_equals_python_ulid(value: uuid.UUID) -> None:
    assert encode(value, "base32-crockford") == str(ulid.ULID.from_uuid(value))


@given(value=uuids | edges, lower=st.booleans())
def test_decoding_equals_python_ulid(value: uuid.UUID, lower: bool) -> None:
    text = str(ulid.ULID.from_uuid(value))
    text = text.lower() if lower else text
    assert decode(text, "base32-crockford") == ulid.ULID.from_str(text).to_uuid()


@given(value=uuids, first=st.sampled_from("89ABCDEFGHJKMNPQRSTVWXYZ"))
def test_both_reject_values_over_128_bits(value: uuid.UUID, first: str) -> None:
    text = first + str(ulid.ULID.from_uuid(value))[1:]
    with pytest.raises(ValueError):
        ulid.ULID.from_str(text)
    with pytest.raises(InvalidUUID, match="exceeds 128 bits"):
        decode(text, "base32-crockford")
