""":class:`GregorianConfig`, the configuration of the v1 and v6 generators.

Imported as ``uuidkit.generators.GregorianConfig`` or
``uuidkit.generators.gregorian.GregorianConfig`` (with :data:`V6_DEFAULT`). It lives apart
from the generators because creating a dataclass loads :mod:`dataclasses`, and with it
inspect, ast and dis: about 10 ms of start-up. A generator made without a configuration is
built from the same values as plain attributes (``gregorian._DefaultSettings``), so
``uuid1()``, ``uuid6()`` and ``uuidkit gen -v 1``/``-v 6`` never load this module; it loads
with the first ``GregorianConfig`` a program names or a generator's ``config`` it reads.

References: RFC 9562 §5.1, §5.6, §6.10; RFC 4122 §4.2.1.
"""

from __future__ import annotations

from dataclasses import dataclass

from uuidkit.errors import InvalidField
from uuidkit.generators._policy import ClockRegression, CounterOverflow, check_choice, check_int
from uuidkit.generators._timeline import DEFAULT_MAX_AHEAD_MS
from uuidkit.generators.node import NodePolicy
from uuidkit.timestamps import NS_PER_TICK

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Final

__all__ = ["V6_DEFAULT", "GregorianConfig"]


@dataclass(frozen=True, slots=True)
class GregorianConfig:
    """How a :class:`V1Generator` or :class:`V6Generator` picks timestamp, clock_seq and node.

    References: RFC 9562 §5.1, §5.6, §6.10; RFC 4122 §4.2.1.
    """

    #: Where the node comes from (ignored when ``random_per_uuid``).
    node: NodePolicy = NodePolicy.RANDOM
    #: Interval of the system clock, in nanoseconds (a multiple of 100): ``clock_resolution_ns
    #: // 100`` UUIDs fit in one interval before the overflow policy applies.
    clock_resolution_ns: int = 100
    #: When the timestamps of one clock interval are used up.
    overflow: CounterOverflow = CounterOverflow.WAIT
    #: When the clock reads earlier than before: RESEED changes the clock sequence.
    regression: ClockRegression = ClockRegression.RESEED
    #: RESEED only: regressions up to this many milliseconds are handled as KEEP.
    regression_window_ms: int = 0
    #: WAIT only: longest total wait before raising, in milliseconds (monotonic time).
    max_wait_ms: int = 1_000
    #: How far ahead of the clock timestamps may run (KEEP after a regression, ADVANCE after
    #: an overflow), in milliseconds; beyond it KEEP restarts at the clock, ADVANCE raises.
    max_ahead_ms: int = DEFAULT_MAX_AHEAD_MS
    #: v6 only (RFC 9562 §5.6): fresh pseudorandom clock_seq and node for every UUID.
    random_per_uuid: bool = False

    def __post_init__(self) -> None:
        resolution = self.clock_resolution_ns
        if type(resolution) is not int or resolution < NS_PER_TICK or resolution % NS_PER_TICK:
            raise InvalidField(
                f"clock_resolution_ns: expected a positive multiple of 100, found {resolution!r}",
                "clock_resolution_ns",
            )
        if resolution > 1 << 40:
            raise InvalidField(
                f"clock_resolution_ns: expected at most 2**40, found {resolution!r}",
                "clock_resolution_ns",
            )
        check_int("regression_window_ms", self.regression_window_ms, 0, 1 << 48)
        check_int("max_wait_ms", self.max_wait_ms, 0, 1 << 32)
        check_int("max_ahead_ms", self.max_ahead_ms, 0, 1 << 40)
        check_choice("node", self.node, NodePolicy)
        check_choice("overflow", self.overflow, CounterOverflow)
        check_choice("regression", self.regression, ClockRegression)
        if type(self.random_per_uuid) is not bool:
            raise InvalidField(
                f"random_per_uuid: expected a bool, found {self.random_per_uuid!r}",
                "random_per_uuid",
            )


#: UUIDv6 defaults: fresh clock_seq and node per UUID (RFC 9562 §5.6 SHOULD); never goes
#: backwards (KEEP) and never stalls (ADVANCE runs ahead only past 10 million UUIDs/s).
V6_DEFAULT: Final = GregorianConfig(
    overflow=CounterOverflow.ADVANCE, regression=ClockRegression.KEEP, random_per_uuid=True
)
