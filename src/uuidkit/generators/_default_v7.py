"""The default UUIDv7 generator, created when this module is first imported.

Kept apart from the v1/v6 defaults so that the first ``uuid7()`` (and ``uuidkit gen``)
loads neither the Gregorian engine nor its node machinery. The import system runs this
module once per process, so exactly one default generator exists.

``uuid7`` is the plain function ``uuidkit.uuid7`` (bound at import by ``_functions``): with
the accelerator the C module's builtin ``uuid7`` (which finds the default generator's core
in the module), else a Python function calling the generator's own hot path. Either way
pickle, :mod:`copy` and Django's migration writer find it by that name, it is not iterable,
and it has no method that could move the shared generator backwards.

References: RFC 9562 §5.7, §6.2.
"""

from __future__ import annotations

from uuidkit._accel import SPEEDUPS
from uuidkit.generators import _functions
from uuidkit.generators.v7 import V7Generator

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Final
    from uuid import UUID

#: The generator behind :func:`uuid7`: Method 2, 48-bit random increments (see V7Config).
DEFAULT_V7: Final = V7Generator()


def _published(generator: V7Generator) -> Any:
    """The generator's hot path published as ``uuidkit.uuid7`` (also its ``next``).

    ``uuidkit.uuid7`` was bound at import (see ``_functions``); this hands it the generator.
    """
    function: Any = generator.next
    core_type = getattr(SPEEDUPS, "V7Core", None)
    if core_type is not None and type(function) is core_type:
        SPEEDUPS._publish_default_v7(function)
    else:
        _functions.publish("uuid7", function)
    generator.next = _functions.uuid7  # a compiled core stays private to the generator
    return _functions.uuid7


#: A new UUIDv7 from :data:`DEFAULT_V7`: strictly greater than the previous one from this
#: process, thread-safe, fork-safe, never ahead of the clock in steady state.
#: References: RFC 9562 §5.7, §6.2.
uuid7: Final[Callable[[], UUID]] = _published(DEFAULT_V7)
