"""Builders of uuidkit.layouts: round trips through the readers and every representation,
range checks naming the field, and v1 <-> v6 conversion."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uuidkit
from uuidkit import layouts
from uuidkit.errors import InvalidField, InvalidUUID
from uuidkit.fields import V1Fields, V2Fields, V6Fields, V7Fields, V8Fields, fields

EXAMPLES = settings(max_examples=60, deadline=None)


def bits(n: int) -> st.SearchStrategy[int]:
    return st.integers(min_value=0, max_value=(1 << n) - 1)


def assert_representations_round_trip(value: uuid.UUID) -> None:
    assert type(value) is uuid.UUID
    assert uuid.UUID(str(value)) == value
    assert uuid.UUID(bytes=value.bytes) == value
    assert uuid.UUID(bytes_le=value.bytes_le) == value
    assert uuid.UUID(int=value.int) == value
    assert uuid.UUID(fields=value.fields) == value
    assert uuid.UUID(value.hex) == value
    assert uuidkit.parse(value.urn, strict=False) == value


@EXAMPLES
@given(timestamp=bits(60), clock_seq=bits(14), node=bits(48))
def test_v1_round_trip(timestamp: int, clock_seq: int, node: int) -> None:
    value = layouts.build_v1(timestamp, clock_seq, node)
    record = fields(value)
    assert isinstance(record, V1Fields)
    assert (record.timestamp, record.clock_seq, record.node) == (timestamp, clock_seq, node)
    assert (value.version, value.variant) == (1, uuid.RFC_4122)
    # differential: the standard library reads the same v1 fields (RFC 4122 names)
    assert value.time == timestamp and value.clock_seq == clock_seq and value.node == node
    assert value.fields[:3] == (record.time_low, record.time_mid, (1 << 12) | record.time_high)
    assert_representations_round_trip(value)


@EXAMPLES
@given(timestamp=bits(60), clock_seq=bits(14), node=bits(48))
def test_v6_round_trip_and_v1_conversion(timestamp: int, clock_seq: int, node: int) -> None:
    value = layouts.build_v6(timestamp, clock_seq, node)
    record = fields(value)
    assert isinstance(record, V6Fields)
    assert (record.timestamp, record.clock_seq, record.node) == (timestamp, clock_seq, node)
    as_v1 = layouts.v6_to_v1(value)
    assert as_v1 == layouts.build_v1(timestamp, clock_seq, node)
    assert layouts.v1_to_v6(as_v1) == value
    assert uuidkit.timestamp_ns(as_v1) == uuidkit.timestamp_ns(value)
    assert_representations_round_trip(value)


@EXAMPLES
@given(domain=bits(8), identifier=bits(32), timestamp=bits(60), clock_seq=bits(6), node=bits(48))
def test_v2_round_trip(
    domain: int, identifier: int, timestamp: int, clock_seq: int, node: int
) -> None:
    value = layouts.build_v2(domain, identifier, timestamp, clock_seq, node)
    record = fields(value)
    assert record == V2Fields(
        identifier, (timestamp >> 32) & 0xFFFF, timestamp >> 48, clock_seq, domain, node
    )
    assert value.version == 2 and uuidkit.timestamp_ns(value) is None
    assert_representations_round_trip(value)


@EXAMPLES
@given(unix_ts_ms=bits(48), rand_a=bits(12), rand_b=bits(62))
def test_v7_round_trip(unix_ts_ms: int, rand_a: int, rand_b: int) -> None:
    value = layouts.build_v7(unix_ts_ms, rand_a, rand_b)
    assert fields(value) == V7Fields(unix_ts_ms, rand_a, rand_b)
    assert uuidkit.timestamp_ns(value) == unix_ts_ms * 1_000_000
    assert value.int == layouts.v7_int(unix_ts_ms, rand_a, rand_b)
    assert_representations_round_trip(value)


@EXAMPLES
@given(custom_a=bits(48), custom_b=bits(12), custom_c=bits(62))
def test_v8_round_trip(custom_a: int, custom_b: int, custom_c: int) -> None:
    value = layouts.build_v8(custom_a, custom_b, custom_c)
    assert fields(value) == V8Fields(custom_a, custom_b, custom_c)
    assert uuidkit.uuid8(custom_a, custom_b, custom_c) == value
    assert_representations_round_trip(value)


@EXAMPLES
@given(data=st.binary(min_size=16, max_size=16))
def test_v4_from_bytes_keeps_all_but_version_and_variant(data: bytes) -> None:
    value = layouts.build_v4(data)
    mask = ((1 << 128) - 1) ^ (0xF << 76) ^ (0b11 << 62)
    assert value.int & mask == int.from_bytes(data) & mask
    assert (value.version, value.variant) == (4, uuid.RFC_4122)
    assert_representations_round_trip(value)


BUILDERS: list[tuple[Callable[..., uuid.UUID], dict[str, int], str, int]] = [
    (layouts.build_v1, {"timestamp": 0, "clock_seq": 0, "node": 0}, "timestamp", 60),
    (layouts.build_v1, {"timestamp": 0, "clock_seq": 0, "node": 0}, "clock_seq", 14),
    (layouts.build_v1, {"timestamp": 0, "clock_seq": 0, "node": 0}, "node", 48),
    (layouts.build_v6, {"timestamp": 0, "clock_seq": 0, "node": 0}, "timestamp", 60),
    (layouts.build_v7, {"unix_ts_ms": 0, "rand_a": 0, "rand_b": 0}, "unix_ts_ms", 48),
    (layouts.build_v7, {"unix_ts_ms": 0, "rand_a": 0, "rand_b": 0}, "rand_a", 12),
    (layouts.build_v7, {"unix_ts_ms": 0, "rand_a": 0, "rand_b": 0}, "rand_b", 62),
    (layouts.build_v8, {"custom_a": 0, "custom_b": 0, "custom_c": 0}, "custom_c", 62),
    (
        layouts.build_v2,
        {"local_domain": 0, "local_identifier": 0, "timestamp": 0, "clock_seq": 0, "node": 0},
        "clock_seq",
        6,
    ),
]


@pytest.mark.parametrize(("builder", "valid", "field", "width"), BUILDERS)
def test_out_of_range_field_is_named(
    builder: Callable[..., uuid.UUID], valid: dict[str, int], field: str, width: int
) -> None:
    builder(**{**valid, field: (1 << width) - 1})
    for bad in (1 << width, -1):
        with pytest.raises(InvalidField) as caught:
            builder(**{**valid, field: bad})
        assert caught.value.field == field
        assert str(caught.value) == f"{field}: expected 0 <= {field} < 2**{width}, found {bad}"
    with pytest.raises(InvalidField, match=f"^{field}: expected an int of {width} bits, found"):
        builder(**{**valid, field: True})


def test_v4_data_must_be_16_bytes() -> None:
    with pytest.raises(InvalidField, match=r"^data: expected 16 bytes, found 15$"):
        layouts.build_v4(b"\x00" * 15)
    assert layouts.build_v4().version == 4


def test_conversion_refuses_the_wrong_version() -> None:
    with pytest.raises(InvalidUUID, match=r"expected a version 1 UUID, found .* \(version 4\)"):
        layouts.v1_to_v6(uuid.UUID("919108f7-52d1-4320-9bac-f847db4148a8"))
    with pytest.raises(InvalidUUID, match=r"\(not RFC variant\)"):
        layouts.v6_to_v1(uuidkit.MAX)
