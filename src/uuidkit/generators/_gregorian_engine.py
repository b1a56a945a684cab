"""The engine of the UUIDv1/v6 generators: one state, a one-frame hot path, the rare cases.

The state of a generator (``tick``, ``clock_tick`` and ``pending`` of its
:class:`~uuidkit.generators._timeline.Timeline`; ``index``, the timestamp's place within
the clock interval; ``last``, the last 60-bit timestamp; ``clock_seq`` and ``node``) lives in
one object: a :class:`GregorianState`, or, when the optional accelerator is built, its
compiled twin ``uuidkit._speedups.GregorianCore``, which has the same attributes.

- **Hot path**: the common case (a later clock interval, or a further timestamp within the
  current interval's budget) is taken by
  :class:`~uuidkit.generators._gregorian_pure.GregorianHotPath`, or in C. Both hand every
  other case to :meth:`GregorianEngine.advance`, which asks the Timeline and is the
  reference for all of them.
- **Exclusion** (pure path): the hot path holds the engine's ``gate`` (a one-token queue,
  cheaper to take than a lock) around its reading and writing of the state; the slow path
  takes the re-entrant lock and then, once (outermost), the gate.
- **Interlock** (compiled core only): the C fast path runs without the Python lock, under
  the GIL, without calling Python code between reading and writing the state. The Python
  slow path sets ``busy`` after taking the lock and before reading the state, and restores
  it when done; the fast path hands its call to the slow path while ``busy`` is set (so it
  waits for the lock). With an injected clock the compiled core takes the lock itself:
  reading a Python clock may switch threads.
- **Fork**: :meth:`GregorianEngine.reset_after_fork` (run in every forked child) forgets the
  state and buffered random words and takes a new lock and gate; the compiled core also
  notices a fork that bypassed the Python hooks and hands its next call to the slow path,
  which resets first.

References: RFC 9562 §5.1, §5.6, §6.1, §6.2, §6.9, §6.10; RFC 4122 §4.2.1.
"""

from __future__ import annotations

from collections.abc import Callable
from uuid import UUID

from uuidkit import _system
from uuidkit._accel import SPEEDUPS
from uuidkit._bits import (
    CLOCK_SEQ_BITS,
    GREGORIAN_OFFSET_100NS,
    MASK_14,
    MASK_48,
    MASK_60,
    check_field,
)
from uuidkit._construct import from_int_unchecked
from uuidkit._stdlib import RLock  # what threading.RLock() returns, without threading
from uuidkit.errors import GeneratorError
from uuidkit.generators._gregorian_pure import new_gate
from uuidkit.generators._policy import (
    WORD_BLOCK_BYTES,
    Clock,
    ClockWait,
    CounterOverflow,
    RandomBytes,
    Sleep,
)
from uuidkit.generators._timeline import NO_TICK, RESTART, SAME, WAIT, Timeline
from uuidkit.generators.node import MULTICAST_BIT, NODE_BITS, random_node
from uuidkit.layouts import v1_int, v6_int
from uuidkit.timestamps import NS_PER_MS, NS_PER_TICK

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Any, Final

    from uuidkit.generators.gregorian import GregorianSettings

__all__ = ["GregorianEngine", "GregorianState"]

#: The coarsest clock interval (ns) whose WAIT the compiled core does by spinning on the
#: clock (for at most two intervals); coarser ones wait in Python, with sleeps.
SPIN_LIMIT_NS: Final = 10_000
#: Clock intervals beyond this either way are refused (far outside the 60-bit field).
_INTERVAL_LIMIT: Final = 1 << 62
_OVERFLOW_CODES: Final = {
    CounterOverflow.WAIT: 0,
    CounterOverflow.ADVANCE: 1,
    CounterOverflow.RAISE: 2,
}
_CORE_TYPE: Final[Any] = getattr(SPEEDUPS, "GregorianCore", None)


class GregorianState:
    """The mutable state of one v1/v6 generator (the compiled core has the same attributes).

    References: RFC 9562 §5.1, §6.2.
    """

    __slots__ = (
        "busy",
        "clock_seq",
        "clock_tick",
        "index",
        "last",
        "limit",
        "node",
        "pending",
        "tick",
    )

    #: Only the compiled core can notice a fork that bypassed the Python hooks.
    forked: Final = False

    def __init__(self, node: int, clock_seq: int) -> None:
        self.reset()
        self.node = node
        self.clock_seq = clock_seq

    def reset(self) -> None:
        """Forget the timeline and the last timestamp (a forked child starts afresh)."""
        # NO_TICK: no tick yet (Timeline.has_tick); last -1: below every 60-bit timestamp.
        self.tick = self.clock_tick = NO_TICK
        self.last = -1
        self.index = 0
        self.pending = self.busy = False
        #: The last interval the hot path may move to (the Timeline's trust_tick, at most
        #: the last one that fits 60 bits); a later one is checked by the Timeline.
        self.limit = NO_TICK - 1


def _fast_max(budget: int, max_tick: int) -> int:
    """The last clock interval whose every timestamp fits 60 bits (RFC 9562 §5.1)."""
    return min(max_tick, (MASK_60 - GREGORIAN_OFFSET_100NS - (budget - 1)) // budget)


class GregorianEngine:
    """Everything of a v1/v6 generator but its hot path: rare cases, fields, node, fork.

    References: RFC 9562 §5.1, §5.6, §6.1, §6.2, §6.9, §6.10; RFC 4122 §4.2.1.
    """

    __slots__ = (
        "budget",
        "clock",
        "config",
        "core",
        "draw",
        "explicit",
        "fast_max",
        "gate",
        "held_next",
        "lock",
        "node_is_random",
        "random_bytes",
        "rebind",
        "resolution",
        "state",
        "timeline",
        "version",
        "wait",
    )

    def __init__(
        self,
        config: GregorianSettings,
        version: int,
        timeline: Timeline,
        initial: tuple[int, int, bool],
        sources: tuple[Clock, RandomBytes, Sleep, Clock],
    ) -> None:
        node, clock_seq, self.node_is_random = initial
        self.clock, self.random_bytes, sleep_ns, monotonic_ns = sources
        self.config, self.version, self.timeline = config, version, timeline
        self.resolution = resolution = config.clock_resolution_ns
        #: Where the Timeline answers WAIT: the wait for the next clock interval.
        self.wait = ClockWait(
            self.clock,
            sleep_ns,
            monotonic_ns,
            lambda now_ns: now_ns // resolution,
            resolution,
            config.max_wait_ms * NS_PER_MS,
        )
        #: Timestamps per clock interval (RFC 4122 §4.2.1.2).
        self.budget = self.resolution // NS_PER_TICK
        self.fast_max = _fast_max(self.budget, (MASK_60 + 1) // self.budget)
        # Re-entrant: the compiled core holds it around a block and calls the slow path.
        self.lock = RLock()
        #: The pure path's exclusion (see the module); unused by the compiled core.
        self.gate = new_gate()
        #: Set by the pure hot path: its fork hook, and its twin for a caller holding the gate.
        self.rebind: Callable[[], None] = _nothing
        self.held_next: Callable[..., UUID] | None = None
        #: ``next(node, clock_seq)`` with an argument given: the compiled core's fallback,
        #: which Python also binds the arguments of, so a bad call's TypeError names this
        #: function (see :meth:`name_next`).
        self.explicit: Callable[..., UUID] = _explicit_next(self.with_fields)
        self.core = self._compiled_core(node, clock_seq, sleep_ns, monotonic_ns)
        self.state: Any = self.core if self.core is not None else GregorianState(node, clock_seq)
        self.draw: Callable[[], int] = self.core.word if self.core is not None else _nothing_drawn
        self.sync_limit()

    def sync_limit(self) -> None:
        """Give the hot path the Timeline's trust_tick: a later interval above it is checked
        against the monotonic clock (the Timeline's ``screen``), so it is the slow path's."""
        self.state.limit = min(self.timeline.trust_tick, self.fast_max)

    def _compiled_core(
        self, node: int, clock_seq: int, sleep_ns: Sleep, monotonic_ns: Clock
    ) -> Any:
        if _CORE_TYPE is None:
            return None
        config, timeline = self.config, self.timeline
        system_clock = self.clock is _system.system_clock_ns
        # The core spins for the next interval only where the pure path's wait would also
        # end within it: system clock, sleep and monotonic clock, a fine interval.
        spin = (
            system_clock
            and sleep_ns is _system.sleep_ns
            and monotonic_ns is _system.monotonic_ns
            and self.resolution <= SPIN_LIMIT_NS
            and config.max_wait_ms > 0
        )
        random_bytes = self.random_bytes
        # The core decides the common cases from the Timeline's own policy and bound.
        return _CORE_TYPE(
            (self.version, int(config.random_per_uuid), _OVERFLOW_CODES[timeline.overflow_policy]),
            (self.budget, self.resolution, self.fast_max, timeline.ahead_ticks, int(spin)),
            (node, clock_seq),
            None if system_clock else self.clock,
            None if random_bytes is _system.random_bytes else self._word_block,
            self.slow,
            self.explicit,
            self.lock,
        )

    def _word_block(self) -> bytes:
        """One block of words from an injected random source, as the pure path reads it."""
        return memoryview(self.random_bytes(WORD_BLOCK_BYTES)).cast("Q").tobytes()

    # --- the rare cases ----------------------------------------------------------------

    def advance(self, now_ns: int) -> int:
        """The next 60-bit timestamp for a clock reading of ``now_ns``, in every case.

        The caller holds the lock (and, with the compiled core, has set ``busy``). The
        Timeline's part of the state is copied into it and back, so its decisions are the
        same whichever object holds the state.

        References: RFC 9562 §5.1, §6.1, §6.2.
        """
        interval = now_ns // self.resolution
        if not -_INTERVAL_LIMIT <= interval <= _INTERVAL_LIMIT:
            # Thousands of years from now either way: no 60-bit timestamp, and no state
            # change (the compiled core holds its ticks in 64 bits).
            raise GeneratorError(
                f"timestamp: a clock reading of {now_ns} ns is far outside the 60-bit field "
                "(RFC 9562 §5.1)"
            )
        state, timeline = self.state, self.timeline
        timeline.tick, timeline.clock_tick = state.tick, state.clock_tick
        timeline.restart_pending = state.pending
        try:
            return self._next_tick(state, timeline, interval)
        finally:
            state.tick, state.clock_tick = timeline.tick, timeline.clock_tick
            state.pending = timeline.restart_pending
            state.limit = min(timeline.trust_tick, self.fast_max)

    def _next_tick(self, state: Any, timeline: Timeline, interval: int) -> int:
        # Not SAME before the first value: a reading of interval -1 is no "tick -1 again"
        # (the Timeline refuses it, as every interval before the epoch).
        same = timeline.has_tick and interval == timeline.tick
        move = SAME if same else timeline.reading(interval)
        if move == SAME:
            state.index = index = state.index + 1
            if index >= self.budget:
                move = timeline.overflow(interval)
                if move == WAIT:
                    move = timeline.reading(self.wait.until(timeline.wait_tick))
        if move != SAME:
            state.index = 0
            if move == RESTART:
                # RFC 9562 §5.1: "If the clock is set backwards ... the clock sequence MUST be
                # changed. If the previous value of the clock sequence is known, it MAY be
                # incremented".
                state.clock_seq = (state.clock_seq + 1) & MASK_14
        tick: int = timeline.tick * self.budget + GREGORIAN_OFFSET_100NS + state.index
        # RFC 9562 §6.2 "Monotonic Error Checking", on the timestamp: only an accepted
        # regression (with its new clock sequence) may step back.
        if tick <= state.last and move != RESTART:
            raise GeneratorError(f"monotonic check failed: timestamp {tick} <= {state.last}")
        if not 0 <= tick <= MASK_60:
            raise GeneratorError(f"timestamp: {tick} does not fit the 60-bit field (RFC 9562 §5.1)")
        state.last = tick
        return tick

    def fields(self) -> tuple[int, int]:
        """(clock_seq, node) of the next UUID (lock held).

        References: RFC 9562 §5.6 (fresh per UUIDv6 by default), §6.10.
        """
        if not self.config.random_per_uuid:
            return self.state.clock_seq, self.state.node
        # RFC 9562 §5.6: clock_seq and node "SHOULD be reset to a pseudorandom value for
        # each new UUIDv6"; a random node MUST carry the multicast bit (§6.10).
        bits = self.draw()
        return (bits >> 48) & MASK_14, (bits & MASK_48) | MULTICAST_BIT

    def pack(self, tick: int, clock_seq: int, node: int) -> int:
        """The 128-bit value of this generator's version.

        References: RFC 9562 §5.1, §5.6.
        """
        return (v6_int if self.version == 6 else v1_int)(tick, clock_seq, node)

    def enter(self) -> bool:
        """Take the lock and set ``busy``; the old flag.

        The compiled fast path stands aside while ``busy`` is set; on the pure path the
        outermost ``enter`` also takes the gate (waiting while a hot path holds it).
        """
        if self.state.forked:  # a fork the Python hooks did not see (compiled core only)
            self.reset_after_fork()
        self.lock.acquire()
        state = self.state
        was_busy: bool = state.busy
        if not was_busy and self.core is None:
            try:
                self.gate.get()
            except BaseException:  # e.g. KeyboardInterrupt while waiting: nothing is held
                self.lock.release()
                raise
        state.busy = True
        return was_busy

    def leave(self, was_busy: bool) -> None:
        """Undo :meth:`enter`."""
        self.state.busy = was_busy
        if not was_busy and self.core is None:
            self.gate.put(True)
        self.lock.release()

    def slow(self, now_ns: int | None) -> int:
        """The next value as an int, any case (the compiled core's fallback).

        ``now_ns`` is the reading the caller took under the lock, or ``None`` (read here).

        References: RFC 9562 §5.1, §5.6, §6.2.
        """
        was_busy = self.enter()
        try:
            tick = self.advance(self.clock() if now_ns is None else now_ns)
            return self.pack(tick, *self.fields())
        finally:
            self.leave(was_busy)

    def with_fields(self, node: int | None, clock_seq: int | None) -> UUID:
        """The next UUID, with ``node`` and/or ``clock_seq`` replacing the generator's own.

        References: RFC 9562 §5.1, §5.6.
        """
        if node is not None:
            check_field("node", node, NODE_BITS)
        if clock_seq is not None:
            check_field("clock_seq", clock_seq, CLOCK_SEQ_BITS)
        was_busy = self.enter()
        try:
            tick = self.advance(self.clock())
            own_clock_seq, own_node = self.fields()
        finally:
            self.leave(was_busy)
        return from_int_unchecked(
            self.pack(
                tick,
                own_clock_seq if clock_seq is None else clock_seq,
                own_node if node is None else node,
            )
        )

    def name_next(self, qualname: str, next_function: Callable[..., UUID]) -> None:
        """Name what answers a call of the generator's ``next`` (the pure path's function,
        and the compiled core's fallback for arguments) ``qualname``: a call with a bad
        keyword or too many arguments then raises the same TypeError on both paths, naming
        the public function, never an internal one."""
        for function in (next_function, self.explicit):
            if isinstance(function, type(_nothing)):  # a Python function, not the core
                function.__name__ = qualname.rpartition(".")[2]
                function.__qualname__ = qualname

    def random_clock_seq(self) -> int:
        """A random 14-bit clock sequence (RFC 9562 §5.1)."""
        return int.from_bytes(self.random_bytes(2)) & MASK_14

    def set_node(self, node: int) -> None:
        """Use ``node`` from now on; a different node gets a fresh random clock sequence.

        References: RFC 9562 §5.1.
        """
        check_field("node", node, NODE_BITS)
        was_busy = self.enter()
        try:
            self.node_is_random = False
            state = self.state
            if node != state.node:
                state.node = node
                state.clock_seq = self.random_clock_seq()
        finally:
            self.leave(was_busy)

    def reset_after_fork(self) -> None:
        """In a forked child: new lock, no timeline, new clock sequence (and random node).

        References: RFC 9562 §6.9, §6.10.
        """
        self.lock = RLock()
        self.gate = new_gate()
        self.timeline.reset()
        if self.core is not None:
            self.core.reset(self.lock)  # also discards its buffered random words
        else:
            self.state.reset()
        self.rebind()
        self.sync_limit()
        state = self.state
        if self.node_is_random:
            state.node = random_node(self.random_bytes)
            state.clock_seq = self.random_clock_seq()
        else:
            # A different clock sequence from the parent's (+1 to +2**14-1).
            state.clock_seq = (state.clock_seq + 1 + (self.random_clock_seq() % MASK_14)) & MASK_14


def _nothing() -> None:
    return None


def _explicit_next(with_fields: Callable[[int | None, int | None], UUID]) -> Callable[..., UUID]:
    """A function of the pure path's ``next`` signature that calls ``with_fields``."""

    def explicit(node: int | None = None, clock_seq: int | None = None) -> UUID:
        return with_fields(node, clock_seq)

    return explicit


def _nothing_drawn() -> int:
    raise GeneratorError("no random word source bound")  # replaced before first use
