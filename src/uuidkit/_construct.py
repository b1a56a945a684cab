"""Making standard-library :class:`uuid.UUID` objects without the cost of ``UUID.__init__``.

Every value uuidkit returns is a plain :class:`uuid.UUID` (so psycopg, SQLAlchemy, pydantic,
pickle and ``isinstance`` accept it unchanged). ``UUID.__init__`` validates and converts its
arguments on every call; the builders have already produced a valid 128-bit integer, so they
fill the two slots directly, as CPython 3.14's own ``uuid._from_int`` does.

References: RFC 9562 §4 (a UUID is a 128-bit value).
"""

from __future__ import annotations

from uuid import UUID, SafeUUID

__all__ = ["MAX_INT", "from_int", "from_int_unchecked"]

MAX_INT = (1 << 128) - 1

_new = object.__new__
_setattr = object.__setattr__
_UNKNOWN = SafeUUID.unknown


def from_int_unchecked(value: int) -> UUID:
    """A :class:`uuid.UUID` holding ``value``; the caller guarantees ``0 <= value < 2**128``."""
    result = _new(UUID)
    _setattr(result, "int", value)
    _setattr(result, "is_safe", _UNKNOWN)
    return result


def from_int(value: int) -> UUID:
    """A :class:`uuid.UUID` holding ``value``, which must be a 128-bit unsigned integer."""
    if not 0 <= value <= MAX_INT:
        from uuidkit.errors import InvalidUUID

        raise InvalidUUID(f"integer out of range: expected 0 <= int < 2**128, found {value}")
    return from_int_unchecked(value)
