"""The UUIDv7 generator: every method of RFC 9562 §6.2 as a configuration, never a duplicate.

Bit plan of the 74 bits after ``unix_ts_ms`` (rand_a then rand_b, version and variant
skipped), most significant first::

    | fraction (Method 3, F bits) | counter (C bits) | random tail (74 - F - C bits) |

- Method 1, :attr:`V7Counter.DEDICATED`: ``C = counter_bits`` (12 to 42), seeded randomly at
  each new tick with its top ``guard_bits`` zero, incremented by 1; the tail is fresh random
  bits for every UUID.
- Method 2, :attr:`V7Counter.RANDOM_INCREMENT`: the counter is everything after the fraction
  (``C = 74 - F``), seeded randomly with ``guard_bits`` zero, incremented by a random amount
  in ``[1, 2**increment_bits]``.
- Method 3: ``fraction_bits`` (1 to 12) of sub-millisecond time,
  ``floor(fraction_of_ms * 2**F)``, followed by either counter; with
  :attr:`V7Counter.NONE` a tick holds exactly one UUID and the overflow policy decides the
  next one. The "tick" is then ``unix_ts_ms`` extended by the F fraction bits.

References: RFC 9562 §5.7, §6.1, §6.2, §6.9.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from uuid import UUID

from uuidkit import _system
from uuidkit._bits import FRAME_HIGH_SHIFT, FRAME_MID_SHIFT, MASK_62, version_bits
from uuidkit.errors import InvalidField
from uuidkit.generators._policy import (
    Clock,
    ClockRegression,
    CounterOverflow,
    RandomBytes,
    Sleep,
    check_callable,
    check_choice,
    check_int,
    register_for_fork,
)
from uuidkit.generators._timeline import DEFAULT_MAX_AHEAD_MS
from uuidkit.generators._v7bulk import KIND_INTS, KIND_RECORDS, KIND_UUIDS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = ["V7Config", "V7Counter", "V7Generator", "V7Layout"]

#: RFC 9562 §5.7: rand_a (12 bits) and rand_b (62 bits) together.
RAND_BITS: Final = 74
#: RFC 9562 §5.7: unix_ts_ms is 48 bits.
UNIX_TS_MS_BITS: Final = 48
NS_PER_MS: Final = 1_000_000
_RAND_A_TOP_SHIFT: Final = FRAME_MID_SHIFT + 12
_VERSION_7: Final = version_bits(7)


class V7Counter(enum.Enum):
    """Which RFC 9562 §6.2 counter method follows the timestamp (and fraction).

    References: RFC 9562 §6.2.
    """

    #: Method 1: fixed bit-length dedicated counter, random tail per UUID.
    DEDICATED = "dedicated"
    #: Method 2: monotonic random: the random bits themselves are the counter.
    RANDOM_INCREMENT = "random-increment"
    #: No counter: one UUID per tick (use with Method 3's fraction bits).
    NONE = "none"


@dataclass(frozen=True, slots=True)
class V7Config:
    """How a :class:`V7Generator` lays out and advances its bits.

    The default is Method 2 with 48-bit random increments over a 74-bit counter whose top
    bit is a rollover guard: each UUID is at least 2**48 guesses away from the previous one
    (RFC 9562 §6.9), and a millisecond holds at least 2**73 / 2**48 = 2**25 values, far more
    than one process can produce, so the timestamp only advances ahead of the clock on a
    true overflow and never drifts in steady state (the drift of CPython 3.14 and of the
    ``uuid6`` package comes from moving the timestamp forward on ordinary calls).

    References: RFC 9562 §6.2 (Methods 1-3, Counter Rollover Guards, Counter Length).
    """

    #: Which counter method follows the timestamp and fraction.
    counter: V7Counter = V7Counter.RANDOM_INCREMENT
    #: Method 3 sub-millisecond fraction, in bits (0 = none, at most 12).
    fraction_bits: int = 0
    #: Method 1 counter length, in bits (RFC 9562 §6.2: "at least 12 bits but no longer than 42").
    counter_bits: int = 42
    #: Leading counter bits set to zero at each seeding (rollover guard), in bits.
    guard_bits: int = 1
    #: Method 2 increment size: uniform in [1, 2**increment_bits]; 0 means always 1.
    increment_bits: int = 48
    #: What to do when the counter of a tick is exhausted.
    overflow: CounterOverflow = CounterOverflow.ADVANCE
    #: What to do when the clock reads earlier than the last timestamp used.
    regression: ClockRegression = ClockRegression.KEEP
    #: RESEED only: regressions larger than this, in milliseconds, restart at the clock's time.
    regression_window_ms: int = 1_000
    #: WAIT only: longest total wait before raising, in milliseconds (monotonic time).
    max_wait_ms: int = 100
    #: How far ahead of the clock values may run (KEEP after a regression, ADVANCE after an
    #: overflow), in milliseconds; beyond it KEEP restarts at the clock, ADVANCE raises.
    max_ahead_ms: int = DEFAULT_MAX_AHEAD_MS

    def __post_init__(self) -> None:
        check_choice("counter", self.counter, V7Counter)
        check_choice("overflow", self.overflow, CounterOverflow)
        check_choice("regression", self.regression, ClockRegression)
        _check_range("fraction_bits", self.fraction_bits, 0, 12)
        if self.counter is V7Counter.DEDICATED:
            _check_range("counter_bits", self.counter_bits, 12, 42)
        if self.counter is not V7Counter.NONE:
            _check_range("guard_bits", self.guard_bits, 0, self.counter_length)
        if self.counter is V7Counter.RANDOM_INCREMENT:
            # RFC 9562 §6.2 "Counter Rollover Guards": the increment must be shorter than the
            # random value it is added to.
            _check_range("increment_bits", self.increment_bits, 0, min(64, self.counter_length - 1))
        _check_range("regression_window_ms", self.regression_window_ms, 0, 1 << 48)
        _check_range("max_wait_ms", self.max_wait_ms, 0, 1 << 32)
        _check_range("max_ahead_ms", self.max_ahead_ms, 0, 1 << 40)

    @property
    def counter_length(self) -> int:
        """The counter's length in bits (C in the module's bit plan).

        References: RFC 9562 §6.2.
        """
        if self.counter is V7Counter.DEDICATED:
            return self.counter_bits
        if self.counter is V7Counter.RANDOM_INCREMENT:
            return RAND_BITS - self.fraction_bits
        return 0

    @property
    def tail_length(self) -> int:
        """Random bits after the counter, fresh for every UUID.

        References: RFC 9562 §6.2.
        """
        return RAND_BITS - self.fraction_bits - self.counter_length


def _check_range(name: str, value: int, low: int, high: int) -> None:
    check_int(name, value, low, high)


class V7Generator:
    """A thread-safe, fork-safe UUIDv7 generator with the RFC 9562 §6.2 method chosen by config.

    - **Monotonic**: every value is greater than the previous one from this generator, and
      is checked against it before being returned (RFC 9562 §6.2 "Monotonic Error Checking").
    - **Reseeding**: the counter is seeded from the random source at every new tick, with
      ``guard_bits`` leading zeros; the tail (Method 1) is fresh for every UUID.
    - **Clock regression**: ``config.regression``, decided by the shared
      :class:`~uuidkit.generators._timeline.Timeline`: KEEP (default) keeps the last
      timestamp and keeps counting while it is at most ``max_ahead_ms`` ahead of the clock,
      and restarts at the clock with a fresh seed beyond that; RESEED restarts as soon as the
      clock is more than ``regression_window_ms`` behind; RAISE raises
      :class:`~uuidkit.ClockRegressionError` (beyond the bound once more, then restarts).
    - **Counter overflow**: ``config.overflow``: ADVANCE (default) moves the timestamp one
      tick ahead of the clock and reseeds, never more than ``max_ahead_ms`` ahead; WAIT
      sleeps until the clock reaches a later tick (``max_wait_ms`` on a monotonic clock, then
      raises); RAISE raises :class:`~uuidkit.CounterOverflowError`. Never a duplicate.
    - **Thread safety**: one re-entrant :class:`threading.RLock` around each value (and
      around a whole :meth:`generate` block), so values are totally ordered in lock
      acquisition order. With the compiled accelerator, the common case runs in C without
      the lock: it reads the clock, advances the counter and checks the value with the GIL
      held and no Python code in between, so it is atomic all the same; it never touches
      the state while the locked Python path holds it (a busy flag), and an injected clock,
      being Python code, is read under the lock.
    - **Fork**: in a forked child the counter, timestamp and buffered random words are
      forgotten and the lock is replaced, so the child never continues the parent's
      sequence (RFC 9562 §6.9).
    - **Persistence**: none; the state lives in memory. For state that survives restarts
      and is shared between processes, see :class:`uuidkit.generators.SharedV7Generator`.

    The state lives in closure cells rather than attributes: on CPython 3.11 this saves
    about 100 ns per call on the pure-Python path. The closure inlines only the common
    case; :class:`V7Layout` holds the bit plan and
    :class:`~uuidkit.generators._timeline.Timeline` every decision about time. When the
    compiled accelerator is built, :attr:`next` is its ``V7Core``: the common case (same
    tick, counter not exhausted) in C, everything else (the first value of a tick, clock
    regressions, overflows, every policy and error) the very same closure on the same
    state, random words and clock readings, so both paths give identical values.

    References: RFC 9562 §5.7, §6.1, §6.2, §6.9.
    """

    __slots__ = ("__weakref__", "_generate", "_reset", "config", "next")

    def __init__(
        self,
        config: V7Config | None = None,
        *,
        clock: Clock = _system.system_clock_ns,
        random_bytes: RandomBytes = _system.random_bytes,
        sleep_ns: Sleep = _system.sleep_ns,
        monotonic_ns: Clock = _system.monotonic_ns,
    ) -> None:
        self.config = config if config is not None else V7Config()
        if not isinstance(self.config, V7Config):
            raise InvalidField(f"config: expected a V7Config, found {config!r}", "config")
        for name, function in (
            ("clock", clock),
            ("random_bytes", random_bytes),
            ("sleep_ns", sleep_ns),
            ("monotonic_ns", monotonic_ns),
        ):
            check_callable(name, function)
        self.next: Callable[[], UUID]
        self._generate: Callable[[int, int], Any]
        self._reset: Callable[[], None]
        from uuidkit.generators._v7build import build  # it builds on this module's classes

        self.next, self._generate, self._reset = build(
            self.config, clock, random_bytes, sleep_ns, monotonic_ns
        )
        register_for_fork(self)

    def __call__(self) -> UUID:
        """The next UUIDv7 (same as :attr:`next`, which skips one call level).

        References: RFC 9562 §5.7, §6.2.
        """
        return self.next()

    def generate(self, count: int) -> list[UUID]:
        """``count`` consecutive UUIDv7 values, increasing, made under one lock acquisition.

        References: RFC 9562 §6.2 ("Take care to ensure UUIDs generated in batches are also
        monotonic").
        """
        values: list[UUID] = self._generate(count, KIND_UUIDS)
        return values

    def generate_ints(self, count: int) -> list[int]:
        """Like :meth:`generate`, as 128-bit integers (no ``UUID`` objects to allocate).

        References: RFC 9562 §6.2.
        """
        values: list[int] = self._generate(count, KIND_INTS)
        return values

    def generate_records(self, count: int) -> bytearray:
        """Like :meth:`generate`, as ``count`` packed 16-byte big-endian records.

        The layout of a numpy ``'V16'`` array and of Arrow's ``arrow.uuid`` storage
        (``numpy.frombuffer(records, dtype="V16")`` wraps it without a copy).

        References: RFC 9562 §4, §6.2.
        """
        records: bytearray = self._generate(count, KIND_RECORDS)
        return records

    def reset_after_fork(self) -> None:
        """Forget counter, timestamp and buffered randomness; new lock (run in a forked child).

        References: RFC 9562 §6.9.
        """
        self._reset()


class V7Layout:
    """The bit plan of one :class:`V7Config`: ticks, prefixes, seeds and whole values.

    Pure functions of the configuration (no state, no clock): the generator's hot path
    inlines :meth:`value`, and the tests check each part against RFC 9562 §5.7 and §6.2.

    References: RFC 9562 §5.7, §6.2 (Methods 1-3).
    """

    __slots__ = (
        "counter_bits",
        "fraction_bits",
        "increment_mask",
        "max_tick",
        "seed_mask",
        "tail_bits",
        "tail_mask",
        "tick_ns",
        "wide_tail_mask",
    )

    def __init__(self, config: V7Config) -> None:
        self.fraction_bits = config.fraction_bits
        self.counter_bits = config.counter_length
        self.tail_bits = config.tail_length
        self.tail_mask = (1 << min(self.tail_bits, 64)) - 1
        #: Mask of the tail bits beyond the first 64 (a Method 1 tail can be 62 bits, a
        #: Method 3 fraction with no counter leaves up to 73).
        self.wide_tail_mask = (1 << max(self.tail_bits - 64, 0)) - 1
        self.seed_mask = (1 << max(self.counter_bits - config.guard_bits, 0)) - 1
        self.increment_mask = (
            (1 << config.increment_bits) - 1 if config.counter is V7Counter.RANDOM_INCREMENT else 0
        )
        self.max_tick = (1 << (UNIX_TS_MS_BITS + self.fraction_bits)) - 1
        self.tick_ns = max(NS_PER_MS >> self.fraction_bits, 1)

    def ticks_of(self, now_ns: int) -> int:
        """The tick of ``now_ns``: ``unix_ts_ms`` followed by the Method 3 fraction bits.

        References: RFC 9562 §6.2 Method 3 (``floor(fraction_of_ms * 2**F)``).
        """
        # floor(ns * 2**F / 10**6) = unix_ts_ms * 2**F + floor(sub_ms_ns * 2**F / 10**6),
        # computed exactly in integers.
        return (now_ns << self.fraction_bits) // NS_PER_MS

    def prefix(self, tick: int) -> int:
        """``unix_ts_ms``, version, variant and fraction bits of every value of ``tick``.

        References: RFC 9562 §5.7; §6.2 Method 3 ("the additional time precision bits MUST
        follow the timestamp as the next available bit in the rand_a field").
        """
        fraction_bits = self.fraction_bits
        return (
            ((tick >> fraction_bits) << FRAME_HIGH_SHIFT)
            | _VERSION_7
            | ((tick & ((1 << fraction_bits) - 1)) << (_RAND_A_TOP_SHIFT - fraction_bits))
        )

    def seed(self, draw: Callable[[], int]) -> int:
        """A fresh counter from two random words, its top ``guard_bits`` zero.

        References: RFC 9562 §6.2 ("randomly initialize the counter with each new timestamp
        tick"; "Counter Rollover Guards").
        """
        if not self.seed_mask:
            return 0  # Method 3 alone: no counter to seed
        return ((draw() << 64) | draw()) & self.seed_mask

    def value(self, prefix: int, counter: int, word: int, draw: Callable[[], int]) -> int:
        """The 128-bit value: ``prefix``, then ``counter`` and the random tail in rand_a/rand_b.

        References: RFC 9562 §5.7.
        """
        low = counter
        if self.tail_bits:
            low = (low << self.tail_bits) | (word & self.tail_mask)
            if self.wide_tail_mask:
                low |= (draw() & self.wide_tail_mask) << 64
        return prefix | ((low >> 62) << FRAME_MID_SHIFT) | (low & MASK_62)
