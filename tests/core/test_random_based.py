"""uuid4() and uuid8(a, b, c): version and variant bits, distinctness, given parts kept."""

from __future__ import annotations

import uuid

import pytest

import uuidkit
from uuidkit.errors import InvalidField
from uuidkit.fields import V8Fields, fields
from uuidkit.random_based import uuid4, uuid8


def test_uuid4_is_a_plain_version_4_uuid() -> None:
    values = [uuid4() for _ in range(2000)]
    assert len(set(values)) == len(values)
    for value in values:
        assert type(value) is uuid.UUID
        assert (value.version, value.variant) == (4, uuid.RFC_4122)
        assert value.is_safe is uuid.SafeUUID.unknown
        assert uuid.UUID(str(value)) == value and hash(value) == hash(uuid.UUID(str(value)))


def test_uuid4_fills_every_free_bit() -> None:
    """Over 2000 values each of the 122 random bits is seen both as 0 and as 1."""
    mask = ((1 << 128) - 1) ^ (0xF << 76) ^ (0b11 << 62)
    values = [uuid4().int for _ in range(2000)]
    seen_ones = seen_zeros = 0
    for number in values:
        seen_ones |= number
        seen_zeros |= ~number
    assert seen_ones & mask == mask and seen_zeros & mask == mask


def test_uuid8_keeps_given_parts_and_randomises_the_rest() -> None:
    value = uuid8(a=0xABCDEF012345, c=7)
    record = fields(value)
    assert isinstance(record, V8Fields)
    assert (record.custom_a, record.custom_c) == (0xABCDEF012345, 7)
    assert len({fields(uuid8(b=1)) for _ in range(50)}) == 50
    assert uuid8(1, 2, 3) == uuid.UUID("00000000-0001-8002-8000-000000000003")
    assert (uuid8().version, uuid8().variant) == (8, uuid.RFC_4122)
    assert uuidkit.uuid8 is uuid8 and uuidkit.uuid4 is uuid4


@pytest.mark.parametrize(("part", "width"), [("a", 48), ("b", 12), ("c", 62)])
def test_uuid8_keeps_the_low_bits_of_a_part_as_the_standard_library_does(
    part: str, width: int
) -> None:
    # Python 3.14's uuid8 masks each part to its width (a negative one in two's complement);
    # the strict builder build_v8 is the one that refuses.
    for given, kept in ((1 << width, 0), ((1 << width) + 5, 5), (-1, (1 << width) - 1)):
        record = fields(uuid8(**{part: given}))
        assert isinstance(record, V8Fields)
        assert getattr(record, f"custom_{part}") == kept
    strict = {"custom_a": 0, "custom_b": 0, "custom_c": 0, f"custom_{part}": 1 << width}
    with pytest.raises(InvalidField, match=rf"custom_{part}"):
        uuidkit.build_v8(**strict)
    with pytest.raises(InvalidField, match=rf"^{part}: expected an int, found float"):
        uuid8(**{part: 1.0})  # type: ignore[arg-type]
