"""A deterministic discrete-event simulator that runs one UIAP engine per device.

Virtual time only: a heap of ``(time, sequence, kind, ...)`` entries, popped in order. Three
kinds of entry exist: a datagram arriving at a device, a device's engine timer, and a
scheduled action (a claim, a partition, a crash...). After every call into an engine the
simulator drains it (``datagrams_to_send``, ``next_event``) and re-arms one timer at
``get_timer()``, as the asyncio transport (uuidkit.net) re-arms one ``loop.call_at``
(architecture.md: sans-I/O engine). A timer entry whose deadline is no longer the engine's
is stale and skipped, so nothing is ever removed from the heap.

Randomness: one ``random.Random(seed)`` drives the links and seeds each engine's own
``random.Random`` when the device starts, so a seed replays a run exactly.

Addresses: a device's link-local address is its device number on every link (as an
EUI-64-derived link-local address is the same on every interface); an interface key is the
link's name.

References: UIAP §2.4 (the device behaviour driven here), §4.2.2.1, §4.3.2 (next-hop
unicast), §2.1.2 (merges), §5.1 (a claimant that leaves the site); architecture.md:
sans-I/O engine, time by hand, seeded network.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from uuidkit.errors import SimulationError
from uuidkit.testing.engines import (
    DEFAULT_ENGINE_FACTORY,
    ConflictTest,
    EngineFactory,
    EngineLike,
    claims_conflict,
    engine_drops,
)
from uuidkit.testing.network import DROP_LINK_DOWN, LinkConfig, Network
from uuidkit.testing.report import ClaimOutcome, ClaimRecord, Report, build_report
from uuidkit.testing.topologies import Topology
from uuidkit.uiap.engine import MULTICAST
from uuidkit.uiap.events import ClaimExpired, ClaimFailed, ClaimLost, ClaimSucceeded
from uuidkit.uiap.space import Interval, NumberSpace, intervals_overlap

__all__ = ["DROP_DEVICE_DOWN", "Device", "Simulator"]

#: A datagram that arrived while its receiver was crashed.
DROP_DEVICE_DOWN = "network: receiver down"

_DELIVER = 0
_TIMER = 1
_ACTION = 2


class Device:
    """One simulated device: its engine, whether it runs, its timer and its claims.

    References: UIAP §3.1 (one device ID, several interfaces), §4.1.
    """

    __slots__ = ("alive", "armed", "device_id", "engine", "holds", "index", "records")

    def __init__(self, index: int, device_id: int, engine: EngineLike) -> None:
        self.index = index
        self.device_id = device_id
        self.engine = engine
        self.alive = True
        #: The deadline of the timer entry currently in the heap for this device.
        self.armed: float | None = None
        #: Claims this device's application believes it holds, by engine handle.
        self.holds: dict[int, ClaimRecord] = {}
        #: Every claim issued to the current engine, by engine handle.
        self.records: dict[int, ClaimRecord] = {}


class Simulator:
    """Many engines over a :class:`Topology`, in virtual time, from one seed.

    Schedule claims and network changes with the methods below (each takes ``at``, a
    virtual time in seconds), then :meth:`run`. ``engine_factory`` and ``multicast``
    default to :class:`uuidkit.uiap.engine.Engine` and its ``MULTICAST`` sentinel; tests may
    pass an engine of the same API. ``rng`` replaces ``random.Random(seed)`` when the
    caller drew the topology from the same generator. ``conflicts`` decides when two claims
    overlap (default: same Domain ID and overlapping UID spaces, UIAP §3.2.4).

    References: UIAP §2.4, §3, §2.1.2; architecture.md: sans-I/O engine, time by hand,
    seeded network.
    """

    def __init__(
        self,
        topology: Topology,
        *,
        seed: int = 0,
        link: LinkConfig | None = None,
        engine_factory: EngineFactory | None = None,
        multicast: object = MULTICAST,
        conflicts: ConflictTest | None = None,
        device_ids: list[int] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.topology = topology
        self.seed = seed
        self.random = rng or random.Random(seed)
        self.network = Network(topology, link or LinkConfig(), self.random)
        self.now = 0.0
        self.events = 0
        self.messages = 0
        self.records: list[ClaimRecord] = []
        self.engine_drops: Counter[str] = Counter()
        self.event_counts: Counter[str] = Counter()
        self._factory = engine_factory or DEFAULT_ENGINE_FACTORY
        self._multicast = multicast
        self._conflicts = conflicts or claims_conflict
        self._intervals: dict[ClaimRecord, Interval] = {}
        #: The devices that may hold a claim, by index: each device is added when a claim
        #: of its is granted and dropped by _held_elsewhere once it holds none, so the
        #: conflict test of a new claim looks at the holders, not at every device.
        self._holders: dict[int, Device] = {}
        self._heap: list[tuple[float, int, int, Any, Any, Any, Any]] = []
        self._sequence = itertools.count()
        self._fan_out: list[tuple[int, float]] = []
        ids = device_ids or [index + 1 for index in range(topology.devices)]
        if len(ids) != topology.devices:
            raise SimulationError(
                f"device_ids: expected {topology.devices} IDs, found {len(ids)}", "device_ids"
            )
        self.devices = [
            Device(index, ids[index], self._start_engine(index, ids[index]))
            for index in range(topology.devices)
        ]

    # -- scheduling -------------------------------------------------------------------

    def at(self, time: float, action: Callable[[], None]) -> None:
        """Run ``action()`` at virtual ``time`` (seconds), after entries already due then.

        References: architecture.md: time driven by hand (drive time by hand).
        """
        if time < self.now:
            raise SimulationError(f"cannot schedule at {time} s: now is {self.now} s", "at")
        heapq.heappush(self._heap, (time, next(self._sequence), _ACTION, action, None, None, None))

    def claim(
        self,
        device: int,
        domain: Any,
        space: Any,
        *,
        at: float = 0.0,
        lifetime: int = 3600,
        reclaim: bool = False,
        proxy: bool = False,
    ) -> ClaimRecord:
        """Schedule ``device``'s application to claim ``space`` at ``at``; the returned record
        fills in with the outcome as the run proceeds.

        References: UIAP §2.4.1, §4.4 (reclaim), §5.1 (proxy enable).
        """
        self._device(device)
        record = ClaimRecord(device, domain, space, lifetime, reclaim, proxy, at)
        self.records.append(record)
        self.at(at, lambda: self._issue_claim(record))
        return record

    def release(self, record: ClaimRecord, *, at: float) -> None:
        """Schedule the application to give up a claim (the engine stops defending it).

        References: UIAP §2.1.1.
        """
        self.at(at, lambda: self._release(record))

    def partition(self, link: str, *, at: float) -> None:
        """Take ``link`` down at ``at``: copies on it, and in flight on it, are lost.

        References: UIAP §2.1.2.
        """
        self.network.link(link)
        self.at(at, lambda: self.network.set_up(link, False))

    def merge(self, link: str, *, at: float) -> None:
        """Bring ``link`` up at ``at``, merging the sites on either side (UIAP §2.1.2).

        The link's members see it come up, as a host sees carrier: an engine with
        ``interface_up`` (uuidkit's) is told, so it can re-verify its held claims at once.

        References: UIAP §2.1.2.
        """
        self.network.link(link)
        self.at(at, lambda: self._link_up(link))

    def configure_link(self, link: str, config: LinkConfig, *, at: float) -> None:
        """Change ``link``'s impairments at ``at``.

        References: UIAP §2.3.
        """
        self.network.link(link)
        self.at(at, lambda: self.network.configure(link, config))

    def crash(self, device: int, *, at: float, keep_state: bool = False) -> None:
        """Stop ``device`` at ``at``: it neither receives, sends nor fires timers. Unless
        ``keep_state``, it loses its flood records and claims (its application forgets them);
        with ``keep_state`` it comes back believing it still holds them (UIAP §2.1.2: a
        device that "temporarily leaves the site").

        References: UIAP §2.1.2 ("If a UIAP device goes down, its claims will not be defended").
        """
        self._device(device)
        self.at(at, lambda: self._crash(device, keep_state))

    def restart(self, device: int, *, at: float) -> None:
        """Start a crashed ``device`` again at ``at``.

        References: UIAP §2.1.2.
        """
        self._device(device)
        self.at(at, lambda: self._restart(device))

    # -- running ----------------------------------------------------------------------

    def run(self, until: float | None = None, *, max_events: int | None = None) -> Report:
        """Process entries in time order until the heap is empty or the next is after
        ``until``; returns the report so far. ``max_events`` bounds a run that never
        settles (an engine that keeps re-arming a timer at the same instant).

        References: UIAP §2.4; architecture.md: sans-I/O engine.
        """
        heap = self._heap
        pop = heapq.heappop
        budget = max_events if max_events is not None else -1
        devices, drops, sync = self.devices, self.network.drops, self._sync
        while heap and (until is None or heap[0][0] <= until):
            if budget == 0:
                raise SimulationError(
                    f"seed {self.seed}: more than {max_events} events by {self.now} s",
                    "max_events",
                )
            budget -= 1
            time, _, kind, a, b, c, d = pop(heap)
            self.now = time
            self.events += 1
            if kind == _DELIVER:
                # A datagram ``d`` from device ``c`` reaches device ``a`` over link ``b``
                # (the most frequent entry, handled here rather than by a call).
                if not b.up:
                    drops[DROP_LINK_DOWN] += 1
                    continue
                device = devices[a]
                if not device.alive:
                    drops[DROP_DEVICE_DOWN] += 1
                    continue
                device.engine.receive_datagram(d, b.name, c, time)
                sync(device)
            elif kind == _TIMER:
                self._fire_timer(a, b)
            else:
                a()
        if until is not None and until > self.now:
            self.now = until
        return self.report()

    def report(self) -> Report:
        """The report of everything that has happened so far.

        References: UIAP §2.4.1, §2.1.2.
        """
        drops = Counter(self.network.drops)
        drops.update(self.engine_drops)
        for device in self.devices:
            drops.update(engine_drops(device.engine))
        return build_report(self.records, self.messages, drops, self.events, self.now)

    # -- internals --------------------------------------------------------------------

    def _device(self, index: int) -> Device:
        if not 0 <= index < len(self.devices):
            raise SimulationError(f"device {index} is not in 0..{len(self.devices) - 1}", "device")
        return self.devices[index]

    def _start_engine(self, index: int, device_id: int) -> EngineLike:
        engine = self._factory(device_id, random.Random(self.random.getrandbits(64)))
        for link in self.network.interfaces[index]:
            engine.add_interface(link)
        return engine

    def _sync(self, device: Device) -> None:
        engine = device.engine
        transmits = engine.datagrams_to_send()
        if transmits:
            self._transmit(device.index, transmits)
        while (event := engine.next_event()) is not None:
            self._on_event(device, event)
        deadline = engine.get_timer()
        if deadline is not None and deadline != device.armed:
            device.armed = deadline
            when = deadline if deadline > self.now else self.now
            heapq.heappush(
                self._heap, (when, next(self._sequence), _TIMER, device, deadline, None, None)
            )

    def _transmit(self, sender: int, transmits: list[Any]) -> None:
        """Schedule the arrival of every copy of ``transmits`` (one device's, in order)."""
        links, fan_out, multicast = self.network.links, self.network.fan_out, self._multicast
        now, heap, sequence, push, out = (
            self.now,
            self._heap,
            self._sequence,
            heapq.heappush,
            self._fan_out,
        )
        for transmit in transmits:
            self.messages += 1
            link = links.get(transmit.interface)
            if link is None:
                raise SimulationError(
                    f"device {sender} sent on unknown interface {transmit.interface!r}",
                    "interface",
                )
            destination = transmit.destination
            out.clear()
            fan_out(link, sender, None if destination is multicast else destination, out)
            data = transmit.data
            for receiver, delay in out:
                push(heap, (now + delay, next(sequence), _DELIVER, receiver, link, sender, data))

    def _fire_timer(self, device: Device, deadline: float) -> None:
        if not device.alive or device.armed != deadline:
            return
        device.armed = None
        device.engine.handle_timer(self.now)
        self._sync(device)

    def _on_event(self, device: Device, event: object) -> None:
        if isinstance(event, ClaimSucceeded):
            self._on_granted(device, event.claim, event.expires)
        elif isinstance(event, ClaimFailed):
            self._on_failed(device, event.claim, event.reason.value)
        elif isinstance(event, (ClaimExpired, ClaimLost)):
            # A lost claim ends like an expired one: the application is told to stop using
            # the space (UIAP §2.1.2 "recovery after collision is the responsibility of the
            # application"), so it no longer holds it.
            ended = device.holds.pop(event.claim, None)
            if ended is not None and isinstance(event, ClaimLost):
                ended.lost_at, ended.lost_reason = self.now, event.reason.value
        self.event_counts[type(event).__name__] += 1

    def _on_granted(self, device: Device, handle: int, expires: float | None) -> None:
        record = device.records.get(handle)
        if record is None or record.outcome is not None:
            return
        record.decide(ClaimOutcome.GRANTED, self.now, None)
        record.expires = expires
        record.wrongly_granted = self._held_elsewhere(device, record)
        device.holds[handle] = record
        self._holders[device.index] = device

    def _on_failed(self, device: Device, handle: int, reason: str) -> None:
        record = device.records.get(handle)
        if record is None or record.outcome is not None:
            return
        record.decide(ClaimOutcome.DENIED, self.now, reason)
        # A failed reclaim continues a held claim under its handle; the engine no longer
        # defends it (UIAP §2.4.6: "Interrupt current claim and Fail"), so the application
        # stops using the space.
        device.holds.pop(handle, None)

    def _held_elsewhere(self, device: Device, record: ClaimRecord) -> bool:
        conflict, now = self._conflict_with(record), self.now
        holders, former = self._holders, []
        found = False
        for other in holders.values():
            if not other.holds:
                former.append(other.index)
                continue
            if other is device:
                continue
            for held in other.holds.values():
                # A hold past its lifetime is over even if its engine (crashed) never said so.
                if held.expires is not None and held.expires <= now:
                    continue
                if conflict(held):
                    found = True
                    break
            if found:
                break
        for index in former:
            del holders[index]
        return found

    def _conflict_with(self, record: ClaimRecord) -> Callable[[ClaimRecord], bool]:
        """The conflict test of a held claim with ``record``. The engine's own test
        (:func:`claims_conflict`: same DID, overlapping intervals of the DID's generic
        rules) computes each claim's interval once per run instead of once per pair: a
        claim is compared with every claim held elsewhere."""
        test = self._conflicts
        if test is not claims_conflict:
            return lambda held: test(held.domain, held.space, record.domain, record.space)
        domain, interval = record.domain, self._interval
        return lambda held: (
            held.domain == domain and intervals_overlap(interval(held), interval(record))
        )

    def _interval(self, record: ClaimRecord) -> Interval:
        found = self._intervals.get(record)
        if found is None:
            rules = NumberSpace.generic(record.domain)
            found = self._intervals[record] = rules.interval(record.space)
        return found

    def _issue_claim(self, record: ClaimRecord) -> None:
        device = self.devices[record.device]
        if not device.alive:
            record.decide(ClaimOutcome.LOST, self.now, "device down")
            return
        record.issued = self.now
        record.conflicting = self._held_elsewhere(device, record)
        # Results due now belong to earlier claims: drain them first, or an event the
        # engine emits inside claim() (it runs due deadlines first) would be taken for
        # this claim's when a reclaim continues the same handle.
        device.engine.handle_timer(self.now)
        self._sync(device)
        handle = device.engine.claim(
            record.domain,
            record.space,
            record.lifetime,
            self.now,
            reclaim=record.reclaim,
            proxy=record.proxy,
        )
        record.handle = handle
        device.records[handle] = record
        self._sync(device)

    def _release(self, record: ClaimRecord) -> None:
        device = self.devices[record.device]
        current = None if record.handle is None else device.records.get(record.handle)
        # The handle must still be this claim's: not one a restarted engine reuses. A reclaim
        # of a held claim continues it under the same handle (and counts as the same claim).
        same_claim = current is record or (
            current is not None
            and current.reclaim
            and (current.domain, current.space) == (record.domain, record.space)
        )
        if record.handle is None or not device.alive or not same_claim:
            return
        device.holds.pop(record.handle, None)
        device.engine.release(record.handle, self.now)
        self._sync(device)

    def _link_up(self, name: str) -> None:
        link = self.network.link(name)
        self.network.set_up(name, True)
        for member in link.members:
            device = self.devices[member]
            interface_up = getattr(device.engine, "interface_up", None)
            if device.alive and interface_up is not None:
                interface_up(name, self.now)
                self._sync(device)

    def overlapping_holds(self) -> list[tuple[ClaimRecord, ClaimRecord]]:
        """Pairs of claims held now by two devices with overlapping spaces (two holders).

        References: UIAP §2.1.2.
        """
        now = self.now
        pairs: list[tuple[ClaimRecord, ClaimRecord]] = []
        held = [
            (device, record)
            for device in self.devices
            for record in device.holds.values()
            if record.expires is None or record.expires > now
        ]
        for position, (device, record) in enumerate(held):
            conflict = self._conflict_with(record)
            pairs.extend(
                (record, other)
                for other_device, other in held[position + 1 :]
                if other_device is not device and conflict(other)
            )
        return pairs

    def _crash(self, index: int, keep_state: bool) -> None:
        device = self.devices[index]
        device.alive = False
        device.armed = None
        if not keep_state:
            for record in device.records.values():
                if record.outcome is None:
                    record.decide(ClaimOutcome.LOST, self.now, "device crashed")
            device.holds.clear()
            device.records.clear()
            self.engine_drops.update(engine_drops(device.engine))
            device.engine = self._start_engine(index, device.device_id)

    def _restart(self, index: int) -> None:
        device = self.devices[index]
        if not device.alive:
            device.alive = True
            self._sync(device)
