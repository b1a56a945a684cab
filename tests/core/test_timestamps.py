"""Timestamp conversions of uuidkit.timestamps and the timestamps read back from UUIDs."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit import layouts
from uuidkit.errors import InvalidField
from uuidkit.fields import timestamp_datetime, timestamp_ns
from uuidkit.timestamps import (
    GREGORIAN_EPOCH,
    datetime_to_unix_ns,
    gregorian_ticks_to_unix_ns,
    ms_to_unix_ns,
    unix_ns_to_datetime,
    unix_ns_to_gregorian_ticks,
    unix_ns_to_ms,
)

#: RFC 9562 Appendix A, Figure 15.
UNIX_NS = 1_645_557_742_000_000_000
GREGORIAN_100NS = 138_648_505_420_000_000


def test_figure_15_pseudocode() -> None:
    assert unix_ns_to_gregorian_ticks(UNIX_NS) == GREGORIAN_100NS == 0x1EC9414C232AB00
    assert gregorian_ticks_to_unix_ns(GREGORIAN_100NS) == UNIX_NS
    assert unix_ns_to_ms(UNIX_NS) == 0x017F22E279B0  # Appendix A.6
    assert ms_to_unix_ns(0x017F22E279B0) == UNIX_NS


def test_gregorian_epoch_is_tick_zero() -> None:
    assert datetime_to_unix_ns(GREGORIAN_EPOCH) == gregorian_ticks_to_unix_ns(0)
    assert unix_ns_to_datetime(gregorian_ticks_to_unix_ns(0)) == GREGORIAN_EPOCH


def test_v1_before_1970_reads_negative() -> None:
    moment = datetime(1600, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)
    ticks = unix_ns_to_gregorian_ticks(datetime_to_unix_ns(moment))
    value = layouts.build_v1(ticks + 7, 0, 0)  # +700 ns, below datetime's resolution
    unix_ns = timestamp_ns(value)
    assert unix_ns is not None and unix_ns < 0
    assert unix_ns == datetime_to_unix_ns(moment) + 700
    assert timestamp_datetime(value) == moment  # truncated to the microsecond


def test_datetime_truncates_toward_the_past() -> None:
    assert unix_ns_to_datetime(1_999) == datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC)
    assert unix_ns_to_datetime(-1) == datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)


def test_other_zones_convert_exactly() -> None:
    plus_five = timezone(timedelta(hours=-5))
    moment = datetime(2022, 2, 22, 14, 22, 22, tzinfo=plus_five)  # Appendix A: GMT-05:00
    assert datetime_to_unix_ns(moment) == UNIX_NS


def test_naive_datetime_is_refused() -> None:
    with pytest.raises(InvalidField, match=r"^timestamp: expected a timezone-aware datetime"):
        datetime_to_unix_ns(datetime(2022, 2, 22))


@pytest.mark.parametrize("wrong", [None, 1.5, "2022-02-22", date(2022, 2, 22), float("nan")])
def test_wrong_types_raise_invalid_field(wrong: object) -> None:
    """Bad input is uuidkit's InvalidField, never AttributeError/TypeError from the arithmetic;
    a ``date`` is not an instant (RFC 9562 §5.1: a count of 100 ns since an epoch in UTC)."""
    with pytest.raises(InvalidField, match=r"^timestamp: expected a datetime, found "):
        datetime_to_unix_ns(wrong)  # type: ignore[arg-type]
    with pytest.raises(InvalidField, match=r"^timestamp: expected int nanoseconds, found "):
        unix_ns_to_datetime(wrong)  # type: ignore[arg-type]


def test_v7_beyond_year_9999_has_no_datetime() -> None:
    value = layouts.build_v7((1 << 48) - 1, 0, 0)
    assert timestamp_ns(value) == ((1 << 48) - 1) * 1_000_000
    with pytest.raises(InvalidField, match="outside datetime's years 1-9999"):
        timestamp_datetime(value)


@settings(max_examples=100, deadline=None)
@given(moment=st.datetimes(timezones=st.just(UTC)))
def test_datetime_round_trip(moment: datetime) -> None:
    unix_ns = datetime_to_unix_ns(moment)
    assert unix_ns_to_datetime(unix_ns) == moment
    assert unix_ns_to_datetime(unix_ns + 999) == moment


@settings(max_examples=100, deadline=None)
@given(ticks=st.integers(min_value=0, max_value=(1 << 60) - 1))
def test_gregorian_ticks_round_trip(ticks: int) -> None:
    assert unix_ns_to_gregorian_ticks(gregorian_ticks_to_unix_ns(ticks)) == ticks
    assert timestamp_ns(layouts.build_v6(ticks, 0, 0)) == gregorian_ticks_to_unix_ns(ticks)
