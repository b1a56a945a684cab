"""A small immutable record: what the ``fields()`` results are made of.

It behaves like a frozen dataclass (construction by position or keyword, equality and
hashing by class and values, a ``Name(field=value, ...)`` repr, ``__match_args__`` for
``match``, no ordering) but is a tuple underneath, because that is what is cheapest to
make: one ``tuple.__new__`` call fills every field at once, where a slotted class needs one
descriptor call per field and a dataclass's frozen ``__init__`` one ``object.__setattr__``
per field. A dataclass also generates and compiles its methods for every class when the
module loads.

A subclass declares ``__slots__ = ()``, annotates its fields, and lists them in
``__match_args__`` in order; each field becomes a read-only attribute over its position
(the standard library's named-tuple accessor). Iterating over a record yields the values
in that order (``tuple(record)``). :meth:`Record._make` builds one from values already
known to be valid. The tuple underneath shows only where a tuple is asked for: a record
equals only a record of its own class with the same values (never a plain tuple), is
always true, and does not order. Type checkers see subclasses as frozen dataclasses
(``dataclass_transform``), so constructor arguments and assignments are checked.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Any, ClassVar, NoReturn, TypeVar, dataclass_transform

    _R = TypeVar("_R", bound="Record")
else:

    def dataclass_transform(**parameters: object) -> object:
        """What ``typing.dataclass_transform`` does at run time, without importing typing.

        It only records its parameters on the class, for tools that read them. Importing
        typing for it (3 ms), and the ``TypeVar`` bound above (a compile of the forward
        reference, 1 ms), were most of what ``import uuidkit`` cost above ``import uuid``.
        """
        known = {"eq_default": True, "order_default": False, "kw_only_default": False}
        if sys.version_info >= (3, 12):  # frozen_default is a named parameter from 3.12
            known["frozen_default"] = False
        named = {name: parameters.pop(name, default) for name, default in known.items()}
        record = {**named, "field_specifiers": parameters.pop("field_specifiers", ())}
        record["kwargs"] = parameters

        def mark(cls: type) -> type:
            cls.__dataclass_transform__ = record  # type: ignore[attr-defined]
            return cls

        return mark


__all__ = ["Record"]
_tuple_new = tuple.__new__


def _field_accessor(index: int, doc: str) -> Any:
    """A read-only attribute for position ``index``: the named-tuple accessor where present."""
    try:
        from _collections import _tuplegetter  # type: ignore[import-not-found]
    except ImportError:  # another Python implementation: the same behaviour, in Python
        from operator import itemgetter  # only here: CPython 3.13's uuid does not load it

        return property(itemgetter(index), doc=doc)
    return _tuplegetter(index, doc)


class _FieldSignature:
    """``inspect.signature(SomeFields)``: the fields in order, computed on first use."""

    def __get__(self, instance: object, owner: type[Record]) -> Any:
        import inspect  # only when asked: inspect is costly to import

        annotations = inspect.get_annotations(owner)
        parameters = [
            inspect.Parameter(
                name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                annotation=annotations.get(name, inspect.Parameter.empty),
            )
            for name in owner.__match_args__
        ]
        return inspect.Signature(parameters, return_annotation=None)


def _annotated_fields(cls: type) -> list[str]:
    """The names ``cls`` itself annotates as fields (a ``ClassVar`` is not a field)."""
    annotations: dict[str, Any] = cls.__annotations__  # the class's own, never inherited
    return [name for name, kind in annotations.items() if "ClassVar" not in str(kind)]


@dataclass_transform(frozen_default=True)
class Record(tuple):  # type: ignore[type-arg]  # tuple[Any, ...]: no typing at run time
    """Base of the immutable field records (see the module docstring)."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    __signature__: ClassVar[Any] = _FieldSignature()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = tuple(cls.__dict__.get("__match_args__", ()))
        if sorted(names) != sorted(_annotated_fields(cls)):
            raise TypeError(f"{cls.__name__}: __match_args__ must name every field, in order")
        for index, name in enumerate(names):
            setattr(cls, name, _field_accessor(index, f"The {name} field."))

    def __new__(cls: type[_R], *values: Any, **named: Any) -> _R:
        names = cls.__match_args__
        if len(values) > len(names):
            raise TypeError(f"{cls.__name__}() takes {len(names)} values, got {len(values)}")
        given = dict(zip(names, values, strict=False))
        for name, value in named.items():
            if name not in names or name in given:
                raise TypeError(f"{cls.__name__}() got an unexpected or repeated {name!r}")
            given[name] = value
        missing = [name for name in names if name not in given]
        if missing:
            raise TypeError(f"{cls.__name__}() missing {', '.join(map(repr, missing))}")
        return _tuple_new(cls, [given[name] for name in names])

    @classmethod
    def _make(cls: type[_R], *values: Any) -> _R:
        """A record of ``values`` in field order, without argument checking."""
        return _tuple_new(cls, values)

    def _values(self) -> tuple[Any, ...]:
        return tuple(self)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: {type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: {type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        if type(other) is type(self):
            return tuple.__eq__(self, other)
        # A plain tuple (or another record) with the same values is not the same record.
        return False if isinstance(other, tuple) else NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash((type(self).__name__, *self))

    def __bool__(self) -> bool:
        return True  # a record is a value, even one without fields (NilFields())

    def __lt__(self, other: object) -> NoReturn:
        raise self._unordered(other)

    def __le__(self, other: object) -> NoReturn:
        raise self._unordered(other)

    def __gt__(self, other: object) -> NoReturn:
        raise self._unordered(other)

    def __ge__(self, other: object) -> NoReturn:
        raise self._unordered(other)

    def _unordered(self, other: object) -> TypeError:
        return TypeError(f"records do not order: {type(self).__name__} and {type(other).__name__}")

    def __repr__(self) -> str:
        parts = ", ".join(
            f"{name}={value!r}" for name, value in zip(self.__match_args__, self, strict=True)
        )
        return f"{type(self).__name__}({parts})"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return type(self), tuple(self)
