"""The default UUIDv1 and UUIDv6 generators, created when this module is first imported.

The import system runs this module once per process, so exactly one generator of each
exists; they load with the first ``uuid1()`` or ``uuid6()``, not with ``uuid7()``.

References: RFC 9562 §5.1, §5.6, §6.9, §6.10; RFC 4122 §4.2.1.
"""

from __future__ import annotations

from uuidkit._accel import SPEEDUPS
from uuidkit.generators import _functions
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


def _published(generator: _GregorianGenerator, name: str) -> Any:
    """The generator's hot path published as ``uuidkit.<name>`` (also its ``next``).

    ``uuidkit.<name>`` was bound at import (see ``_functions``); this hands it the
    generator. With the accelerator the C module's builtin finds this generator's core in
    the module; on the pure path the Python function calls the generator's own ``next``.
    """
    function: Any = generator.next
    generator._engine.name_next(name, function)  # the compiled core's fallback too
    core = generator._engine.core
    if core is not None:
        strict = function

        def stdlib_path(node: object = None, clock_seq: object = None) -> UUID:
            # Calls with arguments: taken as the standard library's function takes them.
            value: UUID = strict(*_functions.stdlib_arguments(name, node, clock_seq))
            return value

        # A bad call's TypeError names the public function, as on the pure path.
        stdlib_path.__name__ = stdlib_path.__qualname__ = name

        SPEEDUPS._publish_default_gregorian(core, stdlib_path)
    else:
        _functions.publish(name, function)
    generator.next = published = getattr(_functions, name)
    return published


#: A new UUIDv1 from :data:`DEFAULT_V1`: as :func:`uuid.uuid1` but with a random multicast
#: node by default. References: RFC 9562 §5.1, §6.10; RFC 4122 §4.2.1.
uuid1: Final[Callable[..., UUID]] = _published(DEFAULT_V1, "uuid1")
#: A new UUIDv6 from :data:`DEFAULT_V6`, with a fresh pseudorandom clock_seq and node unless
#: given. References: RFC 9562 §5.6, §6.10.
uuid6: Final[Callable[..., UUID]] = _published(DEFAULT_V6, "uuid6")
