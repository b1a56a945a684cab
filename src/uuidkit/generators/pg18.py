"""UUIDv7 exactly as PostgreSQL 18's ``uuidv7()`` makes it, so keys made in the application and
in the server interleave in time order.

PostgreSQL 18 (``src/backend/utils/adt/uuid.c``: ``get_real_time_ns_ascending`` and
``generate_uuidv7``) lays out a UUIDv7 with RFC 9562 §6.2 Method 3, 12 fraction bits and no
counter::

    unix_ts_ms = ns / 10**6                                  (48 bits)
    rand_a     = (ns % 10**6) * 2**12 / 10**6                (12 bits, integer division)
    rand_b     = 62 bits from the CSPRNG (pg_strong_random)

where ``ns`` is the Unix time in nanoseconds from ``clock_gettime(CLOCK_REALTIME)``, forced
to move forward by at least ``SUBMS_MINIMAL_STEP_NS`` per call in each backend::

    SUBMS_MINIMAL_STEP_NS = 10**6 / 2**12 + 1 = 245 ns
    if previous_ns + 245 >= ns: ns = previous_ns + 245
    previous_ns = ns

245 ns is just over one 12-bit step (10**6 / 4096 = 244.14 ns), so each call's
``(unix_ts_ms, rand_a)`` is strictly greater than the previous one's: the sequence of one
backend (here: one generator) is strictly increasing whatever the random bits are. Under a
burst the timestamp runs ahead of the clock by 245 ns per UUID, as PostgreSQL's does.

PostgreSQL lets that run-ahead grow without limit (a stalled clock, or one stepped back by an
hour, makes every later value of the backend carry a time the clock has not reached). This
generator bounds it as every other time-based generator of uuidkit does, through the same
policy engine, with ``max_ahead_ms`` (default ``DEFAULT_MAX_AHEAD_MS``, 10 s) and
PostgreSQL's own choices as the policies:

- the 245 ns step is CounterOverflow.ADVANCE: a value that would be stamped more than
  ``max_ahead_ms`` ahead of the clock raises :class:`~uuidkit.CounterOverflowError` instead,
  with the state unchanged, so values resume as soon as the clock has moved on;
- a clock that goes back is ClockRegression.KEEP: values keep increasing from the last one
  while that is at most ``max_ahead_ms`` ahead of the clock; a clock stepped back further
  restarts at the clock, as a new backend would (those values sort below the earlier ones).

Within the bound every value is the one PostgreSQL 18 makes; 10 s is about 40 million values
of run-ahead, far beyond any burst a working clock allows.

PostgreSQL builds for macOS and Windows use 10-bit steps (977 ns) and mix two random bits into
the fraction because their clocks have microsecond resolution; this module reproduces the
nanosecond-clock platforms (Linux, the BSDs), which is what a Linux server produces.

References: RFC 9562 §5.7, §6.2 (Method 3), §6.9; PostgreSQL 18 ``uuidv7()``.
"""

from __future__ import annotations

import threading
from typing import Final
from uuid import UUID

from uuidkit import _system
from uuidkit._accel import public_function
from uuidkit._bits import MASK_62, pack_frame
from uuidkit._construct import from_int_unchecked
from uuidkit.errors import InvalidField
from uuidkit.generators._policy import (
    Clock,
    ClockRegression,
    CounterOverflow,
    RandomBytes,
    check_callable,
    check_int,
    paired_monotonic,
    register_for_fork,
)
from uuidkit.generators._timeline import DEFAULT_MAX_AHEAD_MS, RESTART, Timeline
from uuidkit.timestamps import NS_PER_MS

__all__ = [
    "PG18_MINIMAL_STEP_NS",
    "PG18_SUBMS_BITS",
    "PG18V7Generator",
    "build_v7_pg18",
    "pg18_time_ns",
    "uuid7_pg18",
]

#: PostgreSQL 18 ``SUBMS_BITS``: the sub-millisecond fraction fills all 12 bits of rand_a.
PG18_SUBMS_BITS: Final = 12
#: PostgreSQL 18 ``SUBMS_MINIMAL_STEP_NS`` on nanosecond-clock platforms: 10**6 // 4096 + 1.
PG18_MINIMAL_STEP_NS: Final = NS_PER_MS // (1 << PG18_SUBMS_BITS) + 1
_MAX_NS: Final = (1 << 48) * NS_PER_MS - 1


def pg18_fields(unix_ns: int) -> tuple[int, int]:
    """``(unix_ts_ms, rand_a)`` of PostgreSQL 18's ``generate_uuidv7(ns)``.

    References: RFC 9562 §6.2 Method 3; PostgreSQL 18 ``generate_uuidv7``.
    """
    unix_ts_ms, sub_ms_ns = divmod(unix_ns, NS_PER_MS)
    return unix_ts_ms, (sub_ms_ns << PG18_SUBMS_BITS) // NS_PER_MS


def build_v7_pg18(unix_ns: int, rand_b: int) -> UUID:
    """The UUIDv7 PostgreSQL 18 makes at ``unix_ns`` (nanoseconds) with these 62 random bits.

    >>> build_v7_pg18(1_700_000_000_123_456_789, 0)
    UUID('018bcfe5-687b-774f-8000-000000000000')

    References: RFC 9562 §5.7, §6.2 Method 3; PostgreSQL 18 ``generate_uuidv7``.
    """
    if type(unix_ns) is not int or not 0 <= unix_ns <= _MAX_NS:
        raise InvalidField(f"unix_ns: expected an int in [0, {_MAX_NS}], found {unix_ns!r}")
    if type(rand_b) is not int or not 0 <= rand_b <= MASK_62:
        raise InvalidField(f"rand_b: expected an int in [0, 2**62), found {rand_b!r}", "rand_b")
    unix_ts_ms, rand_a = pg18_fields(unix_ns)
    return from_int_unchecked(pack_frame(7, unix_ts_ms, rand_a, rand_b))


def pg18_time_ns(value: UUID) -> int:
    """The Unix time in nanoseconds a PostgreSQL 18 ``uuidv7()`` value was stamped with, to
    within one 12-bit step: the first nanosecond whose ``rand_a`` is the value's.

    ``rand_a`` is ``floor(sub_ms_ns * 2**12 / 10**6)``, so the stamp lies in
    ``[pg18_time_ns(v), pg18_time_ns(v) + 245)``, and ``pg18_fields(pg18_time_ns(v))`` gives
    back the value's ``(unix_ts_ms, rand_a)``. A v7 value from another generator has other
    bits in ``rand_a`` and a meaningless fraction; its millisecond is still right.

    >>> pg18_time_ns(build_v7_pg18(1_700_000_000_123_456_789, 0))
    1700000000123456788

    References: RFC 9562 §5.7, §6.2 Method 3; PostgreSQL 18 ``generate_uuidv7``.
    """
    if not isinstance(value, UUID) or value.version != 7 or value.int >> 62 & 0b11 != 0b10:
        raise InvalidField(f"value: expected a UUIDv7, found {value!r}", "value")
    unix_ts_ms, rand_a = value.int >> 80, value.int >> 64 & 0xFFF
    # The smallest sub_ms_ns with sub_ms_ns * 2**12 // 10**6 == rand_a: a ceiling division.
    return unix_ts_ms * NS_PER_MS - (-rand_a * NS_PER_MS // (1 << PG18_SUBMS_BITS))


class PG18V7Generator:
    """Thread-safe, fork-safe UUIDv7 generator with PostgreSQL 18's layout and step.

    One generator is one PostgreSQL backend: its ``previous_ns`` makes every value strictly
    greater than the one before (see the module docstring), while it stays within
    ``max_ahead_ms`` of the clock: a burst beyond that raises
    :class:`~uuidkit.CounterOverflowError` (ADVANCE's bound), a clock set back further
    restarts at the clock (KEEP's). In a forked child the state is forgotten and the lock
    replaced, as a new backend starts with ``previous_ns = 0``; the random bits come from
    the CSPRNG for every value (RFC 9562 §6.9).

    References: RFC 9562 §6.1, §6.2 Method 3, §6.9; PostgreSQL 18
    ``get_real_time_ns_ascending``.
    """

    __slots__ = ("__weakref__", "_clock", "_lock", "_random_bytes", "_timeline", "max_ahead_ms")

    def __init__(
        self,
        *,
        clock: Clock = _system.system_clock_ns,
        random_bytes: RandomBytes = _system.random_bytes,
        max_ahead_ms: int = DEFAULT_MAX_AHEAD_MS,
        monotonic_ns: Clock = _system.monotonic_ns,
    ) -> None:
        check_callable("clock", clock)
        check_callable("random_bytes", random_bytes)
        check_callable("monotonic_ns", monotonic_ns)
        #: How far ahead of the clock a value may be stamped, in milliseconds.
        self.max_ahead_ms = check_int("max_ahead_ms", max_ahead_ms, 0, 1 << 40)
        self._clock = clock
        self._random_bytes = random_bytes
        self._lock = threading.Lock()
        # Ticks are nanoseconds; PostgreSQL's two rules are the policies KEEP and ADVANCE
        # (WAIT never runs: its sleep and deadline are the system's, unused).
        self._timeline = Timeline(
            overflow=CounterOverflow.ADVANCE,
            regression=ClockRegression.KEEP,
            window_ticks=0,
            ahead_ticks=max_ahead_ms * NS_PER_MS,
            max_tick=_MAX_NS,
            unit="ns",
            exhausted=f"ns: the {PG18_MINIMAL_STEP_NS} ns step after the previous value",
            step=PG18_MINIMAL_STEP_NS,
            monotonic_ns=paired_monotonic(clock, monotonic_ns),
        )
        register_for_fork(self)

    def next_ns(self) -> int:
        """The nanosecond time of the next value (PostgreSQL's ``get_real_time_ns_ascending``,
        bounded by ``max_ahead_ms``).

        References: RFC 9562 §6.1, §6.2; PostgreSQL 18 ``get_real_time_ns_ascending``.
        """
        with self._lock:
            timeline = self._timeline
            # A reading ahead of the monotonic estimate by more than max_ahead_ms is
            # taken as the estimate (Timeline.screen).
            ns = timeline.screen(self._clock())
            previous_ns = timeline.tick
            if not timeline.has_tick:  # a new backend, whose previous_ns is 0 in PostgreSQL
                timeline.reading(max(ns, PG18_MINIMAL_STEP_NS), screened=True)
            elif ns > previous_ns + PG18_MINIMAL_STEP_NS:
                timeline.reading(ns, screened=True)  # the clock is followed
            elif ns >= previous_ns or timeline.reading(ns, screened=True) != RESTART:
                # PostgreSQL 18: "Guarantee the minimal step advancement of the timestamp"
                # (previous_ns + 245), or CounterOverflowError beyond max_ahead_ms.
                timeline.overflow(ns)
            return timeline.tick

    def __call__(self) -> UUID:
        """A new UUIDv7, strictly greater than the previous one from this generator.

        References: RFC 9562 §5.7, §6.2 Method 3.
        """
        ns = self.next_ns()
        rand_b = int.from_bytes(self._random_bytes(8), "big") & MASK_62
        return build_v7_pg18(ns, rand_b)

    def reset_after_fork(self) -> None:
        """Start over as a new backend does (run in a forked child).

        References: RFC 9562 §6.9.
        """
        self._lock = threading.Lock()
        self._timeline.reset()


#: The generator behind :func:`uuid7_pg18`.
DEFAULT_PG18_V7: Final = PG18V7Generator()


def uuid7_pg18() -> UUID:
    """A new UUIDv7 laid out as PostgreSQL 18's ``uuidv7()`` lays it out, from
    :data:`DEFAULT_PG18_V7`: strictly greater than the previous one from this process.

    A plain function (not the generator's bound method), published as
    ``uuidkit.generators.uuid7_pg18``: pickle, :mod:`copy` and Django's migration writer
    find it by that name.

    References: RFC 9562 §6.2 Method 3; PostgreSQL 18 ``uuidv7()``.
    """
    return DEFAULT_PG18_V7()


public_function(uuid7_pg18, "uuid7_pg18", "uuidkit.generators")
