"""The one policy engine of every time-based generator: where in time the next value goes.

Every decision about a tick lives here: whether a clock reading keeps the current tick, moves
to a later one or restarts at an earlier one; what an exhausted counter does; how far ahead of
the clock values may run. The generators (pure Python, and the compiled cores, whose every
decision is checked against this module's in the tests) hold counters, randomness and
layouts, and follow the moves this module returns. The timeline never reads a clock and
never sleeps: like a pure function of the time, it is given each reading, and where the
answer is "wait until tick t" the caller waits and hands it the next reading.

A generator reads its clock as a *tick* (v7: a millisecond, or a fraction of one with
Method 3; v1/v6: one clock interval of ``clock_resolution_ns``; time-based v8: one
``tick_ns``) and counts values within a tick. :class:`Timeline` decides, for every reading
that differs from the current tick, and for every exhausted counter, what happens next,
under the policies of :class:`~uuidkit.generators.ClockRegression` and
:class:`~uuidkit.generators.CounterOverflow` and one bound, ``ahead_ticks``: how far the
stamped tick may run ahead of the clock.

The answer is one of four moves:

- :data:`SAME`: keep the current tick and keep counting;
- :data:`NEW`: a later tick: reseed the counter (values keep increasing);
- :data:`RESTART`: an earlier tick, at the clock: reseed the counter *and* accept values
  below the earlier ones (v1/v6 also change the clock sequence, RFC 9562 §5.1 MUST);
- :data:`WAIT` (only from :meth:`Timeline.overflow`): wait until the clock reaches
  :attr:`Timeline.wait_tick`, then pass that reading to :meth:`Timeline.reading` (a NEW).

Clock regression (the reading is below the highest earlier reading):

======== ============================================================================
KEEP     keep the tick while it is at most ``ahead_ticks`` ahead of the clock; further
         ahead (the clock was corrected by more than the bound), RESTART at the clock.
RESEED   as KEEP, but RESTART as soon as the clock is more than ``window_ticks`` below
         its highest reading.
RAISE    :class:`~uuidkit.ClockRegressionError` with the state unchanged while the
         tick is within the bound, so the values resume when the clock returns; beyond
         the bound it raises once more and the next value RESTARTs at the clock.
======== ============================================================================

A generator that may never go below its earlier values (``may_restart=False``: a node-bound
layout has no clock sequence to change, so values below the earlier ones could repeat one)
raises :class:`~uuidkit.ClockRegressionError` wherever a RESTART would be, state unchanged,
until the clock is back within the bound.

A reading below the current tick but not below the highest reading is no regression: the
tick was moved ahead by ADVANCE, and the generator keeps counting (within the bound).

Counter overflow (every value of the tick is used):

======== ============================================================================
ADVANCE  NEW at the next tick, if that stays within ``ahead_ticks`` of the clock;
         otherwise :class:`~uuidkit.CounterOverflowError` (never unbounded run-ahead).
WAIT     WAIT: the caller waits for the clock to reach a later tick (bounded by its own
         monotonic deadline), then passes the reading on.
RAISE    :class:`~uuidkit.CounterOverflowError`, state unchanged.
======== ============================================================================

The timeline holds no counter, no randomness, no clock and no lock: the caller holds its lock
around every call, and :meth:`Timeline.reset` forgets everything in a forked child.

References: RFC 9562 §6.1 (clock regression, Error Handling), §6.2 (Counter Rollover
Handling, Monotonic Error Checking); RFC 4122 §4.2.1.2.
"""

from __future__ import annotations

from uuidkit.errors import ClockRegressionError, CounterOverflowError, GeneratorError
from uuidkit.generators._policy import ClockRegression, CounterOverflow

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Final

__all__ = ["DEFAULT_MAX_AHEAD_MS", "NEW", "NO_TICK", "RESTART", "SAME", "WAIT", "Timeline"]

#: Default bound on how far ahead of the clock a generator's values may run, in
#: milliseconds: more than a leap second or an NTP step, far less than a wrong year.
DEFAULT_MAX_AHEAD_MS: Final = 10_000

#: Keep the current tick and keep counting.
SAME: Final = 0
#: ``Timeline.tick`` and ``clock_tick`` before the first value (see ``Timeline.has_tick``).
NO_TICK: Final = -1
#: A later tick: reseed the counter.
NEW: Final = 1
#: An earlier tick at the clock: reseed, and accept values below the earlier ones.
RESTART: Final = 2
#: Every value of the tick is used: wait until the clock reads ``Timeline.wait_tick``.
WAIT: Final = 3


class Timeline:
    """The current tick of one generator and the policies that move it (see the module).

    ``tick`` is the tick values are stamped with; ``clock_tick`` is the highest tick read
    from the clock. Both are :data:`NO_TICK` before the first value: ask :attr:`has_tick`,
    never compare a reading with ``tick`` alone (a reading can be any int, -1 included).

    References: RFC 9562 §6.1, §6.2.
    """

    __slots__ = (
        "_max_tick",
        "_may_restart",
        "_step",
        "_window",
        "ahead_ticks",
        "clock_tick",
        "exhausted",
        "overflow_policy",
        "regression_policy",
        "restart_pending",
        "tick",
        "unit",
    )

    def __init__(
        self,
        *,
        overflow: CounterOverflow,
        regression: ClockRegression,
        window_ticks: int,
        ahead_ticks: int,
        max_tick: int,
        unit: str,
        exhausted: str,
        step: int = 1,
        may_restart: bool = True,
    ) -> None:
        #: The policies and the run-ahead bound, which a compiled core is also built from.
        self.overflow_policy = overflow
        self.regression_policy = regression
        self.ahead_ticks = ahead_ticks
        self._window = window_ticks
        self._max_tick = max_tick
        self._step = step
        self._may_restart = may_restart
        #: What one tick is, for messages ("ms", "100 ns ticks", ...).
        self.unit = unit
        #: What an exhausted tick means, for the overflow message.
        self.exhausted = exhausted
        self.tick = NO_TICK
        self.clock_tick = NO_TICK
        self.restart_pending = False

    @property
    def has_tick(self) -> bool:
        """Whether a value was stamped since the start or the last :meth:`reset`.

        Every tick held is in 0..max_tick (:meth:`_start` refuses any other, and the
        generators that set ``tick`` themselves set such ticks), so ``NO_TICK`` is never a
        tick; but a clock reading can be -1, so "no tick yet" is this test, not equality.
        """
        return self.tick >= 0

    @property
    def wait_tick(self) -> int:
        """The tick the clock must reach after a :data:`WAIT` (the one after :attr:`tick`).

        References: RFC 9562 §6.1 "Error Handling" ("stall the UUID generator until the
        system clock catches up").
        """
        return self.tick + 1

    def reset(self) -> None:
        """Forget the current tick and every reading (a forked child starts afresh).

        References: RFC 9562 §6.9.
        """
        self.tick = self.clock_tick = NO_TICK
        self.restart_pending = False

    def reading(self, now_tick: int) -> int:
        """The move for a clock reading of ``now_tick`` (call it when it differs from ``tick``).

        References: RFC 9562 §6.2 "Monotonic Error Checking".
        """
        if not self.has_tick or now_tick > self.tick:  # the first reading, or a later tick
            return self._start(now_tick, NEW)
        if now_tick == self.tick:
            return SAME
        if self.restart_pending:
            return self._start(now_tick, RESTART)
        if now_tick >= self.clock_tick:
            # Behind a tick that ADVANCE moved ahead: the clock has not gone back.
            self.clock_tick = now_tick
            return SAME
        ahead = self.tick - now_tick
        if self.regression_policy is ClockRegression.RAISE:
            self._raise_regression(now_tick, ahead)
        if ahead > self.ahead_ticks or (
            self.regression_policy is ClockRegression.RESEED
            and self.clock_tick - now_tick > self._window
        ):
            if not self._may_restart:
                self._refuse_restart(now_tick)
            return self._start(now_tick, RESTART)
        return SAME

    def reserve_through(self, tick: int) -> None:
        """Stamp ``tick`` from now on, without a clock reading: the caller has handed out
        every value of the ticks above the current one up to ``tick`` (a block of
        timestamps, RFC 9562 §6.3), so later values go above it.

        References: RFC 9562 §6.2 ("MAY increment the timestamp ahead of the actual time"),
        §6.3 ("allocate a block of timestamps").
        """
        if self.has_tick and tick <= self.tick:
            raise GeneratorError(f"reserve: tick {tick} is not above the current {self.tick}")
        self._start(tick, NEW, from_clock=False)

    def overflow(self, now_tick: int) -> int:
        """The move when every value of the current tick is used; the clock reads ``now_tick``.

        Returns :data:`NEW` (ADVANCE), :data:`WAIT` (the caller waits for
        :attr:`wait_tick`), or raises :class:`~uuidkit.CounterOverflowError`.

        References: RFC 9562 §6.1 ("MUST NOT knowingly return duplicate values due to a
        counter rollover"), §6.2 "Counter Rollover Handling"; RFC 4122 §4.2.1.2.
        """
        policy = self.overflow_policy
        if policy is CounterOverflow.ADVANCE:
            following = self.tick + self._step
            if following - max(now_tick, self.clock_tick) > self.ahead_ticks:
                raise CounterOverflowError(
                    f"{self.exhausted}: ADVANCE would stamp tick {following}, more than "
                    f"{self.ahead_ticks} {self.unit} ahead of the clock (the run-ahead bound)"
                )
            return self._start(following, NEW, from_clock=False)
        if policy is CounterOverflow.RAISE:
            raise CounterOverflowError(f"{self.exhausted} (tick {self.tick}); policy RAISE")
        return WAIT

    def _start(self, tick: int, move: int, *, from_clock: bool = True) -> int:
        if not 0 <= tick <= self._max_tick:  # e.g. a clock that reads before the epoch
            raise GeneratorError(
                f"timestamp: tick {tick} does not fit the field (0 to {self._max_tick})"
            )
        self.tick = tick
        if from_clock and (move == RESTART or tick > self.clock_tick):
            self.clock_tick = tick
        self.restart_pending = False
        return move

    def _regression_detail(self, now_tick: int) -> str:
        behind = self.clock_tick - now_tick
        return (
            f"clock went back {behind} {self.unit} below its highest reading "
            f"(tick {self.clock_tick})"
        )

    def _raise_regression(self, now_tick: int, ahead: int) -> None:
        detail = f"{self._regression_detail(now_tick)}; policy RAISE"
        if ahead > self.ahead_ticks and self._may_restart:
            # The clock was corrected by more than the run-ahead bound: rather than raise
            # until it has caught up (possibly a year), restart at the clock next time.
            self.restart_pending = True
            detail += f"; beyond the {self.ahead_ticks} {self.unit} bound: the next value restarts"
        raise ClockRegressionError(detail)

    def _refuse_restart(self, now_tick: int) -> None:
        raise ClockRegressionError(
            f"{self._regression_detail(now_tick)}, more than {self.ahead_ticks} {self.unit} "
            "below the last value: this generator never goes below its values (it has no "
            "clock sequence to change), so it resumes when the clock is back within the bound"
        )
