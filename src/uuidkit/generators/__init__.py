"""Time-based generators (v1, v6, v7, time-based v8): monotonic, thread-safe, fork-safe.

See ``docs/generators.md`` for the policies, the defaults and the guarantees.

References: RFC 9562 §6.1-§6.3, §6.9, §6.10; RFC 4122 §4.2.1.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:  # loaded on first use by __getattr__ below
    from uuidkit.generators._policy import ClockRegression, CounterOverflow
    from uuidkit.generators.defaults import (
        DEFAULT_V1,
        DEFAULT_V6,
        DEFAULT_V7,
        uuid1,
        uuid6,
        uuid7,
    )
    from uuidkit.generators.gregorian import GregorianConfig, V1Generator, V6Generator
    from uuidkit.generators.node import NodePolicy
    from uuidkit.generators.nodebound import (
        NodeBoundV1Generator,
        NodeBoundV6Generator,
        NodeBoundV7Generator,
        NodeBoundV8Generator,
    )
    from uuidkit.generators.nodesource import (
        ManualNodeSource,
        NodeEvent,
        NodeEventKind,
        NodeLease,
        NodeSource,
    )
    from uuidkit.generators.pg18 import (
        PG18V7Generator,
        build_v7_pg18,
        pg18_time_ns,
        uuid7_pg18,
    )
    from uuidkit.generators.shared import (
        SharedConfig,
        SharedV1Generator,
        SharedV6Generator,
        SharedV7Generator,
    )
    from uuidkit.generators.statefile import FutureStateWarning, StateUnavailableWarning
    from uuidkit.generators.v7 import V7Config, V7Counter, V7Generator
    from uuidkit.generators.v8time import DraftV8Config, DraftV8Generator

#: Every name loads its module on first use, so ``uuid7()`` (and ``uuidkit gen``) loads the
#: v7 generator only: not the v1/v6 engine, state files, the PostgreSQL profile or draft v8.
_LAZY: dict[str, str] = {
    "ClockRegression": "_policy",
    "CounterOverflow": "_policy",
    "DEFAULT_V1": "defaults",
    "DEFAULT_V6": "defaults",
    "DEFAULT_V7": "defaults",
    "uuid1": "defaults",
    "uuid6": "defaults",
    "uuid7": "defaults",
    "GregorianConfig": "gregorian",
    "V1Generator": "gregorian",
    "V6Generator": "gregorian",
    "NodePolicy": "node",
    "V7Config": "v7",
    "V7Counter": "v7",
    "V7Generator": "v7",
    "ManualNodeSource": "nodesource",
    "NodeBoundV1Generator": "nodebound",
    "NodeBoundV6Generator": "nodebound",
    "NodeBoundV7Generator": "nodebound",
    "NodeBoundV8Generator": "nodebound",
    "NodeEvent": "nodesource",
    "NodeEventKind": "nodesource",
    "NodeLease": "nodesource",
    "NodeSource": "nodesource",
    "PG18V7Generator": "pg18",
    "build_v7_pg18": "pg18",
    "pg18_time_ns": "pg18",
    "uuid7_pg18": "pg18",
    "SharedConfig": "shared",
    "SharedV1Generator": "shared",
    "SharedV6Generator": "shared",
    "SharedV7Generator": "shared",
    "StateUnavailableWarning": "statefile",
    "FutureStateWarning": "statefile",
    "DraftV8Config": "v8time",
    "DraftV8Generator": "v8time",
}


def __getattr__(name: str) -> object:
    """Load a lazily exported name on first use and keep it."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'uuidkit.generators' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"uuidkit.generators.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "DEFAULT_V1",
    "DEFAULT_V6",
    "DEFAULT_V7",
    "ClockRegression",
    "CounterOverflow",
    "DraftV8Config",
    "DraftV8Generator",
    "FutureStateWarning",
    "GregorianConfig",
    "ManualNodeSource",
    "NodeBoundV1Generator",
    "NodeBoundV6Generator",
    "NodeBoundV7Generator",
    "NodeBoundV8Generator",
    "NodeEvent",
    "NodeEventKind",
    "NodeLease",
    "NodePolicy",
    "NodeSource",
    "PG18V7Generator",
    "SharedConfig",
    "SharedV1Generator",
    "SharedV6Generator",
    "SharedV7Generator",
    "StateUnavailableWarning",
    "V1Generator",
    "V6Generator",
    "V7Config",
    "V7Counter",
    "V7Generator",
    "build_v7_pg18",
    "pg18_time_ns",
    "uuid1",
    "uuid6",
    "uuid7",
    "uuid7_pg18",
]
