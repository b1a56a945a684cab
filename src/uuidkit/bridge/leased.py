"""Node IDs leased from a coordination service: the lease mechanism every backend shares.

:class:`LeasedNodeSource` is a :class:`~uuidkit.generators.NodeSource` that leases a random
node of the leased half (:mod:`uuidkit.bridge.nodespace`) from a service through a small
:class:`LeaseBackend` (PostgreSQL, etcd). The backend only talks to the service; everything
about time is here, in one place:

- **The deadline.** Before each grant or renewal request the source reads its monotonic clock
  (``sent``). The service holds the lease for ``ttl`` from when it *processed* the request,
  which is after ``sent``; so the node is used only until ``sent + ttl - margin`` on the
  monotonic clock. A reply that arrives late (a slow network, a paused client) shortens the
  usable time instead of extending it. The margin covers the rate difference between the
  client's monotonic clock and the service's clock over one lifetime.
- **Revocation.** A watchdog thread emits LOST at the deadline if no renewal was confirmed,
  and the lease handed to generators carries the deadline (``NodeLease.deadline_mono_ns``),
  which the node-bound generators check on the monotonic clock before every value: a process
  stopped (SIGSTOP, a VM pause) and resumed after the deadline makes no value with the old
  node, whichever thread runs first.
- **Renewal.** A renewer thread renews every ``lifetime / 3``; a renewal the service refuses
  (the lease lapsed, and was perhaps granted to someone else: fencing) loses the node; an
  unreachable service is retried until the deadline.
- **Policy.** After a loss, :class:`~uuidkit.bridge.OnNodeLoss` RECLAIM leases a new node on
  the next request, RAISE raises until :meth:`LeasedNodeSource.restart`. Never random bits.
- **Fork.** A child forgets the parent's lease and connections (without closing the parent's)
  and leases its own node on first use (RFC 9562 §6.9).
- **Close.** Releases the lease at the service (best effort) and stops the threads.

References: RFC 9562 §6.4, §6.9, §6.10.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

from uuidkit import _system
from uuidkit.bridge.nodespace import leased_node
from uuidkit.bridge.spares import SpareNodes, check_spares
from uuidkit.bridge.uiap_source import OnNodeLoss
from uuidkit.errors import InvalidField, NodeUnavailableError
from uuidkit.generators._policy import register_for_fork
from uuidkit.generators.nodesource import (
    ListenerSet,
    NodeEvent,
    NodeEventKind,
    NodeLease,
    NodeListener,
)

__all__ = ["Grant", "LeaseBackend", "LeasedNodeSource", "ServiceUnreachable"]

_log = logging.getLogger(__name__)
NS_PER_S: Final = 1_000_000_000
#: Default lease lifetime, seconds; renewed every third of it.
DEFAULT_LIFETIME_S: Final = 30
#: Default margin, seconds: 1 s of 30 s tolerates a 3 % rate difference between clocks.
DEFAULT_MARGIN_S: Final = 1.0
#: Renewals per lifetime: two may fail and the third still lands before the end.
RENEWALS_PER_LIFETIME: Final = 3
#: Longest close() waits for a request in flight before leaving the lease to its TTL.
CLOSE_WAIT_S: Final = 5.0
#: Wait between retries of a renewal that could not reach the service.
RETRY_S: Final = 0.2


class ServiceUnreachable(NodeUnavailableError):
    """The coordination service did not answer (the message says how).

    References: RFC 9562 §6.4.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, "service unreachable")


@dataclass(frozen=True, slots=True)
class Grant:
    """A node the service granted: for ``ttl_ns`` from when it processed the request.

    ``token`` is the backend's handle to renew or release it (its fencing epoch, lease ID).

    References: RFC 9562 §6.4.
    """

    node: int
    ttl_ns: int
    token: object


class LeaseBackend(Protocol):
    """The service-specific part of a :class:`LeasedNodeSource`: requests, no timekeeping.

    Methods raise :class:`ServiceUnreachable` when the service does not answer.

    References: RFC 9562 §6.4.
    """

    def acquire(self, node: int, lifetime_s: int) -> Grant | None:
        """Lease ``node`` for ``lifetime_s``; ``None`` if someone holds it.

        References: RFC 9562 §6.4.
        """
        ...

    def renew(self, grant: Grant, lifetime_s: int) -> int | None:
        """Extend ``grant``: its new ttl in ns, or ``None`` if it is no longer ours.

        References: RFC 9562 §6.4.
        """
        ...

    def release(self, grant: Grant) -> None:
        """End ``grant`` at the service (best effort). References: RFC 9562 §6.4."""
        ...

    def close(self) -> None:
        """Close connections. References: RFC 9562 §6.4."""
        ...

    def forget_after_fork(self) -> None:
        """In a forked child: drop connections without disturbing the parent's.

        References: RFC 9562 §6.9.
        """
        ...


class _SharedBackend:
    """One backend shared by the slots of a source with spares: one request at a time
    (a backend holds one connection), closed and forgotten by the source, not the slots."""

    def __init__(self, backend: LeaseBackend) -> None:
        self._backend = backend
        self._lock = threading.Lock()

    def acquire(self, node: int, lifetime_s: int) -> Grant | None:
        with self._lock:
            return self._backend.acquire(node, lifetime_s)

    def renew(self, grant: Grant, lifetime_s: int) -> int | None:
        with self._lock:
            return self._backend.renew(grant, lifetime_s)

    def release(self, grant: Grant) -> None:
        with self._lock:
            self._backend.release(grant)

    def close(self) -> None:
        """Nothing: the source closes the backend after every slot released its lease."""

    def forget_after_fork(self) -> None:
        self._lock = threading.Lock()  # the source makes the backend forget (once)


class LeasedNodeSource:
    """A node source whose nodes are leased through ``backend`` (see the module docstring).

    - **Lease**: a random leased-half node (multicast bit set, RFC 9562 §6.10); a node the
      service reports taken draws another, up to ``max_attempts``.
    - **Deadline**: ``sent + ttl - margin_s`` on the monotonic clock; revoked at it.
    - **Loss**: LOST at once; then ``on_loss`` (RECLAIM or RAISE), never random bits.
    - **Thread safety**: one lock; listeners are called outside it.
    - **Fork**: the child leases its own node (RFC 9562 §6.9).
    - **Threads**: a renewer and a deadline watchdog, started with the first lease and
      stopped by :meth:`close` (use the source as a context manager). ``threads=False``
      starts neither: the caller drives :meth:`renew_once` (tests do).
    - **Clocks**: ``uuidkit._system.monotonic_ns`` judges every deadline, here and in the
      generators; ``clock`` (their wall clock) only converts it into ``expires_ns``.

    References: RFC 9562 §6.4, §6.9, §6.10.
    """

    def __init__(
        self,
        backend: LeaseBackend,
        *,
        lifetime_s: int = DEFAULT_LIFETIME_S,
        margin_s: float = DEFAULT_MARGIN_S,
        on_loss: OnNodeLoss = OnNodeLoss.RECLAIM,
        max_attempts: int = 8,
        random_bytes: Callable[[int], bytes] = os.urandom,
        clock: Callable[[], int] | None = None,
        threads: bool = True,
        spares: int = 1,
    ) -> None:
        if type(lifetime_s) is not int or lifetime_s < 2:
            raise InvalidField(
                f"lifetime_s: expected an int >= 2 seconds, found {lifetime_s!r}", "lifetime_s"
            )
        if not 0 <= margin_s <= lifetime_s / 4:
            raise InvalidField(
                f"margin_s: expected 0 to a quarter of the lifetime, found {margin_s!r}",
                "margin_s",
            )
        if not isinstance(on_loss, OnNodeLoss):
            raise InvalidField(f"on_loss: expected an OnNodeLoss, found {on_loss!r}", "on_loss")
        if type(max_attempts) is not int or max_attempts < 1:
            raise InvalidField(
                f"max_attempts: expected an int >= 1, found {max_attempts!r}", "max_attempts"
            )
        self.backend = backend
        self.lifetime_s = lifetime_s
        self.on_loss = on_loss
        self.max_attempts = max_attempts
        self._margin_ns = int(margin_s * NS_PER_S)
        self._random_bytes = random_bytes
        self._clock = clock
        self._threads_wanted = threads
        self._listeners = ListenerSet()
        self._generation = 0
        check_spares(spares)
        self.spares = spares
        #: With spares: the leases (this source's own lease unused), uuidkit.bridge.spares.
        self._pool: SpareNodes | None = None
        if spares:
            shared = _SharedBackend(backend)
            slots = [
                LeasedNodeSource(
                    shared,
                    lifetime_s=lifetime_s,
                    margin_s=margin_s,
                    max_attempts=max_attempts,
                    random_bytes=random_bytes,
                    clock=clock,
                    threads=threads,
                    spares=0,
                )
                for _ in range(1 + spares)
            ]
            self._pool = SpareNodes(slots, raise_on_loss=on_loss is OnNodeLoss.RAISE)
        self._reset_state()
        register_for_fork(self)

    def _reset_state(self) -> None:
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._io_lock = threading.Lock()
        self._lease: NodeLease | None = None
        self._grant: Grant | None = None
        self._renew_at = 0
        self._lost_reason: str | None = None
        self._closed = False
        self._threads: list[threading.Thread] = []

    # ------------------------------------------------------------------ NodeSource

    def current(self) -> NodeLease:
        """The held lease, or a new one (RECLAIM), or NodeUnavailableError (RAISE).

        References: RFC 9562 §6.4.
        """
        if self._pool is not None:
            return self._pool.current()
        events: list[NodeEvent] = []
        try:
            with self._lock:
                return self._current_locked(events)
        finally:
            self._emit(events)

    def subscribe(self, listener: NodeListener) -> None:
        """Call ``listener`` on every later event. References: RFC 9562 §6.4."""
        if self._pool is not None:
            self._pool.subscribe(listener)
            return
        self._listeners.add(listener)

    def unsubscribe(self, listener: NodeListener) -> None:
        """Stop calling ``listener``. References: RFC 9562 §6.4."""
        if self._pool is not None:
            self._pool.unsubscribe(listener)
            return
        self._listeners.discard(listener)

    # ------------------------------------------------------------------ control

    @property
    def grant(self) -> Grant | None:
        """The service's grant in use (node, ttl, backend token), or ``None``."""
        if self._pool is not None:
            active = self._pool.active
            return active.grant if isinstance(active, LeasedNodeSource) else None
        return self._grant

    @property
    def slots(self) -> list[LeasedNodeSource]:
        """With spares: the single-lease sources holding the node in use and the spares."""
        if self._pool is None:
            return []
        return [slot for slot in self._pool.slots if isinstance(slot, LeasedNodeSource)]

    def spare_nodes(self) -> list[int]:
        """The nodes held as ready spares (leased and renewed, not in use)."""
        return [] if self._pool is None else self._pool.spare_nodes()

    def usable(self) -> NodeLease | None:
        """The held lease if it may be used now (before its deadline), without a request;
        ``None`` otherwise (a source without spares: a slot's check).

        References: RFC 9562 §6.4.
        """
        with self._lock:
            lease = self._lease
            if self._closed or lease is None or self._mono() >= self._deadline(lease):
                return None
            return lease

    def restart(self) -> None:
        """After a loss under policy RAISE: let the next :meth:`current` lease anew.

        References: RFC 9562 §6.4.
        """
        if self._pool is not None:
            self._pool.restart()
            return
        with self._lock:
            self._lost_reason = None

    def close(self) -> None:
        """Release the lease at the service, stop the threads (the source stays unusable).

        References: RFC 9562 §6.4.
        """
        if self._pool is not None:
            self._pool.close()  # every slot releases its lease, then the backend closes
        events: list[NodeEvent] = []
        with self._lock:
            self._closed = True
            grant = self._grant
            self._lose("source closed", events)
            self._changed.notify_all()
        self._emit(events)
        # A renewal stuck on a hung service holds the I/O lock: then the lease is left to
        # end at its TTL rather than close() hanging with it.
        if not self._io_lock.acquire(timeout=CLOSE_WAIT_S):
            _log.info("node source closed without releasing its lease: the service hangs")
            return
        try:
            if grant is not None:
                try:
                    self.backend.release(grant)
                except NodeUnavailableError as error:
                    _log.info("release of node %012x failed: %s", grant.node, error)
            self.backend.close()
        finally:
            self._io_lock.release()

    def __enter__(self) -> LeasedNodeSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reset_after_fork(self) -> None:
        """In a forked child: forget the parent's lease; lease our own on first use.

        References: RFC 9562 §6.9.
        """
        self._reset_state()
        self._listeners.reset_after_fork()
        self.backend.forget_after_fork()

    # ------------------------------------------------------------------ internals

    def _mono(self) -> int:
        # The generators' per-value check reads this same clock (looked up at each call,
        # so a test's fake reaches both).
        return _system.monotonic_ns()

    def _wall(self) -> int:
        return (self._clock or _system.system_clock_ns)()

    def _emit(self, events: list[NodeEvent]) -> None:
        for event in events:
            self._listeners.emit(event)

    def _current_locked(self, events: list[NodeEvent]) -> NodeLease:
        if self._closed:
            raise NodeUnavailableError("node source: closed", "source closed")
        lease = self._lease
        if lease is not None:
            if self._mono() < self._deadline(lease):
                return lease
            self._lose("lease ended before a renewal was confirmed", events)
        if self._lost_reason is not None and self.on_loss is OnNodeLoss.RAISE:
            raise NodeUnavailableError(
                f"node ID lost ({self._lost_reason}); policy RAISE", self._lost_reason
            )
        return self._lease_new(events)

    @staticmethod
    def _deadline(lease: NodeLease) -> int:
        assert lease.deadline_mono_ns is not None
        return lease.deadline_mono_ns

    def _lease_new(self, events: list[NodeEvent]) -> NodeLease:
        taken = 0
        for _ in range(self.max_attempts):
            node = leased_node(self._random_bytes)
            sent = self._mono()
            # A renewal stuck on a hung service holds the I/O lock: fail rather than hang.
            if not self._io_lock.acquire(timeout=CLOSE_WAIT_S):
                raise ServiceUnreachable("the service has not answered a request in flight")
            try:
                grant = self.backend.acquire(node, self.lifetime_s)
            finally:
                self._io_lock.release()
            if grant is None:
                taken += 1
                continue
            lease = self._lease_until(grant.node, self._generation + 1, sent, grant.ttl_ns)
            if self._mono() >= self._deadline(lease):  # the reply came too late to use
                self._release_quietly(grant)
                continue
            self._generation += 1
            self._grant, self._lease, self._lost_reason = grant, lease, None
            events.append(NodeEvent(NodeEventKind.GRANTED, node, self._generation))
            self._start_threads()
            self._changed.notify_all()
            return self._lease
        raise NodeUnavailableError(
            f"no node ID leased in {self.max_attempts} attempts ({taken} taken)",
            "every node taken",
        )

    def _lease_until(self, node: int, generation: int, sent: int, ttl_ns: int) -> NodeLease:
        """A lease that ends ``margin`` before ``sent + ttl``, as read on our clocks."""
        deadline = sent + ttl_ns - self._margin_ns
        mono, wall = self._mono(), self._wall()
        self._renew_at = sent + ttl_ns // RENEWALS_PER_LIFETIME
        return NodeLease(node, generation, wall + (deadline - mono), deadline)

    def _lose(self, reason: str, events: list[NodeEvent]) -> None:
        """Stop handing out the node (lock held); LOST goes out after the lock."""
        lease, self._lease, self._grant = self._lease, None, None
        self._lost_reason = reason
        if lease is not None:
            log = _log.info if self._closed else _log.warning
            log("node ID %012x lost: %s", lease.node, reason)
            events.append(NodeEvent(NodeEventKind.LOST, lease.node, lease.generation, reason))

    # ------------------------------------------------------------------ the threads

    def _start_threads(self) -> None:
        if self._threads or not self._threads_wanted:
            return
        for name, target in (("renew", self._renew_loop), ("deadline", self._watch_deadline)):
            thread = threading.Thread(target=target, name=f"uuidkit-lease-{name}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _watch_deadline(self) -> None:
        """Emit LOST at the deadline if no renewal moved it (the renewer may be stuck in I/O)."""
        lock = self._lock
        while True:
            events: list[NodeEvent] = []
            with lock:
                if self._closed or self._lock is not lock:
                    return
                lease = self._lease
                if lease is None:
                    self._changed.wait()
                    continue
                remaining = self._deadline(lease) - self._mono()
                if remaining > 0:
                    self._changed.wait(remaining / NS_PER_S)
                    continue
                self._lose("lease ended before a renewal was confirmed", events)
            self._emit(events)

    def _renew_loop(self) -> None:
        lock = self._lock
        while True:
            with lock:
                if self._closed or self._lock is not lock:
                    return
                lease, grant = self._lease, self._grant
                wait_ns = self._renew_at - self._mono()
                if lease is None or grant is None or wait_ns > 0:
                    self._changed.wait(None if lease is None else max(wait_ns, 0) / NS_PER_S)
                    continue
            self.renew_once(lease, grant)

    def renew_once(self, lease: NodeLease, grant: Grant) -> bool:
        """Renew ``grant`` now (the renewer thread's step); False if it could not.

        A renewal confirmed for a lease already revoked here does not revive it: the node
        stays lost and is released.

        References: RFC 9562 §6.4.
        """
        events: list[NodeEvent] = []
        sent = self._mono()
        try:
            with self._io_lock:
                ttl_ns = self.backend.renew(grant, self.lifetime_s)
        except NodeUnavailableError as error:
            with self._lock:
                self._renew_at = self._mono() + int(RETRY_S * NS_PER_S)
            _log.info("renewal of node %012x failed: %s", grant.node, error)
            return False
        revoked = False
        with self._lock:
            if self._lease is not lease:
                revoked = True
            elif ttl_ns is None:
                self._lose("renewal refused: the lease lapsed at the service", events)
            else:
                self._lease = self._lease_until(lease.node, lease.generation, sent, ttl_ns)
                self._changed.notify_all()
                events.append(NodeEvent(NodeEventKind.RENEWED, lease.node, lease.generation))
        self._emit(events)
        if revoked and ttl_ns is not None:
            self._release_quietly(grant)  # revoked here meanwhile: it stays lost
        return ttl_ns is not None and not revoked

    def _release_quietly(self, grant: Grant) -> None:
        try:
            with self._io_lock:
                self.backend.release(grant)
        except NodeUnavailableError as error:
            _log.info("release of node %012x failed: %s", grant.node, error)
