"""The reservation bookkeeping behind the state-file generators (see
:mod:`uuidkit.generators.shared` for the design and the guarantees).

References: RFC 9562 §6.3; RFC 4122 §4.2.1.1-§4.2.1.4.
"""

from __future__ import annotations

import abc
import os
import threading
import warnings
from dataclasses import dataclass, replace
from typing import Final, Self
from uuid import UUID

from uuidkit import _system
from uuidkit._construct import from_int_unchecked
from uuidkit.errors import GeneratorError, InvalidField
from uuidkit.generators._policy import (
    Clock,
    ClockRegression,
    ClockWait,
    CounterOverflow,
    RandomBytes,
    Sleep,
    check_callable,
    check_count,
    check_int,
    paired_monotonic,
    register_for_fork,
)
from uuidkit.generators._timeline import DEFAULT_MAX_AHEAD_MS, RESTART, SAME, Timeline
from uuidkit.generators.statefile import (
    DEFAULT_LOCK_TIMEOUT_MS,
    FutureStateWarning,
    StateFile,
    StoredState,
    warn_unavailable,
)
from uuidkit.timestamps import NS_PER_MS

__all__ = ["V7_COUNTER_BITS", "SharedConfig", "SharedGenerator"]

#: v7 layout of a shared generator: RFC 9562 §6.2 Method 1 counter of 42 bits (rand_a and
#: the top 30 bits of rand_b), then 32 random bits.
V7_COUNTER_BITS: Final = 42


@dataclass(frozen=True, slots=True)
class SharedConfig:
    """Reservation sizes and durability of a state-file generator.

    References: RFC 4122 §4.2.1.3 (window ahead), §4.2.1.4 (blocks).
    """

    #: Length of a reservation window, in milliseconds: how far ahead of the clock the stored
    #: timestamp is set, and how long a process generates without touching the file.
    window_ms: int = 1_000
    #: v7 only: counter values per range (per millisecond per process before re-reserving).
    counter_block: int = 1 << 20
    #: How far ahead of the clock values and stored windows may run, in milliseconds (at
    #: least ``window_ms``; ``None``: 10 s, or ``window_ms`` if longer). A generator whose
    #: clock falls further behind its last value restarts at the clock; a stored window
    #: ending further ahead is "future-dated": a generator's first reservation (v7, v6)
    #: refuses it with :class:`~uuidkit.ClockRegressionError`, a later one (and v1) with a
    #: :class:`StateUnavailableWarning` and a fresh start.
    max_future_ms: int | None = None
    #: fsync the file and its directory on every write.
    durable: bool = True
    #: v1 only: longest wait for the clock to reach a new 100 ns tick, in milliseconds
    #: (RFC 4122 §4.2.1.2: stall rather than run ahead).
    max_wait_ms: int = 1_000
    #: Longest wait for another process's lock on the state file, in milliseconds.
    lock_timeout_ms: int = DEFAULT_LOCK_TIMEOUT_MS

    @property
    def future_limit_ms(self) -> int:
        """``max_future_ms``, or its default: the larger of 10 s and ``window_ms``.

        References: RFC 4122 §4.2.1.3.
        """
        if self.max_future_ms is not None:
            return self.max_future_ms
        return max(DEFAULT_MAX_AHEAD_MS, self.window_ms)

    def __post_init__(self) -> None:
        for name, low, high in (
            ("window_ms", 1, 1 << 32),
            ("counter_block", 1, 1 << (V7_COUNTER_BITS - 2)),
            ("max_wait_ms", 0, 1 << 32),
            ("lock_timeout_ms", 0, 1 << 32),
        ):
            check_int(name, getattr(self, name), low, high)
        if self.max_future_ms is not None:
            check_int("max_future_ms", self.max_future_ms, self.window_ms, 1 << 40)
        if type(self.durable) is not bool:
            raise InvalidField(f"durable: expected a bool, found {self.durable!r}", "durable")


class SharedGenerator(abc.ABC):
    """Reservation bookkeeping common to the v7 and v1/v6 state-file generators."""

    _KIND = "v7"
    _RANGE_BITS = V7_COUNTER_BITS
    _OVERFLOW = CounterOverflow.ADVANCE
    _REGRESSION = ClockRegression.KEEP
    _UNIT = "ms"
    #: v7, v6: a generator's first reservation starts above the stored window (see
    #: :meth:`_resume_state`); v1 joins the current window at the clock.
    _RESUMES_ABOVE = True

    def __init__(
        self,
        path: str | os.PathLike[str],
        config: SharedConfig | None,
        clock: Clock,
        random_bytes: RandomBytes,
        sleep_ns: Sleep = _system.sleep_ns,
        monotonic_ns: Clock = _system.monotonic_ns,
    ) -> None:
        self.config = config if config is not None else SharedConfig()
        if not isinstance(self.config, SharedConfig):
            raise InvalidField(f"config: expected a SharedConfig, found {config!r}", "config")
        for name, function in (
            ("clock", clock),
            ("random_bytes", random_bytes),
            ("sleep_ns", sleep_ns),
            ("monotonic_ns", monotonic_ns),
        ):
            check_callable(name, function)
        self.file = StateFile(
            path,
            durable=self.config.durable,
            lock_timeout_ms=self.config.lock_timeout_ms,
            monotonic_ns=monotonic_ns,
            sleep_ns=sleep_ns,
        )
        self._clock = clock
        self._random_bytes = random_bytes
        self._sleep_ns = sleep_ns
        self._monotonic_ns = monotonic_ns
        self._lock = threading.Lock()
        self._in_memory: StoredState | None = None  # set when the file cannot be written
        self._window_end = -1
        self._range_start = 0
        self._range_end = 0
        self._unit = -1  # time unit of the last value (ms or tick)
        self._node: int | None = None
        # Set by a restart: the next reservation ignores the stored window (it is too far
        # ahead of the clock) and opens a new one at the clock.
        self._fresh_start = False
        # False until this generator (or, after a fork, the child) has made a reservation:
        # the first one starts above every tick the file may have handed out (v6).
        self._resumed = False
        self._closed = False  # see close()
        # The same policy engine as the in-memory generators decides about the clock.
        self._timeline = Timeline(
            overflow=self._OVERFLOW,
            regression=self._REGRESSION,
            window_ticks=0,
            ahead_ticks=self._ahead_units(),
            max_tick=1 << 62,
            unit=self._UNIT,
            exhausted="the clock has not left the last time unit",
            monotonic_ns=paired_monotonic(clock, monotonic_ns),
            tick_rate=(self._units_per_ms(), NS_PER_MS),
        )
        #: Starts (first reservations) that found the state file's window more than
        #: ``max_future_ms`` after the clock and restarted at the clock, with a
        #: :class:`~uuidkit.generators.FutureStateWarning`.
        self.future_restarts = 0
        self._wait = ClockWait(
            clock,
            sleep_ns,
            monotonic_ns,
            self._units_of,
            NS_PER_MS // self._units_per_ms(),
            self.config.max_wait_ms * NS_PER_MS,
        )
        # RFC 4122 §4.2.1.1: "The state only needs to be read from stable storage once at
        # boot time": checked (and warned about) now; reservations re-read it under the lock
        # because other processes may have moved it.
        #: The state found at start-up (``None``: unavailable, with a warning).
        self.initial_state = self.file.read()
        register_for_fork(self)

    @abc.abstractmethod
    def _units_of(self, now_ns: int) -> int:
        """The time unit (v7: Unix ms; v1/v6: Gregorian 100 ns tick) of ``now_ns``."""

    def _range_size(self) -> int:
        return 1

    def _seed(self) -> int:
        # A fresh window starts at a random range with its top bit zero (rollover guard).
        bits = self._RANGE_BITS - 1
        return int.from_bytes(self._random_bytes(8)) & ((1 << bits) - 1)

    def _usable(self, stored: StoredState | None, now_unit: int) -> StoredState | None:
        if stored is None:
            return None
        if stored.kind != self._KIND:
            warn_unavailable(self.file.path, f"kind {stored.kind!r}, expected {self._KIND!r}")
            return None
        ahead = stored.window_end - now_unit
        if ahead <= self._ahead_units():
            return stored
        # Values up to the window end may have been issued by a process whose clock ran
        # that far ahead. Continuing above them would stamp every value that far ahead;
        # refusing would stop every start until the clock catches up (possibly a year). So
        # the start goes on at the clock, loudly: values below the future-dated ones.
        self.future_restarts += 1
        warnings.warn(
            f"{self.file.path}: the stored window ends {ahead} {self._UNIT} after the clock, "
            f"beyond max_future_ms={self.config.future_limit_ms}: restarting at the clock, "
            "below the values made while the clock was ahead",
            FutureStateWarning,
            stacklevel=5,
        )
        if not self._RESUMES_ABOVE or self._resumed:
            return None
        # A first reservation (v7, v6) starts at the clock but keeps the file's next range
        # (v6: its next clock sequence, RFC 9562 §5.1 "MUST be changed" when the clock is
        # set backwards), so values at the ticks the window covered differ from those made
        # in it when the clock reaches them.
        return replace(
            stored,
            window_start=min(stored.window_start, now_unit - 1),
            window_end=now_unit - 1,
        )

    def _screened(self, now_ns: int) -> tuple[int, int]:
        """The time unit of a clock reading and the reading, as the :class:`Timeline`'s
        monotonic check takes them: a reading ahead of the monotonic estimate by more than
        ``max_future_ms`` is replaced by the estimate, so it never reaches a value or the
        state file.

        References: RFC 9562 §6.1, §6.2, §6.3.
        """
        unit = self._units_of(now_ns)
        screened = self._timeline.screen(unit)
        if screened != unit:
            now_ns = self._ns_of(screened)
        return screened, now_ns

    @abc.abstractmethod
    def _ns_of(self, unit: int) -> int:
        """Unix nanoseconds at the start of time unit ``unit``."""

    def _ahead_units(self) -> int:
        return self.config.future_limit_ms * self._units_per_ms()

    def _clock_move(self, now_unit: int) -> int:
        """The :class:`Timeline`'s move for a clock reading of ``now_unit``.

        KEEP (v7, v6) keeps the last unit while it is at most ``max_future_ms`` ahead of the
        clock; RESEED with a 0 window (v1) answers RESTART to any regression. A RESTART
        beyond the bound forgets the reservation (:meth:`_restart`).

        References: RFC 9562 §6.2 "Monotonic Error Checking"; RFC 4122 §4.2.1.1.
        """
        timeline = self._timeline
        if self._unit > timeline.tick:
            timeline.tick = self._unit  # a reservation moved ahead of the clock, as ADVANCE does
        if now_unit == timeline.tick:
            return SAME
        move = timeline.reading(now_unit, screened=True)
        if move == RESTART and self._unit - now_unit > self._ahead_units():
            self._restart()
        return move

    def _restart(self) -> None:
        """The clock fell more than ``max_future_ms`` behind this generator's last value:
        forget the range and the last value, and reserve afresh at the clock.

        References: RFC 9562 §6.2 "Monotonic Error Checking"; RFC 4122 §4.2.1.1.
        """
        self._window_end = -1
        self._range_end = self._range_start = 0
        self._unit = -1
        self._fresh_start = True

    def _units_per_ms(self) -> int:
        return 1

    def _next_state(self, stored: StoredState | None, at: int, now_ns: int) -> StoredState:
        """The state after reserving a range usable at time unit ``at`` (or later)."""
        if stored is not None and self._RESUMES_ABOVE and not self._resumed:
            return self._resume_state(stored, at, now_ns)
        size = self._range_size()
        if stored is not None and at <= stored.window_end:
            if stored.next_range + size <= 1 << self._RANGE_BITS:
                return StoredState(
                    self._KIND,
                    stored.window_start,
                    stored.window_end,
                    stored.next_range + size,
                    stored.node,
                    now_ns,
                )
            at = stored.window_end + 1  # every range of the window is used: next window
        # Never below this generator's own last time unit: its values must keep increasing.
        start = max(at, self._unit + 1)
        end = self._new_window_end(start, now_ns)
        return StoredState(self._KIND, start, end, self._seed() + size, self._node, now_ns)

    def _new_window_end(self, start: int, now_ns: int) -> int:
        """The last time unit of a new window that starts at ``start``.

        ``window_ms`` long (v7, v1). v6 resumes above the stored window (:meth:`_resume_state`),
        so a window opened ahead of the clock must not push the file further ahead: each
        process started after it would jump that far again. A v6 window ends ``window_ms``
        after the highest clock reading this generator has seen, or at ``start`` when that
        is later (one tick, then the next reservation); after the clock went back, the
        highest reading is the one before, so KEEP still counts on in full windows.
        """
        length = self.config.window_ms * self._units_per_ms()
        if not self._RESUMES_ABOVE:
            return start + length - 1
        highest = max(self._units_of(now_ns), self._timeline.clock_tick)
        return max(start, highest + length - 1)

    def _resume_state(self, stored: StoredState, at: int, now_ns: int) -> StoredState:
        """The first reservation of a generator (v6): a new window above the stored one.

        RFC 4122 §4.2.1.3 and RFC 9562 §6.3: the stored timestamp is "set to a value larger
        than any yet used in a UUID", so every tick any process (live, crashed or killed)
        may have stamped is at most ``stored.window_end``: starting above it keeps the new
        values above all of those, whatever the clock reads. The window takes the file's
        next clock sequence (no random one: its ticks are new) and ends as
        :meth:`_new_window_end` says, so restarts never push the file more than ``window_ms``
        ahead of the clock.
        """
        start = max(at, stored.window_end + 1, self._unit + 1)
        end = self._new_window_end(start, now_ns)
        size = self._range_size()
        first = stored.next_range
        if first + size > 1 << self._RANGE_BITS:
            first = self._seed()  # every clock sequence was used: any one is new above
        return StoredState(self._KIND, start, end, first + size, self._node, now_ns)

    def _reserve(self, at: int, now_ns: int) -> int:
        """Reserve a range usable at ``at``; returns the time unit to use (>= ``at``)."""
        if self._closed:
            raise GeneratorError(f"{self.file.path}: the shared generator is closed")
        now_unit = self._units_of(now_ns)
        if self._in_memory is None:
            try:
                with self.file:
                    stored = None if self._fresh_start else self._read_current()
                    stored = self._usable(stored, now_unit)
                    state = self._adopt(stored, at, now_ns)
                    self.file.write(state)
            except OSError as error:
                # An unsafe file or a lock held too long is a StateFileError and propagates:
                # only a location the disk refuses falls back to memory.
                warn_unavailable(self.file.path, f"unwritable: {error}")
                state = self._adopt(None, at, now_ns)
                self._in_memory = state
        else:
            state = self._adopt(None if self._fresh_start else self._in_memory, at, now_ns)
            self._in_memory = state
        self._fresh_start = False
        self._resumed = True
        self._window_end = state.window_end
        self._range_end = state.next_range
        self._range_start = state.next_range - self._range_size()
        return max(at, state.window_start)

    def _read_current(self) -> StoredState | None:
        # A file deleted since start-up (``uuidkit state reset``) is a fresh start; the
        # start-up read already warned about a missing file.
        return self.file.read() if self.file.exists() else None

    def _adopt(self, stored: StoredState | None, at: int, now_ns: int) -> StoredState:
        return self._next_state(stored, at, now_ns)

    def __call__(self) -> UUID:
        """The next UUID of this generator's version.

        References: RFC 9562 §5.6, §5.7, §6.3.
        """
        with self._lock:
            return from_int_unchecked(self._next_int())

    def generate(self, count: int) -> list[UUID]:
        """``count`` consecutive values under one lock acquisition.

        References: RFC 9562 §6.2, §6.3.
        """
        with self._lock:
            return [from_int_unchecked(self._next_int()) for _ in range(check_count(count))]

    def close(self) -> None:
        """Stop using the state file: later calls raise :class:`~uuidkit.GeneratorError`.

        The state file stays: it is what the next generator on the path resumes from. The
        lock file (``<path>.lock``) is deleted if this generator created it and no other
        process holds it (see :meth:`StateFile.close`); one another process created is
        left alone, as it may be in use. Closing twice is harmless.

        References: RFC 9562 §6.3; RFC 4122 §4.2.1.4.
        """
        with self._lock:
            self._closed = True
            # The next value needs a reservation, which refuses: no value after close().
            self._window_end = -1
            self._range_end = self._range_start = 0
            self.file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @abc.abstractmethod
    def _next_int(self) -> int:
        """The next value as an integer; called with the lock held."""

    def reset_after_fork(self) -> None:
        """In a forked child: drop the parent's range and lock so the child reserves its own.

        References: RFC 9562 §6.9.
        """
        self._lock = threading.Lock()
        self._window_end = -1
        self._range_end = self._range_start = 0
        # An in-memory reservation (unwritable file) would hand the child the parent's next
        # range: the child retries the file and otherwise starts from a fresh random seed.
        self._in_memory = None
        self._fresh_start = False
        self._resumed = False  # a new process for the file: it resumes above the window
        self.file.reopen_after_fork()
