"""UIAPNode: one UIAP device on real sockets, an asyncio driver around the sans-I/O engine.

The node owns its UDP sockets (a claim-port and a reply-port socket per participating
interface, :class:`~uuidkit.net.socketset.SocketSet`), the participating interfaces and
one timer; every protocol decision stays in :class:`uuidkit.uiap.Engine`. After every
engine call (a datagram, a timer, a claim, a release, an interface change) the node:

1. sends what ``datagrams_to_send()`` returns (sealed by the authenticator, if any),
2. hands every ``next_event()`` to its owner (``on_event``, else the ``events`` queue),
3. re-arms its one ``loop.call_at`` at ``get_timer()``.

Events caused by the owner's own call (:meth:`UIAPNode.claim`, :meth:`UIAPNode.release`)
stay queued in the engine until that call has returned and are handed over from the event
loop's next turn: the owner knows the handle an event names before the event arrives, and
is never called back from inside its own call.

The engine's clock is ``loop.time()`` (monotonic seconds). Interface keys given to the
engine are interface names; source and next-hop keys are link-local addresses as text.

References: UIAP §2.3, §2.4, §3.1, §4.2.2.1, §4.3.2, §7, §10.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from collections.abc import Callable
from typing import Any

from uuidkit.errors import TransportError
from uuidkit.net.authenticator import Authenticator
from uuidkit.net.config import TransportConfig
from uuidkit.net.device_id import random_device_id
from uuidkit.net.interfaces import InterfaceInfo, discover_interfaces
from uuidkit.net.sockets import Arrival, send
from uuidkit.net.socketset import SocketSet
from uuidkit.net.validation import (
    Channel,
    SendFailure,
    TransportDrop,
    TransportStats,
    check_arrival,
)
from uuidkit.net.watch import LinkWatcher, RateLimitedLog
from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.engine import MULTICAST, Engine, EngineConfig
from uuidkit.uiap.events import ClaimDefended, Event
from uuidkit.uiap.space import NumberSpace, UIDSpace

__all__ = ["UIAPNode"]

_log = logging.getLogger("uuidkit.net")


class UIAPNode:
    """One UIAP device on the network: see the module docstring for the driving loop.

    * ``config``: sockets, interfaces, group and ports (:class:`TransportConfig`).
    * ``engine_config``: the engine's counts and times; ``config.claim_period`` and
      ``config.claim_timeout`` override its timers when set.
    * ``device_id``: the 64-bit Originating Device ID (UIAP §4.1); ``None`` = random
      (see :mod:`uuidkit.net.device_id` for EUI-64 and stable IDs).
    * ``on_event``: called with every engine event, never from inside :meth:`claim` or
      :meth:`release`; ``None`` = put them on ``events``.
    * ``authenticator``: seals every datagram sent and opens every datagram received
      (:class:`~uuidkit.net.authenticator.Authenticator`); ``None`` = plain UIAP.

    References: UIAP §2.4, §3.1, §4.2.2.1, §4.3.2, §7.
    """

    def __init__(
        self,
        config: TransportConfig | None = None,
        engine_config: EngineConfig | None = None,
        device_id: int | None = None,
        on_event: Callable[[Event], None] | None = None,
        *,
        authenticator: Authenticator | None = None,
        domains: dict[DomainID, NumberSpace] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config if config is not None else TransportConfig()
        engine_config = self.config.apply_timers(
            engine_config if engine_config is not None else EngineConfig()
        )
        self.device_id = device_id if device_id is not None else random_device_id()
        self.engine = Engine(
            self.device_id,
            rng if rng is not None else random.SystemRandom(),
            engine_config,
            domains=domains,
        )
        self.authenticator = authenticator
        self.stats = TransportStats()
        #: Events when no ``on_event`` was given.
        self.events: asyncio.Queue[Event] = asyncio.Queue()
        self._on_event = on_event
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sockets = SocketSet(self.config, self.stats, self._handle_arrival, self._after_engine)
        self._timer: asyncio.TimerHandle | None = None
        #: The delivery of events caused by the owner's call, on the loop's next turn.
        self._delivery: asyncio.Handle | None = None
        self._watcher: LinkWatcher | None = None
        #: Participating interfaces by name, as last read.
        self._active: dict[str, InterfaceInfo] = {}
        self._by_index: dict[int, str] = {}
        self._known: dict[str, InterfaceInfo] = {}
        self._own_addresses: frozenset[str] = frozenset()
        self._waiters: dict[int, asyncio.Future[Event]] = {}
        self._log = RateLimitedLog(_log, self.config.log_interval)

    # ------------------------------------------------------------------ life cycle

    async def start(self) -> None:
        """Open the sockets, join the group on every participating interface, and run.

        Raises :class:`TransportError` for a named interface that does not exist or a
        port that cannot be bound.
        """
        if self._loop is not None:
            raise TransportError("node already started")
        known = discover_interfaces()
        for name in self.config.interfaces or ():
            if name not in known:
                raise TransportError(f"no interface named {name!r}", "interfaces")
        loop = asyncio.get_running_loop()
        self._sockets.open(loop)
        self._loop = loop
        self._watcher = LinkWatcher(loop, self.config.interface_poll_interval, self._rescan)
        self._watcher.start()
        self._rescan(known)

    async def stop(self) -> None:
        """Leave the group, close every socket, cancel the timers; claims end unheard."""
        loop = self._loop
        if loop is None:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._delivery is not None:
            self._delivery.cancel()
            self._delivery = None
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        self._sockets.close()
        for name in self._active:
            self.engine.remove_interface(name)
        self._active.clear()
        self._by_index.clear()
        for waiter in self._waiters.values():
            waiter.cancel()
        self._waiters.clear()
        self._loop = None

    async def __aenter__(self) -> UIAPNode:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ------------------------------------------------------------------ the application's API

    def claim(
        self,
        domain: DomainID,
        space: UIDSpace,
        lifetime: int,
        *,
        reclaim: bool = False,
        proxy: bool = False,
    ) -> int:
        """Start a claim (see :meth:`Engine.claim`); returns its handle at once.

        The result arrives as a ``ClaimSucceeded`` or ``ClaimFailed`` event, after this
        call has returned (even a local conflict, which fails at once).
        """
        loop = self._running_loop()
        handle = self.engine.claim(
            domain, space, lifetime, loop.time(), reclaim=reclaim, proxy=proxy
        )
        self._after_request()
        return handle

    async def claim_and_wait(
        self,
        domain: DomainID,
        space: UIDSpace,
        lifetime: int,
        *,
        reclaim: bool = False,
        proxy: bool = False,
    ) -> Event:
        """Claim and wait for its result: the first event about this claim that is not a
        ``ClaimDefended`` (``ClaimSucceeded``, ``ClaimFailed``, or for a reclaim of a held
        claim whatever ends it). ``on_event`` receives it too."""
        loop = self._running_loop()
        future: asyncio.Future[Event] = loop.create_future()
        handle = self.engine.claim(
            domain, space, lifetime, loop.time(), reclaim=reclaim, proxy=proxy
        )
        self._waiters[handle] = future
        self._after_request()
        return await future

    def release(self, handle: int) -> None:
        """Stop claiming or defending the claim ``handle``."""
        self.engine.release(handle, self._running_loop().time())
        self._after_request()

    @property
    def interfaces(self) -> tuple[str, ...]:
        """Names of the interfaces participating now."""
        return tuple(self._active)

    def status(self) -> dict[str, Any]:
        """A JSON-ready snapshot: configuration, interfaces, transport and engine counters."""
        stats, engine = self.stats, self.engine.stats
        return {
            "device_id": f"{self.device_id:016x}",
            "family": self.config.family.value,
            "group": self.config.active_group,
            "port": self.config.port,
            "reply_port": self.config.reply_port,
            "running": self._loop is not None,
            "interfaces": [
                {
                    "name": info.name,
                    "index": info.index,
                    "addresses": list(info.link_local_addresses(self.config.family)),
                    "participating": info.name in self._active,
                }
                for info in sorted(self._known.values(), key=lambda i: i.index)
                if info.multicast
            ],
            "transport": {
                "received": stats.received,
                "delivered": stats.delivered,
                "sent": stats.sent,
                "receive_errors": stats.receive_errors,
                "buffer_overflows": sum(stats.buffer_overflows.values()),
                "buffer_overflows_by_interface": dict(stats.buffer_overflows_by_interface),
                "per_interface_sockets": self._sockets.per_interface,
                "dropped": {reason.value: n for reason, n in stats.dropped.items()},
                "send_failed": {reason.value: n for reason, n in stats.send_failed.items()},
                "received_by_interface": dict(stats.received_by_interface),
                "sent_by_interface": dict(stats.sent_by_interface),
            },
            "engine": {
                name: value
                for name, value in dataclasses.asdict(engine).items()
                if name != "dropped"
            }
            | {"dropped": {reason.value: n for reason, n in engine.dropped.items()}},
        }

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise TransportError("node is not running: call start() first")
        return self._loop

    # ------------------------------------------------------------------ after every engine call

    def _after_engine(self) -> None:
        self._flush()
        self._deliver_events()
        self._rearm()

    def _after_request(self) -> None:
        """After the owner's call: send and re-arm now, hand over its events on the loop's
        next turn (see the module docstring)."""
        self._flush()
        self._rearm()
        if self._delivery is None:
            self._delivery = self._running_loop().call_soon(self._deliver_requested)

    def _deliver_requested(self) -> None:
        self._delivery = None
        self._deliver_events()

    def _flush(self) -> None:
        family, config = self.config.family, self.config
        for transmit in self.engine.datagrams_to_send():
            name = str(transmit.interface)
            info = self._active.get(name)
            if info is None:
                self.stats.send_failed[SendFailure.INTERFACE_GONE] += 1
                continue
            source = info.link_local_addresses(family)[0]
            if transmit.destination is MULTICAST:
                channel, destination, port = Channel.CLAIM, config.active_group, config.port
            else:
                channel, destination, port = (
                    Channel.REPLY,
                    str(transmit.destination),
                    config.reply_port,
                )
            data = transmit.data
            if self.authenticator is not None:
                try:
                    data = self.authenticator.seal(data, source, destination, name)
                except Exception:  # a broken sealer must not stop timers and events
                    self.stats.send_failed[SendFailure.SEAL] += 1
                    self._log.warning("seal", "authenticator.seal raised", exc_info=True)
                    continue
            if len(data) > config.max_datagram_octets:
                self.stats.send_failed[SendFailure.OVERSIZED] += 1
                continue
            sock = self._sockets.sender(channel, name)
            if sock is None:
                self.stats.send_failed[SendFailure.INTERFACE_GONE] += 1
                continue
            try:
                send(sock, family, data, destination, port, info.index, source)
            except BlockingIOError:
                self.stats.send_failed[SendFailure.BLOCKED] += 1
                continue
            except OSError as error:
                self.stats.send_failed[SendFailure.ERROR] += 1
                self._log.warning("send", "UIAP send on %s failed: %s", name, error)
                continue
            self.stats.sent += 1
            self.stats.sent_by_interface[name] += 1

    def _deliver_events(self) -> None:
        while (event := self.engine.next_event()) is not None:
            claim = getattr(event, "claim", None)
            if isinstance(claim, int) and not isinstance(event, ClaimDefended):
                waiter = self._waiters.pop(claim, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(event)
            if self._on_event is None:
                self.events.put_nowait(event)
                continue
            try:
                self._on_event(event)
            except Exception:  # the owner's bug must not stop the node's loop
                _log.exception("on_event raised for %r", event)

    def _rearm(self) -> None:
        loop = self._loop
        if loop is None:
            return
        deadline = self.engine.get_timer()
        timer = self._timer
        if timer is not None:
            if deadline is not None and timer.when() == deadline:
                return
            timer.cancel()
            self._timer = None
        if deadline is not None:
            self._timer = loop.call_at(deadline, self._on_timer, deadline)

    def _on_timer(self, deadline: float) -> None:
        self._timer = None
        loop = self._running_loop()
        # asyncio may run a handle up to its clock resolution early; the engine must see
        # its deadline reached, or it would be re-armed at the same instant.
        self.engine.handle_timer(max(loop.time(), deadline))
        self._after_engine()

    # ------------------------------------------------------------------ receiving

    def _handle_arrival(self, channel: Channel, arrival: Arrival) -> None:
        self.stats.received += 1
        verdict = check_arrival(
            arrival,
            channel,
            family=self.config.family,
            group=self.config.active_group,
            participating=self._by_index,
            own_addresses=self._own_addresses,
            max_datagram_octets=self.config.max_datagram_octets,
        )
        if isinstance(verdict, TransportDrop):
            self.stats.dropped[verdict] += 1
            return
        data = arrival.data
        if self.authenticator is not None:
            try:
                opened = self.authenticator.open(
                    data, arrival.source, arrival.destination or "", verdict
                )
            except Exception:  # the protocol says never; a bad datagram must not stop the node
                self._log.warning("open", "authenticator.open raised", exc_info=True)
                opened = None
            if opened is None:
                self.stats.dropped[TransportDrop.AUTH] += 1
                return
            data = opened
        self.stats.received_by_interface[verdict] += 1
        self.stats.delivered += 1
        try:
            self.engine.receive_datagram(data, verdict, arrival.source, self._running_loop().time())
        except Exception:  # the engine's contract says never; keep the node alive if it does
            self.stats.dropped[TransportDrop.ENGINE_ERROR] += 1
            _log.exception("UIAP engine raised on a datagram from %s", arrival.source)

    # ------------------------------------------------------------------ interfaces

    def _rescan(self, known: dict[str, InterfaceInfo] | None = None) -> None:
        """Bring the participating set in line with the interfaces as they are now."""
        if self._loop is None:
            return
        if known is None:
            try:
                known = discover_interfaces()
            except OSError as error:
                self._log.warning("discover", "interface discovery failed: %s", error)
                return
        self._known = known
        family = self.config.family
        wanted = self.config.interfaces
        names = wanted if wanted is not None else tuple(known)
        for name in set(self._active) - set(names):
            self._leave(name)
        for name in names:
            info = known.get(name)
            current = self._active.get(name)
            usable = info is not None and info.usable(family)
            if current is not None and (not usable or info is None or info.index != current.index):
                self._leave(name)
                current = None
            if usable and info is not None:
                if current is None:
                    self._join(info)
                else:
                    self._active[name] = info
        self._own_addresses = frozenset(
            address for info in known.values() for address in info.link_local_addresses(family)
        ) | frozenset(address for info in known.values() for address in info.ipv4_addresses)
        self._after_engine()

    def _join(self, info: InterfaceInfo) -> None:
        try:
            self._sockets.attach(info)
        except (OSError, TransportError) as error:
            self._log.warning("join", "cannot join the UIAP group on %s: %s", info.name, error)
            return
        self._active[info.name] = info
        self._by_index[info.index] = info.name
        self.engine.add_interface(info.name)
        _log.info("UIAP participating on %s (index %d)", info.name, info.index)

    def _leave(self, name: str) -> None:
        info = self._active.pop(name)
        self._by_index.pop(info.index, None)
        self.engine.remove_interface(name)
        self._sockets.detach(info)
        _log.info("UIAP stopped participating on %s", name)
