"""The pure-Python hot path of the UUIDv1/v6 generators, and the gate that guards its state.

- **Hot path** (:class:`GregorianHotPath`): the common case, a later clock interval (the
  Timeline's NEW at the clock, timestamp = its start) or a further timestamp within the
  current interval's budget, in small steps (:meth:`~GregorianHotPath.stamp`, then the bits
  around the timestamp); every other case goes to
  :meth:`~uuidkit.generators._gregorian_engine.GregorianEngine.advance`, the reference for
  all of them. Only the timestamp's low end (and v6's random word) changes from value to
  value, so the rest of the value is cached while the timestamp's upper part, clock_seq and
  node stay.
- **Gate** (:func:`new_gate`): the mutual exclusion of the pure path. A one-token
  :class:`queue.SimpleQueue`: ``get()`` blocks while another thread holds the token (the
  waiter sleeps in the queue, as on a lock) and ``put(True)`` hands it back. It excludes
  exactly as :class:`threading.Lock` does, at a lower cost per pair of calls
  (``bench/bench_generators.py`` measures both). It is not re-entrant: the engine's slow
  path takes it once, outside, and ``generate(n)`` uses the hot path's twin that expects it
  held.
- **Fork**: the engine renews the gate in a forked child (its token may be held by a thread
  that does not exist there); the hot path's fork hook takes the new gate and forgets the
  buffered random words.

References: RFC 9562 §5.1, §5.6, §6.2, §6.9; RFC 4122 §4.2.1.2.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from uuid import UUID

from uuidkit._bits import GREGORIAN_OFFSET_100NS, MASK_16, RFC_VARIANT_BITS
from uuidkit._construct import (
    SLOT_PROTOCOL,
    UNKNOWN_SAFETY,
    from_int_unchecked,
    new_blank,
    set_int,
    set_is_safe,
)
from uuidkit._stdlib import SimpleQueue  # queue.SimpleQueue, without the queue module
from uuidkit.errors import GeneratorError
from uuidkit.generators._policy import WORD_BLOCK_BYTES, RandomBytes
from uuidkit.generators.node import MULTICAST_BIT

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Final

    from uuidkit.generators._gregorian_engine import GregorianEngine

__all__ = ["GregorianHotPath", "build_pure_next", "masked_words", "new_gate"]


def new_gate() -> SimpleQueue[bool]:
    """A free gate: a queue holding its one token (see the module)."""
    gate: SimpleQueue[bool] = SimpleQueue()
    gate.put(True)
    return gate


_TOP_TWO_BITS_CLEARED: Final = bytes(byte & 0x3F for byte in range(256))


def masked_words(random_bytes: RandomBytes) -> Iterator[int]:
    """As :func:`~uuidkit.generators._policy.word_stream`, each word's top two bits cleared.

    A word's bits 48-61 are a UUIDv6's clock_seq and bits 0-47 its node; clearing bits 62
    and 63 here, 4 KiB at a time, saves the hot path one operation on a large int.

    References: RFC 9562 §5.6, §6.9.
    """
    block = bytearray(random_bytes(WORD_BLOCK_BYTES))
    top = 7 if sys.byteorder == "little" else 0
    block[top::8] = block[top::8].translate(_TOP_TWO_BITS_CLEARED)
    return iter(memoryview(block).cast("Q"))


class GregorianHotPath:
    """The common case of one v1/v6 generator on the pure path, over the engine's state.

    References: RFC 9562 §5.1, §5.6, §6.2; RFC 4122 §4.2.1.2.
    """

    __slots__ = (
        "advance",
        "budget",
        "cached_key",
        "cached_node",
        "cached_rest",
        "cached_seq",
        "clock",
        "fast_max",
        "gate",
        "is_v6",
        "low_bits",
        "low_shift",
        "marks",
        "per_uuid",
        "random_bytes",
        "resolution",
        "rest",
        "state",
        "words",
    )

    def __init__(self, engine: GregorianEngine) -> None:
        self.state, self.clock, self.random_bytes = engine.state, engine.clock, engine.random_bytes
        self.resolution, self.budget, self.fast_max = (
            engine.resolution,
            engine.budget,
            engine.fast_max,
        )
        self.advance, self.gate = engine.advance, engine.gate
        self.is_v6, self.per_uuid = engine.version == 6, engine.config.random_per_uuid
        self.marks = engine.version << 12  # RFC 9562 §4.2, in the high 64 bits
        # The timestamp's low end and where it goes: RFC 9562 §5.6 (v6: time_high, time_mid,
        # ver, time_low of 12 bits) and §5.1 (v1: time_low of 32 bits first).
        self.low_bits, self.low_shift = (12, 64) if self.is_v6 else (32, 96)
        self.cached_key, self.cached_seq, self.cached_node, self.cached_rest = -1, -1, -1, 0
        self.words: Iterator[int] = iter(())
        #: The bits around the timestamp: fresh random ones per value (v6's default), or
        #: the generator's clock_seq and node.
        self.rest: Callable[[int], int] = self.random_rest if self.per_uuid else self.fixed_rest

    def value(self) -> int:
        """The next value as an int (gate held).

        References: RFC 9562 §5.1, §5.6.
        """
        stamp = self.stamp(self.clock())
        return self.rest(stamp) + (stamp << self.low_shift)  # see rest_of

    def stamp(self, now_ns: int) -> int:
        """The next 60-bit timestamp: the two common cases here, every other the engine's.

        References: RFC 9562 §6.2; RFC 4122 §4.2.1.2.
        """
        state, fast_max = self.state, self.fast_max
        now = now_ns // self.resolution
        if state.tick < now <= state.limit and not state.pending:
            # A later interval: the Timeline's NEW at the clock (now > tick >= clock_tick),
            # within its trust_tick (the limit is at most fast_max).
            state.tick = state.clock_tick = now
            state.index = 0
            return self.record(now * self.budget + GREGORIAN_OFFSET_100NS)
        if 0 <= now == state.tick <= fast_max and (index := state.index + 1) < self.budget:
            state.index = index  # RFC 4122 §4.2.1.2: the next tick within the interval
            return self.record(now * self.budget + GREGORIAN_OFFSET_100NS + index)
        return self.advance(now_ns)  # checks and records the timestamp itself

    def record(self, stamp: int) -> int:
        """``stamp``, recorded as the last one, if it exceeds the last one.

        References: RFC 9562 §6.2 "Monotonic Error Checking", on the timestamp.
        """
        state = self.state
        if stamp <= state.last:
            raise GeneratorError(f"monotonic check failed: timestamp {stamp} <= {state.last}")
        state.last = stamp
        return stamp

    def fixed_rest(self, stamp: int) -> int:
        """The cached bits around the timestamp's low end, with the clock_seq and node."""
        state, key = self.state, stamp >> self.low_bits
        if (
            key != self.cached_key
            or state.clock_seq is not self.cached_seq
            or state.node is not self.cached_node
        ):
            self.renew(key, state.clock_seq, state.node)
        return self.cached_rest

    def random_rest(self, stamp: int) -> int:
        """The cached bits around the timestamp's low 12, with a fresh random word.

        References: RFC 9562 §5.6 (fresh clock_seq and node per UUIDv6), §6.10 (multicast).
        """
        key = stamp >> 12
        if key != self.cached_key:
            self.renew(key, 0, 0)
        try:
            word = next(self.words)
        except StopIteration:
            word = self.draw()
        return self.cached_rest | word  # bits 0-61 (masked_words); see rest_of

    def renew(self, key: int, clock_seq: int, node: int) -> None:
        """Cache :meth:`rest_of` for a new timestamp key, clock_seq or node."""
        self.cached_key, self.cached_seq, self.cached_node = key, clock_seq, node
        self.cached_rest = self.rest_of(key, clock_seq, node)

    def rest_of(self, key: int, clock_seq: int, node: int) -> int:
        """Every bit of a value but the timestamp's low end, less ``key << (low_bits + low_shift)``.

        ``stamp << low_shift`` is ``key << (low_bits + low_shift)`` plus the low end in place,
        so adding it to this (negative) number gives the value with one shift and one add.
        The subtracted multiple of ``2**76`` leaves bits 0-75 as they were, so v6's random
        word (bits 0-61) can still be OR-ed in first.

        References: RFC 9562 §5.1, §5.6.
        """
        low = RFC_VARIANT_BITS | (MULTICAST_BIT if self.per_uuid else (clock_seq << 48) | node)
        if self.is_v6:  # key: the timestamp's top 48 bits
            rest = (((key << 16) | self.marks) << 64) | low
        else:  # v1, key: time_high (12 bits) and time_mid (16)
            rest = ((((key & MASK_16) << 16) | (key >> 16) | self.marks) << 64) | low
        return rest - (key << (self.low_bits + self.low_shift))

    def draw(self) -> int:
        """The next random word (top two bits clear), refilling the buffer when empty."""
        word = next(self.words, None)
        if word is None:
            self.words = masked_words(self.random_bytes)
            word = next(self.words)
        return word

    def rebind(self, engine: GregorianEngine) -> None:
        """In a forked child: the engine's new gate; forget the parent's buffered words.

        References: RFC 9562 §6.9.
        """
        self.gate = engine.gate
        self.words = iter(())


def build_pure_next(engine: GregorianEngine) -> Callable[..., UUID]:
    """The ``next(node=None, clock_seq=None)`` of a generator on the pure path.

    Also sets the engine's ``held_next`` (the same for a caller that holds the gate:
    ``generate(n)``), ``draw`` (the shared word stream) and its fork hook.

    References: RFC 9562 §5.1, §5.6, §6.2; RFC 4122 §4.2.1.2.
    """
    path = GregorianHotPath(engine)
    value, with_fields = path.value, engine.with_fields

    def next_uuid(node: int | None = None, clock_seq: int | None = None) -> UUID:
        """The next UUID; ``node``/``clock_seq`` replace the generator's own for this value.

        References: RFC 9562 §5.1, §5.6, §6.2; RFC 4122 §4.2.1.
        """
        if node is not None or clock_seq is not None:
            return with_fields(node, clock_seq)
        gate = path.gate
        gate.get()
        try:
            made = value()
        finally:
            gate.put(True)
        if not SLOT_PROTOCOL:  # see uuidkit._construct
            return from_int_unchecked(made)
        result = new_blank(UUID)
        set_int(result, made)
        set_is_safe(result, UNKNOWN_SAFETY)
        return result

    def held_next(node: int | None = None, clock_seq: int | None = None) -> UUID:
        """As ``next``, for a caller that holds the gate."""
        if node is not None or clock_seq is not None:
            return with_fields(node, clock_seq)
        return from_int_unchecked(value())

    engine.held_next = held_next
    engine.draw = path.draw
    engine.rebind = lambda: path.rebind(engine)
    return next_uuid
