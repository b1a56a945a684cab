"""Where node-bearing generators get their node ID: the :class:`NodeSource` protocol.

A node source hands out a :class:`NodeLease`: a 48-bit node ID (multicast bit set, RFC 9562
§6.10) that no other generator on the site uses, a ``generation`` that changes whenever the
node changes, and the time after which the lease must not be used without asking again. It
tells its listeners at once when a node is lost (:class:`NodeEvent`), so a generator stops
using it before its next value.

:class:`ManualNodeSource` is the source whose node the application assigns (from its own
configuration or allocator); it is also what the unit tests drive. The UIAP-backed source,
which claims node IDs through the UIAP daemon, lives in :mod:`uuidkit.bridge`.

Rules every source keeps (the generators rely on them):

- ``current()`` never returns a lease for a node it has reported lost;
- listeners are called *without* the source's own lock held (a listener takes its
  generator's lock, and a generator calls ``current()`` under that lock);
- a forked child never inherits a usable lease: its first ``current()`` obtains its own node
  or raises (RFC 9562 §6.9: state must not be reused across a fork).

References: RFC 9562 §6.4 (Node IDs), §6.9, §6.10; UIAP §2.1.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

from uuidkit.errors import NodeUnavailableError
from uuidkit.generators._policy import register_for_fork
from uuidkit.nodelayouts import check_claimed_node

__all__ = [
    "FOREVER_NS",
    "ManualNodeSource",
    "NodeEvent",
    "NodeEventKind",
    "NodeLease",
    "NodeListener",
    "NodeSource",
]

#: An ``expires_ns`` that never comes: a lease held until it is revoked.
FOREVER_NS: Final = (1 << 63) - 1


@dataclass(frozen=True, slots=True)
class NodeLease:
    """A node ID a generator may use until ``expires_ns`` or until it is reported lost.

    References: RFC 9562 §6.4, §6.10.
    """

    #: The 48-bit node ID, multicast bit set (RFC 9562 §6.10).
    node: int
    #: Changes (increases) every time the source hands out a different node.
    generation: int
    #: Unix-epoch nanoseconds on the generator's clock: not to be used at or after this.
    expires_ns: int
    #: If set, also not to be used once ``uuidkit._system.monotonic_ns()`` reaches this (a
    #: leased node's deadline, which a wall clock stepped back or a paused process must not
    #: stretch); the node-bound generators check it before every value.
    deadline_mono_ns: int | None = None


class NodeEventKind(enum.Enum):
    """What happened to a source's node.

    References: UIAP §2.1.2 (collisions after a merge), RFC 9562 §6.4.
    """

    #: A (new) node is held; ``NodeEvent.node`` and ``generation`` name it.
    GRANTED = "granted"
    #: The node's hold was extended (a successful renewal); same node, same generation.
    RENEWED = "renewed"
    #: The node must not be used any more (collision, failed renewal, daemon gone, fork).
    LOST = "lost"
    #: The node must not be used until further notice: a conflict is suspected and being
    #: settled. RENEWED (same node, same generation) or LOST follows.
    SUSPENDED = "suspended"


@dataclass(frozen=True, slots=True)
class NodeEvent:
    """One change of a node source's node (see :class:`NodeEventKind`).

    References: UIAP §2.1.2.
    """

    kind: NodeEventKind
    node: int
    generation: int
    #: Why, in words: ``"collision on renewal"``, ``"daemon connection lost"``, ...
    reason: str = ""


#: Called by a source on every :class:`NodeEvent`, from whichever thread noticed it.
NodeListener = Callable[[NodeEvent], None]


class NodeSource(Protocol):
    """Anything that hands out claimed node IDs to node-bearing generators.

    References: RFC 9562 §6.4 ("the creation and negotiation of unique node ids among nodes
    is also out of scope" of RFC 9562: this protocol is where uuidkit plugs it in).
    """

    def current(self) -> NodeLease:
        """The lease to use now; raises :class:`~uuidkit.errors.NodeUnavailableError` if
        there is none (and, by the source's policy, none could be obtained).

        References: RFC 9562 §6.4.
        """
        ...

    def subscribe(self, listener: NodeListener) -> None:
        """Call ``listener`` on every later :class:`NodeEvent`.

        References: UIAP §2.1.2.
        """
        ...

    def unsubscribe(self, listener: NodeListener) -> None:
        """Stop calling ``listener`` (no error if it was not subscribed).

        References: UIAP §2.1.2.
        """
        ...


class ListenerSet:
    """A thread-safe set of listeners, called outside any lock of the source."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: list[NodeListener] = []

    def add(self, listener: NodeListener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def discard(self, listener: NodeListener) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def emit(self, event: NodeEvent) -> None:
        """Call every listener with ``event``; the caller must hold no lock."""
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(event)

    def reset_after_fork(self) -> None:
        self._lock = threading.Lock()


class ManualNodeSource:
    """A node source whose node the application assigns and revokes.

    For node IDs agreed by other means (configuration, an external allocator), and for
    tests. :meth:`assign` hands out a new node (a new generation); :meth:`revoke` reports
    it lost: from then on :meth:`current` raises :class:`~uuidkit.errors.NodeUnavailableError`
    until the next :meth:`assign`.

    - **Fork**: a forked child's source is revoked ("forked child"): two processes must
      never use one node, so the child needs its own :meth:`assign` (RFC 9562 §6.9).
    - **Thread safety**: one lock; listeners are called outside it.

    References: RFC 9562 §6.4, §6.9, §6.10.
    """

    def __init__(self, node: int | None = None, *, expires_ns: int = FOREVER_NS) -> None:
        self._lock = threading.Lock()
        self._listeners = ListenerSet()
        self._lease: NodeLease | None = None
        self._generation = 0
        self._lost_reason = "no node assigned"
        register_for_fork(self)
        if node is not None:
            self.assign(node, expires_ns=expires_ns)

    def current(self) -> NodeLease:
        """The assigned lease; raises NodeUnavailableError if revoked or never assigned.

        References: RFC 9562 §6.4.
        """
        with self._lock:
            if self._lease is None:
                raise NodeUnavailableError(
                    f"node source: no node ID to use ({self._lost_reason})", self._lost_reason
                )
            return self._lease

    def assign(self, node: int, *, expires_ns: int = FOREVER_NS) -> NodeLease:
        """Hand out ``node`` (multicast bit set) as a new generation until ``expires_ns``.

        References: RFC 9562 §6.10.
        """
        check_claimed_node(node)
        with self._lock:
            self._generation += 1
            self._lease = NodeLease(node, self._generation, expires_ns)
            lease = self._lease
        self._listeners.emit(NodeEvent(NodeEventKind.GRANTED, node, lease.generation))
        return lease

    def extend(self, expires_ns: int) -> NodeLease:
        """Keep the current node until ``expires_ns`` (a renewal); same generation.

        References: UIAP §2.1.1 ("extend the lifetime").
        """
        with self._lock:
            if self._lease is None:
                raise NodeUnavailableError(
                    f"node source: nothing to extend ({self._lost_reason})", self._lost_reason
                )
            self._lease = NodeLease(self._lease.node, self._lease.generation, expires_ns)
            lease = self._lease
        self._listeners.emit(NodeEvent(NodeEventKind.RENEWED, lease.node, lease.generation))
        return lease

    def revoke(self, reason: str) -> None:
        """Report the node lost: listeners hear it at once, :meth:`current` raises.

        References: UIAP §2.1.2 ("Recovery after collision is the responsibility of the
        application").
        """
        with self._lock:
            lease, self._lease = self._lease, None
            self._lost_reason = reason
        if lease is not None:
            lost = NodeEvent(NodeEventKind.LOST, lease.node, lease.generation, reason)
            self._listeners.emit(lost)

    def subscribe(self, listener: NodeListener) -> None:
        """Call ``listener`` on every later event. References: UIAP §2.1.2."""
        self._listeners.add(listener)

    def unsubscribe(self, listener: NodeListener) -> None:
        """Stop calling ``listener``. References: UIAP §2.1.2."""
        self._listeners.discard(listener)

    def reset_after_fork(self) -> None:
        """In a forked child: drop the parent's node; the child needs its own.

        References: RFC 9562 §6.9.
        """
        self._lock = threading.Lock()
        self._listeners.reset_after_fork()
        self._lease = None
        self._lost_reason = "forked child: assign this process its own node ID"
