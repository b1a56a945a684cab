"""What the simulator drives: the engine API as a protocol, and the real engine's factory.

:class:`EngineLike` is the sans-I/O API of ``uuidkit.uiap.engine.Engine`` (architecture.md:
sans-I/O engine), so a test can run the simulator on an engine of its own with the same API.

References: UIAP §2.4, §3.2.4, §4.2.2.1, §10; architecture.md: sans-I/O engine.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Hashable
from typing import Any, Final, Protocol

from uuidkit.uiap.engine import Engine, EngineConfig
from uuidkit.uiap.space import spaces_overlap

__all__ = [
    "DEFAULT_ENGINE_FACTORY",
    "ConflictTest",
    "EngineFactory",
    "EngineLike",
    "TransmitLike",
    "claims_conflict",
    "engine_drops",
    "engine_factory",
]


class TransmitLike(Protocol):
    """What ``datagrams_to_send`` returns: ``Transmit(interface, destination, data)``.

    References: UIAP §4.2, §4.3.2; architecture.md: sans-I/O engine.
    """

    @property
    def interface(self) -> Hashable: ...
    @property
    def destination(self) -> Hashable: ...
    @property
    def data(self) -> bytes: ...


class EngineLike(Protocol):
    """The sans-I/O engine API the simulator drives (``uuidkit.uiap.engine.Engine``).

    References: architecture.md: sans-I/O engine; UIAP §2.4.
    """

    def add_interface(self, interface: Hashable) -> None: ...
    def remove_interface(self, interface: Hashable) -> None: ...
    def claim(
        self,
        domain: Any,
        space: Any,
        lifetime: int,
        now: float,
        *,
        reclaim: bool = False,
        proxy: bool = False,
    ) -> int: ...
    def release(self, claim: int, now: float) -> None: ...
    def receive_datagram(
        self, data: bytes, interface: Hashable, source: Hashable, now: float
    ) -> None: ...
    def handle_timer(self, now: float) -> None: ...
    def get_timer(self) -> float | None: ...
    def datagrams_to_send(self) -> list[Any]: ...
    def next_event(self) -> object | None: ...
    @property
    def stats(self) -> Any:
        """Counters; ``stats.dropped`` counts dropped datagrams by reason (an enum)."""


#: ``(device_id, rng) -> engine``; device_id is the 64-bit Originating Device ID.
EngineFactory = Callable[[int, random.Random], EngineLike]
#: ``(domain_a, space_a, domain_b, space_b) -> True when the two claims conflict``.
ConflictTest = Callable[[Any, Any, Any, Any], bool]


def engine_factory(config: EngineConfig | None = None) -> EngineFactory:
    """A factory of real :class:`uuidkit.uiap.engine.Engine` objects with ``config``.

    References: UIAP §10 (the defaults of :class:`EngineConfig`).
    """
    # The simulator reads drop counts from ``engine.stats``; per-drop events would only
    # cost time in a mesh, where most copies of a flood are duplicates.
    chosen = config or EngineConfig(drop_events=False)

    def make(device_id: int, rng: random.Random) -> EngineLike:
        """A real engine for ``device_id``, drawing its random choices from ``rng``.

        References: UIAP §2.4, §3.
        """
        return Engine(device_id, rng, chosen)

    return make


def claims_conflict(domain_a: Any, space_a: Any, domain_b: Any, space_b: Any) -> bool:
    """The engine's conflict test: same Domain ID and intersecting UID spaces.

    References: UIAP §4.2.2.1 ("same DID and intersecting UID space"), §3.2.4.
    """
    return bool(domain_a == domain_b and spaces_overlap(space_a, space_b, domain_a))


#: Real engines with the draft's defaults and no per-drop events.
DEFAULT_ENGINE_FACTORY: Final = engine_factory()


def engine_drops(engine: EngineLike) -> Counter[str]:
    """An engine's drop counts, keyed ``"engine: <reason>"`` like the network's.

    References: UIAP §2.4.2, §4.3.2 (the drops the engine counts).
    """
    return Counter(
        {f"engine: {reason.value}": count for reason, count in engine.stats.dropped.items()}
    )
