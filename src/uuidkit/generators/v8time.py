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
from dataclasses import dataclass
from typing import Final
from uuid import UUID

from uuidkit import _system
from uuidkit.errors import ClockRegressionError, CounterOverflowError, InvalidField
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
    wait_for_clock,
)
from uuidkit.legacy import DraftV8TimestampBits, build_draft_v8

__all__ = ["DraftV8Config", "DraftV8Generator"]

NS_PER_MS: Final = 1_000_000
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
    #: WAIT only: longest total sleep before raising, in milliseconds.
    max_wait_ms: int = 100

    def __post_init__(self) -> None:
        if type(self.timestamp_bits) is not int or self.timestamp_bits not in _SEQ_BITS:
            raise InvalidField(
                f"timestamp_bits: expected 32, 48, 60 or 64, found {self.timestamp_bits!r}",
                "timestamp_bits",
            )
        check_int("tick_ns", self.tick_ns, 1, 1 << 64)
        check_int("regression_window_ms", self.regression_window_ms, 0, 1 << 48)
        check_int("max_wait_ms", self.max_wait_ms, 0, 1 << 32)
        check_choice("overflow", self.overflow, CounterOverflow)
        check_choice("regression", self.regression, ClockRegression)


class DraftV8Generator:
    """Time-based UUIDv8 values in the layouts of draft-peabody-dispatch-new-uuid-format-01.

    - **Monotonic**: (timestamp, clock sequence) strictly increases; the clock sequence
      starts at 0 at each new tick and counts up (§4.5.2 MUST), so values sort in
      generation order.
    - **Reseeding**: the node is 54 or 62 fresh random bits for every UUID, never all zeros
      (§4.5.3 MUST NOT).
    - **Clock regression**: KEEP (default) keeps the last tick and keeps counting; RESEED
      restarts at the clock's tick beyond ``regression_window_ms``; RAISE raises
      :class:`~uuidkit.ClockRegressionError`.
    - **Counter overflow**: WAIT (default) stalls until the next tick ("MUST NOT rollover"
      within a tick); ADVANCE moves one tick ahead of the clock; RAISE raises
      :class:`~uuidkit.CounterOverflowError`.
    - **Thread safety**: one :class:`threading.Lock` per value.
    - **Fork**: the child takes a new lock; its nodes come from the fork-safe random source.
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
        self._sleep_ns = sleep_ns
        self._monotonic_ns = monotonic_ns
        self._lock = threading.Lock()
        self._tick = -1
        # Highest tick read from the clock: ADVANCE moves ``_tick`` ahead of it, and a clock
        # merely behind such a tick has not gone back (RFC 9562 §6.2).
        self._clock_tick = -1
        self._seq = 0
        self._seq_limit = 1 << _SEQ_BITS[self.config.timestamp_bits]
        self._node_bits = _NODE_BITS[self.config.timestamp_bits]
        self._max_tick = (1 << self.config.timestamp_bits) - 1
        # Draft §4.5.4: a "64-bit timestamp is truncated to 60-bits" (its 4 low bits are
        # dropped), so this generator's tick is a multiple of 16: ticks that differ only in
        # the dropped bits would embed the same timestamp and restart seq at 0 (a smaller,
        # possibly repeated value).
        self._tick_step = 16 if self.config.timestamp_bits == 64 else 1
        register_for_fork(self)

    def __call__(self) -> UUID:
        """The next UUIDv8.

        References: draft-peabody-dispatch-new-uuid-format-01 §4.5.
        """
        with self._lock:
            tick, seq = self._advance()
        return build_draft_v8(tick, self.config.timestamp_bits, seq, self._node())

    def reset_after_fork(self) -> None:
        """In a forked child: a new lock (the state may continue: nodes are fresh random).

        References: RFC 9562 §6.9.
        """
        self._lock = threading.Lock()

    def _ticks_of(self, now_ns: int) -> int:
        step = self._tick_step
        return now_ns // self.config.tick_ns // step * step

    def _node(self) -> int:
        size = (self._node_bits + 7) // 8
        node = int.from_bytes(self._random_bytes(size)) >> (8 * size - self._node_bits)
        # §4.5.3: "the node MUST NOT be set to all 0s"; a zero draw (probability 2**-54 from
        # a CSPRNG) becomes 1 rather than looping on a broken source.
        return node or 1

    def _advance(self) -> tuple[int, int]:
        now_tick = self._ticks_of(self._clock())
        if now_tick < self._tick and self._on_regression(now_tick):
            self._clock_tick = now_tick
            return self._start(now_tick)
        if now_tick > self._tick:
            self._clock_tick = now_tick
            return self._start(now_tick)
        if self._seq + 1 < self._seq_limit:
            self._seq += 1
            return self._tick, self._seq
        return self._on_overflow()

    def _start(self, tick: int) -> tuple[int, int]:
        if tick > self._max_tick:
            raise InvalidField(
                f"timestamp: {tick} does not fit {self.config.timestamp_bits} bits", "timestamp"
            )
        # §4.5.2: "When the timestamp increments the clock sequence MUST be reset to zero."
        self._tick, self._seq = tick, 0
        return tick, 0

    def _on_regression(self, now_tick: int) -> bool:
        if now_tick >= self._clock_tick:
            self._clock_tick = now_tick  # only behind an ADVANCE: keep counting
            return False
        behind_ticks = self._clock_tick - now_tick
        policy = self.config.regression
        if policy is ClockRegression.RAISE:
            raise ClockRegressionError(
                f"clock went back {behind_ticks} ticks of {self.config.tick_ns} ns below "
                f"its last reading {self._clock_tick}; policy RAISE"
            )
        window_ticks = self.config.regression_window_ms * NS_PER_MS // self.config.tick_ns
        return policy is ClockRegression.RESEED and behind_ticks > window_ticks

    def _on_overflow(self) -> tuple[int, int]:
        policy = self.config.overflow
        if policy is CounterOverflow.ADVANCE:
            return self._start(self._tick + self._tick_step)
        if policy is CounterOverflow.RAISE:
            raise CounterOverflowError(
                f"seq: all {self._seq_limit} clock sequence values of timestamp {self._tick} "
                "are used (draft §4.5.2: MUST NOT rollover); policy RAISE"
            )
        max_wait_ns = self.config.max_wait_ms * NS_PER_MS
        now_ns = wait_for_clock(
            self._clock,
            self._sleep_ns,
            self._monotonic_ns,
            self._ticks_of,
            self._tick,
            max_wait_ns,
            self.config.tick_ns,
        )
        self._clock_tick = self._ticks_of(now_ns)
        return self._start(self._clock_tick)
