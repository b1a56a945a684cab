"""The default UUIDv1 and UUIDv6 generators, created when this module is first imported.

The import system runs this module once per process, so exactly one generator of each
exists; they load with the first ``uuid1()`` or ``uuid6()``, not with ``uuid7()``.

References: RFC 9562 §5.1, §5.6, §6.9, §6.10; RFC 4122 §4.2.1.
"""

from __future__ import annotations

from uuidkit._accel import SPEEDUPS, public_function
from uuidkit.generators.gregorian import V1Generator, V6Generator

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Final
    from uuid import UUID

    from uuidkit.generators.gregorian import _GregorianGenerator

#: The generator behind :func:`uuid1`: random multicast node, random clock sequence.
DEFAULT_V1: Final = V1Generator()
#: The generator behind :func:`uuid6`: fresh clock_seq and node per UUID (RFC 9562 §5.6).
DEFAULT_V6: Final = V6Generator()


def _published(generator: _GregorianGenerator, reference: Callable[..., UUID], name: str) -> Any:
    """The generator's hot path as the plain function ``uuidkit.<name>`` (also its ``next``).

    With the accelerator: the C module's builtin ``name``, which finds this generator's
    core in the module (pickle, :mod:`copy` and Django's migration writer take it for a
    function, by its name). On the pure path: the generator's one-frame ``next``, carrying
    the docstring and ``__wrapped__`` (for ``inspect.signature``) of ``reference``, its
    documented twin: same signature and result, one frame more.
    """
    function: Any = generator.next
    generator._engine.name_next(name, function)  # the compiled core's fallback too
    core = generator._engine.core
    if core is not None:
        SPEEDUPS._publish_default_gregorian(core)
        function = getattr(SPEEDUPS, name)
        generator.next = function  # the core itself stays private to the generator
    else:
        function.__doc__, function.__wrapped__ = reference.__doc__, reference
    return public_function(function, name)


def _uuid1(node: int | None = None, clock_seq: int | None = None) -> UUID:
    """A new UUIDv1, as :func:`uuid.uuid1` but with a random multicast node by default.

    ``node`` (48 bits) and ``clock_seq`` (14 bits) replace the default generator's own for
    this value; the timestamp still comes from the shared generator, so it never repeats.

    References: RFC 9562 §5.1, §6.10; RFC 4122 §4.2.1.
    """
    return DEFAULT_V1.next(node, clock_seq)


def _uuid6(node: int | None = None, clock_seq: int | None = None) -> UUID:
    """A new UUIDv6 with a fresh pseudorandom clock_seq and node unless given.

    References: RFC 9562 §5.6, §6.10.
    """
    return DEFAULT_V6.next(node, clock_seq)


# The module functions are the generators' own hot paths, carrying the references' names.
#: A new UUIDv1 from :data:`DEFAULT_V1` (see :func:`_uuid1`, its documented twin).
uuid1: Final[Callable[..., UUID]] = _published(DEFAULT_V1, _uuid1, "uuid1")
#: A new UUIDv6 from :data:`DEFAULT_V6` (see :func:`_uuid6`, its documented twin).
uuid6: Final[Callable[..., UUID]] = _published(DEFAULT_V6, _uuid6, "uuid6")
