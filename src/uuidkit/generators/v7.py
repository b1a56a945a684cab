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
    register_for_fork,
)
from uuidkit.generators._timeline import DEFAULT_MAX_AHEAD_MS
from uuidkit.generators._v7bulk import KIND_INTS, KIND_RECORDS, KIND_UUIDS
from uuidkit.timestamps import NS_PER_MS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Any, Final, TypeAlias

    from uuidkit.generators._v7config import V7Config  # loaded on first use, see __getattr__

    #: What a generator is built from: a ``V7Config``, or :data:`DEFAULT_SETTINGS`.
    V7Settings: TypeAlias = "V7Config | _DefaultSettings"

__all__ = ["V7Config", "V7Counter", "V7Generator", "V7Layout"]

#: RFC 9562 §5.7: rand_a (12 bits) and rand_b (62 bits) together.
RAND_BITS: Final = 74
#: RFC 9562 §5.7: unix_ts_ms is 48 bits.
UNIX_TS_MS_BITS: Final = 48
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


class _DefaultSettings:
    """The values of ``V7Config()``, as plain attributes (a test checks they agree).

    The default generator (``uuid7()``, ``uuidkit gen``) is built from these rather than
    from a ``V7Config``, whose dataclass machinery would load :mod:`dataclasses` (see
    :mod:`uuidkit.generators._v7config`); its :attr:`V7Generator.config` is still a real
    ``V7Config()``, made when first read.
    """

    __slots__ = ()
    counter: Final = V7Counter.RANDOM_INCREMENT
    fraction_bits: Final = 0
    counter_bits: Final = 42
    guard_bits: Final = 1
    increment_bits: Final = 48
    overflow: Final = CounterOverflow.ADVANCE
    regression: Final = ClockRegression.KEEP
    regression_window_ms: Final = 1_000
    max_wait_ms: Final = 100
    max_ahead_ms: Final = DEFAULT_MAX_AHEAD_MS
    #: Method 2 without a fraction: the counter is all of rand_a and rand_b, no random tail.
    counter_length: Final = RAND_BITS
    tail_length: Final = 0


#: ``V7Config()``'s settings without the dataclass: what a generator made without a
#: configuration is built from.
DEFAULT_SETTINGS: Final = _DefaultSettings()


def __getattr__(name: str) -> object:
    """Load :class:`V7Config` on first use (see :mod:`uuidkit.generators._v7config`)."""
    if name != "V7Config":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from uuidkit.generators._v7config import V7Config

    globals()[name] = V7Config
    return V7Config


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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

    The state and the steps that make a value live in a
    :class:`~uuidkit.generators._v7build.V7State`; :class:`V7Layout` holds the bit plan
    and :class:`~uuidkit.generators._timeline.Timeline` every decision about time. When the
    compiled accelerator is built, :attr:`next` is its ``V7Core``: the common case (same
    tick, counter not exhausted) in C, everything else (the first value of a tick, clock
    regressions, overflows, every policy and error) the very same steps on the same
    state, random words and clock readings, so both paths give identical values.

    References: RFC 9562 §5.7, §6.1, §6.2, §6.9.
    """

    __slots__ = ("__weakref__", "_config", "_generate", "_reset", "next")

    def __init__(
        self,
        config: V7Config | None = None,
        *,
        clock: Clock = _system.system_clock_ns,
        random_bytes: RandomBytes = _system.random_bytes,
        sleep_ns: Sleep = _system.sleep_ns,
        monotonic_ns: Clock = _system.monotonic_ns,
    ) -> None:
        settings: V7Settings = DEFAULT_SETTINGS
        if config is not None:
            from uuidkit.generators._v7config import V7Config

            if not isinstance(config, V7Config):
                raise InvalidField(f"config: expected a V7Config, found {config!r}", "config")
            settings = config
        self._config = config
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
            settings, clock, random_bytes, sleep_ns, monotonic_ns
        )
        register_for_fork(self)

    @property
    def config(self) -> V7Config:
        """The configuration this generator was made with (``V7Config()`` if none was given).

        References: RFC 9562 §6.2.
        """
        config = self._config
        if config is None:  # made from DEFAULT_SETTINGS: the dataclass loads only now
            from uuidkit.generators._v7config import V7Config

            config = self._config = V7Config()
        return config

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

    def __init__(self, config: V7Settings) -> None:
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
