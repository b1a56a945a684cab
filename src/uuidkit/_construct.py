"""Making standard-library :class:`uuid.UUID` objects without the cost of ``UUID.__init__``.

Every value uuidkit returns is a plain :class:`uuid.UUID` (so psycopg, SQLAlchemy, pydantic,
pickle and ``isinstance`` accept it unchanged). ``UUID.__init__`` validates and converts its
arguments on every call; the builders have already produced a valid 128-bit integer, so they
fill the two slots directly, as CPython 3.14's own ``uuid._from_int`` does.

Hot paths bind :data:`new_blank`, :data:`set_int`, :data:`set_is_safe` and
:data:`UNKNOWN_SAFETY` as module globals and inline the three calls: the slot descriptors'
own setters skip the by-name lookup of ``object.__setattr__`` (about 50 ns of a ~250 ns
call; ``UUID.__setattr__`` itself refuses all assignment).

All of this rests on the layout of the standard library's class, so it is feature-tested at
import (a probe value made this way must equal ``UUID(int=...)`` in every respect), with two
fallbacks: ``object.__setattr__`` by name, then the constructor (:data:`SLOT_PROTOCOL` is
then False and hot paths call :func:`from_int_unchecked`).

References: RFC 9562 §4 (a UUID is a 128-bit value).
"""

from __future__ import annotations

from itertools import repeat
from uuid import UUID, SafeUUID

from uuidkit._accel import SPEEDUPS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any, Final

__all__ = [
    "MAX_INT",
    "SLOT_PROTOCOL",
    "UNKNOWN_SAFETY",
    "from_int_unchecked",
    "from_ints_unchecked",
    "new_blank",
    "set_int",
    "set_is_safe",
]

MAX_INT: Final = (1 << 128) - 1
UNKNOWN_SAFETY: Final = SafeUUID.unknown
#: The value the import-time probe builds (every field non-zero, version 8, RFC variant).
_PROBE_INT: Final = 0x0123_4567_89AB_8CDE_8F01_2345_6789_ABCD


def _slot_setters() -> tuple[Callable[[UUID, int], None], Callable[[UUID, Any], None]] | None:
    """The setters of the ``int`` and ``is_safe`` slots of :class:`uuid.UUID`, or ``None``.

    A feature test, not a version test: the standard library's pure-Python class stores both
    in ``__slots__``, whose descriptors' ``__set__`` writes them (what CPython 3.14's own
    ``uuid._from_int`` does through ``object.__setattr__``). A class without them (a
    rewrite in C; another storage) falls back to ``object.__setattr__`` by name, then to the
    constructor (see :data:`SLOT_PROTOCOL`).
    """
    setters = []
    for name in ("int", "is_safe"):
        setter = getattr(vars(UUID).get(name), "__set__", None)
        if setter is None:
            return None
        setters.append(setter)
    return setters[0], setters[1]


def _set_int_by_name(u: UUID, value: int) -> None:
    object.__setattr__(u, "int", value)


def _set_is_safe_by_name(u: UUID, safety: Any) -> None:
    object.__setattr__(u, "is_safe", safety)


def _protocol_works(
    new: Callable[[type[UUID]], UUID],
    put_int: Callable[[UUID, int], None],
    put_is_safe: Callable[[UUID, Any], None],
) -> bool:
    """Whether new + the two setters make a UUID indistinguishable from ``UUID(int=...)``."""
    try:
        made = new(UUID)
        put_int(made, _PROBE_INT)
        put_is_safe(made, UNKNOWN_SAFETY)
        reference = UUID(int=_PROBE_INT)
        return (
            type(made) is UUID
            and made == reference
            and hash(made) == hash(reference)
            and str(made) == str(reference)
            and made.int == _PROBE_INT
            and made.is_safe is UNKNOWN_SAFETY
        )
    except Exception:  # any failure of the probe means "not this way"
        return False


def _choose() -> tuple[Any, Any, Any, bool]:
    setters = _slot_setters()
    if setters is not None and _protocol_works(object.__new__, *setters):
        return object.__new__, setters[0], setters[1], True
    if _protocol_works(object.__new__, _set_int_by_name, _set_is_safe_by_name):
        return object.__new__, _set_int_by_name, _set_is_safe_by_name, True
    return _unusable_new, _set_int_by_name, _set_is_safe_by_name, False


def _unusable_new(cls: type[UUID]) -> UUID:
    raise TypeError(f"{cls!r} cannot be filled slot by slot; use from_int_unchecked()")


_new, _put_int, _put_is_safe, _protocol = _choose()
#: Whether :data:`new_blank`, :data:`set_int` and :data:`set_is_safe` make UUIDs here (the
#: standard library's pure-Python class). When False (a ``uuid.UUID`` that is a C type, or
#: stores its value otherwise), hot paths call :func:`from_int_unchecked`, which then uses
#: the constructor.
SLOT_PROTOCOL: Final[bool] = _protocol
#: ``new_blank(UUID)``: an empty :class:`uuid.UUID` whose two slots must be filled next.
new_blank: Final[Callable[[type[UUID]], UUID]] = _new
#: ``set_int(u, value)``: fill the ``int`` slot.
set_int: Final[Callable[[UUID, int], None]] = _put_int
#: ``set_is_safe(u, UNKNOWN_SAFETY)``: fill the ``is_safe`` slot.
set_is_safe: Final[Callable[[UUID, Any], None]] = _put_is_safe
del _new, _put_int, _put_is_safe, _protocol


def _from_int_by_slots(value: int) -> UUID:
    result = new_blank(UUID)
    set_int(result, value)
    set_is_safe(result, UNKNOWN_SAFETY)
    return result


def _from_int_by_constructor(value: int) -> UUID:
    return UUID(int=value)


def _from_ints_by_slots(values: Iterable[int]) -> list[UUID]:
    from collections import deque  # not at import: CPython 3.13's uuid does not load it

    ints = values if isinstance(values, list) else list(values)
    objects: list[UUID] = list(map(new_blank, repeat(UUID, len(ints))))
    deque(map(set_int, objects, ints), 0)
    deque(map(set_is_safe, objects, repeat(UNKNOWN_SAFETY, len(ints))), 0)
    return objects


def _from_ints_by_constructor(values: Iterable[int]) -> list[UUID]:
    return [UUID(int=value) for value in values]


#: A :class:`uuid.UUID` holding ``value``; the caller guarantees ``0 <= value < 2**128``.
#: With the accelerator, the compiled constructor: its objects are not tracked by the cyclic
#: garbage collector (a UUID holds an int, it cannot be part of a cycle), so a value a
#: generator's Python path makes is the same object as one its C path makes.
from_int_unchecked: Final[Callable[[int], UUID]] = (
    SPEEDUPS.from_int_unchecked
    if SPEEDUPS is not None
    else _from_int_by_slots
    if SLOT_PROTOCOL
    else _from_int_by_constructor
)
#: :class:`uuid.UUID` objects for 128-bit ``values``, filled slot by slot from C loops (three
#: ``map`` passes with no Python frame per value: the bulk path's floor is the allocation).
from_ints_unchecked: Final[Callable[[Iterable[int]], list[UUID]]] = (
    _from_ints_by_slots if SLOT_PROTOCOL else _from_ints_by_constructor
)
