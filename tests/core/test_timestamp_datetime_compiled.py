"""timestamp_datetime: the compiled twin builds the datetime from integer parts, same as pure.

The twin computes the civil date and time of the embedded instant itself; the pure function
adds a ``timedelta`` to the epoch. For every v1, v6 and v7 value (random 128-bit values with
the version and variant set, the edges of ``datetime``'s years 1-9999 included) both give the
same aware UTC ``datetime``, truncated toward the past to the microsecond, or the same error.

References: RFC 9562 §5.1, §5.6, §5.7, §6.1.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from hypothesis import example, given, settings
from hypothesis import strategies as st

from uuidkit._accel import PURE_TWINS
from uuidkit.errors import InvalidField
from uuidkit.fields import timestamp_datetime

PURE = PURE_TWINS["timestamp_datetime"]
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def stamped(value: int, version: int) -> uuid.UUID:
    value &= ~(0xF << 76) & ~(0x3 << 62)
    return uuid.UUID(int=value | (version << 76) | (0x2 << 62))


def outcome(function: object, value: uuid.UUID) -> object:
    try:
        return function(value)  # type: ignore[operator]
    except InvalidField as error:
        return ("InvalidField", str(error))


@settings(max_examples=2000, deadline=None)
@given(value=st.integers(0, (1 << 128) - 1), version=st.sampled_from([1, 6, 7, 4, 8]))
@example(value=0, version=7)
@example(value=(1 << 128) - 1, version=7)  # year 10889: beyond datetime
@example(value=0, version=1)  # 1582-10-15, the Gregorian epoch
@example(value=(1 << 128) - 1, version=6)
def test_compiled_and_pure_agree(value: int, version: int) -> None:
    u = stamped(value, version)
    assert outcome(timestamp_datetime, u) == outcome(PURE, u)


@settings(max_examples=500, deadline=None)
@given(ms=st.integers(0, 253402300799999))  # v7 up to 9999-12-31T23:59:59.999
def test_v7_is_the_millisecond_since_the_epoch(ms: int) -> None:
    # RFC 9562 §5.7: unix_ts_ms, the first 48 bits; the expected value is derived with
    # timedelta arithmetic, not with the function under test.
    result = timestamp_datetime(stamped(ms << 80, 7))
    assert result == EPOCH + timedelta(milliseconds=ms)
    assert result is not None and result.tzinfo is UTC
