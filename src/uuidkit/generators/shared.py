"""Generators whose state lives in a state file: it survives restarts and crashes, and several
processes on one host can share it.

**Reservation.** Under the file's ``flock`` a generator reserves a *window* of time units
(v7: milliseconds; v1/v6: 100 ns ticks) and, inside that window, a *range*: a block of
``counter_block`` Method 1 counter values (v7) or one clock sequence (v1/v6). The file then
records the window and the first range not yet handed out. Processes that reserve while the
window is current get the next ranges of the same window; the first reservation after the
window has passed opens a new one starting at the clock. A process generates from its range
without touching the file until the clock passes its window or the range is used up; then it
reserves again. The window end is the stored timestamp "set to a value larger than any yet
used in a UUID" (RFC 4122 §4.2.1.3, RFC 9562 §6.3): no value of any process, live or dead,
lies above it.

**Resuming above the window (v7, v6).** A v7 or v6 generator's *first* reservation (a start,
a restart after a crash or ``kill -9``, a forked child, another generator object on the
file) opens a new window above the stored window end: the block of timestamps of RFC 4122
§4.2.1.4, with the file's next range (v6: its node and next clock sequence; the ticks are
new, so no random clock sequence is needed). Every such window ends ``window_ms`` after the
highest clock reading of the process that opens it, or at its first tick when that is later:
a process that resumed ahead of the clock reserves small blocks until the clock catches up
rather than push the file further ahead, so many processes starting at once, or restarting
in a loop, never move the file more than ``window_ms`` (and a tick per such reservation)
past the highest clock reading. The price is that a new process's first values may be up to
``window_ms`` ahead of the clock. Later reservations join the current window at the clock as
above, so processes running at the same time share windows through ranges instead of running
ahead of each other. v1 starts at the clock: it never runs ahead of it (RFC 4122 §4.2.1.2).

A restart, by where the stored window ends (v7, v6):

================================ ==========================================================
at or before the clock           a new window at the clock
ahead within ``max_future_ms``   above the window end (values that far ahead of the clock)
further ahead (a clock that ran  :class:`~uuidkit.ClockRegressionError`, the file untouched,
a year ahead, then corrected)    until the clock is within the bound or ``uuidkit state
                                 reset`` forgets the file: starting above would run beyond
                                 the bound, starting at the clock would go below the values
================================ ==========================================================


**Guarantees** for all values of all processes that share one state file (and of every
generator object on it):

1. No two values are equal: every (window, range) pair is handed out once, under the lock.
2. The values of one generator object are strictly increasing (two objects on one file in
   one process are ordered between themselves only as (4) and (5) say, like two processes).
3. A value never embeds a time earlier than the clock reading taken when it was requested
   (unless the clock reads before the current window's start: then the window's start).
4. Across processes: values in different time units (ms for v7, 100 ns for v1/v6) are ordered
   by time unit; values in the same unit are ordered by the reservation order of their ranges.
   Hence if ``u`` is returned (by any process) before ``v`` is requested and the clock reading
   for ``v`` lies in a later time unit than the one embedded in ``u``, then ``u < v`` (for v1
   only in timestamp order, since v1 values do not sort by time).
5. Restarts (v7, v6): every value of a generator is above every value that any generator on the
   file returned before this one's first value was requested, whatever the clock read, also
   when a process ran ahead of a stalled or regressed clock and was killed. v1, in timestamp
   order, has this on a clock that stalls or moves forward: it never stamps ahead, and a
   restart takes the clock's tick with the next clock sequence; after the clock goes back v1
   takes a new clock sequence at the clock, below earlier values, by design (RFC 4122 §4.2.1
   "increment the clock sequence value"). (5) lasts as long as the file does: a ``state
   reset``, a corrupted or unwritable file (each with a :class:`StateUnavailableWarning`)
   starts afresh.

With ``window_ms=1`` and ``counter_block=1`` every v7 value is its own reservation and the
order of (4) is exact: any value returned before another is requested is smaller.

References: RFC 9562 §6.3, §6.2 (Method 1); RFC 4122 §4.2.1.1-§4.2.1.4.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Final

from uuidkit import _system
from uuidkit._bits import FRAME_HIGH_SHIFT, FRAME_MID_SHIFT, MASK_14, version_bits
from uuidkit.errors import CounterOverflowError, GeneratorError
from uuidkit.generators._policy import (
    Clock,
    ClockRegression,
    CounterOverflow,
    RandomBytes,
    Sleep,
    check_choice,
    word_stream,
)
from uuidkit.generators._sharedbase import V7_COUNTER_BITS, SharedConfig, SharedGenerator
from uuidkit.generators._timeline import RESTART, SAME, WAIT
from uuidkit.generators.node import NodePolicy, resolve_node
from uuidkit.generators.statefile import StoredState
from uuidkit.layouts import v1_int, v6_int
from uuidkit.timestamps import (
    NS_PER_MS,
    NS_PER_TICK,
    gregorian_ticks_to_unix_ns,
    unix_ns_to_gregorian_ticks,
)

__all__ = ["SharedConfig", "SharedV1Generator", "SharedV6Generator", "SharedV7Generator"]

V7_TAIL_BITS: Final = 32
_TICKS_PER_MS: Final = NS_PER_MS // NS_PER_TICK
_VERSION_7: Final = version_bits(7)
_LOW_COUNTER_MASK: Final = (1 << (V7_COUNTER_BITS - 12)) - 1
_TAIL_MASK: Final = (1 << V7_TAIL_BITS) - 1
RANDOM: Final = NodePolicy.RANDOM


class SharedV7Generator(SharedGenerator):
    """UUIDv7 from a state file shared by processes: see the module for the guarantees.

    - **Monotonic**: strictly increasing per process; across processes as guarantee (4).
    - **Reseeding**: a new window starts its counter at a random 41-bit value; the 32-bit
      tail is fresh for every UUID.
    - **Clock regression**: KEEP: the last millisecond is kept and counting goes on while it
      is at most ``max_future_ms`` ahead of the clock; beyond, a fresh window at the clock.
    - **Counter overflow**: ADVANCE: a used-up range reserves the next one; a used-up window
      moves to the next window, ahead of the clock (at most ``max_future_ms``).
    - **Thread safety**: one :class:`threading.Lock` per value; ``fcntl.flock`` between
      processes around every reservation.
    - **Fork**: the child forgets the parent's range and lock descriptor and reserves anew.
    - **Restart**: the first reservation starts above the stored window (up to ``window_ms``
      ahead of the clock), or raises :class:`~uuidkit.ClockRegressionError` when that window
      ends more than ``max_future_ms`` ahead: see the module.
    - **Persistence**: the reservation is written (atomically, fsynced) before it is used.

    References: RFC 9562 §5.7, §6.2 (Method 1), §6.3; RFC 4122 §4.2.1.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        config: SharedConfig | None = None,
        *,
        clock: Clock = _system.system_clock_ns,
        random_bytes: RandomBytes = _system.random_bytes,
        sleep_ns: Sleep = _system.sleep_ns,
        monotonic_ns: Clock = _system.monotonic_ns,
    ) -> None:
        super().__init__(path, config, clock, random_bytes, sleep_ns, monotonic_ns)
        self._counter = 0
        self._last_position = -1
        self._words: Iterator[int] = iter(())

    def _units_of(self, now_ns: int) -> int:
        return now_ns // NS_PER_MS

    def reset_after_fork(self) -> None:
        """In a forked child: also forget the buffered random words.

        References: RFC 9562 §6.9.
        """
        super().reset_after_fork()
        self._words = iter(())

    def _range_size(self) -> int:
        return self.config.counter_block

    def _take_range(self, at: int, now_ns: int) -> None:
        self._unit = self._reserve(at, now_ns)
        self._counter = self._range_start
        if (self._unit << V7_COUNTER_BITS) | self._counter <= self._last_position:
            # Only when another process re-created the file (after a reset or a
            # corruption) with a window over this millisecond: move to the next one.
            self._unit = (self._last_position >> V7_COUNTER_BITS) + 1

    def _ns_of(self, unit: int) -> int:
        return unit * NS_PER_MS

    def _next_int(self) -> int:
        now_ms, now_ns = self._screened(self._clock())
        if self._clock_move(now_ms) == RESTART:
            # KEEP within the bound; beyond it the clock wins (values below the earlier
            # ones, from a fresh window and a fresh random counter).
            self._last_position = -1
        if now_ms > self._window_end:
            # Never below this generator's own last millisecond: after a fork the child keeps
            # it while its clock may read earlier (KEEP), and a range of the current window
            # then starts at the clock, below the values already made.
            self._take_range(max(now_ms, self._unit), now_ns)
        elif now_ms > self._unit:
            self._unit = now_ms
            self._counter = self._range_start
        if self._counter >= self._range_end:
            self._take_range(self._unit, now_ns)
            if self._unit - now_ms > self._ahead_units():
                raise CounterOverflowError(
                    f"{self.file.path}: every counter range up to unix_ts_ms {self._unit} is "
                    f"used, more than max_future_ms={self.config.future_limit_ms} ahead"
                )
        counter = self._counter
        self._counter = counter + 1
        position = (self._unit << V7_COUNTER_BITS) | counter
        # RFC 9562 §6.2 "Monotonic Error Checking": (ms, counter) must exceed the last one.
        if position <= self._last_position:
            raise GeneratorError(f"monotonic check failed: position {position:#x}")
        self._last_position = position
        word = next(self._words, None)
        if word is None:
            self._words = word_stream(self._random_bytes)
            word = next(self._words)
        tail = word & _TAIL_MASK
        return (
            (self._unit << FRAME_HIGH_SHIFT)
            | _VERSION_7
            | ((counter >> (V7_COUNTER_BITS - 12)) << FRAME_MID_SHIFT)
            | ((counter & _LOW_COUNTER_MASK) << V7_TAIL_BITS)
            | tail
        )


class SharedV6Generator(SharedGenerator):
    """UUIDv6 from a state file shared by processes: see the module for the guarantees.

    Each reservation is a window of 100 ns ticks and one clock sequence; the node is kept in
    the file (random with the multicast bit unless ``node_policy`` says otherwise). The first
    reservation of a generator opens a window above the stored one (see the module).

    - **Monotonic**: timestamps strictly increase per process; across processes as (4), and
      a restarted process continues above every value made before it started (5).
    - **Reseeding**: a new window at the clock starts at a random 13-bit clock sequence; a
      first reservation continues the file's clock sequences above its window; a node that
      differs from the stored one starts a new window with a random clock sequence.
    - **Clock regression**: KEEP: counting goes on from the last tick while it is at most
      ``max_future_ms`` ahead of the clock; beyond, a fresh window, clock sequence and node.
    - **Counter overflow**: ADVANCE: a tick past the window reserves again; after 2**14
      clock sequences a window is used up and the next one starts ahead of the clock.
    - **Thread safety**: one :class:`threading.Lock` per value; ``fcntl.flock`` between
      processes around every reservation.
    - **Fork**: the child forgets the parent's reservation and reserves its own.
    - **Persistence**: window, clock sequence and node are written before use.

    References: RFC 9562 §5.6, §5.1, §6.3, §6.10; RFC 4122 §4.2.1.
    """

    _KIND = "v6"
    _RANGE_BITS = 14
    _UNIT = "100 ns ticks"
    #: v6 keeps counting ahead of a slow or regressed clock (within max_future_ms); v1 may not.
    _RUNS_AHEAD = True
    _pack = staticmethod(v6_int)

    def __init__(
        self,
        path: str | os.PathLike[str],
        config: SharedConfig | None = None,
        *,
        node_policy: NodePolicy = NodePolicy.RANDOM,
        clock: Clock = _system.system_clock_ns,
        random_bytes: RandomBytes = _system.random_bytes,
        sleep_ns: Sleep = _system.sleep_ns,
        monotonic_ns: Clock = _system.monotonic_ns,
    ) -> None:
        check_choice("node_policy", node_policy, NodePolicy)
        super().__init__(path, config, clock, random_bytes, sleep_ns, monotonic_ns)
        self._node_policy = node_policy
        self._node = (
            None if node_policy is NodePolicy.RANDOM else resolve_node(node_policy, random_bytes)
        )
        self._clock_seq = 0

    def _units_of(self, now_ns: int) -> int:
        return unix_ns_to_gregorian_ticks(now_ns)

    def _units_per_ms(self) -> int:
        return _TICKS_PER_MS

    def _adopt(self, stored: StoredState | None, at: int, now_ns: int) -> StoredState:
        if self._node_policy is not RANDOM:
            if stored is not None and stored.node != self._node:
                # RFC 9562 §5.1: when the node changes, "setting the clock sequence to a
                # random number minimizes the probability of a duplicate".
                stored = None
        elif stored is not None and stored.node is not None:
            self._node = stored.node  # the node the file's clock sequences belong to
        else:
            # No usable state (missing, corrupted, future-dated, or a restart): clock
            # sequences handed out before are unknown, so a new random node keeps the new
            # values apart from them (RFC 9562 §5.1: "if the node ID changes ..., setting the
            # clock sequence to a random number minimizes the probability of a duplicate").
            self._node = resolve_node(NodePolicy.RANDOM, self._random_bytes)
        return self._next_state(stored, at, now_ns)

    def _ns_of(self, unit: int) -> int:
        return gregorian_ticks_to_unix_ns(unit)

    def _next_int(self) -> int:
        now_tick, now_ns = self._screened(self._clock())
        move = self._clock_move(now_tick)
        restarted = move == RESTART
        if restarted and self._unit >= 0:
            # v1 within the bound: the next clock sequence of the window, stamped at the
            # clock (RFC 4122 §4.2.1.1: "increment the clock sequence value").
            self._unit = -1
            self._range_end = 0
        elif move == SAME and now_tick <= self._unit and not self._RUNS_AHEAD:
            # v1 within one 100 ns tick: stall, never run ahead (RFC 4122 §4.2.1.2: "MUST
            # either return an error, or stall").
            timeline = self._timeline
            if timeline.overflow(now_tick) == WAIT:
                timeline.reading(self._wait.until(timeline.wait_tick))
            now_tick = timeline.tick
        tick = max(now_tick, self._unit + 1) if not restarted else now_tick
        if tick > self._window_end or self._range_end == 0:
            reserved = self._reserve(tick, now_ns)
            tick = now_tick if restarted else reserved
            self._clock_seq = self._range_start & MASK_14
        # RFC 9562 §6.2 "Monotonic Error Checking": the timestamp must exceed the last one
        # (except after a regression, with a clock sequence this window never handed out).
        if tick <= self._unit and not restarted:
            raise GeneratorError(f"monotonic check failed: timestamp {tick} <= {self._unit}")
        self._unit = tick
        assert self._node is not None
        return self._pack(tick, self._clock_seq, self._node)


class SharedV1Generator(SharedV6Generator):
    """UUIDv1 from a shared state file: :class:`SharedV6Generator` with the v1 layout.

    - **Monotonic**, **Reseeding**, **Thread safety**, **Fork**, **Persistence**: as
      :class:`SharedV6Generator`, except that a first reservation joins the current window
      at the clock (v1 never runs ahead of it); v1 values do not sort by time.
    - **Counter overflow**: never ahead of the clock: within one 100 ns tick it stalls until
      the clock moves (``max_wait_ms``, then :class:`~uuidkit.CounterOverflowError`;
      RFC 4122 §4.2.1.2).
    - **Clock regression**: the next clock sequence of the window, stamped at the clock
      (RFC 4122 §4.2.1.1: "increment the clock sequence value").

    References: RFC 9562 §5.1; RFC 4122 §4.2.1, §4.2.2.
    """

    _KIND = "v1"
    _RUNS_AHEAD = False
    #: v1 never stamps ahead of the clock (RFC 4122 §4.2.1.2), so it joins the window at it.
    _RESUMES_ABOVE = False
    _OVERFLOW = CounterOverflow.WAIT
    _REGRESSION = ClockRegression.RESEED
    _pack = staticmethod(v1_int)
