"""Choosing between the compiled accelerator and the pure-Python reference.

uuidkit's pure-Python modules are the reference implementation. When the optional C
extension ``uuidkit._speedups`` was built (``pip install .`` with a C compiler present) it
replaces a module's hot functions with compiled twins of the same name: same results, same
errors, same guarantees. A compiled function handles the common case itself and hands
anything else (an unusual argument, every error) to its Python twin, registered here.

``UUIDKIT_PURE=1`` in the environment forces the pure-Python path (any value other than
empty or ``0``); it is read once, at import.

The compiled path makes exact :class:`uuid.UUID` objects by filling the class's two slots
(``int`` and ``is_safe``), which is only correct while ``uuid.UUID`` is the standard
library's pure-Python class. :func:`_speedups.bind` checks that layout at import and, if a
future Python changes it, makes objects by calling ``UUID(int=value)`` instead.

References: RFC 9562 §4.
"""

from __future__ import annotations

import os
from uuid import UUID, SafeUUID

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Final, TypeVar

    _F = TypeVar("_F", bound=Callable[..., Any])

__all__ = [
    "PURE_REQUESTED",
    "PURE_TWINS",
    "SLOT_LAYOUT",
    "SPEEDUPS",
    "compiled",
    "compiled_default",
    "public_function",
]

#: True when ``UUIDKIT_PURE`` asks for the pure-Python path.
PURE_REQUESTED: Final = os.environ.get("UUIDKIT_PURE", "") not in ("", "0")


def _load() -> tuple[Any, bool]:
    if PURE_REQUESTED:
        return None, False
    try:
        # A plain import: importlib (and the warnings module it loads) is not needed here.
        from uuidkit import _speedups  # type: ignore[attr-defined]  # C, no stub
    except ImportError:
        return None, False
    module: Any = _speedups
    return module, bool(module.bind(UUID, SafeUUID.unknown))


_loaded = _load()
#: The compiled module, or ``None`` on the pure-Python path.
SPEEDUPS: Final[Any] = _loaded[0]
#: Whether compiled objects are made by filling the slots directly (else ``UUID(int=...)``).
SLOT_LAYOUT: Final[bool] = _loaded[1]

#: Every function :func:`compiled` was asked about, by name: the pure-Python reference (the
#: tests compare each compiled twin with it).
PURE_TWINS: Final[dict[str, Callable[..., Any]]] = {}


def compiled(pure: _F, name: str | None = None, module: str | None = None) -> _F:
    """The compiled twin of ``pure`` (found by ``name``, default its ``__name__``), or ``pure``.

    The twin delegates to ``pure`` outside its fast path, so both always agree. When the
    public name differs from ``pure``'s, ``module`` is where the twin is published under it.
    """
    attribute = name or pure.__name__
    PURE_TWINS[attribute] = pure
    if SPEEDUPS is None:
        return pure
    function = getattr(SPEEDUPS, attribute, None)
    if function is None:
        return pure
    SPEEDUPS.set_fallback(attribute, pure)
    # The twin carries the Python function's name, docstring and signature (__wrapped__),
    # so help(), inspect.signature() and pickle see the reference implementation.
    twin = SPEEDUPS.twin(function)
    for key in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(twin, key, getattr(pure, key))
    if name is not None and name != pure.__name__:
        twin.__name__ = twin.__qualname__ = name
        twin.__module__ = module or pure.__module__
    twin.__wrapped__ = pure
    return twin  # type: ignore[no-any-return]


def compiled_default(pure: _F, module: str = "uuidkit") -> _F:
    """``pure``'s compiled twin as a plain builtin function (as :func:`len` is), or ``pure``.

    For the functions users hand to frameworks as a default (``default=uuidkit.uuid4``): the
    C module's own function, whose ``self`` is the module, so pickle, :mod:`copy` and
    Django's migration writer treat it as a function and find it as ``module.name``. Its C
    code takes every call itself (delegating to ``pure`` where the pure path decides), at
    the builtin's vectorcall speed.
    """
    name = pure.__name__
    PURE_TWINS[name] = pure
    function: _F | None = getattr(SPEEDUPS, name, None) if SPEEDUPS is not None else None
    if function is None:
        return public_function(pure, name, module)
    SPEEDUPS.set_fallback(name, pure)
    return public_function(function, name, module)


def public_function(function: _F, name: str, module: str = "uuidkit") -> _F:
    """``function`` named ``module.name``: where pickle, :mod:`copy` and Django's migration
    writer look a function up, so it must be the public, importable name.

    A Python function takes the name; a builtin function (whose ``__name__`` is fixed) must
    already carry it.
    """
    if hasattr(function, "__code__"):
        function.__name__ = function.__qualname__ = name
    elif function.__name__ != name:
        raise ValueError(f"public_function: {function!r} is not named {name!r}")
    function.__module__ = module
    return function
