"""A by-hand harness for engine tests: engines on named links, datagrams moved on request.

Time is passed explicitly and a lost datagram is one the test does
not deliver. Delivery is instantaneous and breadth-first, so the order of a flood is the
order of its hops. A device's link-local address on every link is its device ID.

This is deliberately tiny; the full simulator (delays, loss, topologies) is
``uuidkit.testing``.
"""

from __future__ import annotations

import itertools
import random
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from uuidkit.uiap import (
    MULTICAST,
    DomainID,
    Engine,
    EngineConfig,
    Event,
    Message,
    MessageType,
    NumberSpace,
    Transmit,
    UIDSpace,
    decode,
    encode,
)

#: An experimental Domain ID (UIAP §6: authority 0x0FFF), left-justified.
DOMAIN = DomainID.parse("0fff:0000:00e0:0000")
#: Another domain: claims in it never conflict with claims in DOMAIN (UIAP §2.2).
OTHER_DOMAIN = DomainID.parse("0fff:0000:00e1:0000")


def unique(value: int) -> UIDSpace:
    """A one-octet unique UID."""
    return UIDSpace.unique(bytes([value]))


def span(lower: int, upper: int) -> UIDSpace:
    """An inclusive range of one-octet UIDs."""
    return UIDSpace.range(bytes([lower]), bytes([upper]))


@dataclass(frozen=True)
class Delivery:
    """One datagram handed to one receiver."""

    sender: int
    receiver: int
    link: str
    message: Message


class Wire:
    """Engines joined by named links (shared segments); nothing moves until ``deliver``."""

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = config or EngineConfig.draft_only()
        self.engines: dict[int, Engine] = {}
        self.links: dict[str, list[int]] = {}
        self.log: list[Delivery] = []
        self._events: dict[int, list[Event]] = {}
        self.now = 0.0

    def device(
        self,
        device_id: int,
        config: EngineConfig | None = None,
        domains: Mapping[DomainID, NumberSpace] | None = None,
    ) -> Engine:
        """A new engine, its randomness seeded by its ID, knowing ``domains``' rules."""
        engine = Engine(device_id, random.Random(device_id), config or self.config, domains=domains)
        self.engines[device_id] = engine
        self._events[device_id] = []
        return engine

    def link(self, name: str, *device_ids: int) -> None:
        """Join ``device_ids`` on one link (a shared segment when more than two)."""
        self.links[name] = list(device_ids)
        for device_id in device_ids:
            self.engines[device_id].add_interface(name)

    @classmethod
    def pair(cls, config: EngineConfig | None = None) -> Wire:
        """Devices 1 and 2 on one link named ``"L"``: the smallest site."""
        wire = cls(config)
        wire.device(1)
        wire.device(2)
        wire.link("L", 1, 2)
        return wire

    def line(self, *device_ids: int) -> None:
        """Point-to-point links ``a-b``, ``b-c``, ... along ``device_ids``."""
        for a, b in itertools.pairwise(device_ids):
            self.link(f"{a}-{b}", a, b)

    def deliver(self, now: float, lose: Callable[[Delivery], bool] | None = None) -> list[Delivery]:
        """Deliver everything pending, and everything that causes, at ``now``.

        ``lose(delivery)`` returning true loses that datagram. Returns what was delivered.
        """
        self.now = now
        queue: deque[tuple[int, Transmit]] = deque()
        for device_id, engine in self.engines.items():
            queue.extend((device_id, t) for t in engine.datagrams_to_send())
        delivered: list[Delivery] = []
        while queue:
            sender, transmit = queue.popleft()
            link = str(transmit.interface)
            receivers = [d for d in self.links[link] if d != sender]
            if transmit.destination is not MULTICAST:
                assert transmit.destination in receivers, "unicast to a device not on the link"
                receivers = [d for d in receivers if d == transmit.destination]
            for receiver in receivers:
                delivery = Delivery(sender, receiver, link, decode(transmit.data))
                if lose is not None and lose(delivery):
                    continue
                delivered.append(delivery)
                engine = self.engines[receiver]
                engine.receive_datagram(transmit.data, link, sender, now)
                queue.extend((receiver, t) for t in engine.datagrams_to_send())
        self.log.extend(delivered)
        return delivered

    def run(self, until: float, lose: Callable[[Delivery], bool] | None = None) -> None:
        """Fire every engine timer due up to ``until``, in time order, delivering after each."""
        self.deliver(self.now, lose)
        while True:
            deadlines = [
                (deadline, device_id)
                for device_id, engine in self.engines.items()
                if (deadline := engine.get_timer()) is not None and deadline <= until
            ]
            if not deadlines:
                self.now = until
                return
            deadline, device_id = min(deadlines)
            self.engines[device_id].handle_timer(deadline)
            self.deliver(deadline, lose)

    def events(self, device_id: int) -> list[Event]:
        """Every event of ``device_id`` so far (drained from the engine and kept)."""
        engine, kept = self.engines[device_id], self._events[device_id]
        while (event := engine.next_event()) is not None:
            kept.append(event)
        return kept

    def of_type(self, device_id: int, kind: type) -> list[Event]:
        """The events of ``device_id`` that are instances of ``kind``."""
        return [event for event in self.events(device_id) if isinstance(event, kind)]


def attempt(device_id: int, sequence: int, space: UIDSpace, **fields: Any) -> Message:
    """A Claim-Attempt in DOMAIN as device ``device_id`` would originate it."""
    return Message(MessageType.CLAIM_ATTEMPT, device_id, sequence, DOMAIN, space, **fields)


class StartAt(random.Random):
    """A Random whose 32-bit draws return ``start``: it places the first sequence number."""

    def __init__(self, start: int) -> None:
        super().__init__(0)
        self.start = start

    def getrandbits(self, k: int) -> int:
        return self.start if k == 32 else super().getrandbits(k)


def inject(engine: Engine, message: Message, link: str, source: int, now: float) -> None:
    """Hand ``engine`` a datagram built by the test (as if ``source`` sent it on ``link``)."""
    engine.receive_datagram(encode(message), link, source, now)


def run_timers(engine: Engine, until: float) -> None:
    """Be a caller on time: handle each of ``engine``'s deadlines up to ``until`` at its
    own time, then ``until`` itself (a late caller is handed ``until`` alone)."""
    while (deadline := engine.get_timer()) is not None and deadline <= until:
        engine.handle_timer(deadline)
    engine.handle_timer(until)
