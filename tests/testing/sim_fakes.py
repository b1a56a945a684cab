"""A tiny engine with the real engine's API, for testing the simulator on its own.

It floods one Claim-Attempt per claim (no repeats), denies a conflicting attempt back to its
first sender, forwards denies along the recorded path and succeeds after
:data:`FAKE_TIMEOUT` seconds: just enough protocol to check the simulator's delivery,
timers, impairments and report, without depending on the real engine's choices. Every
datagram it receives is logged in ``received``.

Wire format (not UIAP's): type (1 octet: 0 attempt, 1 deny) | originator (8) | sequence (4)
| UID octets.
"""

from __future__ import annotations

import random
from collections import Counter, deque
from collections.abc import Hashable
from dataclasses import dataclass, field

from uuidkit.uiap import (
    MULTICAST,
    ClaimExpired,
    ClaimFailed,
    ClaimSucceeded,
    DomainID,
    DropReason,
    Event,
    FailureReason,
    Transmit,
    UIDSpace,
)

FAKE_TIMEOUT = 1.0
DOMAIN = DomainID.parse("fff:0:1:0")
ATTEMPT, DENY = 0, 1


def uid(value: int) -> UIDSpace:
    """A one-octet unique UID space."""
    return UIDSpace.unique(bytes([value]))


@dataclass
class FakeStats:
    dropped: Counter[DropReason] = field(default_factory=Counter)


@dataclass
class _Claim:
    space: UIDSpace
    lifetime: int
    deadline: float
    sequence: int
    held: bool = False


class FakeEngine:
    """See the module docstring; ``domain`` is ignored (one domain only)."""

    def __init__(self, device_id: int, rng: random.Random) -> None:
        self.device_id = device_id
        self.rng_draw = rng.random()
        self.interfaces: list[Hashable] = []
        self.received: list[tuple[float, Hashable, Hashable, bytes]] = []
        self.stats = FakeStats()
        self._claims: dict[int, _Claim] = {}
        self._seen: dict[bytes, tuple[Hashable, Hashable, bool]] = {}
        self._outbox: list[Transmit] = []
        self._events: deque[Event] = deque()
        self._sequence = 0

    def add_interface(self, interface: Hashable) -> None:
        self.interfaces.append(interface)

    def remove_interface(self, interface: Hashable) -> None:
        self.interfaces.remove(interface)

    def claim(
        self,
        domain: DomainID,
        space: UIDSpace,
        lifetime: int,
        now: float,
        *,
        reclaim: bool = False,
        proxy: bool = False,
    ) -> int:
        self._sequence += 1
        handle = self._sequence
        if any(c.space == space for c in self._claims.values()):
            self._events.append(ClaimFailed(handle, FailureReason.LOCAL_CONFLICT, domain, space))
            return handle
        self._claims[handle] = _Claim(space, lifetime, now + FAKE_TIMEOUT, handle)
        key = self.device_id.to_bytes(8, "big") + handle.to_bytes(4, "big")
        self._seen[key] = (None, None, False)
        for interface in self.interfaces:
            data = bytes([ATTEMPT]) + key + space.first.data
            self._outbox.append(Transmit(interface, MULTICAST, data))
        return handle

    def release(self, claim: int, now: float) -> None:
        self._claims.pop(claim, None)

    def receive_datagram(
        self, data: bytes, interface: Hashable, source: Hashable, now: float
    ) -> None:
        self.received.append((now, interface, source, data))
        key, space = data[1:13], UIDSpace.unique(data[13:])
        if data[0] == ATTEMPT:
            if key in self._seen:
                self.stats.dropped[DropReason.DUPLICATE] += 1
                return
            self._seen[key] = (interface, source, False)
            if any(c.held and c.space == space for c in self._claims.values()):
                self._seen[key] = (interface, source, True)
                self._outbox.append(Transmit(interface, source, bytes([DENY]) + data[1:]))
                return
            for other in self.interfaces:
                if other != interface:
                    self._outbox.append(Transmit(other, MULTICAST, data))
            return
        self._on_deny(key, data)

    def _on_deny(self, key: bytes, data: bytes) -> None:
        record = self._seen.get(key)
        if record is None:
            self.stats.dropped[DropReason.DENY_UNMATCHED] += 1
            return
        arrival, sender, denied = record
        if arrival is None:
            handle = int.from_bytes(key[8:])
            claim = self._claims.get(handle)
            if claim is not None and not claim.held:
                del self._claims[handle]
                self._events.append(ClaimFailed(handle, FailureReason.DENIED, DOMAIN, claim.space))
            return
        if denied:
            self.stats.dropped[DropReason.DENY_ALREADY_SENT] += 1
            return
        self._seen[key] = (arrival, sender, True)
        self._outbox.append(Transmit(arrival, sender, data))

    def handle_timer(self, now: float) -> None:
        for handle, claim in list(self._claims.items()):
            if claim.deadline > now:
                continue
            if claim.held:
                del self._claims[handle]
                self._events.append(ClaimExpired(handle))
            else:
                claim.held = True
                claim.deadline = now + claim.lifetime
                self._events.append(ClaimSucceeded(handle, DOMAIN, claim.space, claim.deadline))

    def get_timer(self) -> float | None:
        return min((c.deadline for c in self._claims.values()), default=None)

    def datagrams_to_send(self) -> list[Transmit]:
        outbox, self._outbox = self._outbox, []
        return outbox

    def next_event(self) -> Event | None:
        return self._events.popleft() if self._events else None
