"""A small immutable record: what the ``fields()`` results are made of.

It behaves like a frozen, slotted dataclass (construction by position or keyword, equality
and hashing by class and values, a ``Name(field=value, ...)`` repr, ``__match_args__`` for
``match``), but costs a fraction at import and per record: a dataclass generates and
compiles its methods for every class when the module loads, and its frozen ``__init__``
goes through ``object.__setattr__`` once per field.

A subclass lists its fields in ``__slots__`` and, in their order, in ``__match_args__``;
iterating over a record yields the values in that order (``tuple(record)``).
:meth:`Record._make` builds one from values already known to be valid, filling the slots
through their descriptors. Type checkers see subclasses as frozen dataclasses
(``dataclass_transform``), so constructor arguments and assignments are checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar, TypeVar, dataclass_transform

__all__ = ["Record"]

_R = TypeVar("_R", bound="Record")
_new = object.__new__


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


@dataclass_transform(frozen_default=True)
class Record:
    """Base of the immutable field records (see the module docstring)."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    _setters: ClassVar[tuple[Callable[[Any, Any], None], ...]] = ()
    __signature__: ClassVar[Any] = _FieldSignature()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = tuple(cls.__dict__.get("__match_args__", ()))
        if sorted(names) != sorted(cls.__dict__.get("__slots__", ())):
            raise TypeError(f"{cls.__name__}: __match_args__ must name every slot, in order")
        cls._setters = tuple(cls.__dict__[name].__set__ for name in names)

    def __init__(self, *values: Any, **named: Any) -> None:
        cls = type(self)
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
        for setter, name in zip(cls._setters, names, strict=True):
            setter(self, given[name])

    @classmethod
    def _make(cls: type[_R], *values: Any) -> _R:
        """A record of ``values`` in field order, without argument checking."""
        record = _new(cls)
        for setter, value in zip(cls._setters, values, strict=True):
            setter(record, value)
        return record

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values())

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: {type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: {type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self).__name__, *self._values()))

    def __repr__(self) -> str:
        parts = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{type(self).__name__}({parts})"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return type(self), self._values()
