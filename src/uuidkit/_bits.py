"""Bit positions shared by every layout: version, variant, Gregorian epoch, field checks.

Bit numbering follows RFC 9562 §4: bit 0 is the most significant bit of octet 0. In the
128-bit integer form used here, RFC bit ``b`` is integer bit ``127 - b``.

References: RFC 9562 §4.1 (Variant Field), §4.2 (Version Field), §5.1 (Gregorian epoch).
"""

from __future__ import annotations

from uuid import UUID

from uuidkit.errors import InvalidField, InvalidUUID

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "CLOCK_SEQ_BITS",
    "FRAME_HIGH_SHIFT",
    "FRAME_MID_SHIFT",
    "GREGORIAN_OFFSET_100NS",
    "MASK_12",
    "MASK_14",
    "MASK_16",
    "MASK_32",
    "MASK_48",
    "MASK_60",
    "MASK_62",
    "MASK_128",
    "RFC_VARIANT_BITS",
    "VARIANT_MASK",
    "VERSION_MASK",
    "VERSION_SHIFT",
    "check_field",
    "describe_int",
    "pack_frame",
    "require_version",
    "stamp",
    "stdlib_int",
    "unpack_frame",
    "version_bits",
]

MASK_128: Final = (1 << 128) - 1
MASK_62: Final = (1 << 62) - 1
MASK_60: Final = (1 << 60) - 1
MASK_48: Final = (1 << 48) - 1
MASK_32: Final = (1 << 32) - 1
MASK_16: Final = (1 << 16) - 1
MASK_14: Final = (1 << 14) - 1
MASK_12: Final = (1 << 12) - 1

#: RFC 9562 §5.1: clock_seq is 14 bits (bits 66-79), directly after the variant.
CLOCK_SEQ_BITS: Final = 14

#: RFC 9562 §4.2: the version occupies bits 48-51 (integer bits 79..76).
VERSION_SHIFT: Final = 76
VERSION_MASK: Final = 0xF << VERSION_SHIFT

#: RFC 9562 §4.1: the RFC 9562 variant is 0b10 in bits 64-65 (integer bits 63..62).
VARIANT_MASK: Final = 0b11 << 62
RFC_VARIANT_BITS: Final = 0b10 << 62

_CLEAR_VERSION_AND_VARIANT: Final = MASK_128 ^ (VERSION_MASK | VARIANT_MASK)

#: 100-nanosecond intervals from 1582-10-15 00:00:00 UTC (the Gregorian epoch of
#: RFC 9562 §5.1) to 1970-01-01 00:00:00 UTC.
GREGORIAN_OFFSET_100NS: Final = 0x01B21DD213814000


#: The frame every RFC-variant layout shares (RFC 9562 §5): 48 bits (0-47), the version
#: (48-51), 12 bits (52-63), the variant (64-65), 62 bits (66-127). Integer shifts:
FRAME_HIGH_SHIFT: Final = 80
FRAME_MID_SHIFT: Final = 64


def pack_frame(version: int, high48: int, mid12: int, low62: int) -> int:
    """The 128-bit value ``high48 | version | mid12 | 0b10 | low62`` (no range checks).

    Every RFC 9562 layout is this frame with its own names for the three parts: v7 calls
    them unix_ts_ms, rand_a, rand_b; v8 custom_a/b/c; v1 splits its timestamp across them.

    References: RFC 9562 §4.1, §4.2, §5.
    """
    # RFC 9562 §4.1: "bits 64 and 65 of the UUID (bits 0 and 1 of octet 8) MUST be set to 1
    # and 0"; §4.2 puts the version in bits 48-51.
    return (
        (high48 << FRAME_HIGH_SHIFT)
        | (version << VERSION_SHIFT)
        | (mid12 << FRAME_MID_SHIFT)
        | RFC_VARIANT_BITS
        | low62
    )


def unpack_frame(value: int) -> tuple[int, int, int]:
    """The ``(high48, mid12, low62)`` parts of ``value``, skipping version and variant.

    References: RFC 9562 §4.1, §4.2, §5.
    """
    return value >> FRAME_HIGH_SHIFT, (value >> FRAME_MID_SHIFT) & MASK_12, value & MASK_62


def version_bits(version: int) -> int:
    """The version and RFC-variant bits for ``version``, to OR into a cleared value.

    References: RFC 9562 §4.1 ("bits 64 and 65 of the UUID ... MUST be set to 1 and 0"),
    §4.2.
    """
    return (version << VERSION_SHIFT) | RFC_VARIANT_BITS


def stamp(value: int, version: int) -> int:
    """``value`` with its version set to ``version`` and its variant set to RFC 9562's 0b10.

    References: RFC 9562 §4.1, §4.2.
    """
    return (value & _CLEAR_VERSION_AND_VARIANT) | version_bits(version)


def check_field(name: str, value: int, bits: int) -> int:
    """Return ``value`` if it is an unsigned ``bits``-bit int, else raise :class:`InvalidField`.

    ``bool`` is refused although it subclasses ``int``: ``True`` as a node is a bug.

    References: RFC 9562 §5 (every field has a fixed width).
    """
    if type(value) is not int and (isinstance(value, bool) or not isinstance(value, int)):
        raise InvalidField(
            f"{name}: expected an int of {bits} bits, found {type(value).__name__}", name
        )
    # The exact int behind a subclass: its own comparisons may lie.
    exact = int.__index__(value)
    if not 0 <= exact < (1 << bits):
        raise InvalidField(
            f"{name}: expected 0 <= {name} < 2**{bits}, found {describe_int(exact)}", name
        )
    return exact


def stdlib_int(name: str, value: object) -> int:
    """``value`` as the standard library's uuid functions take a number: any ``int``.

    Unlike :func:`check_field`, ``bool`` counts as 0 or 1 (the standard library computes
    with ``&`` and ``|``, where ``True`` is 1); an int subclass gives its exact int. Anything
    else raises :class:`InvalidField` naming ``name``. Callers then keep the low bits or
    check the range, each as the standard library's function of that name does.

    References: RFC 9562 §5 (every field has a fixed width).
    """
    if not isinstance(value, int):
        raise InvalidField(f"{name}: expected an int, found {type(value).__name__}", name)
    return int.__index__(value)


def describe_int(value: int) -> str:
    """``value`` as decimal text, or its size when too long to show (no conversion limit hit).

    References: RFC 9562 §4.
    """
    if value.bit_length() <= 256:
        return str(value)
    sign = "-" if value < 0 else ""
    return f"{sign}an int of {value.bit_length()} bits"


def require_version(value: UUID, expected: int) -> int:
    """``value.int`` if ``value`` is an RFC-variant UUID of version ``expected``, else raise
    :class:`InvalidUUID` naming the version found.

    References: RFC 9562 §4.1, §4.2.
    """
    if not isinstance(value, UUID):
        raise InvalidUUID(f"expected a uuid.UUID, found {type(value).__name__}")
    number = value.int
    found = (number >> VERSION_SHIFT) & 0xF
    if number & VARIANT_MASK != RFC_VARIANT_BITS:
        raise InvalidUUID(f"expected a version {expected} UUID, found {value} (not RFC variant)")
    if found != expected:
        raise InvalidUUID(f"expected a version {expected} UUID, found {value} (version {found})")
    return number
