"""How a :class:`~uuidkit.generators.V7Generator` makes values: :class:`V7State` and its steps.

A :class:`V7State` holds one generator's state (tick, counter, prefix, last value, buffered
random words) and makes a value in small steps: read the clock, take a random word, move the
counter (:meth:`V7State.count`) or follow the :class:`~uuidkit.generators._timeline.Timeline`
to a new tick (:meth:`V7State.follow`), lay the bits out with the
:class:`~uuidkit.generators.v7.V7Layout`, check the value against the last one. Every
decision about time is the Timeline's, every bit position the layout's.

With the compiled accelerator, the generator's ``next`` is a ``uuidkit._speedups.V7Core``:
the common case in C, everything else :meth:`V7State.slow`, which runs the very same steps on
the core's state, with the same random words and the same clock readings (see
:meth:`V7State.slow`).

References: RFC 9562 §5.7, §6.1, §6.2, §6.9.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from uuid import UUID

from uuidkit import _system
from uuidkit._accel import SPEEDUPS
from uuidkit._construct import (
    SLOT_PROTOCOL,
    UNKNOWN_SAFETY,
    from_int_unchecked,
    new_blank,
    set_int,
    set_is_safe,
)
from uuidkit._stdlib import RLock  # what threading.RLock() returns, without threading
from uuidkit.errors import GeneratorError
from uuidkit.generators._policy import (
    Clock,
    ClockWait,
    RandomBytes,
    Sleep,
    check_count,
    paired_monotonic,
    word_stream,
)
from uuidkit.generators._timeline import RESTART, SAME, WAIT, Timeline
from uuidkit.generators._v7bulk import as_kind, bulk_block
from uuidkit.generators.v7 import V7Counter, V7Layout
from uuidkit.timestamps import NS_PER_MS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Any

    from uuidkit.generators.v7 import V7Settings

__all__ = ["V7State", "build"]


def _timeline(config: V7Settings, layout: V7Layout, clock: Clock, monotonic_ns: Clock) -> Timeline:
    fraction_bits = config.fraction_bits
    return Timeline(
        monotonic_ns=paired_monotonic(clock, monotonic_ns),
        tick_rate=(1 << fraction_bits, NS_PER_MS),
        overflow=config.overflow,
        regression=config.regression,
        window_ticks=config.regression_window_ms << fraction_bits,
        ahead_ticks=config.max_ahead_ms << fraction_bits,
        max_tick=layout.max_tick,
        unit=f"ticks of 2**-{fraction_bits} ms",
        exhausted=f"counter: all 2**{layout.counter_bits} values of the tick are used",
    )


def _compiled_core(
    config: V7Settings, layout: V7Layout, clock: Clock, random_bytes: RandomBytes
) -> Any:
    """The C fast path for this generator (``uuidkit._speedups.V7Core``), or ``None``.

    ``None`` on the pure-Python path, and for the bit plans whose every value needs the
    slow path anyway (Method 3 without a counter).
    """
    core_type = getattr(SPEEDUPS, "V7Core", None)
    if core_type is None or not layout.counter_bits or layout.wide_tail_mask:
        return None
    return core_type(
        None if clock is _system.REALTIME_NS else clock,
        None if random_bytes is _system.OS_RANDOM else random_bytes,
        layout.fraction_bits,
        layout.counter_bits,
        layout.tail_bits,
        config.increment_bits if config.counter is V7Counter.RANDOM_INCREMENT else 0,
        layout.seed_mask.bit_length(),
    )


def _core_takes_the_lock(clock: Clock) -> bool:
    """Whether the C core holds the generator's lock around a value (an injected clock).

    An injected clock is Python code: another thread may run while it is called, so the
    core reads it under the lock, as the pure path does. The system clock is read in C,
    atomically with the state under the GIL, and needs no lock.
    """
    return clock is not _system.REALTIME_NS


class V7State:
    """The state of one v7 generator and the steps that make its values.

    ``tick`` is ``None`` before the first value (no clock reading equals it, so the first
    value asks the Timeline); ``last_value`` is -1 then, and after a RESTART.

    References: RFC 9562 §5.7, §6.2.
    """

    __slots__ = (
        "block_source",
        "clock",
        "config",
        "core",
        "counter",
        "last_value",
        "layout",
        "lock",
        "prefix",
        "random_bytes",
        "read_clock",
        "tick",
        "timeline",
        "wait",
        "words",
    )

    def __init__(
        self,
        config: V7Settings,
        clock: Clock,
        random_bytes: RandomBytes,
        sleep_ns: Sleep,
        monotonic_ns: Clock,
    ) -> None:
        self.config, self.clock, self.random_bytes = config, clock, random_bytes
        self.layout = layout = V7Layout(config)
        self.timeline = _timeline(config, layout, clock, monotonic_ns)
        self.wait = ClockWait(
            clock,
            sleep_ns,
            monotonic_ns,
            layout.ticks_of,
            layout.tick_ns,
            config.max_wait_ms * NS_PER_MS,
        )
        self.core = core = _compiled_core(config, layout, clock, random_bytes)
        self.block_source = None if random_bytes is _system.OS_RANDOM else random_bytes
        # Re-entrant: generate() holds it around a loop of values, and the core's slow path
        # takes it again.
        self.lock = RLock()
        self.tick: int | None = None
        self.counter, self.prefix, self.last_value = 0, 0, -1
        # The core serves the random words and the clock reading it took, so that both paths
        # consume the same words and readings in the same order.
        self.words: Iterator[int] = iter(()) if core is None else iter(core.draw, None)
        self.read_clock: Clock = clock if core is None else core.read_clock

    # --- one value ---------------------------------------------------------------------

    def next_value(self) -> int:
        """The next value as an int (lock held): greater than every earlier one.

        References: RFC 9562 §5.7, §6.2.
        """
        layout = self.layout
        now_tick = layout.ticks_of(self.read_clock())
        try:
            word = next(self.words)
        except StopIteration:
            word = self.draw()
        move = SAME if now_tick == self.tick else self.timeline.reading(now_tick)
        if move == SAME:  # the same tick, or one the Timeline keeps
            self.count(now_tick, word)
        else:
            self.follow(move)
        value = layout.value(self.prefix, self.counter, word, self.draw)
        # RFC 9562 §6.2 "Monotonic Error Checking": the new value must exceed the last.
        if value <= self.last_value:
            raise self.not_monotonic(value)
        self.last_value = value
        return value

    def draw(self) -> int:
        """The next random word, refilling the buffer from the random source when empty."""
        if self.core is not None:
            return int(self.core.draw())
        word = next(self.words, None)
        if word is None:
            self.words = word_stream(self.random_bytes)
            word = next(self.words)
        return word

    def count(self, now_tick: int, word: int) -> None:
        """Same tick: the next counter value, or the overflow policy's move.

        References: RFC 9562 §6.2 Method 2 (the counter "MUST be incremented in the least
        significant position"); §6.1 ("MUST NOT knowingly return duplicate values due to a
        counter rollover").
        """
        layout = self.layout
        bumped = self.counter + (word & layout.increment_mask) + 1
        if bumped >> layout.counter_bits:
            self.follow(self.overflow(now_tick))
        else:
            self.counter = bumped

    def overflow(self, now_tick: int) -> int:
        """The Timeline's move for a used-up counter; its WAIT is waited for here."""
        timeline = self.timeline
        move = timeline.overflow(now_tick)
        if move == WAIT:
            move = timeline.reading(self.wait.until(timeline.wait_tick))
        return move

    def follow(self, move: int) -> None:
        """Follow a NEW or RESTART move of the Timeline: new prefix, fresh counter.

        References: RFC 9562 §6.2 ("randomly initialize the counter with each new tick").
        """
        self.tick = tick = self.timeline.tick
        self.prefix = self.layout.prefix(tick)
        self.counter = self.layout.seed(self.draw)
        if move == RESTART:
            self.last_value = -1  # a documented step down: accept the lower value once

    def not_monotonic(self, value: int) -> GeneratorError:
        """The error for a value not above the last one.

        References: RFC 9562 §6.2 "Monotonic Error Checking".
        """
        return GeneratorError(f"monotonic check failed: {value:#034x} <= {self.last_value:#034x}")

    # --- blocks ------------------------------------------------------------------------

    def generate(self, count: int, kind: int) -> Any:
        """``count`` values of ``kind`` under one lock acquisition.

        References: RFC 9562 §6.2 (batches are monotonic too).
        """
        check_count(count)
        with self.lock:
            taken = self.core is not None and self.take()
            try:
                block = self.block(count, kind) if count > 1 else None
                if block is None:
                    values = [self.next_value() for _ in range(count)]
            finally:
                if taken:
                    self.give()
        return as_kind(values, kind) if block is None else block

    def block(self, count: int, kind: int) -> Any:
        """A vectorised block (Method 2 only), or ``None`` to make the values one by one."""
        config = self.config
        if config.counter is not V7Counter.RANDOM_INCREMENT:
            return None
        self.follow_clock(self.layout.ticks_of(self.clock()))
        layout = self.layout
        block = bulk_block(
            self.prefix,
            self.counter,
            layout.counter_bits,
            config.increment_bits,
            count,
            self.block_source,
            kind,
        )
        if block is None:
            return None
        values, first, last, self.counter = block
        if first <= self.last_value:
            raise self.not_monotonic(first)
        self.last_value = last
        return values

    def follow_clock(self, now_tick: int) -> None:
        """Follow the Timeline to ``now_tick`` if it differs from the current tick."""
        if now_tick != self.tick and (move := self.timeline.reading(now_tick)) != SAME:
            self.follow(move)

    # --- the compiled core's slow path --------------------------------------------------

    def take(self) -> bool:
        """Take the state from the C core (busy); False when this thread already holds it.

        When the core moved to a later tick (a NEW move at the clock, made in C), the Timeline
        replays that reading, so its tick and highest reading are what the pure path's would be.
        """
        taken = self.core.enter()
        if taken is None:
            return False
        core_tick, self.counter, self.last_value = taken
        if core_tick >= 0 and core_tick != self.tick:
            self.timeline.reading(core_tick)  # a later tick: NEW (Timeline.reading), no regression
            self.tick = tick = self.timeline.tick
            self.prefix = self.layout.prefix(tick)
        return True

    def give(self) -> None:
        """Give the state back to the C core."""
        tick = self.tick
        self.core.leave(
            -1 if tick is None else tick,
            self.counter,
            self.prefix,
            self.last_value,
            self.timeline.trust_tick,
        )

    def slow(self) -> UUID:
        """The C core's slow path: the same steps on the core's state, under the lock."""
        with self.lock:
            if not self.take():
                return from_int_unchecked(self.next_value())
            try:
                return from_int_unchecked(self.next_value())
            finally:
                self.give()

    def attach(self) -> None:
        """Hand the core its slow path and, with an injected clock, the lock."""
        lock = self.lock if _core_takes_the_lock(self.clock) else None
        self.core.attach(
            self.slow,
            None if lock is None else lock.acquire,
            None if lock is None else lock.release,
        )

    # --- fork ----------------------------------------------------------------------------

    def reset(self) -> None:
        """In a forked child: a new lock, no tick, no counter, no buffered words.

        References: RFC 9562 §6.9.
        """
        self.lock = RLock()
        self.timeline.reset()
        self.tick, self.counter, self.prefix, self.last_value = None, 0, 0, -1
        if self.core is None:
            self.words = iter(())
        else:
            self.core.reset()  # RFC 9562 §6.9: the child never reuses the parent's random words
            self.attach()


def build(
    config: V7Settings,
    clock: Clock,
    random_bytes: RandomBytes,
    sleep_ns: Sleep,
    monotonic_ns: Clock,
) -> tuple[Callable[[], UUID], Callable[[int, int], Any], Callable[[], None]]:
    """The generator's ``next``, ``generate`` and fork ``reset`` over one :class:`V7State`.

    ``next`` is ``uuid7``, a function of no arguments (on the pure path), or the compiled
    ``V7Core`` carrying its name and docstring.
    """
    state = V7State(config, clock, random_bytes, sleep_ns, monotonic_ns)
    next_value = state.next_value

    def uuid7() -> UUID:
        """A new UUIDv7, greater than every earlier value of this generator.

        Thread-safe and fork-safe; in steady state the timestamp is the clock's millisecond
        (see :class:`~uuidkit.generators.V7Generator` for the policies of its generator).

        References: RFC 9562 §5.7, §6.2.
        """
        with state.lock:
            value = next_value()
        if not SLOT_PROTOCOL:  # see uuidkit._construct
            return from_int_unchecked(value)
        result = new_blank(UUID)
        set_int(result, value)
        set_is_safe(result, UNKNOWN_SAFETY)
        return result

    # A bad call's TypeError names the public function, not build.<locals>.uuid7.
    uuid7.__qualname__ = "uuid7"
    core = state.core
    if core is None:
        return uuid7, state.generate, state.reset
    state.attach()
    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(core, name, getattr(uuid7, name))
    core.__wrapped__ = uuid7
    return core, state.generate, state.reset
