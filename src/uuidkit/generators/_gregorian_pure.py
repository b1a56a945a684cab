"""The pure-Python hot path of the UUIDv1/v6 generators, and the gate that guards its state.

- **Hot path** (:func:`build_pure_next`): one Python function does the common case, a later
  clock interval (the Timeline's NEW at the clock, timestamp = its start) or a further
  timestamp within the current interval's budget, and hands every other case to
  :meth:`~uuidkit.generators._gregorian_engine.GregorianEngine.advance`, the reference for
  all of them. Each avoided call saves about 50 ns, so the function is long on purpose; the
  module-wide constants are globals, not closure cells (every cell is copied into the frame
  on each call).
- **Gate** (:func:`new_gate`): the mutual exclusion of the pure path. A one-token
  :class:`queue.SimpleQueue`: ``get()`` blocks while another thread holds the token (the
  waiter sleeps in the queue, as on a lock) and ``put(True)`` hands it back. It excludes
  exactly as :class:`threading.Lock` does, and a take/give pair costs about half as much as
  an acquire/release pair (the queue's methods are fast calls; ``Lock.acquire`` parses a
  tuple of arguments). It is not re-entrant: the engine's slow path takes it once, outside,
  and ``generate(n)`` uses the hot path's twin that expects it held.
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

__all__ = ["build_pure_next", "masked_words", "new_gate"]


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


def _not_monotonic(stamp: int, last: int) -> GeneratorError:
    # RFC 9562 §6.2 "Monotonic Error Checking", on the timestamp.
    return GeneratorError(f"monotonic check failed: timestamp {stamp} <= {last}")


def build_pure_next(engine: GregorianEngine) -> Callable[..., UUID]:
    """The one-frame ``next(node=None, clock_seq=None)`` of a generator on the pure path.

    Also sets the engine's ``held_next`` (the same function for a caller that holds the
    gate: ``generate(n)``), ``draw`` (the shared word stream) and its fork hook.

    References: RFC 9562 §5.1, §5.6, §6.2; RFC 4122 §4.2.1.2.
    """
    state, clock, random_bytes = engine.state, engine.clock, engine.random_bytes
    resolution, budget, fast_max = engine.resolution, engine.budget, engine.fast_max
    single = budget == 1
    advance, with_fields = engine.advance, engine.with_fields
    is_v6, per_uuid = engine.version == 6, engine.config.random_per_uuid
    marks = engine.version << 12  # RFC 9562 §4.2, in the high 64 bits (variant: rest_of)
    words: Iterator[int] = iter(())
    # The timestamp's low end and where it goes: RFC 9562 §5.6 (v6: time_high, time_mid,
    # ver, time_low of 12 bits) and §5.1 (v1: time_low of 32 bits first).
    low_bits, low_shift = (12, 64) if is_v6 else (32, 96)
    cached_key, cached_seq, cached_node, cached_rest = -1, -1, -1, 0

    def draw() -> int:
        nonlocal words
        word = next(words, None)
        if word is None:
            words = masked_words(random_bytes)
            word = next(words)
        return word

    def rest_of(key: int, clock_seq: int, node: int) -> int:
        """Every bit of a value but the timestamp's low end, less ``key << (low_bits + low_shift)``.

        ``stamp << low_shift`` is ``key << (low_bits + low_shift)`` plus the low end in place,
        so adding it to this (negative) number gives the value with one shift and one add.
        The subtracted multiple of ``2**76`` leaves bits 0-75 as they were, so v6's random
        word (bits 0-61) can still be OR-ed in first.
        """
        low = RFC_VARIANT_BITS | (MULTICAST_BIT if per_uuid else (clock_seq << 48) | node)
        if is_v6:  # key: the timestamp's top 48 bits
            rest = (((key << 16) | marks) << 64) | low
        else:  # v1, key: time_high (12 bits) and time_mid (16)
            rest = ((((key & MASK_16) << 16) | (key >> 16) | marks) << 64) | low
        return rest - (key << (low_bits + low_shift))

    def random_fields(gate: SimpleQueue[bool]) -> tuple[Callable[..., UUID], Callable[[], None]]:
        """The hot path of a UUIDv6 generator with fresh clock_seq and node per value."""
        take, give = gate.get, gate.put

        def next_uuid(node: int | None = None, clock_seq: int | None = None) -> UUID:
            """The next UUID; ``node``/``clock_seq`` replace the generator's own for this value.

            References: RFC 9562 §5.6, §6.2, §6.10.
            """
            nonlocal cached_key, cached_rest
            if node is not None or clock_seq is not None:
                return with_fields(node, clock_seq)
            take()
            try:
                now_ns = clock()
                now = now_ns // resolution
                # (Two comparisons, not one chained one: fewer bytecodes.)
                if state.tick < now and now <= fast_max and not state.pending:
                    # A later interval: the Timeline's NEW at the clock (now > tick >= clock_tick).
                    state.tick = state.clock_tick = now
                    state.index = 0
                    stamp = (now if single else now * budget) + GREGORIAN_OFFSET_100NS
                    if stamp <= state.last:
                        raise _not_monotonic(stamp, state.last)
                    state.last = stamp
                elif 0 <= now == state.tick <= fast_max and (index := state.index + 1) < budget:
                    state.index = index  # RFC 4122 §4.2.1.2: the next tick within the interval
                    stamp = now * budget + GREGORIAN_OFFSET_100NS + index
                    if stamp <= state.last:
                        raise _not_monotonic(stamp, state.last)
                    state.last = stamp
                else:
                    stamp = advance(now_ns)  # checks and records the timestamp itself
                # Only the timestamp's low 12 bits and the random word change from value to
                # value; the rest is cached while the upper 48 bits stay.
                if stamp >> 12 != cached_key:
                    cached_key = stamp >> 12
                    cached_rest = rest_of(cached_key, 0, 0)
                # RFC 9562 §5.6: fresh clock_seq and node per UUIDv6 (multicast, §6.10): bits
                # 0-61 of the value (masked_words); see rest_of.
                try:
                    rest = cached_rest | next(words)
                except StopIteration:
                    rest = cached_rest | draw()
            finally:
                give(True)
            if not SLOT_PROTOCOL:  # see uuidkit._construct
                return from_int_unchecked(rest + (stamp << 64))
            result = new_blank(UUID)
            set_int(result, rest + (stamp << 64))  # see rest_of
            set_is_safe(result, UNKNOWN_SAFETY)
            return result

        def rebind() -> None:
            nonlocal take, give
            take, give = engine.gate.get, engine.gate.put

        return next_uuid, rebind

    def fixed_fields(gate: SimpleQueue[bool]) -> tuple[Callable[..., UUID], Callable[[], None]]:
        """The hot path of a generator that keeps its clock_seq and node (v1, or v6 so set)."""
        take, give = gate.get, gate.put

        def next_uuid(node: int | None = None, clock_seq: int | None = None) -> UUID:
            """The next UUID; ``node``/``clock_seq`` replace the generator's own for this value.

            References: RFC 9562 §5.1, §5.6, §6.2; RFC 4122 §4.2.1.
            """
            nonlocal cached_key, cached_seq, cached_node, cached_rest
            if node is not None or clock_seq is not None:
                return with_fields(node, clock_seq)
            take()
            try:
                now_ns = clock()
                now = now_ns // resolution
                if state.tick < now and now <= fast_max and not state.pending:
                    # A later interval: the Timeline's NEW at the clock (now > tick >= clock_tick).
                    state.tick = state.clock_tick = now
                    state.index = 0
                    stamp = (now if single else now * budget) + GREGORIAN_OFFSET_100NS
                    if stamp <= state.last:
                        raise _not_monotonic(stamp, state.last)
                    state.last = stamp
                elif 0 <= now == state.tick <= fast_max and (index := state.index + 1) < budget:
                    state.index = index  # RFC 4122 §4.2.1.2: the next tick within the interval
                    stamp = now * budget + GREGORIAN_OFFSET_100NS + index
                    if stamp <= state.last:
                        raise _not_monotonic(stamp, state.last)
                    state.last = stamp
                else:
                    stamp = advance(now_ns)  # checks and records the timestamp itself
                # Only the timestamp's low end changes from value to value; the rest is cached
                # while the timestamp's upper part, clock_seq and node stay.
                key = stamp >> low_bits
                if (
                    key != cached_key
                    or state.clock_seq is not cached_seq
                    or state.node is not cached_node
                ):
                    cached_key, cached_seq, cached_node = key, state.clock_seq, state.node
                    cached_rest = rest_of(key, cached_seq, cached_node)
                rest = cached_rest
            finally:
                give(True)
            if not SLOT_PROTOCOL:  # see uuidkit._construct
                return from_int_unchecked(rest + (stamp << low_shift))
            result = new_blank(UUID)
            set_int(result, rest + (stamp << low_shift))  # see rest_of
            set_is_safe(result, UNKNOWN_SAFETY)
            return result

        def rebind() -> None:
            nonlocal take, give
            take, give = engine.gate.get, engine.gate.put

        return next_uuid, rebind

    def forget_words() -> None:
        # In a forked child: the parent's buffered words are its clock_seqs and nodes.
        nonlocal words
        words = iter(())

    hot_path = random_fields if per_uuid else fixed_fields
    # generate(n) holds the engine's gate around its whole block; its twin of the hot path
    # takes a private gate that nobody else uses, so it never waits (nor re-enters).
    engine.held_next, _ = hot_path(new_gate())
    next_uuid, take_new_gate = hot_path(engine.gate)
    engine.draw = draw

    def rebind() -> None:
        take_new_gate()
        forget_words()

    engine.rebind = rebind
    return next_uuid
