"""The process-wide default generators behind ``uuidkit.uuid1``, ``uuid6`` and ``uuid7``.

Each module function uses one generator instance behind that generator's lock; all three
reset themselves in a forked child. Each generator is created on first use (the v7 one in
``_default_v7``, the v1 and v6 ones in ``_default_gregorian``), so a process that only
makes UUIDv7 never loads the Gregorian machinery. After the first use a name here is a
plain module attribute: ``uuid7`` is the generator's own bound ``next``.

References: RFC 9562 §5.1, §5.6, §5.7, §6.2, §6.9, §6.10.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from uuidkit.generators._default_gregorian import DEFAULT_V1, DEFAULT_V6, uuid1, uuid6
    from uuidkit.generators._default_v7 import DEFAULT_V7, uuid7

__all__ = ["DEFAULT_V1", "DEFAULT_V6", "DEFAULT_V7", "uuid1", "uuid6", "uuid7"]


def __getattr__(name: str) -> object:
    """Create a default generator on first use (once: the import system runs its module
    once per process) and keep the name here, so later lookups are plain attributes."""
    value: object
    if name in ("DEFAULT_V7", "uuid7"):
        from uuidkit.generators import _default_v7

        value = getattr(_default_v7, name)
    elif name in ("DEFAULT_V1", "DEFAULT_V6", "uuid1", "uuid6"):
        from uuidkit.generators import _default_gregorian

        value = getattr(_default_gregorian, name)
    else:
        raise AttributeError(f"module 'uuidkit.generators.defaults' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
