"""Making standard-library :class:`uuid.UUID` objects without the cost of ``UUID.__init__``.

Every value uuidkit returns is a plain :class:`uuid.UUID` (so psycopg, SQLAlchemy, pydantic,
pickle and ``isinstance`` accept it unchanged). ``UUID.__init__`` validates and converts its
arguments on every call; the builders have already produced a valid 128-bit integer, so they
fill the two slots directly, as CPython 3.14's own ``uuid._from_int`` does.

Hot paths bind :data:`new_blank`, :data:`set_int`, :data:`set_is_safe` and
:data:`UNKNOWN_SAFETY` as module globals and inline the three calls: the slot descriptors'
own setters skip the by-name lookup of ``object.__setattr__`` (about 50 ns of a ~250 ns
call; ``UUID.__setattr__`` itself refuses all assignment).

References: RFC 9562 §4 (a UUID is a 128-bit value).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from itertools import repeat
from uuid import UUID, SafeUUID

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "MAX_INT",
    "UNKNOWN_SAFETY",
    "from_int_unchecked",
    "from_ints_unchecked",
    "new_blank",
    "set_int",
    "set_is_safe",
]

MAX_INT: Final = (1 << 128) - 1

#: ``new_blank(UUID)``: an empty :class:`uuid.UUID` whose two slots must be filled next.
new_blank: Final[Callable[[type[UUID]], UUID]] = object.__new__
#: ``set_int(u, value)``: fill the ``int`` slot.
set_int: Final[Callable[[UUID, int], None]] = vars(UUID)["int"].__set__
#: ``set_is_safe(u, UNKNOWN_SAFETY)``: fill the ``is_safe`` slot.
set_is_safe: Final[Callable[[UUID, Any], None]] = vars(UUID)["is_safe"].__set__
UNKNOWN_SAFETY: Final = SafeUUID.unknown


def from_int_unchecked(value: int) -> UUID:
    """A :class:`uuid.UUID` holding ``value``; the caller guarantees ``0 <= value < 2**128``."""
    result = new_blank(UUID)
    set_int(result, value)
    set_is_safe(result, UNKNOWN_SAFETY)
    return result


def from_ints_unchecked(values: Iterable[int]) -> list[UUID]:
    """:class:`uuid.UUID` objects for 128-bit ``values``, filled slot by slot from C loops.

    Three ``map`` passes with no Python frame per value: the bulk path's floor is the
    allocation of the objects themselves.
    """
    ints = values if isinstance(values, list) else list(values)
    objects: list[UUID] = list(map(new_blank, repeat(UUID, len(ints))))
    deque(map(set_int, objects, ints), 0)
    deque(map(set_is_safe, objects, repeat(UNKNOWN_SAFETY, len(ints))), 0)
    return objects
