"""Time helpers: the UUIDv7 for a given time, and UUID bounds for time-range queries.

``WHERE id BETWEEN low AND high`` selects the UUIDs of a time range when the UUIDs sort by
time as 128-bit unsigned integers (equivalently: as bytes, or as lowercase strings), which
RFC 9562 §6.11 says v6 and v7 do:

- UUIDv7 sorts by unix_ts_ms first (its 48 most significant bits), at millisecond
  granularity: :func:`uuid7_min` / :func:`uuid7_max` give the smallest and largest UUIDv7 of
  the millisecond containing a time, with the version and variant bits right in both, so
  every UUIDv7 of that millisecond lies between them.
- UUIDv6 sorts by its 60-bit timestamp, most significant bits first, at 100 ns granularity:
  :func:`uuid6_min` / :func:`uuid6_max` do the same with clock_seq and node all 0s / all 1s.
- UUIDv1 has no such bounds: its first bits are time_low, the *least* significant 32 bits
  of the timestamp, which wrap every 2**32 * 100 ns (about 7 minutes). Two UUIDv1s a second
  apart can compare either way, so no pair of UUIDv1 values brackets a time range. Convert
  to UUIDv6 (:func:`uuidkit.layouts.v1_to_v6`) to sort or range-query by time.

Times are given as an aware :class:`~datetime.datetime` or an ``int`` of Unix-epoch
nanoseconds. A time outside a version's timestamp field raises
:class:`~uuidkit.InvalidField`.

References: RFC 9562 §5.1, §5.6, §5.7, §6.1, §6.11 (Sorting), §6.13 (DBMS).
"""

from __future__ import annotations

from uuid import UUID

from uuidkit._bits import MASK_12, MASK_14, MASK_48, MASK_62, check_field
from uuidkit._construct import from_int_unchecked
from uuidkit._system import POOL
from uuidkit.errors import InvalidField
from uuidkit.layouts import v6_int, v7_int
from uuidkit.timestamps import datetime_to_unix_ns, unix_ns_to_gregorian_ticks, unix_ns_to_ms

# ``import uuidkit`` loads this module, so it does not load datetime (1.5 ms) or typing (3 ms)
# at import: both are needed only when a datetime is given, or to read ``Instant``.
TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from datetime import datetime
    from typing import TypeAlias

    #: A point in time: an aware ``datetime`` or Unix-epoch nanoseconds.
    Instant: TypeAlias = datetime | int

__all__ = [
    "Instant",
    "uuid6_max",
    "uuid6_min",
    "uuid6_range",
    "uuid7_for",
    "uuid7_max",
    "uuid7_min",
    "uuid7_range",
]


def __getattr__(name: str) -> object:
    """``Instant``, a point in time: an aware ``datetime`` or Unix-epoch nanoseconds."""
    if name != "Instant":
        raise AttributeError(f"module 'uuidkit.timeranges' has no attribute {name!r}")
    from datetime import datetime

    instant = globals()["Instant"] = datetime | int
    return instant


def _unix_ns(when: Instant) -> int:
    if isinstance(when, int) and not isinstance(when, bool):
        return when
    from datetime import datetime  # loaded once; a datetime argument has loaded it already

    if isinstance(when, datetime):
        return datetime_to_unix_ns(when)
    raise InvalidField(
        f"timestamp: expected a datetime or int nanoseconds, found {type(when).__name__}",
        "timestamp",
    )


def _unix_ts_ms(when: Instant) -> int:
    # RFC 9562 §5.7: unix_ts_ms is a "48-bit big-endian unsigned number".
    return check_field("unix_ts_ms", unix_ns_to_ms(_unix_ns(when)), 48)


def _gregorian_ticks(when: Instant) -> int:
    # RFC 9562 §5.6: the timestamp is the 60-bit count of 100 ns since 1582-10-15.
    return check_field("timestamp", unix_ns_to_gregorian_ticks(_unix_ns(when)), 60)


def uuid7_for(when: Instant) -> UUID:
    """A UUIDv7 for the millisecond of ``when``, with rand_a and rand_b from the CSPRNG.

    Not monotonic across calls within the same millisecond: for that use a generator.

    References: RFC 9562 §5.7, §6.9.
    """
    random_bits = POOL.next_u128()
    rand_a, rand_b = (random_bits >> 64) & MASK_12, random_bits & MASK_62
    return from_int_unchecked(v7_int(_unix_ts_ms(when), rand_a, rand_b))


def uuid7_min(when: Instant) -> UUID:
    """The smallest UUIDv7 of the millisecond containing ``when`` (rand_a, rand_b all 0s).

    References: RFC 9562 §5.7, §6.11.
    """
    return from_int_unchecked(v7_int(_unix_ts_ms(when), 0, 0))


def uuid7_max(when: Instant) -> UUID:
    """The largest UUIDv7 of the millisecond containing ``when`` (rand_a, rand_b all 1s).

    References: RFC 9562 §5.7, §6.11.
    """
    return from_int_unchecked(v7_int(_unix_ts_ms(when), MASK_12, MASK_62))


def _ordered(start: Instant, end: Instant) -> None:
    if _unix_ns(end) < _unix_ns(start):
        raise InvalidField(f"end: {end!r} is before start {start!r}", "end")


def uuid7_range(start: Instant, end: Instant) -> tuple[UUID, UUID]:
    """``(low, high)`` such that ``low <= u <= high`` for exactly the UUIDv7s whose
    millisecond lies between those of ``start`` and ``end``, both included.

    References: RFC 9562 §5.7, §6.11, §6.13.
    """
    _ordered(start, end)
    return uuid7_min(start), uuid7_max(end)


def uuid6_min(when: Instant) -> UUID:
    """The smallest UUIDv6 of the 100 ns tick containing ``when`` (clock_seq, node all 0s).

    References: RFC 9562 §5.6, §6.11.
    """
    return from_int_unchecked(v6_int(_gregorian_ticks(when), 0, 0))


def uuid6_max(when: Instant) -> UUID:
    """The largest UUIDv6 of the 100 ns tick containing ``when`` (clock_seq, node all 1s).

    References: RFC 9562 §5.6, §6.11.
    """
    return from_int_unchecked(v6_int(_gregorian_ticks(when), MASK_14, MASK_48))


def uuid6_range(start: Instant, end: Instant) -> tuple[UUID, UUID]:
    """``(low, high)`` bracketing exactly the UUIDv6s whose tick lies between those of
    ``start`` and ``end``, both included.

    References: RFC 9562 §5.6, §6.11, §6.13.
    """
    _ordered(start, end)
    return uuid6_min(start), uuid6_max(end)
