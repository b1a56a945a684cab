"""Conversions between the timestamps UUIDs carry and the ones people hold.

The pivot is an ``int`` of nanoseconds since the Unix epoch (1970-01-01 00:00:00 UTC), the
same unit as :func:`time.time_ns`; every conversion is exact integer arithmetic, never a
float. From there:

- UUIDv1/v6: 60-bit counts of 100 ns intervals since 1582-10-15 00:00:00 UTC (the Gregorian
  epoch). Instants before 1970 are negative Unix nanoseconds; that is how a v1 from 1600
  reads back.
- UUIDv7: 48-bit counts of milliseconds since the Unix epoch.
- :class:`datetime.datetime`: always timezone-aware UTC. ``datetime`` stops at microseconds,
  so converting nanoseconds to ``datetime`` truncates toward the past (floor): a v1/v6 tick of
  100 ns loses its last decimal digit, and ``datetime_to_unix_ns(unix_ns_to_datetime(n))`` is
  ``n`` rounded down to a whole microsecond. ``datetime`` also ends at 9999-12-31, earlier than
  UUIDv7's 48-bit field (year 10889); such instants raise :class:`~uuidkit.InvalidField`.

References: RFC 9562 §5.1 (Gregorian epoch, 100 ns), §5.7 (unix_ts_ms), §6.1 (Timestamp
Considerations).
"""

from __future__ import annotations

from uuidkit._bits import GREGORIAN_OFFSET_100NS
from uuidkit.errors import InvalidField

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from datetime import datetime, timedelta
    from typing import Final

__all__ = [
    "GREGORIAN_EPOCH",
    "NS_PER_MS",
    "NS_PER_TICK",
    "UNIX_EPOCH",
    "datetime_to_unix_ns",
    "gregorian_ticks_to_unix_ns",
    "ms_to_unix_ns",
    "unix_ns_to_datetime",
    "unix_ns_to_gregorian_ticks",
    "unix_ns_to_ms",
]

#: Nanoseconds in one UUIDv1/v6 tick (RFC 9562 §5.1: "100-nanosecond intervals").
NS_PER_TICK: Final = 100
#: Nanoseconds in one UUIDv7 unix_ts_ms unit (RFC 9562 §5.7).
NS_PER_MS: Final = 1_000_000

if TYPE_CHECKING:  # made on first use by __getattr__ below
    UNIX_EPOCH: datetime
    #: RFC 9562 §5.1: "00:00:00.00, 15 October 1582 (the date of Gregorian reform ...)".
    GREGORIAN_EPOCH: datetime

_NS_PER_US: Final = 1_000
_NS_PER_DAY: Final = 86_400 * 1_000_000_000

#: What the datetime conversions need, made on first use: ``import uuidkit`` does not load
#: :mod:`datetime` (about 1.5 ms), since only these conversions make or read datetimes.
_datetime_parts: tuple[type[datetime], datetime, type[timedelta]] | None = None


def _datetimes() -> tuple[type[datetime], datetime, type[timedelta]]:
    """``(datetime, UNIX_EPOCH, timedelta)``, importing :mod:`datetime` the first time."""
    global _datetime_parts
    if _datetime_parts is None:
        from datetime import UTC, datetime, timedelta

        _datetime_parts = (datetime, datetime(1970, 1, 1, tzinfo=UTC), timedelta)
    return _datetime_parts


def __getattr__(name: str) -> datetime:
    """The epochs as aware datetimes, made on first use (see :func:`_datetimes`)."""
    if name == "UNIX_EPOCH":
        epoch = _datetimes()[1]
    elif name == "GREGORIAN_EPOCH":
        from datetime import UTC, datetime

        epoch = datetime(1582, 10, 15, tzinfo=UTC)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = epoch  # the next lookup is a plain attribute
    return epoch


def __dir__() -> list[str]:
    return sorted({*globals(), "GREGORIAN_EPOCH", "UNIX_EPOCH"})


def unix_ns_to_gregorian_ticks(unix_ns: int) -> int:
    """Unix-epoch nanoseconds to 100 ns ticks since the Gregorian epoch (rounded down).

    The result is not range-checked; the v1/v6 builders check it against 60 bits.

    References: RFC 9562 §5.1; Appendix A (Figure 15: "Greg_100_ns = (Unix_64_bit_ns/100) +
    Greg_Unix_offset").
    """
    return unix_ns // NS_PER_TICK + GREGORIAN_OFFSET_100NS


def gregorian_ticks_to_unix_ns(ticks: int) -> int:
    """100 ns ticks since the Gregorian epoch to Unix-epoch nanoseconds (negative before 1970).

    References: RFC 9562 §5.1; Appendix A (Figure 15).
    """
    return (ticks - GREGORIAN_OFFSET_100NS) * NS_PER_TICK


def unix_ns_to_ms(unix_ns: int) -> int:
    """Unix-epoch nanoseconds to whole milliseconds, rounded down (the UUIDv7 unit).

    References: RFC 9562 §5.7, §6.1 ("Truncating").
    """
    return unix_ns // NS_PER_MS


def ms_to_unix_ns(unix_ms: int) -> int:
    """Unix-epoch milliseconds to nanoseconds.

    References: RFC 9562 §5.7.
    """
    return unix_ms * NS_PER_MS


def datetime_to_unix_ns(when: datetime) -> int:
    """An aware :class:`~datetime.datetime` to Unix-epoch nanoseconds, exactly.

    A naive ``datetime`` is refused: guessing its zone would shift every UUID built from it.

    References: RFC 9562 §5.1 ("Coordinated Universal Time (UTC)"), §5.7.
    """
    datetime, unix_epoch, _ = _datetimes()
    if not isinstance(when, datetime):
        raise InvalidField(
            f"timestamp: expected a datetime, found {type(when).__name__}", "timestamp"
        )
    if when.tzinfo is None or when.utcoffset() is None:
        raise InvalidField(
            f"timestamp: expected a timezone-aware datetime, found naive {when.isoformat()}",
            "timestamp",
        )
    delta = when - unix_epoch
    return delta.days * _NS_PER_DAY + delta.seconds * 1_000_000_000 + delta.microseconds * 1_000


def unix_ns_to_datetime(unix_ns: int) -> datetime:
    """Unix-epoch nanoseconds to an aware UTC :class:`~datetime.datetime`.

    Truncates to the microsecond toward the past, since ``datetime`` holds no finer unit.
    Instants outside ``datetime``'s years 1-9999 raise :class:`~uuidkit.InvalidField`.

    References: RFC 9562 §5.1, §5.7, §6.1.
    """
    if isinstance(unix_ns, bool) or not isinstance(unix_ns, int):
        raise InvalidField(
            f"timestamp: expected int nanoseconds, found {type(unix_ns).__name__}", "timestamp"
        )
    _, unix_epoch, timedelta = _datetime_parts or _datetimes()
    try:
        return unix_epoch + timedelta(microseconds=unix_ns // _NS_PER_US)
    except OverflowError:
        raise InvalidField(
            f"timestamp: {unix_ns} ns since 1970 is outside datetime's years 1-9999",
            "timestamp",
        ) from None
