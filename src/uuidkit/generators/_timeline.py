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

Wall-clock readings ahead of the monotonic clock (a clock that lies once):

A reading at most :attr:`Timeline.trust_tick` (the last trusted reading plus
``refresh_ticks``, at most one second) is taken as it is: the common case costs one
comparison, made in C by the compiled cores, and no monotonic reading. A reading beyond it is
checked against the monotonic clock: the monotonic estimate is the last trusted reading plus
the monotonic time elapsed since it (the *anchor*), and never below the highest
reading. A reading at most ``ahead_ticks`` above
the estimate is trusted and becomes the anchor. A reading further ahead (an NTP step, an RTC
glitch, a wrong year) is not stamped: the timeline goes on as if the clock had read the
estimate, so the values stay increasing and no call fails. While readings stay ahead, every
reading is checked (:attr:`Timeline.trust_tick` is held at the estimate, so the compiled
cores hand each later reading to the slow path); the first reading back within the bound
ends the suspicion. A forward step that persists is a correction: once the wall clock has
been ahead since a reading ``STEP_ACCEPT_NS`` (2 s) of monotonic time ago, the next reading
still ahead is trusted and anchors the timeline there. The cost to availability: none (no
call fails or waits); for up to 2 s after a real forward step the values carry the estimate,
which trails the new wall time by the size of the step.

So one glitch of any size puts no value more than ``ahead_ticks`` above the estimate; a step
forward that persists is followed within 2 s. Repeated glitches each within the bound are
followed like a clock that runs fast (each is trusted). The check needs a monotonic clock
that belongs with the wall clock: a timeline given none (``monotonic_ns=None``, as for an
injected wall clock paired with the system's monotonic clock) trusts every reading.

The timeline holds no counter, no randomness and no lock, and reads no wall clock: the caller
holds its lock around every call, and :meth:`Timeline.reset` forgets everything in a forked
child. It reads the monotonic clock it was given only to check a reading beyond
:attr:`Timeline.trust_tick`.

References: RFC 9562 §6.1 (clock regression, Error Handling; "altering the clock ... can
cause issues"), §6.2 (Counter Rollover Handling, Monotonic Error Checking); RFC 4122
§4.2.1.2.
"""

from __future__ import annotations

from uuidkit.errors import ClockRegressionError, CounterOverflowError, GeneratorError
from uuidkit.generators._policy import Clock, ClockRegression, CounterOverflow

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "DEFAULT_MAX_AHEAD_MS",
    "NEW",
    "NO_TICK",
    "REFRESH_NS",
    "RESTART",
    "SAME",
    "STEP_ACCEPT_NS",
    "WAIT",
    "Timeline",
]

#: Default bound on how far ahead of the clock a generator's values may run, and how far a
#: wall-clock reading may run ahead of the monotonic estimate before it is not stamped, in
#: milliseconds: more than a leap second, the usual NTP step (128 ms to a few seconds) and
#: the drift of a wall clock against the monotonic clock between two checks (at most one
#: second apart while values are made); far less than a wrong day or year. A value made
#: during one glitch of any size is at most this far ahead of true time.
DEFAULT_MAX_AHEAD_MS: Final = 10_000
#: Monotonic time after which a wall clock that has stayed ahead of the estimate is trusted:
#: a forward step that persists this long is a correction, not a glitch.
STEP_ACCEPT_NS: Final = 2_000_000_000
#: Longest wall time a trusted reading vouches for: readings up to this far above it are
#: taken without a monotonic reading (at most ``ahead_ticks``).
REFRESH_NS: Final = 1_000_000_000

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
        "_anchor_mono",
        "_anchor_tick",
        "_max_tick",
        "_may_restart",
        "_monotonic_ns",
        "_rate",
        "_refresh_ticks",
        "_step",
        "_suspect_mono",
        "_window",
        "ahead_ticks",
        "clock_tick",
        "exhausted",
        "overflow_policy",
        "regression_policy",
        "restart_pending",
        "steps_followed",
        "tick",
        "trust_tick",
        "unit",
        "untrusted_readings",
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
        monotonic_ns: Clock | None = None,
        tick_rate: tuple[int, int] = (1, 1),
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
        #: The monotonic clock the readings are checked against (None: no check), and how
        #: many ticks ``n`` nanoseconds are: ``n * tick_rate[0] // tick_rate[1]``.
        self._monotonic_ns = monotonic_ns
        self._rate = tick_rate
        self._refresh_ticks = min(self.elapsed_ticks(REFRESH_NS), ahead_ticks)
        #: Readings not stamped (ahead of the monotonic estimate by more than the bound), and
        #: forward steps followed after persisting for ``STEP_ACCEPT_NS``.
        self.untrusted_readings = 0
        self.steps_followed = 0
        self.tick = NO_TICK
        self.clock_tick = NO_TICK
        self.restart_pending = False
        self._forget_anchor()

    def elapsed_ticks(self, duration_ns: int) -> int:
        """``duration_ns`` nanoseconds as whole ticks (rounded down)."""
        numerator, denominator = self._rate
        return duration_ns * numerator // denominator

    def _forget_anchor(self) -> None:
        #: Readings above this tick are checked against the monotonic clock; the compiled
        #: cores hand them to the slow path. Without a monotonic clock: none is checked.
        self.trust_tick = NO_TICK - 1 if self._monotonic_ns is not None else self._max_tick
        self._anchor_tick = NO_TICK
        self._anchor_mono = 0
        self._suspect_mono: int | None = None

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
        self._forget_anchor()

    def screen(self, now_tick: int) -> int:
        """The tick to take a reading of ``now_tick`` as: the reading itself, or the monotonic
        estimate when the reading runs ahead of it by more than ``ahead_ticks`` (see the
        module). Reads the monotonic clock only for a reading above :attr:`trust_tick`, or
        while earlier readings ran ahead.

        References: RFC 9562 §6.1 ("altering the clock ... can cause issues"), §6.2.
        """
        if now_tick <= self.trust_tick and self._suspect_mono is None:
            return now_tick
        if now_tick == self.tick and self._suspect_mono is not None:
            return now_tick  # the estimate this timeline stamps: no new evidence
        monotonic_ns = self._monotonic_ns
        if monotonic_ns is None:
            return now_tick
        mono = monotonic_ns()
        if self._anchor_tick == NO_TICK:  # the first reading: nothing to check it against
            return self._anchor(now_tick, mono)
        # Never below the highest reading taken: a glitch ahead must not move values back.
        estimate = max(
            self._anchor_tick + self.elapsed_ticks(mono - self._anchor_mono), self.clock_tick
        )
        if now_tick - estimate <= self.ahead_ticks:
            return self._anchor(now_tick, mono)
        suspect = self._suspect_mono
        if suspect is None:
            self._suspect_mono = mono
        elif mono - suspect >= STEP_ACCEPT_NS:
            self.steps_followed += 1  # ahead for the whole time: a correction, followed
            return self._anchor(now_tick, mono)
        self.untrusted_readings += 1
        estimate -= estimate % self._step  # a tick the generator can stamp (v8: 16 apart)
        self.trust_tick = estimate  # every later reading above it is checked
        return estimate

    def _anchor(self, now_tick: int, mono: int) -> int:
        self._anchor_tick, self._anchor_mono, self._suspect_mono = now_tick, mono, None
        self.trust_tick = now_tick + self._refresh_ticks
        return now_tick

    def reading(self, now_tick: int, *, screened: bool = False) -> int:
        """The move for a clock reading of ``now_tick`` (call it when it differs from ``tick``).

        A reading ahead of the monotonic estimate by more than the bound is taken as the
        estimate (:meth:`screen`), unless the caller has screened it already.

        References: RFC 9562 §6.2 "Monotonic Error Checking".
        """
        if not screened and (now_tick > self.trust_tick or self._suspect_mono is not None):
            now_tick = self.screen(now_tick)
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
        if self._suspect_mono is not None:  # the reading ran ahead: the estimate stands for it
            now_tick = min(now_tick, self.trust_tick)
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
