"""Bit positions shared by every layout: version, variant, Gregorian epoch, field checks.

Bit numbering follows RFC 9562 §4: bit 0 is the most significant bit of octet 0. In the
128-bit integer form used here, RFC bit ``b`` is integer bit ``127 - b``.

References: RFC 9562 §4.1 (Variant Field), §4.2 (Version Field), §5.1 (Gregorian epoch).
"""

from __future__ import annotations

from typing import Final

from uuidkit.errors import InvalidField

__all__ = [
    "GREGORIAN_OFFSET_100NS",
    "MASK_128",
    "RFC_VARIANT_BITS",
    "VARIANT_MASK",
    "VERSION_MASK",
    "VERSION_SHIFT",
    "check_field",
    "stamp",
    "version_bits",
]

MASK_128: Final = (1 << 128) - 1

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


def version_bits(version: int) -> int:
    """The version and RFC-variant bits for ``version``, to OR into a cleared value."""
    return (version << VERSION_SHIFT) | RFC_VARIANT_BITS


def stamp(value: int, version: int) -> int:
    """``value`` with its version set to ``version`` and its variant set to RFC 9562's 0b10.

    References: RFC 9562 §4.1, §4.2.
    """
    return (value & _CLEAR_VERSION_AND_VARIANT) | version_bits(version)


def check_field(name: str, value: int, bits: int) -> int:
    """Return ``value`` if it is an unsigned ``bits``-bit integer, else raise :class:`InvalidField`."""
    if type(value) is not int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidField(
                f"{name}: expected an int of {bits} bits, found {type(value).__name__}", name
            )
    if not 0 <= value < (1 << bits):
        raise InvalidField(
            f"{name}: expected 0 <= {name} < 2**{bits}, found {value}",
            name,
        )
    return value
