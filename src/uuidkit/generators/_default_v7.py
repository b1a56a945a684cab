"""The default UUIDv7 generator, created when this module is first imported.

Kept apart from the v1/v6 defaults so that the first ``uuid7()`` (and ``uuidkit gen``)
loads neither the Gregorian engine nor its node machinery. The import system runs this
module once per process, so exactly one default generator exists.

References: RFC 9562 §5.7, §6.2.
"""

from __future__ import annotations

from uuidkit.generators.v7 import V7Generator

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Final
    from uuid import UUID

#: The generator behind :func:`uuid7`: Method 2, 48-bit random increments (see V7Config).
DEFAULT_V7: Final = V7Generator()

#: A new UUIDv7 from :data:`DEFAULT_V7`: strictly greater than the previous one from this
#: process, thread-safe, fork-safe, never ahead of the clock in steady state.
#: References: RFC 9562 §5.7, §6.2.
uuid7: Final[Callable[[], UUID]] = DEFAULT_V7.next
