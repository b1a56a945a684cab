"""A generator of the time-based UUIDv8 layouts of draft-peabody-dispatch-new-uuid-format-01.

The draft's generic UUIDv8 (§4.5) carries a 32-, 48-, 60- or 64-bit timestamp of the
application's choosing, a clock sequence of 12 bits (timestamps up to 48 bits) or 8 bits
(60/64-bit timestamps), and a random node. Values are built by
:func:`uuidkit.legacy.build_draft_v8`; this module supplies "now", the clock sequence and
the node. RFC 9562 §5.8 keeps such custom layouts legal as UUIDv8.

References: draft-peabody-dispatch-new-uuid-format-01 §4.5, §4.5.1-§4.5.4; RFC 9562 §5.8,
§6.1, §6.2.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final
from uuid import UUID

from uuidkit import _system
from uuidkit.errors import GeneratorError, InvalidField
from uuidkit.generators._policy import (
    Clock,
    ClockRegression,
    ClockWait,
    CounterOverflow,
    RandomBytes,
    Sleep,
    check_callable,
    check_choice,
    check_count,
    check_int,
    paired_monotonic,
    register_for_fork,
    word_stream,
)
from uuidkit.generators._timeline import DEFAULT_MAX_AHEAD_MS, RESTART, SAME, WAIT, Timeline
from uuidkit.legacy import DraftV8TimestampBits, build_draft_v8
from uuidkit.timestamps import NS_PER_MS

__all__ = ["DraftV8Config", "DraftV8Generator"]

#: §4.5.2: clock sequence bits by timestamp width; §4.5.3: node bits.
_SEQ_BITS: Final = {32: 12, 48: 12, 60: 8, 64: 8}
_NODE_BITS: Final = {32: 62, 48: 62, 60: 54, 64: 54}


@dataclass(frozen=True, slots=True)
class DraftV8Config:
    """Timestamp width and unit of a :class:`DraftV8Generator`, and its policies.

    The default is the draft's 48-bit layout counting Unix milliseconds.

    References: draft-peabody-dispatch-new-uuid-format-01 §4.5.1, §4.5.4.
    """

    #: Width of the timestamp: 32, 48, 60 or 64 bits (§4.5.4).
    timestamp_bits: DraftV8TimestampBits = 48
    #: Length of one timestamp tick, in nanoseconds (1_000_000: Unix milliseconds).
    tick_ns: int = 1_000_000
    #: When the clock sequence of a tick is exhausted (§4.5.2: it "MUST NOT rollover").
    overflow: CounterOverflow = CounterOverflow.WAIT
    #: When the clock reads earlier than the last timestamp used.
    regression: ClockRegression = ClockRegression.KEEP
    #: RESEED only: regressions longer than this, in milliseconds, restart at the clock.
    regression_window_ms: int = 1_000
    #: WAIT only: longest total wait before raising, in milliseconds (monotonic time).
    max_wait_ms: int = 100
    #: How far ahead of the clock the timestamp may run (KEEP after a regression, ADVANCE
    #: after an overflow), in milliseconds; beyond it KEEP restarts at the clock.
    max_ahead_ms: int = DEFAULT_MAX_AHEAD_MS

    def __post_init__(self) -> None:
        if type(self.timestamp_bits) is not int or self.timestamp_bits not in _SEQ_BITS:
            raise InvalidField(
                f"timestamp_bits: expected 32, 48, 60 or 64, found {self.timestamp_bits!r}",
                "timestamp_bits",
            )
        check_int("tick_ns", self.tick_ns, 1, 1 << 64)
        check_int("regression_window_ms", self.regression_window_ms, 0, 1 << 48)
        check_int("max_wait_ms", self.max_wait_ms, 0, 1 << 32)
        check_int("max_ahead_ms", self.max_ahead_ms, 0, 1 << 40)
        check_choice("overflow", self.overflow, CounterOverflow)
        check_choice("regression", self.regression, ClockRegression)


class DraftV8Generator:
    """Time-based UUIDv8 values in the layouts of draft-peabody-dispatch-new-uuid-format-01.

    - **Monotonic**: (timestamp, clock sequence) strictly increases; the clock sequence
      starts at 0 at each new tick and counts up (§4.5.2 MUST), so values sort in
      generation order.
    - **Reseeding**: the node is 54 or 62 fresh random bits for every UUID (from a buffered
      block of the random source), never all zeros (§4.5.3 MUST NOT).
    - **Clock regression**: KEEP (default) keeps the last tick and keeps counting within
      ``max_ahead_ms``, then restarts at the clock; RESEED restarts at the clock's tick
      beyond ``regression_window_ms``; RAISE raises :class:`~uuidkit.ClockRegressionError`.
    - **Counter overflow**: WAIT (default) stalls until the next tick ("MUST NOT rollover"
      within a tick); ADVANCE moves one tick ahead of the clock (at most ``max_ahead_ms``);
      RAISE raises :class:`~uuidkit.CounterOverflowError`.
    - **Thread safety**: one :class:`threading.Lock` per value or per :meth:`generate` block.
    - **Fork**: the child takes a new lock, restarts its timeline and discards the buffered
      random words, so its nodes are its own.
    - **Persistence**: none.

    References: draft-peabody-dispatch-new-uuid-format-01 §4.5; RFC 9562 §5.8, §6.2.
    """

    def __init__(
        self,
        config: DraftV8Config | None = None,
        *,
        clock: Clock = _system.system_clock_ns,
        random_bytes: RandomBytes = _system.random_bytes,
        sleep_ns: Sleep = _system.sleep_ns,
        monotonic_ns: Clock = _system.monotonic_ns,
    ) -> None:
        self.config = config if config is not None else DraftV8Config()
        if not isinstance(self.config, DraftV8Config):
            raise InvalidField(f"config: expected a DraftV8Config, found {config!r}", "config")
        for name, function in (
            ("clock", clock),
            ("random_bytes", random_bytes),
            ("sleep_ns", sleep_ns),
            ("monotonic_ns", monotonic_ns),
        ):
            check_callable(name, function)
        self._clock = clock
        self._random_bytes = random_bytes
        self._lock = threading.Lock()
        self._seq = 0
        #: The last (tick, seq); (-1, -1) is below every value (ticks and seq are >= 0).
        self._last = (-1, -1)
        self._words: Iterator[int] = iter(())
        bits = self.config.timestamp_bits
        self._seq_limit = 1 << _SEQ_BITS[bits]
        self._node_shift = 64 - _NODE_BITS[bits]
        # Draft §4.5.4: a "64-bit timestamp is truncated to 60-bits" (its 4 low bits are
        # dropped), so this generator's tick is a multiple of 16: ticks that differ only in
        # the dropped bits would embed the same timestamp and restart seq at 0 (a smaller,
        # possibly repeated value).
        self._tick_step = 16 if bits == 64 else 1
        tick_ns = self.config.tick_ns
        self._timeline = Timeline(
            overflow=self.config.overflow,
            regression=self.config.regression,
            window_ticks=self.config.regression_window_ms * NS_PER_MS // tick_ns,
            ahead_ticks=self.config.max_ahead_ms * NS_PER_MS // tick_ns,
            max_tick=(1 << bits) - 1,
            unit=f"ticks of {tick_ns} ns",
            exhausted=f"seq: all {self._seq_limit} clock sequence values of the timestamp are "
            "used (draft §4.5.2: MUST NOT rollover)",
            step=self._tick_step,
            monotonic_ns=paired_monotonic(clock, monotonic_ns),
            tick_rate=(1, tick_ns),
        )
        self._wait = ClockWait(
            clock,
            sleep_ns,
            monotonic_ns,
            self._ticks_of,
            tick_ns * self._tick_step,
            self.config.max_wait_ms * NS_PER_MS,
        )
        register_for_fork(self)

    def __call__(self) -> UUID:
        """The next UUIDv8.

        References: draft-peabody-dispatch-new-uuid-format-01 §4.5.
        """
        with self._lock:
            return self._next()

    def generate(self, count: int) -> list[UUID]:
        """``count`` consecutive UUIDv8 values, increasing, made under one lock acquisition.

        References: draft-peabody-dispatch-new-uuid-format-01 §4.5.2; RFC 9562 §6.2 (batches).
        """
        with self._lock:
            return [self._next() for _ in range(check_count(count))]

    def reset_after_fork(self) -> None:
        """In a forked child: new lock, fresh timeline, buffered random words discarded.

        References: RFC 9562 §6.9.
        """
        self._lock = threading.Lock()
        self._timeline.reset()
        self._last = (-1, -1)
        self._words = iter(())

    def _ticks_of(self, now_ns: int) -> int:
        step = self._tick_step
        return now_ns // self.config.tick_ns // step * step

    def _next(self) -> UUID:
        tick, seq = self._advance()
        return build_draft_v8(tick, self.config.timestamp_bits, seq, self._node())

    def _node(self) -> int:
        word = next(self._words, None)
        if word is None:
            self._words = word_stream(self._random_bytes)
            word = next(self._words)
        # §4.5.3: "the node MUST NOT be set to all 0s"; a zero draw (probability 2**-54 from
        # a CSPRNG) becomes 1 rather than looping on a broken source.
        return (word >> self._node_shift) or 1

    def _advance(self) -> tuple[int, int]:
        """(timestamp, seq) of the next value; every decision about time is the Timeline's."""
        timeline = self._timeline
        now_tick = self._ticks_of(self._clock())
        # Not SAME before the first value: a reading of tick -1 is no "tick -1 again"
        # (the Timeline refuses it, as every tick before the epoch).
        same = timeline.has_tick and now_tick == timeline.tick
        move = SAME if same else timeline.reading(now_tick)
        if move == SAME:
            if self._seq + 1 < self._seq_limit:
                self._seq += 1
            else:
                move = timeline.overflow(now_tick)
                if move == WAIT:
                    move = timeline.reading(self._wait.until(timeline.wait_tick))
        if move != SAME:
            # §4.5.2: "When the timestamp increments the clock sequence MUST be reset to zero."
            self._seq = 0
        current = (timeline.tick, self._seq)
        # RFC 9562 §6.2 "Monotonic Error Checking": only an accepted restart steps back.
        if current <= self._last and move != RESTART:
            raise GeneratorError(f"monotonic check failed: (timestamp, seq) {current}")
        self._last = current
        return current
