"""How a :class:`~uuidkit.generators.V7Generator` makes values: its closures and compiled core.

:func:`build` returns the generator's three closures (``next``, ``generate``, ``reset``)
over one state held in closure cells. The common case (same tick, counter not exhausted) is
inlined in ``uuid7``; every decision about time is the
:class:`~uuidkit.generators._timeline.Timeline`'s and every bit position the
:class:`~uuidkit.generators.v7.V7Layout`'s.

With the compiled accelerator, ``next`` is a ``uuidkit._speedups.V7Core``: the common case
in C; everything else the very same ``uuid7`` closure, called as its slow path on the same
state, the same random words and the same clock readings (see :func:`build`).

References: RFC 9562 §5.7, §6.1, §6.2, §6.9.
"""

from __future__ import annotations

from _thread import RLock  # what threading.RLock() returns, without importing threading
from collections.abc import Callable, Iterator
from uuid import UUID

from uuidkit import _system
from uuidkit._accel import SPEEDUPS
from uuidkit._bits import FRAME_MID_SHIFT, MASK_62
from uuidkit._construct import UNKNOWN_SAFETY, new_blank, set_int, set_is_safe
from uuidkit.errors import GeneratorError
from uuidkit.generators._policy import Clock, RandomBytes, Sleep, check_count, word_stream
from uuidkit.generators._timeline import RESTART, SAME, Timeline
from uuidkit.generators._v7bulk import as_kind, bulk_block
from uuidkit.generators.v7 import NS_PER_MS, V7Counter, V7Layout

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Any

    from uuidkit.generators.v7 import V7Settings

__all__ = ["build"]


def _timeline(
    config: V7Settings, layout: V7Layout, clock: Clock, sleep_ns: Sleep, monotonic_ns: Clock
) -> Timeline:
    fraction_bits = config.fraction_bits
    return Timeline(
        overflow=config.overflow,
        regression=config.regression,
        window_ticks=config.regression_window_ms << fraction_bits,
        ahead_ticks=config.max_ahead_ms << fraction_bits,
        max_tick=layout.max_tick,
        tick_ns=layout.tick_ns,
        ticks_of=layout.ticks_of,
        clock=clock,
        sleep_ns=sleep_ns,
        monotonic_ns=monotonic_ns,
        max_wait_ns=config.max_wait_ms * NS_PER_MS,
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


def build(
    config: V7Settings,
    clock: Clock,
    random_bytes: RandomBytes,
    sleep_ns: Sleep,
    monotonic_ns: Clock,
) -> tuple[Callable[[], UUID], Callable[[int, int], Any], Callable[[], None]]:
    """The generator's three closures sharing one state (see :class:`V7Generator`).

    Every decision about time is :class:`Timeline`'s and every bit position is
    :class:`V7Layout`'s; the closures only hold the state (in cells, the cheapest thing
    CPython reads) and inline the common case: same tick, counter not exhausted.

    With the compiled accelerator, a ``V7Core`` makes the common case in C and calls
    ``slow`` for everything else: ``slow`` takes the lock, then the state from the core
    (``take``: the core's busy flag is set, so its fast path stays out), runs the very same
    ``uuid7`` closure, and gives the state back (``give``) before it releases the lock. The
    core also serves the random words (``words``, ``draw``) and the clock reading it took
    (``read_clock``), so both paths consume the same words and readings in the same order.
    """
    layout = V7Layout(config)
    timeline = _timeline(config, layout, clock, sleep_ns, monotonic_ns)
    reading, overflow = timeline.reading, timeline.overflow
    fraction_bits, counter_bits = layout.fraction_bits, layout.counter_bits
    increment_mask, tail_bits, tail_mask = layout.increment_mask, layout.tail_bits, layout.tail_mask
    wide_tail_mask = layout.wide_tail_mask
    core = _compiled_core(config, layout, clock, random_bytes)
    # Re-entrant so that generate() can hold it around a loop of uuid7(); it costs
    # the same as a plain Lock on CPython 3.11 (measured: 79 vs 81 ns per acquire/release).
    lock = RLock()
    acquire, release = lock.acquire, lock.release
    # No tick yet: None, which no clock reading equals, so the first value asks the timeline.
    tick: int | None = None
    counter, prefix, last_value = 0, 0, -1
    words: Iterator[int] = iter(()) if core is None else core
    read_clock: Clock = clock if core is None else core.read_clock

    def draw() -> int:
        nonlocal words
        if core is not None:
            return int(core.draw())
        word = next(words, None)
        if word is None:
            words = word_stream(random_bytes)
            word = next(words)
        return word

    def moved(move: int) -> None:
        """Follow a NEW or RESTART move of the timeline: new prefix, fresh counter."""
        nonlocal tick, counter, prefix, last_value
        tick = timeline.tick
        prefix = layout.prefix(tick)
        counter = layout.seed(draw)
        if move == RESTART:
            last_value = -1  # a documented step down: accept the lower value once

    # Globals rebound as closure cells: a cell load is cheaper than a global lookup.
    ns_per_ms, mid_shift, mask_62, same = NS_PER_MS, FRAME_MID_SHIFT, MASK_62, SAME
    new, set_slot_int, set_slot_is_safe = new_blank, set_int, set_is_safe
    unknown, uuid_class = UNKNOWN_SAFETY, UUID

    def uuid7() -> UUID:
        """A new UUIDv7, greater than every earlier value of this generator.

        Thread-safe and fork-safe; in steady state the timestamp is the clock's millisecond
        (see :class:`~uuidkit.generators.V7Generator` for the policies of its generator).

        References: RFC 9562 §5.7, §6.2.
        """
        # One function on purpose: each avoided call saves ~50 ns on the hot path, so the
        # common case (same tick, counter not exhausted) is inlined and everything else is
        # a call into the timeline or the layout.
        nonlocal counter, last_value
        acquire()
        try:
            now_tick = (read_clock() << fraction_bits) // ns_per_ms  # layout.ticks_of, inlined
            try:
                word = next(words)
            except StopIteration:
                word = draw()
            move = same if now_tick == tick else reading(now_tick)
            if move != same:
                moved(move)
            else:
                # RFC 9562 §6.2 Method 2: the counter "MUST be incremented in the least
                # significant position"; §6.1: an implementation "MUST NOT knowingly return
                # duplicate values due to a counter rollover", hence the overflow check.
                bumped = counter + (word & increment_mask) + 1
                if bumped >> counter_bits:
                    moved(overflow(now_tick))
                else:
                    counter = bumped
            low = counter  # layout.value, inlined
            if tail_bits:
                low = (low << tail_bits) | (word & tail_mask)
                if wide_tail_mask:
                    low |= (draw() & wide_tail_mask) << 64
            value = prefix | ((low >> 62) << mid_shift) | (low & mask_62)
            # RFC 9562 §6.2 "Monotonic Error Checking": the new value must exceed the last.
            if value <= last_value:
                raise GeneratorError(f"monotonic check failed: {value:#034x} <= {last_value:#034x}")
            last_value = value
        finally:
            release()
        result = new(uuid_class)
        set_slot_int(result, value)
        set_slot_is_safe(result, unknown)
        return result

    def generate(count: int, kind: int) -> Any:
        check_count(count)
        acquire()
        try:
            taken = core is not None and take()
            try:
                block = one_block(count, kind) if count > 1 else None
                if block is None:
                    # The lock is re-entrant: the whole block is still one acquisition.
                    values = [uuid7().int for _ in range(count)]
            finally:
                if taken:
                    give()
        finally:
            release()
        return as_kind(values, kind) if block is None else block

    block_source = None if random_bytes is _system.OS_RANDOM else random_bytes

    def one_block(count: int, kind: int) -> Any:
        nonlocal counter, last_value
        if config.counter is not V7Counter.RANDOM_INCREMENT:
            return None
        now_tick = layout.ticks_of(clock())
        if now_tick != tick and (move := reading(now_tick)) != same:
            moved(move)
        block = bulk_block(
            prefix, counter, counter_bits, config.increment_bits, count, block_source, kind
        )
        if block is None:
            return None
        values, first, last, counter = block
        if first <= last_value:
            raise GeneratorError(f"monotonic check failed: {first:#034x} <= {last_value:#034x}")
        last_value = last
        return values

    def take() -> bool:
        """Take the state from the C core (busy); False when this thread already holds it.

        When the core moved to a later tick (a NEW move at the clock, made in C), the timeline
        replays that reading, so its tick and highest reading are what the pure path's would be.
        """
        nonlocal tick, counter, prefix, last_value
        taken = core.enter()
        if taken is None:
            return False
        core_tick, counter, last_value = taken
        if core_tick >= 0 and core_tick != tick:
            reading(core_tick)  # a later tick: NEW (Timeline.reading), no regression
            tick = timeline.tick
            prefix = layout.prefix(tick)
        return True

    def give() -> None:
        core.leave(-1 if tick is None else tick, counter, prefix, last_value)

    def slow() -> UUID:
        """The C core's slow path: the pure ``uuid7`` on the core's state, under the lock."""
        acquire()
        try:
            if not take():
                return uuid7()
            try:
                return uuid7()
            finally:
                give()
        finally:
            release()

    def attach() -> None:
        locked = _core_takes_the_lock(clock)
        core.attach(slow, acquire if locked else None, release if locked else None)

    def reset() -> None:
        nonlocal tick, counter, prefix, last_value, words, acquire, release
        fresh = RLock()
        acquire, release = fresh.acquire, fresh.release
        timeline.reset()
        tick, counter, prefix, last_value = None, 0, 0, -1
        if core is None:
            words = iter(())
        else:
            core.reset()  # RFC 9562 §6.9: the child never reuses the parent's random words
            attach()

    # A bad call's TypeError names the public function, not build.<locals>.uuid7.
    uuid7.__qualname__ = "uuid7"
    if core is None:
        return uuid7, generate, reset
    attach()
    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(core, name, getattr(uuid7, name))
    core.__wrapped__ = uuid7
    return core, generate, reset
