"""An in-process UIAP site: nodes wired together in memory, driven by the asyncio loop.

Each :class:`LocalNode` has the daemon's :class:`~uuidkit.daemon.service.Node` interface
around a real :class:`~uuidkit.uiap.Engine`; datagrams between nodes go through the loop
(``call_soon``), sealed and opened by each node's authenticator as on a real network, with
made-up link-local addresses. A site can be partitioned and merged, and it can record and
inject datagrams. Used by the daemon's tests and benchmarks, where the real transport and
its sockets are not the subject; the namespace tests run the real one.

References: UIAP §2.1.2 (partitions and merges), §2.4, §7.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections import Counter
from collections.abc import Callable
from typing import Any, Final

from uuidkit.uiap.auth import Authenticator
from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.engine import MULTICAST, Engine, EngineConfig
from uuidkit.uiap.events import Event
from uuidkit.uiap.space import UIDSpace

__all__ = ["LocalNode", "LocalSite"]

GROUP: Final = "ff02::114"
INTERFACE: Final = "site0"


class LocalSite:
    """Nodes on one simulated segment; ``partition`` splits it, ``merge`` joins it again.

    References: UIAP §2.3 (one link-local segment), §4.5.1 (floods).
    """

    def __init__(self) -> None:
        self.nodes: list[LocalNode] = []
        self._group_of: dict[str, int] = {}
        #: Every datagram put on the segment: (source address, destination, octets).
        self.recorded: list[tuple[str, str, bytes]] = []

    def factory(
        self,
        config: object,
        engine_config: EngineConfig,
        device_id: int,
        authenticator: Authenticator | None,
        on_event: Callable[[Event], None],
    ) -> LocalNode:
        """A node factory for :class:`~uuidkit.daemon.main.Daemon` (``node_factory=``)."""
        return self.node(device_id, engine_config, authenticator, on_event)

    def node(
        self,
        device_id: int,
        engine_config: EngineConfig,
        authenticator: Authenticator | None,
        on_event: Callable[[Event], None],
    ) -> LocalNode:
        node = LocalNode(self, len(self.nodes) + 1, device_id, engine_config, on_event)
        node.authenticator = authenticator
        self.nodes.append(node)
        return node

    def partition(self, *groups: list[LocalNode]) -> None:
        """Only nodes in the same group hear each other; a node in no group hears all."""
        self._group_of = {
            node.address: number for number, group in enumerate(groups) for node in group
        }

    def merge(self) -> None:
        self._group_of = {}

    def _connected(self, a: str, b: str) -> bool:
        group_a, group_b = self._group_of.get(a), self._group_of.get(b)
        return group_a is None or group_b is None or group_a == group_b

    def send(self, source: str, destination: str, data: bytes) -> None:
        """Deliver ``data`` from ``source`` to the group or to one address (asynchronously)."""
        self.recorded.append((source, destination, data))
        loop = asyncio.get_running_loop()
        for node in self.nodes:
            if node.address == source or not node.running:
                continue
            if destination in (GROUP, node.address) and self._connected(source, node.address):
                loop.call_soon(node.receive, data, source, destination)


class LocalNode:
    """One node of a :class:`LocalSite` (the daemon's ``Node`` interface).

    References: UIAP §2.3 (one link-local segment), §4.5.1 (floods).
    """

    def __init__(
        self,
        site: LocalSite,
        number: int,
        device_id: int,
        engine_config: EngineConfig,
        on_event: Callable[[Event], None],
    ) -> None:
        self.site = site
        self.address = f"fe80::{number:x}"
        self.device_id = device_id
        # UIAP §4.5.1: a random first sequence number at every start, so a restarted
        # device's floods are not taken for copies of its earlier ones.
        self.engine = Engine(device_id, random.Random(f"{device_id}/{number}"), engine_config)
        self.engine.add_interface(INTERFACE)
        self.authenticator: Authenticator | None = None
        self.on_event = on_event
        self.running = False
        #: False: the node's one interface is down (it neither sends nor receives).
        self.link_up = True
        self.dropped: Counter[str] = Counter()
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.running = True

    async def stop(self) -> None:
        self.running = False
        if self._timer is not None:
            self._timer.cancel()

    @property
    def interfaces(self) -> tuple[str, ...]:
        return (INTERFACE,) if self.running and self.link_up else ()

    def _now(self) -> float:
        assert self._loop is not None, "start() the node first"
        return self._loop.time()

    def claim(
        self,
        domain: DomainID,
        space: UIDSpace,
        lifetime: int,
        *,
        reclaim: bool = False,
        proxy: bool = False,
    ) -> int:
        handle = self.engine.claim(
            domain, space, lifetime, self._now(), reclaim=reclaim, proxy=proxy
        )
        self._after()
        return handle

    def release(self, handle: int) -> None:
        self.engine.release(handle, self._now())
        self._after()

    def receive(self, data: bytes, source: str, destination: str) -> None:
        if not (self.running and self.link_up):
            return
        if self.authenticator is not None:
            opened = self.authenticator.open(data, source, destination, INTERFACE)
            if opened is None:
                self.dropped["auth"] += 1
                return
            data = opened
        self.engine.receive_datagram(data, INTERFACE, source, self._now())
        self._after()

    def status(self) -> dict[str, Any]:
        stats = self.engine.stats
        engine = {k: v for k, v in dataclasses.asdict(stats).items() if k != "dropped"}
        return {
            "device_id": f"{self.device_id:016x}",
            "interfaces": [
                {"name": INTERFACE, "addresses": [self.address], "participating": self.running}
            ],
            "transport": {"dropped": dict(self.dropped)},
            "engine": engine | {"dropped": {r.value: n for r, n in stats.dropped.items()}},
        }

    def _after(self) -> None:
        for transmit in self.engine.datagrams_to_send():
            destination = GROUP if transmit.destination is MULTICAST else str(transmit.destination)
            data = transmit.data
            if self.authenticator is not None:
                data = self.authenticator.seal(data, self.address, destination, INTERFACE)
            if self.link_up:
                self.site.send(self.address, destination, data)
        while (event := self.engine.next_event()) is not None:
            self.on_event(event)
        self._rearm()

    def _rearm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        deadline = self.engine.get_timer()
        if deadline is not None and self.running and self._loop is not None:
            self._timer = self._loop.call_at(deadline, self._fire)

    def _fire(self) -> None:
        self._timer = None
        if self.running:
            self.engine.handle_timer(self._now())
            self._after()
