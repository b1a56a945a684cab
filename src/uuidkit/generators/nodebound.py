"""Generators whose UUIDs carry a node ID from a :class:`~uuidkit.generators.NodeSource`.

Four layouts (figures in :mod:`uuidkit.nodelayouts`): UUIDv1 and UUIDv6 with the claimed node
as their node field, ``v7-node`` (UUIDv7, 26-bit Method 1 counter, 48-bit node in rand_b) and
``v8-node`` (UUIDv8: ms, 1/4096 ms fraction, 14-bit counter, node).

Why two values never repeat (the argument in full is in ``docs/distributed.md``):

1. a node ID is held by one generator at a time on the whole site: the source claimed it
   (UIAP makes it unique on the site at claim time), one claim per process, and within a
   process one generator per (source, version) -- a second one raises;
2. each generator's (timestamp, counter) -- (timestamp, clock_seq) for v1/v6 -- strictly
   increases for as long as it lives, whatever its node, the clock or the overflow policy;
3. the version nibble separates the four layouts.

So two values from different nodes differ in the node field, and two from one node differ
in time or counter. A lost or replaced node (any :class:`~uuidkit.generators.NodeEvent`) is
dropped under the generator's lock as soon as the source reports it; a lease is also dropped when
its ``expires_ns`` passes on the generator's clock. Neither falls back to random nodes: the
next value waits for the source's next lease, or raises
:class:`~uuidkit.errors.NodeUnavailableError` if the source's policy says so.

Holding a node costs no round trip per UUID: the source is asked only when the lease is
missing, lost or expired.

References: RFC 9562 §5.1, §5.6, §5.7, §5.8, §6.2, §6.4, §6.9, §6.10.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from typing import Final
from uuid import UUID

from uuidkit import _system
from uuidkit._construct import from_int_unchecked
from uuidkit.errors import GeneratorError, NodeUnavailableError
from uuidkit.generators import _nodegate
from uuidkit.generators._nodegate import MODE_DELEGATE, MODE_SLOW, GateBase
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
    word_stream,
)
from uuidkit.generators._timeline import DEFAULT_MAX_AHEAD_MS, SAME, WAIT, Timeline
from uuidkit.generators.gregorian import GregorianConfig, V1Generator, V6Generator
from uuidkit.generators.nodesource import NodeEvent, NodeLease, NodeSource
from uuidkit.nodelayouts import (
    V7_NODE_COUNTER_BITS,
    V8_NODE_COUNTER_BITS,
    V8_NODE_FRACTION_BITS,
    v7_node_int,
    v8_node_int,
)
from uuidkit.timestamps import NS_PER_MS

__all__ = [
    "NodeBoundV1Generator",
    "NodeBoundV6Generator",
    "NodeBoundV7Generator",
    "NodeBoundV8Generator",
]

#: The v7-node counter is seeded below one guard bit (RFC 9562 §6.2 "Counter Rollover
#: Guards"), so at least 2**25 values fit in every millisecond.
_V7_SEED_BITS: Final = V7_NODE_COUNTER_BITS - 1

#: (id(source), version) -> the generator bound to it (guarantee 1 of the module docstring).
_bound: dict[tuple[int, int], weakref.ref[_NodeBound]] = {}
_bound_lock = threading.RLock()  # re-entrant: a weakref callback may run inside _bind


#: The gate's limit when it makes no counting values (v1/v6: the inner generator checks).
_NO_LIMIT: Final = (1 << 62) - 1


def _bind(source: NodeSource, version: int, generator: _NodeBound) -> None:
    key = (id(source), version)
    with _bound_lock:
        holder = _bound.get(key)
        existing = holder() if holder is not None else None
        if existing is not None and existing._source is source:
            raise GeneratorError(
                f"node source already feeds a version {version} generator: two generators of "
                "one version on one node could repeat a value; share that generator instead"
            )
        _bound[key] = weakref.ref(generator, lambda _ref: _unbind(key, _ref))


def _unbind(key: tuple[int, int], ref: weakref.ref[_NodeBound]) -> None:
    with _bound_lock:
        if _bound.get(key) is ref:
            del _bound[key]


def _past_deadline(lease: NodeLease) -> bool:
    """True once a lease's monotonic deadline (if it has one) has come: a paused process or
    a wall clock stepped back must not stretch a leased node past its end."""
    deadline = lease.deadline_mono_ns
    return deadline is not None and _system.monotonic_ns() >= deadline


class _NodeBound(GateBase):
    """Lease handling shared by the node-bound generators (one lock for both).

    Calling a generator is its gate's call (see :mod:`uuidkit.generators._nodegate`): with the
    accelerator, the lease check and the simple values in C, everything else
    :meth:`_gate_slow`; without it, always :meth:`_gate_slow`.
    """

    _VERSION = 0
    _gated = False

    def __init__(self, source: NodeSource, clock: Clock) -> None:
        self._source = source
        self._clock = clock
        # Re-entrant: a source may report an event to this generator from inside the
        # current() call this generator makes under its lock.
        self._lock = threading.RLock()
        self._lease: NodeLease | None = None
        _bind(source, self._VERSION, self)
        own = weakref.ref(self)

        def on_event(event: NodeEvent) -> None:
            generator = own()
            if generator is not None:
                generator._on_event(event)

        self._listener = on_event
        source.subscribe(on_event)
        weakref.finalize(self, source.unsubscribe, on_event)
        register_for_fork(self)

    @property
    def node(self) -> int | None:
        """The node ID in use, or ``None`` before the first value and after a loss."""
        lease = self._lease
        return None if lease is None else lease.node

    @property
    def generation(self) -> int | None:
        """The source's generation of the node in use (changes with the node)."""
        lease = self._lease
        return None if lease is None else lease.generation

    def _on_event(self, event: NodeEvent) -> None:
        # Any change -- a loss, a new node, a renewal -- drops the cached lease, so the next
        # value asks the source (one call per event, never per UUID). For a loss this is
        # UIAP §2.1.2: "Recovery after collision is the responsibility of the application":
        # the node is out of use before the next value (the gate is disarmed first).
        with self._lock:
            self._hold_state()
            self._lease = None

    def _gate_slow(self, reading: int | None) -> UUID:
        """One value by the reference path, from ``reading`` (a clock reading the gate took
        under the lock) or a fresh one; the gate is disarmed meanwhile and armed again when
        the lease is held."""
        with self._lock:
            self._hold_state()
            value = self._value(reading)
            lease = self._lease
            state = self._counting_state()
            if self._gated and lease is not None and state is not None:
                self._gate_arm(
                    lease.expires_ns,
                    lease.deadline_mono_ns,
                    *state,
                    lease.node,
                    self._trust_tick(),
                )
            return value

    def _hold_state(self) -> None:
        """Disarm the gate (lock held); the counting state it advanced is the generator's."""
        state = self._gate_disarm()
        if state is not None:
            self._take_counting_state(*state)

    def _configure_gate(self, mode: int, *layout: object) -> None:
        """Give the gate its mode, layout, sources and this generator's lock."""
        self._gated = mode != MODE_SLOW and _nodegate.gate_in_use()
        if not self._gated:
            mode = MODE_SLOW
        self._gate_configure(mode, *layout, vars(_system), _system.MONOTONIC_NS)

    def _value(self, reading: int | None) -> UUID:
        raise NotImplementedError

    def _counting_state(self) -> tuple[int, int] | None:
        """(tick, counter) for the gate, or ``None`` while it may not make values."""
        return (0, 0)

    def _take_counting_state(self, tick: int, counter: int) -> None:
        """The gate's (tick, counter), which it may have advanced since it was armed."""

    def _trust_tick(self) -> int:
        """The last tick the gate may move to in C (its Timeline's trust_tick); a later one is
        checked against the monotonic clock by the reference path."""
        return _NO_LIMIT

    def _node_for(self, now_ns: int) -> int:
        """The node of the next value (lock held): the lease, renewed from the source."""
        lease = self._lease
        if lease is None or now_ns >= lease.expires_ns or _past_deadline(lease):
            fresh = self._source.current()
            if lease is None or fresh.generation != lease.generation:
                self._on_new_node(fresh)
            self._lease = lease = fresh
            if now_ns >= lease.expires_ns or _past_deadline(lease):
                self._lease = None
                raise NodeUnavailableError(
                    f"node {lease.node:012x}: its lease ended at {lease.expires_ns} ns, before "
                    f"the clock reading {now_ns} ns, and the source has not renewed it",
                    "lease expired",
                )
        return lease.node

    def _on_new_node(self, lease: NodeLease) -> None:
        """A different node from now on (lock held)."""

    def reset_after_fork(self) -> None:
        """In a forked child: new lock, no lease: the child's source gives its own node.

        References: RFC 9562 §6.9.
        """
        self._hold_state()
        self._lock = threading.RLock()
        self._lease = None
        self._gate_forget_words()
        self._setup_gate()

    def _setup_gate(self) -> None:
        raise NotImplementedError


class _GregorianNodeBound(_NodeBound):
    _inner: V1Generator | V6Generator

    def _setup_gate(self) -> None:
        # The gate checks the lease before the inner generator's value, with the system
        # clock only (an injected one is read twice per value: both readings in Python).
        system = self._clock is _system.REALTIME_NS
        mode = MODE_DELEGATE if system else MODE_SLOW
        self._configure_gate(mode, 0, 1, 0, None, self._lock, None, self._inner.next)

    def _value(self, reading: int | None) -> UUID:
        """The next UUID, with the source's node (lock held).

        References: RFC 9562 §5.1, §5.6, §6.4.
        """
        self._node_for(self._clock() if reading is None else reading)
        return self._inner()

    def generate(self, count: int) -> list[UUID]:
        """``count`` consecutive UUIDs (the lease is checked for each).

        References: RFC 9562 §6.2 (batches).
        """
        return [self() for _ in range(check_count(count))]

    def _on_new_node(self, lease: NodeLease) -> None:
        # RFC 9562 §5.1: a changed node gets a fresh random clock sequence (set_node).
        self._inner.set_node(lease.node)


class NodeBoundV1Generator(_GregorianNodeBound):
    """UUIDv1 with the node from a :class:`NodeSource`, built on :class:`V1Generator`.

    - **Monotonic**, **Clock regression**, **Counter overflow**: as
      :class:`~uuidkit.generators.V1Generator` with ``config`` (default WAIT, RESEED).
    - **Reseeding**: a new node gets a fresh random clock sequence (RFC 9562 §5.1).
    - **Node loss**: the node is dropped as soon as the source reports it lost or its lease
      expires; the next value takes the source's next lease or raises
      :class:`~uuidkit.errors.NodeUnavailableError`.
    - **Thread safety**: one lock per value.
    - **Fork**: the child drops the node and asks its own source for one.

    References: RFC 9562 §5.1, §6.4, §6.10; RFC 4122 §4.2.1.
    """

    _VERSION = 1

    def __init__(
        self,
        source: NodeSource,
        config: GregorianConfig | None = None,
        *,
        clock: Clock = _system.system_clock_ns,
        random_bytes: RandomBytes = _system.random_bytes,
        sleep_ns: Sleep = _system.sleep_ns,
        monotonic_ns: Clock = _system.monotonic_ns,
    ) -> None:
        # node=0 is a placeholder no claimed node equals (its multicast bit is clear): the
        # first value sets the real node through set_node.
        self._inner = V1Generator(
            config,
            node=0,
            clock=clock,
            random_bytes=random_bytes,
            sleep_ns=sleep_ns,
            monotonic_ns=monotonic_ns,
        )
        super().__init__(source, clock)
        self._setup_gate()


#: v6-node defaults: the node is the claimed one, not random per UUID; values never go
#: backwards (KEEP) and never stall (ADVANCE), as for UUIDv6.
V6_NODE_DEFAULT: Final = GregorianConfig(
    overflow=CounterOverflow.ADVANCE, regression=ClockRegression.KEEP, random_per_uuid=False
)


class NodeBoundV6Generator(_GregorianNodeBound):
    """UUIDv6 with the node from a :class:`NodeSource`, built on :class:`V6Generator`.

    - **Monotonic**: the timestamp strictly increases (defaults KEEP, ADVANCE), so values
      sort in generation order; ``random_per_uuid`` must stay off (the node is the claim).
    - **Node loss**, **Thread safety**, **Fork**: as :class:`NodeBoundV1Generator`.

    References: RFC 9562 §5.6, §6.4, §6.10.
    """

    _VERSION = 6

    def __init__(
        self,
        source: NodeSource,
        config: GregorianConfig | None = None,
        *,
        clock: Clock = _system.system_clock_ns,
        random_bytes: RandomBytes = _system.random_bytes,
        sleep_ns: Sleep = _system.sleep_ns,
        monotonic_ns: Clock = _system.monotonic_ns,
    ) -> None:
        config = V6_NODE_DEFAULT if config is None else config
        if config.random_per_uuid:
            raise GeneratorError("random_per_uuid: a node-bound UUIDv6 keeps its claimed node")
        self._inner = V6Generator(
            config,
            node=0,
            clock=clock,
            random_bytes=random_bytes,
            sleep_ns=sleep_ns,
            monotonic_ns=monotonic_ns,
        )
        super().__init__(source, clock)
        self._setup_gate()


class _CountingNodeBound(_NodeBound):
    """v7-node and v8-node: a tick (ms or 1/4096 ms) and a counter under the lease lock.

    Every decision about the tick is a :class:`~uuidkit.generators._timeline.Timeline`'s:
    KEEP within ``max_ahead_ms`` and, since these layouts have no clock sequence to change,
    never a restart below the earlier values (``may_restart=False``).
    """

    _COUNTER_BITS = 0
    _FRACTION_BITS = 0
    #: Random bits of the counter's seed at a new tick (0: the counter starts at 0).
    _SEED_BITS = 0

    def __init__(
        self,
        source: NodeSource,
        *,
        overflow: CounterOverflow = CounterOverflow.ADVANCE,
        max_wait_ms: int = 100,
        max_ahead_ms: int = DEFAULT_MAX_AHEAD_MS,
        clock: Clock = _system.system_clock_ns,
        random_bytes: RandomBytes = _system.random_bytes,
        sleep_ns: Sleep = _system.sleep_ns,
        monotonic_ns: Clock = _system.monotonic_ns,
    ) -> None:
        if not isinstance(overflow, CounterOverflow):
            raise GeneratorError(f"overflow: expected a CounterOverflow, found {overflow!r}")
        check_int("max_ahead_ms", max_ahead_ms, 0, 1 << 40)
        check_callable("monotonic_ns", monotonic_ns)
        fraction_bits = self._FRACTION_BITS
        self._timeline = Timeline(
            overflow=overflow,
            regression=ClockRegression.KEEP,
            window_ticks=0,
            ahead_ticks=max_ahead_ms << fraction_bits,
            max_tick=(1 << (48 + fraction_bits)) - 1,
            unit=f"ticks of 2**-{fraction_bits} ms",
            exhausted=f"counter: all 2**{self._COUNTER_BITS} values of the tick are used",
            may_restart=False,
            monotonic_ns=paired_monotonic(clock, monotonic_ns),
            tick_rate=(1 << fraction_bits, NS_PER_MS),
        )
        self._wait = ClockWait(
            clock,
            sleep_ns,
            monotonic_ns,
            self._ticks_of,
            NS_PER_MS >> fraction_bits,
            max_wait_ms * NS_PER_MS,
        )
        self._random_bytes = random_bytes
        self._words: Iterator[int] = iter(())
        self._counter = 0
        super().__init__(source, clock)
        self._setup_gate()

    def _setup_gate(self) -> None:
        system = self._clock is _system.REALTIME_NS
        self._configure_gate(
            self._VERSION,
            self._FRACTION_BITS,
            self._COUNTER_BITS,
            self._SEED_BITS,
            None if system else self._clock,
            self._lock,
            None if self._random_bytes is _system.OS_RANDOM else self._random_bytes,
            None,
        )

    def _value(self, reading: int | None) -> UUID:
        """The next value: strictly above every earlier one of this generator (lock held).

        References: RFC 9562 §6.2 (Method 1, Counter Rollover Handling), §6.4.
        """
        now_ns = self._clock() if reading is None else reading
        lease = self._lease
        if lease is None or now_ns >= lease.expires_ns:
            # Getting a node may block (a claim: 2.5 s with UIAP's timers), so the
            # value's time is read again once the node is held: a reading from before
            # would date the value before its node was ours (docs/distributed.md).
            self._node_for(now_ns)
            now_ns = self._clock()
        node = self._node_for(now_ns)
        return from_int_unchecked(self._pack(*self._advance(now_ns), node))

    def _counting_state(self) -> tuple[int, int] | None:
        timeline = self._timeline
        return (timeline.tick, self._counter) if timeline.has_tick else None

    def _trust_tick(self) -> int:
        return self._timeline.trust_tick

    def _take_counting_state(self, tick: int, counter: int) -> None:
        timeline = self._timeline
        if tick != timeline.tick:
            timeline.reading(tick)  # a later tick the gate moved to: NEW, as on this path
        self._counter = counter

    def generate(self, count: int) -> list[UUID]:
        """``count`` consecutive values (the lease is checked for each).

        References: RFC 9562 §6.2 (batches).
        """
        return [self() for _ in range(check_count(count))]

    def _advance(self, now_ns: int) -> tuple[int, int]:
        """(tick, counter) of the next value; both only ever grow together."""
        timeline = self._timeline
        now_tick = self._ticks_of(now_ns)
        same = timeline.has_tick and now_tick == timeline.tick
        # Same tick, or the clock went back within the bound (RFC 9562 §6.2 "MAY reuse the
        # previous timestamp and increment the previous counter method"): count on.
        move = SAME if same else timeline.reading(now_tick)
        if move == SAME:
            counter = self._counter + 1
            if counter >> self._COUNTER_BITS:
                # RFC 9562 §6.1: an implementation "MUST NOT knowingly return duplicate
                # values due to a counter rollover".
                move = timeline.overflow(now_tick)
                if move == WAIT:
                    move = timeline.reading(self._wait.until(timeline.wait_tick))
            else:
                self._counter = counter
        if move != SAME:
            # RFC 9562 §6.2: "If the current timestamp is greater than the previous
            # timestamp, re-initialize the desired counter method to the new timestamp".
            self._counter = self._seed()
        return timeline.tick, self._counter

    def _next_word(self) -> int:
        if self._gated:
            return self._gate_draw()  # the gate's buffer: both paths take the same words
        word = next(self._words, None)
        if word is None:
            self._words = word_stream(self._random_bytes)
            word = next(self._words)
        return word

    def reset_after_fork(self) -> None:
        """In a forked child: new lock and random buffer, no lease (RFC 9562 §6.9)."""
        super().reset_after_fork()
        self._words = iter(())

    def _ticks_of(self, now_ns: int) -> int:
        # RFC 9562 §6.2 Method 3: floor(fraction_of_ms * 2**F), exactly in integers.
        return (now_ns << self._FRACTION_BITS) // NS_PER_MS

    def _seed(self) -> int:
        raise NotImplementedError

    @staticmethod
    def _pack(tick: int, counter: int, node: int) -> int:
        raise NotImplementedError


class NodeBoundV7Generator(_CountingNodeBound):
    """The v7-node layout: UUIDv7 whose rand_a/rand_b hold a 26-bit counter and the node.

    - **Monotonic**: (unix_ts_ms, counter) strictly increases; the counter is seeded with 25
      random bits (one guard bit) at each new millisecond and counts +1 (RFC 9562 §6.2
      Method 1), so a node makes at least 2**25 values per millisecond before overflow.
    - **Reseeding**: a fresh random seed at each new millisecond.
    - **Clock regression**: KEEP: the last millisecond is kept and the counter counts on,
      while it is at most ``max_ahead_ms`` (default 10 s) ahead of the clock; further
      behind, :class:`~uuidkit.ClockRegressionError` until the clock is back within the
      bound (a node has no clock sequence to change: values below the earlier ones could
      repeat one).
    - **Counter overflow**: ADVANCE (default) moves one millisecond ahead of the clock
      (at most ``max_ahead_ms``, then :class:`~uuidkit.CounterOverflowError`); WAIT sleeps
      for the next millisecond (at most ``max_wait_ms``); RAISE raises.
    - **Node loss**, **Thread safety**, **Fork**: as :class:`NodeBoundV1Generator`.

    References: RFC 9562 §5.7, §6.2, §6.4, §6.10.
    """

    _VERSION = 7
    _COUNTER_BITS = V7_NODE_COUNTER_BITS
    _SEED_BITS = _V7_SEED_BITS

    def reserve_milliseconds(self, count: int) -> tuple[int, int]:
        """Hand out ``count`` whole milliseconds of this generator's node: ``(node, first_ms)``.

        Every v7-node value with that node, a millisecond in ``first_ms .. first_ms + count
        - 1`` and any counter is the caller's to make, now or later, in any process: this
        generator's own values go above the block (it starts at the clock's millisecond, or
        after this generator's last one). The block must end before the lease does (on the
        wall clock and on the monotonic deadline), so that a later holder of the node, whose
        values are stamped after its own grant, never reaches it; a block that does not fit
        raises :class:`~uuidkit.errors.NodeUnavailableError` and reserves nothing. A block
        ahead of the clock by more than ``max_ahead_ms`` makes this generator's next values
        wait for the clock (``CounterOverflowError`` under ADVANCE) until it has caught up.

        References: RFC 9562 §6.2 ("MAY increment the timestamp ahead of the actual time"),
        §6.3 ("allocate a block of timestamps"), §6.4.
        """
        check_int("count", count, 1, 1 << 40)
        with self._lock:
            # The compiled gate may have advanced the tick since it was armed: take its
            # state back, so the block starts after it and the gate, armed again by the
            # next value, starts after the block.
            self._hold_state()
            now_ns = self._clock()
            if self._lease is None:
                self._node_for(now_ns)  # may block: read the time again once the node is held
                now_ns = self._clock()
            node = self._node_for(now_ns)
            timeline = self._timeline
            first = now_ns // NS_PER_MS
            if timeline.has_tick:
                first = max(first, timeline.tick + 1)
            end_ns = (first + count) * NS_PER_MS  # the block's first nanosecond after it
            self._check_block_in_lease(now_ns, end_ns, node)
            timeline.reserve_through(first + count - 1)
            # Every counter of the block's last millisecond is the caller's: the next value
            # of this generator overflows it and moves on (RFC 9562 §6.2 rollover handling).
            self._counter = (1 << self._COUNTER_BITS) - 1
            return node, first

    def _check_block_in_lease(self, now_ns: int, end_ns: int, node: int) -> None:
        lease = self._lease
        assert lease is not None  # _node_for just set it
        deadline = lease.deadline_mono_ns
        left_mono = None if deadline is None else deadline - _system.monotonic_ns()
        if end_ns > lease.expires_ns or (left_mono is not None and end_ns - now_ns > left_mono):
            raise NodeUnavailableError(
                f"node {node:012x}: a block of milliseconds up to {end_ns} ns would outlast "
                f"the lease (expires at {lease.expires_ns} ns); reserve fewer milliseconds "
                "or lease the node for longer",
                "block outlasts lease",
            )

    def _seed(self) -> int:
        # RFC 9562 §6.2: "randomly initialize a portion of the counter", the leftmost bit
        # zero "for the sole purpose of guarding against counter rollovers".
        return self._next_word() & ((1 << _V7_SEED_BITS) - 1)

    @staticmethod
    def _pack(tick: int, counter: int, node: int) -> int:
        return v7_node_int(tick, counter, node)


class NodeBoundV8Generator(_CountingNodeBound):
    """The v8-node layout: UUIDv8 with ms, 1/4096 ms fraction, 14-bit counter, node.

    - **Monotonic**: (unix_ts_ms, ms_fraction, counter) strictly increases; the counter
      restarts at 0 at each new fraction step (about 244 ns) and counts +1.
    - **Reseeding**: none: the structure is meant to be read, not guessed.
    - **Clock regression**: as :class:`NodeBoundV7Generator`. **Counter overflow**: ADVANCE
      (default) moves one fraction step ahead, within ``max_ahead_ms``; WAIT; RAISE.
    - **Node loss**, **Thread safety**, **Fork**: as :class:`NodeBoundV1Generator`.

    References: RFC 9562 §5.8, §6.2 (Method 3), §6.4, §6.10.
    """

    _VERSION = 8
    _COUNTER_BITS = V8_NODE_COUNTER_BITS
    _FRACTION_BITS = V8_NODE_FRACTION_BITS

    def _seed(self) -> int:
        return 0

    @staticmethod
    def _pack(tick: int, counter: int, node: int) -> int:
        fraction = tick & ((1 << V8_NODE_FRACTION_BITS) - 1)
        return v8_node_int(tick >> V8_NODE_FRACTION_BITS, fraction, counter, node)
