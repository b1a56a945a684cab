"""The module functions that need no clock: ``uuid4``, ``uuid8`` and the name-based pair.

``uuid4()`` is the hot one. It takes a 128-bit integer from the buffered, fork-safe CSPRNG
pool (:data:`uuidkit._system.POOL`), overwrites version and variant with two mask operations
and fills the two slots of a :class:`uuid.UUID` directly (as :mod:`uuidkit._construct` does,
inlined here to save a call), instead of one ``os.urandom`` system call and
``UUID.__init__`` per value as the standard library does.

``uuid8(a, b, c)`` is the standard library's (Python 3.14): its signature, its bit split
(48, 12, 62 bits; missing parts random) and its arguments: each part keeps its low bits (a
negative one in two's complement) and ``True``/``False`` count as 1/0. The strict builder
is :func:`~uuidkit.build_v8`, which refuses an out-of-range part with
:class:`~uuidkit.InvalidField`.

References: RFC 9562 §5.4, §5.8, §6.9.
"""

from __future__ import annotations

from uuid import UUID

from uuidkit._accel import compiled_default
from uuidkit._bits import (
    FRAME_HIGH_SHIFT,
    FRAME_MID_SHIFT,
    MASK_12,
    MASK_48,
    MASK_62,
    VARIANT_MASK,
    VERSION_MASK,
    stamp,
    stdlib_int,
    version_bits,
)
from uuidkit._construct import (
    SLOT_PROTOCOL,
    UNKNOWN_SAFETY,
    from_int_unchecked,
    new_blank,
    set_int,
    set_is_safe,
)
from uuidkit._system import POOL
from uuidkit.namebased import uuid3, uuid5

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Final

__all__ = ["uuid3", "uuid4", "uuid5", "uuid8"]

_CLEAR_V4: Final = ((1 << 128) - 1) ^ (VERSION_MASK | VARIANT_MASK)
_V4_BITS: Final = version_bits(4)
_next_u128 = POOL.next_u128


def uuid4() -> UUID:
    """A random UUID: 122 bits from the CSPRNG, version 4, RFC 9562 variant.

    References: RFC 9562 §5.4, §6.9 ("Implementations SHOULD utilize a cryptographically
    secure pseudorandom number generator (CSPRNG)").
    """
    result = new_blank(UUID)
    set_int(result, (_next_u128() & _CLEAR_V4) | _V4_BITS)
    set_is_safe(result, UNKNOWN_SAFETY)
    return result


if not SLOT_PROTOCOL:  # a uuid.UUID not filled slot by slot (see uuidkit._construct)

    def uuid4() -> UUID:
        """A random UUID: 122 bits from the CSPRNG, version 4, RFC 9562 variant.

        References: RFC 9562 §5.4, §6.9 ("Implementations SHOULD utilize a cryptographically
        secure pseudorandom number generator (CSPRNG)").
        """
        return from_int_unchecked((_next_u128() & _CLEAR_V4) | _V4_BITS)


def uuid8(a: int | None = None, b: int | None = None, c: int | None = None) -> UUID:
    """A UUIDv8 with custom_a = ``a`` (48 bits), custom_b = ``b`` (12), custom_c = ``c`` (62).

    Each part left as ``None`` is filled from the CSPRNG. As the standard library's, a part
    keeps its low bits (a negative one in two's complement); a part that is not an int raises
    :class:`~uuidkit.InvalidField`. :func:`~uuidkit.build_v8` refuses out-of-range parts.

    References: RFC 9562 §5.8 ("the variant and version bits MUST be set").
    """
    value = _next_u128()
    if a is not None:
        part = stdlib_int("a", a) & MASK_48
        value = (value & ~(MASK_48 << FRAME_HIGH_SHIFT)) | (part << FRAME_HIGH_SHIFT)
    if b is not None:
        part = stdlib_int("b", b) & MASK_12
        value = (value & ~(MASK_12 << FRAME_MID_SHIFT)) | (part << FRAME_MID_SHIFT)
    if c is not None:
        value = (value & ~MASK_62) | (stdlib_int("c", c) & MASK_62)
    return from_int_unchecked(stamp(value, 8))


# The compiled twins (uuidkit._accel) when the accelerator is built: plain builtin functions
# published as uuidkit.uuid4 and uuidkit.uuid8, the names pickle and Django's migration
# writer look up (``UUIDField(default=uuidkit.uuid4)``).
uuid4 = compiled_default(uuid4)
uuid8 = compiled_default(uuid8)
