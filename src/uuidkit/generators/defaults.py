"""The process-wide default generators behind ``uuidkit.uuid1``, ``uuid6`` and ``uuid7``.

Each module function uses one generator instance, created at import, behind that
generator's lock; all three reset themselves in a forked child.

References: RFC 9562 §5.1, §5.6, §5.7, §6.2, §6.9, §6.10.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final
from uuid import UUID

from uuidkit._bits import CLOCK_SEQ_BITS, check_field
from uuidkit.generators.gregorian import V1Generator, V6Generator, _GregorianGenerator
from uuidkit.generators.v7 import V7Generator

__all__ = ["DEFAULT_V1", "DEFAULT_V6", "DEFAULT_V7", "uuid1", "uuid6", "uuid7"]

#: The generator behind :func:`uuid1`: random multicast node, random clock sequence.
DEFAULT_V1: Final = V1Generator()
#: The generator behind :func:`uuid6`: fresh clock_seq and node per UUID (RFC 9562 §5.6).
DEFAULT_V6: Final = V6Generator()
#: The generator behind :func:`uuid7`: Method 2, 48-bit random increments (see V7Config).
DEFAULT_V7: Final = V7Generator()

#: A new UUIDv7 from :data:`DEFAULT_V7`: strictly greater than the previous one from this
#: process, thread-safe, fork-safe, never ahead of the clock in steady state.
#: References: RFC 9562 §5.7, §6.2.
uuid7: Final[Callable[[], UUID]] = DEFAULT_V7.next

_NODE_BITS: Final = 48


def _with_fields(generator: _GregorianGenerator, node: int | None, clock_seq: int | None) -> UUID:
    if node is None and clock_seq is None:
        return generator()
    if node is not None:
        check_field("node", node, _NODE_BITS)
    if clock_seq is not None:
        check_field("clock_seq", clock_seq, CLOCK_SEQ_BITS)
    return generator.with_fields(node, clock_seq)


def uuid1(node: int | None = None, clock_seq: int | None = None) -> UUID:
    """A new UUIDv1, as :func:`uuid.uuid1` but with a random multicast node by default.

    ``node`` (48 bits) and ``clock_seq`` (14 bits) replace the default generator's own for
    this value; the timestamp still comes from the shared generator, so it never repeats.

    References: RFC 9562 §5.1, §6.10; RFC 4122 §4.2.1.
    """
    return _with_fields(DEFAULT_V1, node, clock_seq)


def uuid6(node: int | None = None, clock_seq: int | None = None) -> UUID:
    """A new UUIDv6 with a fresh pseudorandom clock_seq and node unless given.

    References: RFC 9562 §5.6, §6.10.
    """
    return _with_fields(DEFAULT_V6, node, clock_seq)
