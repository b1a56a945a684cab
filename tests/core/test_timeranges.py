"""Time helpers of uuidkit.timeranges: v7 for a given time, bounds for BETWEEN queries, and
why UUIDv1 has none."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit import layouts
from uuidkit.errors import InvalidField
from uuidkit.fields import V7Fields, fields, timestamp_ns
from uuidkit.timeranges import (
    uuid6_max,
    uuid6_min,
    uuid6_range,
    uuid7_for,
    uuid7_max,
    uuid7_min,
    uuid7_range,
)
from uuidkit.timestamps import unix_ns_to_gregorian_ticks

MOMENT = datetime(2022, 2, 22, 19, 22, 22, 123456, tzinfo=UTC)
MOMENT_NS = 1_645_557_742_123_456_000
unix_ns = st.integers(min_value=0, max_value=(1 << 48) * 1_000_000 - 1)
#: UUIDv6's 60-bit Gregorian field ends in the year 5236.
v6_unix_ns = st.integers(min_value=0, max_value=((1 << 60) - 0x01B21DD213814000) * 100 - 10**10)


def test_uuid7_for_a_datetime_and_for_nanoseconds() -> None:
    for when in (MOMENT, MOMENT_NS):
        value = uuid7_for(when)
        record = fields(value)
        assert isinstance(record, V7Fields) and record.unix_ts_ms == 1_645_557_742_123
        assert (value.version, value.variant) == (7, uuid.RFC_4122)
    assert len({uuid7_for(MOMENT) for _ in range(100)}) == 100


def test_v7_bounds_have_version_and_variant_right() -> None:
    low, high = uuid7_min(MOMENT), uuid7_max(MOMENT)
    assert str(low) == "017f22e2-7a2b-7000-8000-000000000000"
    assert str(high) == "017f22e2-7a2b-7fff-bfff-ffffffffffff"
    for bound in (low, high):
        assert (bound.version, bound.variant) == (7, uuid.RFC_4122)
    assert uuid7_range(MOMENT, MOMENT) == (low, high)


@settings(max_examples=100, deadline=None)
@given(start=unix_ns, length=st.integers(min_value=0, max_value=10**10), probe=unix_ns)
def test_v7_range_selects_exactly_the_time_range(start: int, length: int, probe: int) -> None:
    end = min(start + length, (1 << 48) * 1_000_000 - 1)
    low, high = uuid7_range(start, end)
    inside = uuid7_for(probe)
    selected = low <= inside <= high
    assert selected == (start // 1_000_000 <= probe // 1_000_000 <= end // 1_000_000)


@settings(max_examples=100, deadline=None)
@given(start=v6_unix_ns, length=st.integers(min_value=0, max_value=10**9), probe=v6_unix_ns)
def test_v6_range_selects_exactly_the_time_range(start: int, length: int, probe: int) -> None:
    end = start + length
    low, high = uuid6_range(start, end)
    rng = random.Random(probe)
    ticks = unix_ns_to_gregorian_ticks(probe)
    inside = layouts.build_v6(ticks, rng.getrandbits(14), rng.getrandbits(48))
    selected = low <= inside <= high
    assert selected == (start // 100 <= probe // 100 <= end // 100)
    assert uuid6_min(start).version == uuid6_max(end).version == 6


def test_v1_does_not_sort_by_time() -> None:
    """time_low comes first and wraps every 2**32 ticks (about 7 minutes): a UUIDv1 51.2 us
    later sorts lower (timeranges docstring); the same pair as UUIDv6 sorts by time."""
    ticks = (unix_ns_to_gregorian_ticks(MOMENT_NS) | 0xFFFFFFFF) - 0xFF
    earlier, later = layouts.build_v1(ticks, 0, 0), layouts.build_v1(ticks + 0x200, 0, 0)
    earlier_ns, later_ns = timestamp_ns(earlier), timestamp_ns(later)
    assert earlier_ns is not None and later_ns is not None and earlier_ns < later_ns
    assert later < earlier
    assert layouts.v1_to_v6(earlier) < layouts.v1_to_v6(later)


def test_out_of_range_and_reversed_times_are_refused() -> None:
    with pytest.raises(InvalidField, match=r"^unix_ts_ms: expected 0 <= unix_ts_ms < 2\*\*48"):
        uuid7_min(-1)
    with pytest.raises(InvalidField, match=r"^timestamp: expected 0 <= timestamp < 2\*\*60"):
        uuid6_min(datetime(1500, 1, 1, tzinfo=UTC))
    with pytest.raises(InvalidField, match=r"^end: .* is before start"):
        uuid7_range(MOMENT_NS, MOMENT_NS - 1)
    with pytest.raises(InvalidField, match=r"^timestamp: expected a datetime or int"):
        uuid7_for(1.5)  # type: ignore[arg-type]
