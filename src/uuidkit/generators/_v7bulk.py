"""Vectorised UUIDv7 blocks: a million monotonic values without a Python-level loop per value.

A block keeps every value inside one ``rand_a`` value, so consecutive values differ only in
``rand_b`` and can be produced by :func:`itertools.accumulate` over random increments laid out
as native 64-bit words (one ``random_bytes`` call for the whole block). ``rand_a`` is set one
above the generator's current counter, so the block is above every earlier value of its tick.

References: RFC 9562 §6.2 (Method 2, batch monotonicity), §5.7.
"""

from __future__ import annotations

import gc
from itertools import accumulate

from uuidkit import _system
from uuidkit._accel import compiled
from uuidkit._bits import FRAME_MID_SHIFT, MASK_62
from uuidkit._construct import from_ints_unchecked
from uuidkit.generators._policy import RandomBytes, increment_words

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "BULK_INCREMENT_BITS",
    "KIND_INTS",
    "KIND_RECORDS",
    "KIND_UUIDS",
    "as_kind",
    "bulk_block",
    "bulk_values",
]

#: Random bytes per bulk increment: increments are 2**32 + r, r < 2**32, so in [1, 2**33].
_INCREMENT_RANDOM_BYTES: Final = 4
#: Increments of a bulk block are below 2**33, so the configured increment must allow that.
BULK_INCREMENT_BITS: Final = 8 * _INCREMENT_RANDOM_BYTES + 1
#: rand_b of the first value is below 2**60, leaving 3 * 2**60 for increments below 2**33.
_START_BITS: Final = 60
_MAX_BLOCK: Final = 1 << 28


def bulk_values(
    prefix: int,
    counter: int,
    counter_bits: int,
    increment_bits: int,
    count: int,
    random_bytes: RandomBytes,
) -> tuple[list[int], int] | None:
    """``count`` increasing v7 integers above ``counter`` of the tick given by ``prefix``.

    ``prefix`` holds unix_ts_ms, version, variant and any fraction bits; ``counter`` is the
    Method 2 counter of ``counter_bits`` bits (its bits above 62 live in rand_a). Returns the
    values and the new counter, or ``None`` when a block does not fit (rand_a exhausted,
    increments larger than configured, or too many values) so the caller falls back to
    generating one value at a time under its overflow policy.

    References: RFC 9562 §5.7, §6.2.
    """
    rand_a_bits = counter_bits - 62
    rand_a = (counter >> 62) + 1
    if rand_a >> rand_a_bits or increment_bits < BULK_INCREMENT_BITS or count > _MAX_BLOCK:
        return None
    start = int.from_bytes(random_bytes(8)) >> (64 - _START_BITS)
    base = prefix | (rand_a << FRAME_MID_SHIFT) | start
    running = accumulate(
        increment_words(random_bytes, count, _INCREMENT_RANDOM_BYTES), initial=base
    )
    next(running)
    values = list(running)
    return values, (rand_a << 62) | (values[-1] & MASK_62)


#: What :func:`bulk_block` returns the values as: ints, ``uuid.UUID`` objects, or packed
#: 16-byte big-endian records (a bytearray, the layout of numpy 'V16' and arrow.uuid).
KIND_INTS: Final = 0
KIND_UUIDS: Final = 1
KIND_RECORDS: Final = 2


def as_kind(values: list[int], kind: int) -> Any:
    """``values`` as :data:`KIND_INTS`, :data:`KIND_UUIDS` or :data:`KIND_RECORDS`.

    References: RFC 9562 §4 (16 octets, network byte order).
    """
    if kind == KIND_INTS:
        return values
    if kind == KIND_RECORDS:
        return bytearray(b"".join([value.to_bytes(16) for value in values]))
    # A UUID holds an int and an enum member and cannot be part of a cycle: keep the
    # collector from rescanning the growing list (the compiled twin leaves them untracked).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return from_ints_unchecked(values)
    finally:
        if was_enabled:
            gc.enable()


def _bulk_block(
    prefix: int,
    counter: int,
    counter_bits: int,
    increment_bits: int,
    count: int,
    random_bytes: RandomBytes | None,
    kind: int,
) -> tuple[Any, int, int, int] | None:
    """:func:`bulk_values` as ``(block, first, last, new_counter)``, the block of ``kind``.

    ``random_bytes`` ``None`` is the operating system's CSPRNG. ``None`` when no block fits
    (see :func:`bulk_values`) or ``count`` is below 1.

    References: RFC 9562 §5.7, §6.2 ("UUIDs generated in batches are also monotonic").
    """
    if count < 1:
        return None
    source = _system.OS_RANDOM if random_bytes is None else random_bytes
    block = bulk_values(prefix, counter, counter_bits, increment_bits, count, source)
    if block is None:
        return None
    values, new_counter = block
    return as_kind(values, kind), values[0], values[-1], new_counter


#: The compiled twin when the accelerator is built: the same values from the same bytes.
bulk_block = compiled(_bulk_block, "v7_bulk_block")
