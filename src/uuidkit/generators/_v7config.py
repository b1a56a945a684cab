""":class:`V7Config`, the configuration of a :class:`~uuidkit.generators.v7.V7Generator`.

Imported as ``uuidkit.generators.V7Config`` or ``uuidkit.generators.v7.V7Config``. It lives
apart from the generator because creating a dataclass loads :mod:`dataclasses`, and with it
inspect, ast and dis: about 10 ms, most of ``uuidkit gen``'s start-up. A generator made
without a configuration is built from :data:`uuidkit.generators.v7.DEFAULT_SETTINGS` (the
same values as plain attributes), so ``uuid7()`` and ``uuidkit gen`` never load this module;
it loads with the first ``V7Config`` a program names or a generator's ``config`` it reads.

References: RFC 9562 §6.2.
"""

from __future__ import annotations

from dataclasses import dataclass

from uuidkit.generators._policy import ClockRegression, CounterOverflow, check_choice, check_int
from uuidkit.generators._timeline import DEFAULT_MAX_AHEAD_MS
from uuidkit.generators.v7 import RAND_BITS, V7Counter

__all__ = ["V7Config"]


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
