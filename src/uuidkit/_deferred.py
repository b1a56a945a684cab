"""Submodules that are attributes of their package from its import on, run on first use.

``uuidkit.bulk`` and ``uuidkit.legacy`` cost more to import than the whole core, so
``import uuidkit`` does not run them; yet ``uuidkit.bulk.generate(...)`` works without an
``import uuidkit.bulk``. A package ``__getattr__`` (PEP 562) could provide that, but while a
module's namespace holds one, CPython 3.11-3.13 never specialise attribute loads from it, and
every ``uuidkit.parse(s)`` would pay for it.

Instead the package registers each such submodule at import as a module object whose code
has not run, in ``sys.modules`` and as the package's attribute (the import system's own
mechanism finds it, by the package's ``__path__``). The first read of any other attribute runs
the module's code into that same object, under a lock, and turns it into a plain module. So
``uuidkit.bulk``, ``import uuidkit.bulk`` and ``from uuidkit import bulk`` all hold the one
module, whichever comes first. If running it fails, the object goes back to not having run
(as a failed import leaves nothing behind), and the next use tries again.
"""

from __future__ import annotations

import sys
from types import ModuleType

from uuidkit._stdlib import RLock  # threading.RLock, without importing threading

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["defer_submodule", "module_named"]

#: Serialises first uses: one thread runs a module while the others wait for it.
_lock = RLock()
#: Modules whose code is running now, so a nested first use (a cycle) is told, not rerun.
_running: set[str] = set()


class _NotYetRun(ModuleType):
    # A module whose code runs when an attribute it does not have yet is first read. (No
    # class docstring: ``__doc__`` is the property below, the module's own docstring.)

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        _run(self)
        return vars(self).get("__doc__")

    def __getattr__(self, name: str) -> object:
        _run(self)
        return getattr(self, name)

    def __reduce__(self) -> tuple[Callable[[str], ModuleType], tuple[str]]:
        # By name, as cloudpickle (Dask, Spark) pickles a plain module: a function whose
        # globals hold this module pickles, and tokenizes, the same before its first use.
        return module_named, (self.__name__,)

    def __dir__(self) -> list[str]:
        _run(self)
        return dir(self)


def _run(module: ModuleType) -> None:
    with _lock:
        if type(module) is not _NotYetRun:
            return  # another thread ran it while this one waited
        name = module.__name__
        if name in _running:
            raise AttributeError(f"partially initialized module {name!r} (a circular import)")
        namespace = vars(module)
        if "__builtins__" not in namespace:  # not already run (by importlib.reload)
            before = dict(namespace)
            _running.add(name)
            try:
                module.__spec__.loader.exec_module(module)  # type: ignore[union-attr]
            except BaseException:
                namespace.clear()
                namespace.update(before)
                raise
            finally:
                _running.discard(name)
        module.__class__ = ModuleType  # type: ignore[assignment]


def module_named(name: str) -> ModuleType:
    """The module ``name``, imported if need be (how a pickled deferred module comes back)."""
    __import__(name)
    return sys.modules[name]


def defer_submodule(package: ModuleType, name: str) -> ModuleType:
    """``package.name``, registered now and run on its first use (see the module docstring).

    An already imported submodule is returned as it is.
    """
    fullname = f"{package.__name__}.{name}"
    existing = sys.modules.get(fullname)
    if existing is not None:
        return existing
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        spec = find_spec(fullname, package.__path__) if find_spec is not None else None
        if spec is not None:
            break
    else:
        raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
    module = _NotYetRun(fullname)
    module.__spec__ = spec
    module.__loader__ = spec.loader
    module.__package__ = package.__name__
    if spec.has_location:
        module.__file__ = spec.origin
        if spec.cached is not None:
            module.__cached__ = spec.cached  # type: ignore[attr-defined]
    sys.modules[fullname] = module
    setattr(package, name, module)
    return module
