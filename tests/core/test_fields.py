"""Readers of uuidkit.fields: variants (RFC 9562 Table 1), versions, Nil/Max, records, and
a differential check of v1 fields against the standard library."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uuidkit
from uuidkit import layouts
from uuidkit.errors import InvalidUUID
from uuidkit.fields import (
    MAX,
    NIL,
    MaxFields,
    NilFields,
    OpaqueFields,
    V1Fields,
    V2Fields,
    V3Fields,
    V4Fields,
    V5Fields,
    V6Fields,
    Variant,
    fields,
    is_max,
    is_nil,
    timestamp_datetime,
    timestamp_ns,
    variant,
    version,
)
from uuidkit.parse import from_fields

u128 = st.integers(min_value=0, max_value=(1 << 128) - 1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # RFC 9562 Table 1: the most significant bits of octet 8.
        ("00000000-0000-4000-0000-000000000001", Variant.NCS),  # 0xxx
        ("00000000-0000-4000-7fff-000000000000", Variant.NCS),
        ("00000000-0000-4000-8000-000000000000", Variant.RFC_9562),  # 10xx (Figure 5)
        ("00000000-0000-4000-b000-000000000000", Variant.RFC_9562),
        ("00000000-0000-4000-c000-000000000000", Variant.MICROSOFT),  # 110x
        ("00000000-0000-4000-d000-000000000000", Variant.MICROSOFT),
        ("00000000-0000-4000-e000-000000000000", Variant.FUTURE),  # 111x
        ("00000000-0000-4000-f000-000000000000", Variant.FUTURE),
    ],
)
def test_variant_table_1(text: str, expected: Variant) -> None:
    value = uuid.UUID(text)
    assert variant(value) is expected
    assert variant(value) == value.variant  # the standard library's strings
    assert version(value) == (4 if expected is Variant.RFC_9562 else None)


def test_nil_and_max_are_recognised() -> None:
    assert uuid.UUID(int=0) == NIL and uuid.UUID("ffffffff-ffff-ffff-ffff-ffffffffffff") == MAX
    assert (is_nil(NIL), is_max(NIL), is_nil(MAX), is_max(MAX)) == (True, False, False, True)
    # RFC 9562 §5.9/§5.10: Nil is in the NCS variant, Max in the reserved-for-future one.
    assert variant(NIL) is Variant.NCS and variant(MAX) is Variant.FUTURE
    assert version(NIL) is None and version(MAX) is None
    assert fields(NIL) == NilFields() and fields(MAX) == MaxFields()
    assert timestamp_ns(NIL) is None and timestamp_datetime(MAX) is None


def test_other_variants_and_reserved_versions_are_opaque() -> None:
    microsoft = uuid.UUID("00000000-0000-1000-c000-000000000000")
    assert fields(microsoft) == OpaqueFields(Variant.MICROSOFT, None, microsoft.int)
    version_9 = uuid.UUID("00000000-0000-9000-8000-000000000000")
    assert fields(version_9) == OpaqueFields(Variant.RFC_9562, 9, version_9.int)
    assert timestamp_ns(microsoft) is None


def test_records_use_the_rfc_names() -> None:
    v3 = uuid.UUID("5df41881-3aed-3515-88a7-2f4a814cf09e")  # Appendix A.2
    assert fields(v3) == V3Fields(0x5DF418813AED, 0x515, 0x08A72F4A814CF09E)
    v4 = uuid.UUID("919108f7-52d1-4320-9bac-f847db4148a8")  # Appendix A.3
    assert fields(v4) == V4Fields(0x919108F752D1, 0x320, 0x1BACF847DB4148A8)
    v5 = uuid.UUID("2ed6657d-e927-568b-95e1-2665a8aea6a2")  # Appendix A.4
    assert fields(v5) == V5Fields(0x2ED6657DE927, 0x68B, 0x15E12665A8AEA6A2)
    record = fields(v5)
    assert isinstance(record, V5Fields)
    with pytest.raises(AttributeError):
        record.sha1_high = 0  # type: ignore[misc]


def test_readers_refuse_non_uuids() -> None:
    with pytest.raises(InvalidUUID, match=r"^expected a uuid\.UUID, found str$"):
        fields("5df41881-3aed-3515-88a7-2f4a814cf09e")  # type: ignore[call-overload]


@settings(max_examples=200, deadline=None)
@given(number=u128)
def test_differential_against_the_standard_library(number: int) -> None:
    """For every 128-bit value: variant and version agree with uuid.UUID; for v1 the fields
    and the 60-bit ``.time`` agree too."""
    value = uuid.UUID(int=number)
    assert variant(value) == value.variant
    assert version(value) == value.version
    forced_v1 = _with_version(number, 1)
    record = fields(forced_v1)
    assert record.timestamp == forced_v1.time  # type: ignore[union-attr]
    assert record.clock_seq == forced_v1.clock_seq  # type: ignore[union-attr]
    assert record.node == forced_v1.node  # type: ignore[union-attr]
    assert record.time_low == forced_v1.time_low  # type: ignore[union-attr]
    assert timestamp_ns(forced_v1) == (forced_v1.time - 0x01B21DD213814000) * 100


def test_public_names_are_the_same_objects() -> None:
    assert uuidkit.fields is fields and uuidkit.NIL is NIL and uuidkit.Variant is Variant


def _with_version(number: int, number_version: int) -> uuid.UUID:
    cleared = number & ~(0xF << 76) & ~(0b11 << 62)
    return uuid.UUID(int=cleared | (number_version << 76) | (0b10 << 62))


@settings(max_examples=100, deadline=None)
@given(number=u128)
def test_every_record_rebuilds_its_uuid(number: int) -> None:
    """Reader then builder is the identity for every RFC-variant layout, and ``fields`` is
    total: it returns a record for any 128-bit value."""
    v1 = _with_version(number, 1)
    record1 = fields(v1)
    assert isinstance(record1, V1Fields)
    assert layouts.build_v1(record1.timestamp, record1.clock_seq, record1.node) == v1
    v2 = _with_version(number, 2)
    record2 = fields(v2)
    assert isinstance(record2, V2Fields)
    timestamp2 = (record2.time_high << 48) | (record2.time_mid << 32)
    rebuilt2 = layouts.build_v2(
        record2.local_domain, record2.local_identifier, timestamp2, record2.clock_seq, record2.node
    )
    assert rebuilt2 == v2
    v6 = _with_version(number, 6)
    record6 = fields(v6)
    assert isinstance(record6, V6Fields)
    assert layouts.build_v6(record6.timestamp, record6.clock_seq, record6.node) == v6
    for number_version, builder in ((7, layouts.build_v7), (8, layouts.build_v8)):
        value = _with_version(number, number_version)
        assert builder(*tuple(fields(value))) == value
    for number_version in (3, 4, 5):
        value = _with_version(number, number_version)
        parts = tuple(fields(value))
        assert layouts.build_v8(*parts).int == value.int ^ ((number_version ^ 8) << 76)
    # Any 128 bits at all: the record holds every bit that is not version or variant.
    assert from_fields(fields(uuid.UUID(int=number))) == uuid.UUID(int=number)
