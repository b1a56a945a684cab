"""Time-based generators (v1, v6, v7, time-based v8): monotonic, thread-safe, fork-safe.

See ``docs/generators.md`` for the policies, the defaults and the guarantees.

References: RFC 9562 §6.1-§6.3, §6.9, §6.10; RFC 4122 §4.2.1.
"""

from __future__ import annotations

from uuidkit.generators._policy import ClockRegression, CounterOverflow
from uuidkit.generators.defaults import DEFAULT_V1, DEFAULT_V6, DEFAULT_V7, uuid1, uuid6, uuid7
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
from uuidkit.generators.shared import (
    SharedConfig,
    SharedV1Generator,
    SharedV6Generator,
    SharedV7Generator,
)
from uuidkit.generators.statefile import StateUnavailableWarning
from uuidkit.generators.v7 import V7Config, V7Counter, V7Generator
from uuidkit.generators.v8time import DraftV8Config, DraftV8Generator

__all__ = [
    "DEFAULT_V1",
    "DEFAULT_V6",
    "DEFAULT_V7",
    "ClockRegression",
    "CounterOverflow",
    "DraftV8Config",
    "DraftV8Generator",
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
    "uuid1",
    "uuid6",
    "uuid7",
]
